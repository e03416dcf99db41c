#include "models/core/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/core/rng.hpp"

namespace fabricsim {
namespace {

// Exact percentile by the same rank rule: the ceil(p/100 * n)-th smallest,
// with p given in thousandths of a percent so the rank is exact.
std::uint64_t exact(std::vector<std::uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  const auto milli = static_cast<std::uint64_t>(std::llround(p * 1000));
  auto rank = static_cast<std::size_t>((milli * v.size() + 99999) / 100000);
  if (rank < 1) rank = 1;
  return v[rank - 1];
}

TEST(Histogram, BucketsTileTheLineWithoutGaps) {
  // The last bucket (14591) holds 2^64-1; the test stops before the next
  // bucket's low bound would wrap.
  for (std::size_t b = 0; b + 1 < 14592; ++b) {
    const std::uint64_t lo = Histogram::bucket_low(b);
    EXPECT_EQ(Histogram::bucket_of(lo), b);
    EXPECT_EQ(Histogram::bucket_of(lo + Histogram::bucket_width(b) - 1), b);
    EXPECT_EQ(Histogram::bucket_low(b + 1), lo + Histogram::bucket_width(b));
  }
}

TEST(Histogram, SmallValuesAreExact) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
  EXPECT_EQ(h.percentile(50), 50u);
  EXPECT_EQ(h.percentile(99), 99u);
  EXPECT_EQ(h.percentile(99.9), 100u);
  EXPECT_EQ(h.percentile(100), 100u);
  EXPECT_EQ(h.percentile(0), 1u);
}

TEST(Histogram, PercentilesWithinResolutionOfExact) {
  Rng rng(7);
  std::vector<std::uint64_t> v;
  Histogram h;
  for (int i = 0; i < 200000; ++i) {
    // Heavy-tailed, like latency near saturation: 200 ns .. ~50 us in ps.
    const auto x = static_cast<std::uint64_t>(200000.0 / std::pow(1.0 - rng.uniform(), 0.7));
    v.push_back(x);
    h.record(x);
  }
  const double tol = 1.0 / (1 << (Histogram::kSubBits - 1));
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
    const double e = static_cast<double>(exact(v, p));
    EXPECT_NEAR(static_cast<double>(h.percentile(p)), e, e * tol) << "p" << p;
  }
  EXPECT_EQ(h.max(), *std::max_element(v.begin(), v.end()));
  EXPECT_EQ(h.min(), *std::min_element(v.begin(), v.end()));
}

TEST(Histogram, RankIsExactNotFloatingPoint) {
  // 99.9% of 1000 samples is the 999th: floating point gives 1000.0000000000001
  // and would report the maximum.
  Histogram h;
  for (int i = 0; i < 999; ++i) h.record(100);
  h.record(400);
  EXPECT_EQ(h.percentile(99.9), 100u);
  EXPECT_EQ(h.percentile(99.95), 400u);
  for (std::uint64_t n : {100u, 200u, 300u, 511u}) {  // exact region: values < 512
    Histogram g;
    for (std::uint64_t i = 1; i <= n; ++i) g.record(i);
    EXPECT_EQ(g.percentile(99), (99 * n + 99) / 100) << n;
    EXPECT_EQ(g.percentile(99.9), (999 * n + 999) / 1000) << n;
  }
}

TEST(Histogram, EmptyAndClear) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(99), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  h.record(5);
  h.clear();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.max(), 0u);
}

TEST(Histogram, HugeValues) {
  Histogram h;
  h.record(~std::uint64_t{0});
  h.record(1);
  EXPECT_EQ(h.max(), ~std::uint64_t{0});
  EXPECT_EQ(h.percentile(100), ~std::uint64_t{0});
  EXPECT_EQ(h.percentile(50), 1u);
}

}  // namespace
}  // namespace fabricsim
