#include "models/core/fast_forward.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/errors.hpp"

namespace fabricsim {

void OutputProgress::start(std::uint64_t step) {
  step_ = std::max<std::uint64_t>(1, step);
  got_ = 0;
  next_ = step_;
  last_ = 0;
  times_.clear();
}

double OutputProgress::all_but(double rest) const {
  // Sample i (0-based) is when (i + 1) steps were in.
  const double at = (static_cast<double>(got_) - rest) / static_cast<double>(step_) - 1;
  if (at <= 0) return times_.front();
  const auto lo = static_cast<std::size_t>(std::floor(at));
  if (lo + 1 >= times_.size()) return times_.back();
  const double f = at - static_cast<double>(lo);
  return times_[lo] + f * (times_[lo + 1] - times_[lo]);
}

namespace {
// Periods the first two rounds' probes from `base` keep: B + 2B, then 4B (a
// later round reuses the previous round's longer probe as its shorter one,
// so it costs its longer probe alone).
std::uint64_t cost(std::uint64_t base) {
  return 7 * base;
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
    throw InvariantError("fast-forward: two rounds of probes from " + std::to_string(base_) +
                         " periods keep half the call's " + std::to_string(periods_) + " or more");
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

bool FastForward::finish_probe(std::vector<double> values, std::vector<OutputProgress> lanes) {
  if (done_) throw InvariantError("fast-forward: a probe ended after the call had its figures");
  if (values.size() != kinds_.size())
    throw InvariantError("fast-forward: a probe measured " + std::to_string(values.size()) +
                         " values, not " + std::to_string(kinds_.size()));
  probes_.push_back({kept_now(), std::move(values), std::move(lanes)});
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

namespace {
// What one lane's output says of the period's time: the longer probe's lead
// over the shorter one, all but q of the lane's output alike, over q in
// 5-30% and 30-60% of the shorter probe's lane.
struct LaneLead {
  double t = 0;       // the period's time (0: the lane has too few samples)
  double drift = 0;   // how far the two parts' leads differ, a fraction of the lead
  double ends_t = 0;  // the period's time from the lane's last outputs
};

LaneLead lane_lead(const OutputProgress& a, const OutputProgress& c, double span) {
  LaneLead l;
  if (!a.complete() || !c.complete()) return l;
  double lead[2] = {0, 0};
  for (int j = 5; j < 60; ++j) {
    const double q = static_cast<double>(a.total()) * j / 100;
    lead[j < 30 ? 0 : 1] += (c.all_but(q) - a.all_but(q)) / (j < 30 ? 25 : 30);
  }
  l.t = (lead[0] * 25 + lead[1] * 30) / 55 / span;
  if (l.t <= 0) return LaneLead{};
  l.drift = std::fabs(lead[0] - lead[1]) / (l.t * span);
  l.ends_t = (c.last() - a.last()) / span;
  return l;
}
}  // namespace

// The call's values from the round's probes, its end given: every value
// carried over the `rest` skipped periods its own way.
std::vector<double> FastForward::extrapolate(const Probe& a, const Probe& c, double end,
                                             double rest, double span, double end_slope) const {
  // The call's own time per skipped period, to carry the phases over.
  const double t = rest > 0 ? (end - c.values[0]) / rest : end_slope;
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
        // Its own slope, scaled as the end's slope is to the call's.
        out[i] = std::min(end, x + rest * (end_slope > 0 ? slope / end_slope * t : t));
        break;
      case FfValue::kCount:
        out[i] = x + rest * slope;
        break;
    }
  }
  return out;
}

// The round's two probes are in: extrapolate, or start again.
void FastForward::settle() {
  const Probe& a = probes_[probes_.size() - 2];
  const Probe& c = probes_.back();
  const auto rest = static_cast<double>(periods_ - c.kept);
  const auto span = static_cast<double>(c.kept - a.kept);
  // Every lane goes on at its own rate: the call's last output is the lane
  // whose last output, carried over the skipped periods at its rate, comes
  // last (GPUs that share links and engines unevenly fall behind in
  // proportion to the call: the tail, not the average).
  Round r;
  r.base = a.kept;
  double last = 0, lane_end = -1, t_sum = 0;
  int lanes = 0;
  const std::size_t n = std::min(a.lanes.size(), c.lanes.size());
  for (const OutputProgress& lane : c.lanes) last = std::max(last, lane.last());
  for (std::size_t s = 0; s < n; ++s) {
    const LaneLead l = lane_lead(a.lanes[s], c.lanes[s], span);
    if (l.t <= 0) continue;
    ++lanes;
    t_sum += l.t;
    const double e = c.lanes[s].last() + rest * l.t;
    if (e > lane_end) {
      lane_end = e;
      r.lane = static_cast<int>(s);
      r.t = l.t;
      r.drift = l.drift;
      r.ends_t = l.ends_t;
    }
  }
  r.t_mean = lanes > 0 ? t_sum / lanes : 0;
  // The call's end between the probes: its slope, and its change since the
  // previous round (whose longer probe is this round's shorter one).
  r.end_slope = (c.values[0] - a.values[0]) / span;
  const bool before = !rounds_.empty() && rounds_.back().end_slope > 0;
  // First, the lanes' progress: the kernels end as far after the last
  // output as in the longer probe. The lane's last outputs and the kernels'
  // ends give second, noisier measures of the period (the last output's
  // jitter is in them): where one disagrees with the progress by more than
  // that, the probes' tails differ, and the regime is not the same.
  double end = lanes > 0 ? c.values[0] + (lane_end - last) : 0;
  const double t_call = rest > 0 ? (end - c.values[0]) / rest : r.t;
  const double tails = std::max(std::fabs(r.ends_t - r.t), std::fabs(r.end_slope - t_call));
  // And the period's change since the previous round, by the progress and
  // by the ends, the larger: where it still moves as the probes double (a
  // regime that settles over longer than the shorter probe, or one whose
  // period wanders by more than a probe averages out), the skipped periods
  // may move as far.
  double moved_t = -1, moved_end = -1;  // each change, -1 where a round lacks it
  if (!rounds_.empty()) {
    const Round& p = rounds_.back();
    if (r.t > 0 && p.t > 0) moved_t = std::fabs(r.t - p.t) / r.t;
    if (r.end_slope > 0 && p.end_slope > 0) moved_end = std::fabs(r.end_slope - p.end_slope) / r.end_slope;
  }
  r.spread = std::max(moved_t, moved_end);
  r.error = r.t > 0 && end > 0 ? rest * (r.t * (r.drift + std::max(0.0, r.spread)) + tails) / end : 1;
  // Not before a previous round measured the period too (the spread).
  r.accepted = r.t > 0 && r.error <= tolerance_ && r.spread >= 0;
  const bool ends_held_better = moved_end >= 0 && moved_end < moved_t;
  if (!r.accepted && before && r.end_slope > 0 && (r.drift > tolerance_ || ends_held_better) &&
      moved_end <= tolerance_) {
    // Else the ends alone, where the progress is not steady within the
    // round (its drift over the tolerance: push, whose last GPU falls
    // behind in proportion to the call) or the ends' slope held better
    // than the progress from the previous round (nvl72's NVLS: the slowest
    // of 72 lanes 24.23 then 24.02 ns a period, the ends 23.36 then 23.34),
    // and once that slope holds from one doubling to the next within the
    // tolerance: a tail that grows with the call is then in the slope, not
    // taken for the period. Where the progress is steady and held better,
    // its period is the measure, and ends that disagree with it count
    // against it above (dgx-h100's ring, rounds from 16 and 32 MiB: the
    // progress reads 8.467 then 8.456 ns, the ends 8.476 then 8.381, against
    // 8.48 in whole calls).
    // Where the progress moved since the previous round by more than its
    // own drift, its change is the period's too, and counts (in a regime
    // that wanders two end slopes can agree by chance).
    const double moved = moved_t > r.drift ? r.spread : moved_end;
    const double e = c.values[0] + rest * r.end_slope;
    const double err = rest * r.end_slope * moved / e;
    if (err <= tolerance_) {
      end = e;
      r.error = err;
      r.accepted = r.by_ends = true;
    } else {
      r.error = std::min(r.error, err);
    }
  }
  if (r.accepted) {
    values_ = extrapolate(a, c, end, rest, span, r.end_slope);
    error_ = r.error;
    done_ = true;
    rounds_.push_back(r);
    return;
  }
  rounds_.push_back(r);
  rejected_ = std::max(rejected_, r.error);
  // The next round's shorter probe is this round's longer one (2B): it
  // costs one probe, of 4B.
  std::uint64_t spent = 0;
  for (const Probe& p : probes_) spent += p.kept;
  if (affordable(spent, 4 * base_, periods_)) {
    base_ *= 2;
    round_probe_ = 1;
  } else {
    whole_ = true;  // the probes would cost more than the call: simulate it
    round_probe_ = 0;
  }
}

}  // namespace fabricsim
