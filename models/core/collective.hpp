// Collectives as plain logic (no SystemC): the sweep of calls, how a ring
// cuts a message into chunks and packet-sized slices, the deterministic input
// data, and the golden results every output element is checked against.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/config.hpp"
#include "models/core/fast_forward.hpp"
#include "models/core/nccl_nvls.hpp"
#include "models/core/nccl_symmetric.hpp"
#include "models/core/nccl_ring.hpp"
#include "models/core/nccl_tuner.hpp"
#include "models/core/reduction_alu.hpp"
#include "models/core/time.hpp"
#include "models/core/training.hpp"

namespace fabricsim {

// Input element `element` of GPU `gpu` in call `call`: a deterministic value
// (bit pattern of the dtype) spread over signs and a few binades, so sums
// round and depend on order, but never overflow for up to thousands of GPUs.
std::uint32_t input_value(std::uint64_t seed, std::uint64_t call, int gpu, std::uint64_t element,
                          DType t);
// Fills `count` elements starting at `first` into `out` (little endian).
void fill_input(std::uint64_t seed, std::uint64_t call, int gpu, std::uint64_t first,
                std::uint64_t count, DType t, std::uint8_t* out);

// A message of `elements` per GPU cut into n chunks (balanced) and each chunk
// into slices of at most `slice_elements` (one packet's payload).
struct RingPlan {
  int n = 1;
  std::uint64_t elements = 0;
  std::uint64_t slice_elements = 1;

  std::uint64_t chunk_begin(int c) const {
    return elements * static_cast<std::uint64_t>(c) / static_cast<std::uint64_t>(n);
  }
  std::uint64_t chunk_elements(int c) const { return chunk_begin(c + 1) - chunk_begin(c); }
  std::uint64_t slices(int c) const {
    return (chunk_elements(c) + slice_elements - 1) / slice_elements;
  }
  // Which chunk holds element e.
  int chunk_of(std::uint64_t e) const;
};

// Hierarchical all-reduce on `domains` scale-up domains of `per_domain` GPUs
// (GPU g: domain g / per_domain, rank g % per_domain):
//  1. reduce-scatter inside each domain (ring over its ranks): rank r ends
//     with chunk r of its domain's sum (`intra`, n = per_domain);
//  2. all-reduce of chunk r across the domains, among the GPUs of rank r
//     (ring over the domains: chunk r cut into `domains` sub-chunks, a
//     reduce-scatter then an all-gather), over the scale-out network;
//  3. all-gather inside each domain of the chunks from step 2.
// Packet steps number the three phases in one sequence.
struct HierPlan {
  int domains = 1;
  int per_domain = 1;
  bool tree = false;  // phase 2 by a binary tree (collective.inter=tree or double_tree)
  // collective.inter=double_tree: the first part of each chunk (tree_split)
  // goes over tree 0, the rest over tree 1, tree 0 mirrored (NCCL's double
  // binary tree: a domain inner in one tree is a leaf in the other).
  bool double_tree = false;
  RingPlan intra;

