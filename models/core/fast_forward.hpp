// Steady-state fast-forward of one long collective call, as plain logic (no
// SystemC): which probes the sweep simulates and what the call's figures are.
//
// A call's plan (models/core/collective.hpp) repeats a structural period: an
// ideal ring's n slices, a loop of every NCCL channel, a round of the
// symmetric kernel's chunks over all warps. K whole periods can be taken
// out of the call while its start, its partial last loop and its tail stay
// as they are (the plans' shortened()). Once the pipeline is full every
// period costs the same time T, so the call's time is that of a shorter
// call of the same plan plus T for every period taken out.
//
// The call is simulated as probes of its plan, per packet, launch, fill,
// tail and drain included: a round of two that keep k_a = B and k_c = 2B
// periods. Their output progress per lane (OutputProgress: the output one
// GPU sent, or one received, against time) gives each lane's T: the longer
// probe is the shorter one with B periods more before the same tail, so the
// times at which each had all but q elements of the lane differ by B T for
// every q in the steady part. That difference is averaged over q from 5% to
// 60% of the shorter probe's lane (from its end), not read at the end alone,
// where the tail's own variation would be carried over every skipped period
// (dgx-h100's ring, probes of 2 and 4 MiB: ends 4.89 us/MiB apart, whole
// calls 4.33). Lanes, because GPUs that share links and engines unevenly go
// at different rates and the slowest sets the end (nvl72's NVLS, 32 and 64
// MiB probes: the slowest of 72 lanes 26.8 ns a period, their mean 24.6):
// the lane whose last output, carried at its rate, comes last is the call's.
//
// Over 5-30% and 30-60% that lane's lead must agree (how far apart they
// are: the drift), and its last outputs' and the kernels' ends must give the
// same T within their jitter; from the second round on, T and the kernels'
// end slope must also hold from the previous round (their larger change:
// the spread). The drift, the spread and the larger disagreement, times
// the skipped share of the call, are the estimated error: a period that
// still moves as the probes double may move as far over the skipped
// periods (a fabric near its links' capacity, whose queues fill and drain
// over many periods, as dgx-h100's ideal NVLS with shallow switch inputs;
// docs/models/fast_forward.md). No round is accepted before a
// second has been compared with it: a first round of probes too short to
// see a slower regime agrees with itself, and only the period's change
// from one round to the next (the spread) shows that. Above the
// tolerance, the kernels' end slope alone is accepted where the progress
// is not steady within the round or the slope held better than T since
// the previous round, once it holds from that round to this one within the
// tolerance, and T too where T moved by more than its drift (a tail that
// grows with the call, as GPUs fall behind in proportion to it, is in that
// slope). Else B doubles, the next
// round's shorter probe being this round's longer one, while all probes
// together keep fewer than half the call's periods; when they would not,
// the call is simulated whole (exact, and said so), at most 1.5 times its
// own cost in all. A fabric that fills slowly drifts until B is past its
// fill; a regime that begins after the longer probe goes unseen (nvl72's
// NVLS: 1.6 us/MiB from 1 to 4 MiB, 2.6 from 4 to 16, 1.65 from 16 to 32,
// 1.4 from 32 to 64: above 16 MiB the read window paces the GPUs).
//
// The call's other figures: every GPU finishes as far before the end as in
// the longer probe (the tail is the same); a phase's end (a ring's
// reduce-scatter, hierarchical's phases) moves by its slope between the two
// probes, scaled to the call's period; traffic counts are affine in the
// periods.
//
// Why probes, not a shift of the fabric's state by whole periods: the same
// assumption (the steady state repeats), but nothing in the fabric has to be
// moved (every module's pending times, every packet's address and step, the
// engines' tables), so no model can be left out of the shift as models are
// added; the steady state is measured, and checked, in the model's own
// output. The cost: shorter calls, at least three (two rounds), instead of one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

// What a probe's values are, so each is carried over the skipped periods
// its own way.
enum class FfValue {
  kEnd,     // the call's time from its start (value 0, exactly one)
  kFinish,  // a GPU's finish: the same distance before the end as in the probe
            // (or where it was, when it did not move between the probes)
  kPhase,   // a phase's end: its own slope, scaled to the period time
  kCount,   // a count (bytes): affine in the periods
};

