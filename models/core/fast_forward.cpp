#include "models/core/fast_forward.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/errors.hpp"

namespace fabricsim {

void OutputProgress::start(std::uint64_t total) {
  total_ = total;
  got_ = 0;
  next_ = total_ / kSamples;
  times_.clear();
  times_.reserve(kSamples);
}

double OutputProgress::all_but(double rest) const {
  // Sample i (0-based) is when (i + 1)% was in.
  const double at = (1.0 - rest / static_cast<double>(total_)) * kSamples - 1;
  const auto lo = static_cast<std::size_t>(std::max(0.0, std::floor(at)));
  if (lo + 1 >= times_.size()) return times_.back();
  const double f = at - static_cast<double>(lo);
  return times_[lo] + f * (times_[lo + 1] - times_[lo]);
}

namespace {
// Periods two probes from `base` keep: B + 2B.
std::uint64_t cost(std::uint64_t base) {
  return 3 * base;
}
// Rounds of probes run while all of them together keep fewer than half the
// call's periods, so a call that then runs whole costs at most 1.5 times
// itself.
bool affordable(std::uint64_t spent, std::uint64_t round, std::uint64_t periods) {
  return 2 * (spent + round) < periods;
}
}  // namespace

FastForward::FastForward(std::uint64_t periods, std::uint64_t base, double tolerance,
                         std::vector<FfValue> kinds)
    : periods_(periods),
      base_(std::max<std::uint64_t>(1, base)),
      tolerance_(tolerance),
      kinds_(std::move(kinds)) {
  if (!worth(periods_, base_))
    throw InvariantError("fast-forward: two probes from " + std::to_string(base_) +
                         " periods cost more than the call's " + std::to_string(periods_));
  if (kinds_.empty() || kinds_[0] != FfValue::kEnd ||
      std::count(kinds_.begin(), kinds_.end(), FfValue::kEnd) != 1)
    throw InvariantError("fast-forward: value 0, and no other, must be the call's end");
}

bool FastForward::worth(std::uint64_t periods, std::uint64_t base) {
  return affordable(0, cost(std::max<std::uint64_t>(1, base)), periods);
}

std::uint64_t FastForward::kept_now() const {
  if (whole_) return periods_;
  return base_ << round_probe_;
}

bool FastForward::finish_probe(std::vector<double> values, OutputProgress progress) {
  if (done_) throw InvariantError("fast-forward: a probe ended after the call had its figures");
  if (values.size() != kinds_.size())
    throw InvariantError("fast-forward: a probe measured " + std::to_string(values.size()) +
                         " values, not " + std::to_string(kinds_.size()));
  probes_.push_back({kept_now(), std::move(values), std::move(progress)});
  if (whole_) {
    values_ = probes_.back().values;
    error_ = 0;
    done_ = true;
    return false;
  }
  if (++round_probe_ < 2) return true;
  settle();
  return !done_;
}

// The round's two probes are in: extrapolate, or start again.
void FastForward::settle() {
  const Probe& a = probes_[probes_.size() - 2];
  const Probe& c = probes_.back();
  const auto rest = static_cast<double>(periods_ - c.kept);
  const auto span = static_cast<double>(c.kept - a.kept);
  // The longer probe's lead over the shorter one, all but q of the output
  // alike: q over 5-30% and 30-60% of the shorter probe's output.
  double t = 0, drift = 1;
  if (a.progress.complete() && c.progress.complete()) {
    double lead[2] = {0, 0};
    for (int j = 5; j < 60; ++j) {
      const double q = static_cast<double>(a.progress.total()) * j / OutputProgress::kSamples;
      lead[j < 30 ? 0 : 1] += (c.progress.all_but(q) - a.progress.all_but(q)) / (j < 30 ? 25 : 30);
    }
    t = (lead[0] * 25 + lead[1] * 30) / 55 / span;
    if (t > 0) drift = std::fabs(lead[0] - lead[1]) / (t * span);
  }
  const double end = c.values[0] + rest * t;
  // The end's own slope between the probes, to scale the phases' slopes.
  const double end_slope = (c.values[0] - a.values[0]) / span;
  std::vector<double> out(c.values.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double x = c.values[i], slope = (x - a.values[i]) / span;
    if (a.values[i] < 0 || x < 0) {
      out[i] = -1;  // the call has no such phase
      continue;
    }
    switch (kinds_[i]) {
      case FfValue::kEnd:
        out[i] = end;
        break;
      case FfValue::kFinish:
        // A finish that did not move between the probes (a GPU without
        // output finishes at its start) stays; the others keep their
        // distance before the end.
        out[i] = x == a.values[i] ? x : end - (c.values[0] - x);
        break;
      case FfValue::kPhase:
        out[i] = std::min(end, x + rest * (end_slope > 0 ? slope / end_slope * t : t));
        break;
      case FfValue::kCount:
        out[i] = x + rest * slope;
        break;
    }
  }
  // The ends' own slope is a second, noisier measure of T (the last GPU's
  // jitter is in it): where it disagrees with the progress by more than
  // that, the probes' tails differ, and the regime is not the same.
  const double error = t > 0 && end > 0 ? rest * (t * drift + std::fabs(end_slope - t)) / end : 1;
  if (t > 0 && error <= tolerance_) {
    values_ = std::move(out);
    error_ = error;
    done_ = true;
    return;
  }
  rejected_ = std::max(rejected_, error);
  round_probe_ = 0;
  std::uint64_t spent = 0;
  for (const Probe& p : probes_) spent += p.kept;
  if (affordable(spent, cost(2 * base_), periods_)) {
    base_ *= 2;
  } else {
    whole_ = true;  // the probes would cost more than the call: simulate it
  }
}

}  // namespace fabricsim