  int intra_last() const { return per_domain - 2; }           // phase 1: 0 .. D-2
  int inter_first() const { return per_domain - 1; }          // phase 2 reduce-scatter (tree: up)
  // With one domain there is no phase 2: both are inter_first() - 1.
  int inter_rs_last() const {
    return domains == 1 ? inter_first() - 1 : inter_first() + (tree ? 0 : domains - 2);
  }
  // Phase 2 all-gather (tree: down).
  int inter_last() const {
    return domains == 1 ? inter_first() - 1 : inter_first() + (tree ? 1 : 2 * domains - 3);
  }
  // Tree t over the domains is a heap of positions (position p's children:
  // 2p+1 and 2p+2; position 0 the root); domain d sits at position d in tree
  // 0 and m-1-d in tree 1 (the mapping is its own inverse).
  int tree_pos(int t, int d) const { return t == 0 ? d : domains - 1 - d; }
  int tree_parent(int t, int d) const { return tree_pos(t, (tree_pos(t, d) - 1) / 2); }
  bool tree_root(int t, int d) const { return tree_pos(t, d) == 0; }
  int tree_children(int t, int d) const {
    const int p = tree_pos(t, d);
    return (2 * p + 1 < domains ? 1 : 0) + (2 * p + 2 < domains ? 1 : 0);
  }
  int tree_child(int t, int d, int k) const { return tree_pos(t, 2 * tree_pos(t, d) + 1 + k); }
  // Elements of chunk r on tree 0 (whole slices from the chunk's start).
  std::uint64_t tree_split(int r) const {
    const std::uint64_t c = intra.chunk_elements(r);
    if (!double_tree) return c;
    const std::uint64_t s = intra.slice_elements;
    return std::min(c, (c / 2 + s - 1) / s * s);
  }
  // The tree of the element `offset` elements into chunk r.
  int tree_of(int r, std::uint64_t offset) const { return offset < tree_split(r) ? 0 : 1; }
  int gather_first() const { return inter_last() + 1; }       // phase 3
  int last() const { return gather_first() + per_domain - 2; }
  // Chunk r's sub-chunks (element offsets relative to intra.chunk_begin(r)).
  RingPlan inter(int r) const {
    RingPlan p;
    p.n = domains;
    p.elements = intra.chunk_elements(r);
    p.slice_elements = intra.slice_elements;
    return p;
  }
};

// How a call was fast-forwarded (collective.fast_forward;
// models/core/fast_forward.hpp). Its start, end and per-GPU times are then
// the extrapolated call's, from the start of its last probe.
struct FastForwardRecord {
  bool used = false;   // probes were run for it
  bool whole = false;  // their estimate was not accepted: the call then ran whole
  std::string why_not;  // collective.fast_forward=auto, a long call run whole: why
  std::uint64_t period_bytes = 0;  // per GPU
  std::uint64_t periods = 0;       // whole periods the call could lose
  std::uint64_t skipped = 0;       // periods not simulated
  double error = 0;                // estimated error of the call's time (a fraction)
  double rejected_error = 0;       // of a round of probes not accepted (0: none)
  std::vector<std::uint64_t> probe_bytes;  // per GPU, every probe in order
  std::vector<Ps> probe_time;
  std::vector<FastForward::Round> rounds;  // every round of probes settled, in order
  double tier_bytes[2] = {0, 0};  // the call's link traffic per tier, extrapolated
  Ps simulated_end = 0;           // the last probe's end (the next call starts after it)
};

// One call of the sweep.
struct CollectiveCall {
  std::uint64_t bytes = 0;  // per GPU, as nccl-tests reports "size"
  int iteration = 0;
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgo algorithm = CollectiveAlgo::kRing;
  int partition = 0;   // the GPU groups it runs on (CollectiveSweep::partition)
  int workload_call = -1;  // collective.workload: its index in the file's calls
  Ps gap = 0;          // after the previous call ends (compute, or collective.gap_ns)
  // What the fabric's links had carried when the call ended, per tier
  // (scale-up, scale-out; the fabric's on_call_end fills it).
  double tier_bytes[2] = {0, 0};
  Ps start = 0;
  Ps end = 0;
  std::uint64_t wrong = 0;     // output elements that differ from the golden result
  std::uint64_t checked = 0;   // output elements compared
  std::uint64_t rounded = 0;   // of those, not bit-equal but within the rounding tolerance
  bool finished = false;
  // Hierarchical all-reduce: when the last GPU had its chunk reduced inside
  // its domain (phase 1), and across the domains (phase 2).
  Ps intra_done = 0;
  Ps inter_done = 0;
  std::uint64_t stores_waiting_max = 0;  // NVLS all-reduce: most stores a GPU held unsent
  int channels = 0;  // collective.protocol other than ideal: NCCL channels it used
  Protocol protocol = Protocol::kIdeal;  // the protocol it ran with (auto: the tuner's pick)
  // collective.registration=symmetric: NCCL's symmetric kernel RSxLDMC_AGxSTMC
  // runs it (algorithm nvls, on `channels` CTAs; protocol stays kIdeal).
  bool symmetric = false;
  std::vector<Ps> gpu_done;    // when each GPU had its whole output
  // When each GPU ended its first phase (ring all-reduce: its chunk fully
  // reduced; hierarchical: reduced inside its domain) and, hierarchical, its
  // second (reduced across the domains); 0: no such phase.
  std::vector<Ps> gpu_mid;
  std::vector<Ps> gpu_inter;
  FastForwardRecord ff;
};

// The sweep of an nccl-tests-like run and the golden results, shared by the
// GPUs of one fabric.
class CollectiveSweep {
 public:
  // `per_domain`: the GPUs of one scale-up domain (the hierarchical
  // algorithm's groups; the whole fabric when it has one domain).
  CollectiveSweep(const Config& cfg, int gpus, int per_domain);

