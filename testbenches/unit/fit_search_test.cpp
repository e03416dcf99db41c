// The calibration search (models/core/fit_search.hpp) on functions whose
// minimum is known: it finds it within the tolerance, never evaluates a
// point twice, keeps integer parameters whole and stays in the box.
#include "models/core/fit_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

namespace fabricsim {
namespace {

TEST(FitSearch, FindsTheMinimumOfAMeanAbsoluteError) {
  // The shape calibrate meets with a pure offset: mean |a_i + x - m_i| / m_i,
  // convex and piecewise linear, its minimum at the weighted median (x = 21.5 here).
  const std::vector<double> a = {1.0, 1.5, 3.0, 20.0}, m = {23.0, 23.0, 24.5, 41.0};
  int calls = 0;
  const auto f = [&](const std::vector<double>& x) {
    ++calls;
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += std::fabs(a[i] + x[0] - m[i]) / m[i];
    return s / static_cast<double>(a.size());
  };
  const FitResult r = fit_minimise({{"launch", 0, 50, 0, 0.01}}, {0}, f);
  EXPECT_NEAR(r.best.x[0], 21.5, 0.01);
  EXPECT_EQ(static_cast<int>(r.evaluations.size()), calls);
  EXPECT_EQ(r.evaluations.front().x[0], 0);  // the start first
  std::set<double> seen;
  for (const FitPoint& e : r.evaluations) EXPECT_TRUE(seen.insert(e.x[0]).second) << e.x[0];
  EXPECT_LT(calls, 40);
}

TEST(FitSearch, TwoParametersByCoordinateDescent) {
  const auto f = [](const std::vector<double>& x) {
    return (x[0] - 3.2) * (x[0] - 3.2) + 2 * (x[1] + 1.5) * (x[1] + 1.5);
  };
  const FitResult r = fit_minimise({{"p", -10, 10, 0, 1e-4}, {"q", -10, 10, 0, 1e-4}}, {0, 0}, f);
  EXPECT_NEAR(r.best.x[0], 3.2, 1e-3);
  EXPECT_NEAR(r.best.x[1], -1.5, 1e-3);
  EXPECT_NEAR(r.best.value, 0, 1e-6);
}

// A valley across the axes: from (0, 0) each coordinate alone is at its
// best (f = 10), so line searches from the start stop there; the joint grid
// (0 .. 10 in steps of 1.25) lands on (5, 5), where f = 0.
TEST(FitSearch, AValleyAcrossTheAxesByTheJointGrid) {
  const auto f = [](const std::vector<double>& x) {
    return 10 * std::fabs(x[0] - x[1]) + std::fabs(x[0] + x[1] - 10);
  };
  const FitResult r = fit_minimise({{"p", 0, 10, 0.05, 0}, {"q", 0, 10, 0.05, 0}}, {0, 0}, f);
  EXPECT_NEAR(r.best.x[0], 5, 1e-9);
  EXPECT_NEAR(r.best.x[1], 5, 1e-9);
  EXPECT_NEAR(r.best.value, 0, 1e-9);
}

TEST(FitSearch, StepsOfARealParameter) {
  const auto f = [](const std::vector<double>& x) {
    EXPECT_NEAR(std::fmod(x[0] - 0.5, 0.25), 0, 1e-12) << x[0];
    return std::fabs(x[0] - 2.3);
  };
  const FitResult r = fit_minimise({{"x", 0.5, 10.4, 0.25, 0}}, {0}, f);
  EXPECT_DOUBLE_EQ(r.best.x[0], 2.25);
}

TEST(FitSearch, IntegerParametersStayWholeAndInRange) {
  const auto f = [](const std::vector<double>& x) {
    EXPECT_EQ(x[0], std::round(x[0]));
    EXPECT_GE(x[0], 6);
    EXPECT_LE(x[0], 64);
    return std::fabs(x[0] - 17.4);
  };
  const FitResult r = fit_minimise({{"gpu.slots", 6, 64, 1, 0}}, {100}, f);  // start clamped to 64
  EXPECT_EQ(r.best.x[0], 17);
  EXPECT_EQ(r.evaluations.front().x[0], 64);
}

TEST(FitSearch, TheMinimumAtAnEdgeOfTheRange) {
  const auto f = [](const std::vector<double>& x) { return x[0]; };
  const FitResult r = fit_minimise({{"x", 2, 5, 0, 0}}, {3}, f);
  EXPECT_EQ(r.best.x[0], 2);
}

TEST(FitSearch, RefusesWhatCannotBeSearched) {
  const auto f = [](const std::vector<double>& x) { return x[0]; };
  EXPECT_THROW(fit_minimise({}, {}, f), std::invalid_argument);
  EXPECT_THROW(fit_minimise({{"x", 5, 2, 0, 0}}, {3}, f), std::invalid_argument);
  EXPECT_THROW(fit_minimise({{"x", 1, 2, 1.5, 0}}, {1.5}, f), std::invalid_argument);
  EXPECT_THROW(fit_minimise({{"x", 0, 1, 0, 0}}, {0, 1}, f), std::invalid_argument);
  EXPECT_THROW(fit_minimise({{"x", 0, 1, 0, 0}}, {0}, f, {2, 1}), std::invalid_argument);
}

TEST(FitSearch, AnErrorInTheFunctionStopsTheSearch) {
  int calls = 0;
  const auto f = [&](const std::vector<double>&) -> double {
    if (++calls == 3) throw std::runtime_error("a simulation failed");
    return 1;
  };
  EXPECT_THROW(fit_minimise({{"x", 0, 1, 0, 0}}, {0}, f), std::runtime_error);
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace fabricsim