// One lane of a probe's output progress: the times at which every `step`
// elements of the lane's output had come in, and its total. A lane is the
// output one GPU sent (the owner of a multicast result, or of a copy) or,
// where no packet says who, the output one GPU received.
class OutputProgress {
 public:
  // Samples whose spacing is `step` elements (at least 1).
  void start(std::uint64_t step);
  void add(std::uint64_t elements, double t) {
    got_ += elements;
    last_ = t;
    while (got_ >= next_) {
      times_.push_back(t);
      next_ += step_;
    }
  }
  // Enough samples to read a lead from (at least kMinSamples).
  static constexpr std::size_t kMinSamples = 40;
  bool complete() const { return times_.size() >= kMinSamples; }
  std::uint64_t total() const { return got_; }
  double last() const { return last_; }  // when its last output came in
  // When it had all but `rest` elements (0 <= rest < total - step),
  // interpolated between the samples.
  double all_but(double rest) const;

 private:
  std::uint64_t step_ = 1, got_ = 0, next_ = 1;
  double last_ = 0;
  std::vector<double> times_;
};

class FastForward {
 public:
  struct Probe {
    std::uint64_t kept = 0;      // periods the probe kept (the call: K)
    std::vector<double> values;  // what it measured (times from its start, counts)
    std::vector<OutputProgress> lanes;  // its output against time (from its start)
  };
  // What a round of two probes measured, accepted or not, for the lane that
  // ends last: the period's time from its output progress (t) and from its
  // last outputs (ends_t), the progress lead's drift (a fraction of B t);
  // and the estimated error; t <= 0 when no lane's progress was complete.
  struct Round {
    std::uint64_t base = 0;  // the first probe's periods (the second's: 2x)
    int lane = -1;           // the lane that ends last, whose figures follow
    double t = 0, ends_t = 0, drift = 0, error = 0;
    double t_mean = 0;  // the period's time averaged over the lanes
    double end_slope = 0;  // the kernels' end between the probes, per period
    // How far t or end_slope moved since the previous round, the larger (a
    // fraction; -1: no previous round measured either). Counted in the
    // error: a period that still changes as the probes double has not
    // settled.
    double spread = -1;
    bool accepted = false;
    bool by_ends = false;  // accepted from end_slope holding since the previous round
  };

  // A call of `periods` (K) removable periods; the first probe keeps `base`
  // (B >= 1); `tolerance`: the largest estimated error accepted (a
  // fraction); `kinds`: what each probe value is (kinds[0] == kEnd).
  FastForward(std::uint64_t periods, std::uint64_t base, double tolerance,
              std::vector<FfValue> kinds);

  // Whether two rounds of probes from `base` (B, 2B, 4B) keep fewer than
  // half the call's periods: no round is accepted before a second.
  static bool worth(std::uint64_t periods, std::uint64_t base);

  bool done() const { return done_; }
  // Periods the probe to run now takes out of the call (0: the whole call).
  std::uint64_t removed() const { return periods_ - kept_now(); }
  // The probe ended with these values (a negative value: "none", as a phase
  // the call does not have) and its output progress per lane, both from its
  // start. Returns true when another probe follows.
  bool finish_probe(std::vector<double> values, std::vector<OutputProgress> lanes);

  // After done(): the call's values (extrapolated, or simulated when whole),
  // the estimated error of value 0, whether the call was simulated whole.
  const std::vector<double>& values() const { return values_; }
  double estimated_error() const { return error_; }
  bool whole() const { return whole_; }
  // Periods taken out of the extrapolated call; 0 when whole.
  std::uint64_t skipped() const { return whole_ ? 0 : periods_ - probes_.back().kept; }
  std::uint64_t periods() const { return periods_; }
  // The first probe's periods of the last round (the accepted one when done).
  std::uint64_t base() const { return base_; }
  // Every probe run, in order (a restart's too).
  const std::vector<Probe>& probes() const { return probes_; }
  // The largest estimated error of a round that was not accepted (0: none).
  double rejected_error() const { return rejected_; }
  // Every round settled, in order (the accepted one last).
  const std::vector<Round>& rounds() const { return rounds_; }

 private:
  std::uint64_t kept_now() const;
  void settle();
  std::vector<double> extrapolate(const Probe& a, const Probe& c, double end, double rest,
                                  double span, double end_slope) const;

  std::uint64_t periods_;
  std::uint64_t base_;
  double tolerance_;
  std::vector<FfValue> kinds_;
  int round_probe_ = 0;  // probes run in this round (0..1)
  bool whole_ = false;   // simulating the whole call
  bool done_ = false;
  std::vector<Probe> probes_;
  std::vector<Round> rounds_;
  std::vector<double> values_;
  double error_ = 0;
  double rejected_ = 0;
};

}  // namespace fabricsim