  const CollectiveConfig& config() const { return cfg_; }
  int gpus() const { return n_; }
  std::uint64_t seed() const { return seed_; }
  bool done() const { return current_ >= calls_.size(); }
  std::size_t current_index() const { return current_; }
  CollectiveCall& current() { return calls_[current_]; }
  const std::vector<CollectiveCall>& calls() const { return calls_; }
  // The current call's chunks: over all GPUs, or (hierarchical) over the
  // ranks of one domain.
  const RingPlan& plan() const { return plan_; }
  bool hierarchical() const { return current().algorithm == CollectiveAlgo::kHierarchical; }
  // collective.protocol other than ideal: the current call's channels,
  // loops, chunks and slices as NCCL cuts them (else nullptr).
  const NcclRingPlan* nccl_plan() const { return nccl_ ? &nccl_plan_ : nullptr; }
  // The protocol's sizes the current call's plan was cut with.
  const NcclRingShape& nccl_shape() const { return nccl_shape_; }
  // collective.protocol other than ideal with collective.algorithm=nvls: the
  // current call's NVLS channels, loops and pieces, and their sizes.
  const NcclNvlsPlan& nvls_plan() const { return nvls_plan_; }
  const NcclNvlsShape& nvls_shape() const { return nvls_shape_; }
  const NcclSymmetricPlan& symmetric_plan() const { return symmetric_plan_; }
  const CollectiveCall& current() const { return calls_[current_]; }
  // The GPU groups of a call: partition 0 is every GPU in one group.
  const Partition& partition(int k) const { return partitions_[static_cast<size_t>(k)]; }
  const std::vector<Partition>& partitions() const { return partitions_; }
  // collective.workload: the file's name and its calls, else nullptr.
  const TrainingWorkload* workload() const { return workload_.calls.empty() ? nullptr : &workload_; }
  const HierPlan& hier() const { return hier_; }
  // GPU g ended its first phase (ring all-reduce: reduce-scatter;
  // hierarchical: inside its domain) / hierarchical phase 2, at t.
  void mark_mid(int g, Ps t) {
    current().gpu_mid[static_cast<size_t>(g)] = t;
    current().intra_done = std::max(current().intra_done, t);
  }
  void mark_inter(int g, Ps t) {
    current().gpu_inter[static_cast<size_t>(g)] = t;
    current().inter_done = std::max(current().inter_done, t);
  }

  // Starts the current call at t (sets its plan).
  void begin(Ps t);
  // How a call starts on the GPUs: f(t) starts the current call on every GPU
  // at t (the fabric that owns the GPUs sets it).
  void set_start_call(std::function<void(Ps)> f) { start_call_ = std::move(f); }
  // Starts the current call at t: its plan, then on every GPU.
  void start(Ps t) {
    begin(t);
    if (start_call_) start_call_(t);
  }
  // Fast-forward probes watch the output progress: GPU g expects `elements`
  // of output in the current call (at its start), and `elements` more of
  // it came in at t from lane `lane` (the GPU that sent them, where a
  // packet says so, or the receiver), 0 <= lane < gpus().
  void expect_output(std::uint64_t elements) {
    ff_expected_ += elements;
    if (!ff_) return;
    // About 100 samples a lane when the lanes share the output evenly.
    ff_lanes_.resize(static_cast<std::size_t>(n_));
    for (OutputProgress& l : ff_lanes_)
      l.start(ff_expected_ / (static_cast<std::uint64_t>(n_) * 100));
  }
  void output(std::uint64_t elements, Ps t, int lane) {
    if (!ff_) return;
    if (lane < 0 || lane >= n_)
      throw InvariantError("collective: output from lane " + std::to_string(lane) + " of " +
                           std::to_string(n_) + " GPUs");
    ff_lanes_[static_cast<std::size_t>(lane)].add(elements, static_cast<double>(t - current().start));
  }
  // The call barrier: GPU g has its whole output at t. The last GPU of a
  // call ends it (on_call_end) and starts the next one on every GPU, the
  // next call's gap later. Returns true when that ended the sweep.
  bool gpu_finished(int g, Ps t);
  // How much later than the call's start GPU g starts it (straggler.*).
  Ps start_delay(int g) const { return start_delay(current_, g); }
  Ps start_delay(std::size_t call, int g) const;

  // Checks `count` output elements starting at global element `first`
  // against the golden result of the current call; counts mismatches.
  // `expected_uses`: how many GPUs will check this slice (the golden slice is
  // computed once and kept until then).
  // `group`: the checking GPU's group in the call's partition.
  void check(std::uint64_t first, std::uint64_t count, const std::uint8_t* data, int expected_uses,
             int group);
  // Checks `count` elements that must equal GPU `src`'s input at `first`
  // (all-to-all: a copy, nothing reduced).
  void check_copy(int src, std::uint64_t first, std::uint64_t count, const std::uint8_t* data);

  // Whether the end of the sweep stops the SystemC kernel (a caller running
  // several fabrics at once turns it off and runs to a fixed time).
  bool stop_kernel_when_done() const { return stop_when_done_; }
  void set_stop_kernel_when_done(bool stop) { stop_when_done_ = stop; }

