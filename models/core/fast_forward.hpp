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
// The call is simulated as two probes of its plan that keep k_a = B and
// k_c = 2B periods, each per packet, launch, fill, tail and drain included.
// Their output progress (OutputProgress: the output the GPUs received
// against time) gives T: the longer probe is the shorter one with B periods
// more before the same tail, so the times at which each had all but q
// elements of its output differ by B T for every q in the steady part. That
// difference is averaged over q from 5% to 60% of the shorter probe's output
// (from its end), not read at the end alone, where the tail's own variation
// would be carried over every skipped period (dgx-h100's ring, probes of 2
// and 4 MiB: ends 4.89 us/MiB apart, whole calls 4.33); outputs that come in bursts (a loop's all-gather) line up
// the same way in both. Over 5-30% and 30-60% the difference must agree
// (how far apart they are: the drift), and the ends' own difference must
// give the same T within their jitter: the drift plus that disagreement,
// times the skipped share of the call, is the estimated error (dgx-h100's
// ideal NVLS from 16 and 32 MiB probes: ends 4.38 us/MiB, progress 3.62,
// whole calls 3.95 from 32 to 256 MiB: rejected). Above the tolerance the
// probes start again from 2B while all rounds together keep fewer than half
// the call's periods; when they would not, the call is simulated whole
// (exact, and said so), at most 1.5 times its own cost in all. A fabric
// that fills slowly drifts until B is past its fill; a regime that begins
// after the longer probe goes unseen (nvl72's NVLS: 1.3 us/MiB to 3 MiB,
// 2.6 from 4 to 16 MiB, 2.2 from 16 MiB on).
//
// The call's other figures: every GPU finishes as far before the end as in
// the longer probe (the tail is the same); a phase's end (a ring's
// reduce-scatter, hierarchical's phases) moves by its slope between the two
// probes, scaled to T; traffic counts are affine in the periods.
//
// Why probes, not a shift of the fabric's state by whole periods: the same
// assumption (the steady state repeats), but nothing in the fabric has to be
// moved (every module's pending times, every packet's address and step, the
// engines' tables), so no model can be left out of the shift as models are
// added; the steady state is measured, and checked, in the model's own
// output. The cost: two shorter calls instead of one.
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

// A probe's output progress: the times at which the GPUs together had
// received every 1% of the probe's total output.
class OutputProgress {
 public:
  static constexpr int kSamples = 100;
  // `total`: the output elements the probe delivers over all GPUs.
  void start(std::uint64_t total);
  void add(std::uint64_t elements, double t) {
    got_ += elements;
    while (got_ >= next_ && times_.size() < kSamples) {
      times_.push_back(t);
      next_ = total_ * (times_.size() + 1) / kSamples;
    }
  }
  bool complete() const { return times_.size() == kSamples && total_ >= kSamples; }
  std::uint64_t total() const { return total_; }
  // When it had all but `rest` elements (0 <= rest <= 99% of the total),
  // interpolated between the samples.
  double all_but(double rest) const;

 private:
  std::uint64_t total_ = 0, got_ = 0, next_ = 0;
  std::vector<double> times_;
};

class FastForward {
 public:
  struct Probe {
    std::uint64_t kept = 0;      // periods the probe kept (the call: K)
    std::vector<double> values;  // what it measured (times from its start, counts)
    OutputProgress progress;     // its output against time (from its start)
  };

  // A call of `periods` (K) removable periods; the first probe keeps `base`
  // (B >= 1); `tolerance`: the largest estimated error accepted (a
  // fraction); `kinds`: what each probe value is (kinds[0] == kEnd).
  FastForward(std::uint64_t periods, std::uint64_t base, double tolerance,
              std::vector<FfValue> kinds);

  // Whether two probes from `base` keep fewer than half the call's periods.
  static bool worth(std::uint64_t periods, std::uint64_t base);

  bool done() const { return done_; }
  // Periods the probe to run now takes out of the call (0: the whole call).
  std::uint64_t removed() const { return periods_ - kept_now(); }
  // The probe ended with these values (a negative value: "none", as a phase
  // the call does not have) and its output progress, both from its start.
  // Returns true when another probe follows.
  bool finish_probe(std::vector<double> values, OutputProgress progress);

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

 private:
  std::uint64_t kept_now() const;
  void settle();

  std::uint64_t periods_;
  std::uint64_t base_;
  double tolerance_;
  std::vector<FfValue> kinds_;
  int round_probe_ = 0;  // probes run in this round (0..1)
  bool whole_ = false;   // simulating the whole call
  bool done_ = false;
  std::vector<Probe> probes_;
  std::vector<double> values_;
  double error_ = 0;
  double rejected_ = 0;
};

}  // namespace fabricsim
