#include "models/core/fit_search.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim {

namespace {

// 1/phi: each golden-section step keeps this share of the bracket and reuses
// one of its two inner points.
constexpr double kGolden = 0.6180339887498949;

class Search {
 public:
  Search(const std::vector<FitParam>& params, const std::function<double(const std::vector<double>&)>& f)
      : params_(params), f_(f) {}

  double at(std::vector<double> x) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = snap(i, x[i]);
    const auto it = cache_.find(x);
    if (it != cache_.end()) return it->second;
    const double v = f_(x);
    cache_.emplace(x, v);
    result_.evaluations.push_back({x, v});
    return v;
  }

  double snap(std::size_t i, double v) const {
    const FitParam& p = params_[i];
    v = std::clamp(v, p.lo, p.hi);
    if (p.step <= 0) return v;
    const double last = std::floor((p.hi - p.lo) / p.step);  // the last step inside the range
    return p.lo + std::clamp(std::round((v - p.lo) / p.step), 0.0, last) * p.step;
  }

  // The best value of coordinate i with the others as in x: a grid over the
  // range, then golden-section search in the bracket of the best grid point.
  double line(std::vector<double> x, std::size_t i, int grid) {
    const FitParam& p = params_[i];
    double best_v = x[i];
    double best_f = at(x);
    const auto value = [&](double v) {
      v = snap(i, v);
      x[i] = v;
      const double fv = at(x);
      if (fv < best_f) {
        best_f = fv;
        best_v = v;
      }
      return fv;
    };
    const double step = (p.hi - p.lo) / (grid - 1);
    int best_k = 0;
    double grid_f = 0;
    for (int k = 0; k < grid; ++k) {
      const double fk = value(p.lo + step * k);
      if (k == 0 || fk < grid_f) {
        grid_f = fk;
        best_k = k;
      }
    }
    // The bracket and its inner points are values the parameter can take
    // (on its steps); whatever they are, the minimum of a unimodal function
    // stays inside [a, b].
    double a = snap(i, p.lo + step * std::max(best_k - 1, 0));
    double b = snap(i, p.lo + step * std::min(best_k + 1, grid - 1));
    const double tol = std::max(p.tolerance > 0 ? p.tolerance : (p.hi - p.lo) / 1000, 2 * p.step);
    double c = snap(i, b - kGolden * (b - a)), d = snap(i, a + kGolden * (b - a));
    if (c < d) {
      double fc = value(c), fd = value(d);
      while (b - a > tol) {
        if (fc < fd) {
          b = d;
          d = c;
          fd = fc;
          c = snap(i, b - kGolden * (b - a));
          if (c >= d) break;
          fc = value(c);
        } else {
          a = c;
          c = d;
          fc = fd;
          d = snap(i, a + kGolden * (b - a));
          if (d <= c) break;
          fd = value(d);
        }
      }
    }
    if (p.step > 0)  // the few steps left in the bracket, each
      for (double k = std::ceil((a - p.lo) / p.step - 1e-9); p.lo + k * p.step <= b + 1e-9 * p.step; k += 1)
        value(p.lo + k * p.step);
    return best_v;
  }

  FitResult finish() {
    result_.best = result_.evaluations.front();
    for (const FitPoint& e : result_.evaluations)
      if (e.value < result_.best.value) result_.best = e;
    return result_;
  }

 private:
  const std::vector<FitParam>& params_;
  const std::function<double(const std::vector<double>&)>& f_;
  std::map<std::vector<double>, double> cache_;
  FitResult result_;
};

}  // namespace

FitResult fit_minimise(const std::vector<FitParam>& params, std::vector<double> start,
                       const std::function<double(const std::vector<double>&)>& f, const FitOptions& opts) {
  if (params.empty()) throw std::invalid_argument("no parameter to fit");
  if (start.size() != params.size()) throw std::invalid_argument("one start value per parameter");
  if (opts.grid < 3) throw std::invalid_argument("the grid needs at least 3 points");
  if (opts.rounds < 1) throw std::invalid_argument("at least one round");
  for (const FitParam& p : params) {
    if (!(std::isfinite(p.lo) && std::isfinite(p.hi) && p.lo < p.hi))
      throw std::invalid_argument(p.key + ": the range needs finite LO < HI");
    if (!(p.step >= 0 && p.step <= p.hi - p.lo))
      throw std::invalid_argument(p.key + ": the step needs 0 <= STEP <= HI - LO");
  }
  Search s(params, f);
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = s.snap(i, start[i]);
  double best_f = s.at(start);
  const int rounds = params.size() == 1 ? 1 : opts.rounds;
  std::vector<double> x = start;
  if (params.size() > 1) {
    long points = 1;
    for (std::size_t i = 0; i < params.size() && points <= kMaxJointGrid; ++i) points *= opts.grid;
    if (points <= kMaxJointGrid) {
      // Every combination, the last parameter fastest (an odometer over grid indices).
      std::vector<int> k(params.size(), 0);
      std::vector<double> y(params.size());
      for (long n = 0; n < points; ++n) {
        for (std::size_t i = 0; i < params.size(); ++i)
          y[i] = s.snap(i, params[i].lo + (params[i].hi - params[i].lo) / (opts.grid - 1) * k[i]);
        const double fy = s.at(y);
        if (fy < best_f) {
          best_f = fy;
          x = y;
        }
        for (std::size_t i = params.size(); i-- > 0;) {
          if (++k[i] < opts.grid) break;
          k[i] = 0;
        }
      }
    }
  }
  for (int r = 0; r < rounds; ++r) {
    bool moved = false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double v = s.line(x, i, opts.grid);
      if (v != x[i]) {
        x[i] = v;
        moved = true;
      }
    }
    if (!moved) break;
  }
  return s.finish();
}

}  // namespace fabricsim