  // nccl-tests' bus bandwidth factor of a call (its op on its group size).
  double bus_factor(const CollectiveCall& c) const;
  // Called by the GPU that ends a call, before the next begins.
  void set_on_call_end(std::function<void(CollectiveCall&)> f) { on_call_end_ = std::move(f); }
  // Called when a round of fast-forward probes has settled (its record is
  // the call's ff.rounds.back()), accepted or not.
  void set_on_ff_round(std::function<void(const CollectiveCall&)> f) { on_ff_round_ = std::move(f); }
  // Whether outputs are checked within a rounding tolerance, not bit for bit.
  bool tolerant() const { return tolerant_; }

 private:

  CollectiveConfig cfg_;
  StragglerConfig straggler_;
  int n_;
  std::uint64_t seed_;
  std::vector<CollectiveCall> calls_;
  std::vector<Partition> partitions_;
  TrainingWorkload workload_;
  std::function<void(CollectiveCall&)> on_call_end_;
  std::function<void(const CollectiveCall&)> on_ff_round_;
  std::function<void(Ps)> start_call_;
  std::size_t current_ = 0;
  int finished_ = 0;
  bool stop_when_done_ = true;
  RingPlan plan_;
  bool nccl_ = false;  // collective.protocol other than ideal
  Protocol protocol_ = Protocol::kIdeal;  // collective.protocol
  NcclTuner tuner_;                       // its pick when auto
  NcclRingShape shapes_[3];               // [shape_index(protocol)]
  static int shape_index(Protocol p) { return p == Protocol::kLl ? 1 : p == Protocol::kLl128 ? 2 : 0; }
  NcclRingShape nccl_shape_;              // the current call's
  NcclRingPlan nccl_plan_;
  NcclNvlsShape nvls_shape_;  // collective.algorithm=nvls
  NcclNvlsPlan nvls_plan_;
  NcclSymmetricPlan symmetric_plan_;  // the current call's, when it is symmetric
  Ps symmetric_start_ = 0;            // gpu.symmetric_start_ns
  int symmetric_ctas_ = 0;            // gpu.symmetric_ctas (0: NCCL's model)
  Ps launch_ = 0;  // gpu.launch_ns (gpu.graph_launch_ns with gpu.cuda_graph)
  Ps host_call_ = 0;  // gpu.host_call_ns (0 with gpu.cuda_graph): the shortest call
  HierPlan hier_;
  bool sharp_ = false;  // phase 2 folds in the leaves' engines, in domain order
  struct Golden {
    std::vector<std::uint8_t> data;
    int uses_left;
    std::vector<double> abs_sum;  // tolerant checks: sum of |input| per element
  };
  // reduction.order=arrival with a floating-point sum in the switches: the
  // result may differ from the member-order golden by the rounding of any
  // order, |got - golden| <= 2 (n-1) u sum|x_i| (u the unit roundoff).
  bool tolerant_ = false;
  bool within_tolerance(const Golden& g, std::uint64_t i, const std::uint8_t* got) const;
  void pick_symmetric(CollectiveCall& c, int n) const;
  // Fast-forward: whether the current call gets probes (sets ff_), its
  // plans with `removed` periods taken out, the probe's measured values and
  // the call's figures once the probes are done.
  void plan_fast_forward(CollectiveCall& c);
  void shorten(const CollectiveCall& c, std::uint64_t removed);
  std::vector<double> probe_values(const CollectiveCall& c) const;
  void apply_fast_forward(CollectiveCall& c, Ps simulated_end);
  std::optional<FastForward> ff_;
  std::size_t ff_call_ = ~std::size_t{0};  // the call ff_ is for
  std::uint64_t ff_period_ = 0;            // elements per GPU
  double ff_tier_start_[2] = {0, 0};       // link bytes when the probe began
  std::uint64_t ff_expected_ = 0;          // output elements of the call over all GPUs
  std::vector<OutputProgress> ff_lanes_;   // the probe's output against time, per lane
  std::string ff_refusal_;                 // why no call is fast-forwarded ("" none)
  // The first probe's bytes per GPU of the last accepted round: the next
  // call's probes start there (its steady state came no sooner).
  std::uint64_t ff_accepted_bytes_ = 0;
  using GoldenMap = std::unordered_map<std::uint64_t, Golden>;
  GoldenMap golden_;  // by first element and group
  // The golden slice at `first` of a group, computed on its first use.
  GoldenMap::iterator golden(std::uint64_t first, std::uint64_t count, int uses, int group);
  // Hierarchical: domain partial sums folded across the domains, in the
  // order the two rings add them.
  void hier_golden(std::uint64_t first, std::uint64_t count, std::uint8_t* out);
  std::vector<std::uint8_t> scratch_;
};

}  // namespace fabricsim
