#include "models/core/collective.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "models/core/errors.hpp"
#include "models/core/rng.hpp"

namespace fabricsim {

namespace {
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The value of one little-endian floating-point element.
double element_value(DType t, const std::uint8_t* p) {
  if (t == DType::kFp32) {
    const std::uint32_t b = static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                            static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
    return fp32_to_double(b);
  }
  const auto h = static_cast<std::uint16_t>(p[0] | p[1] << 8);
  return t == DType::kFp16 ? fp16_to_double(h) : bf16_to_double(h);
}
}  // namespace

namespace {
// One GPU's input stream of one call: the part of the hash that does not
// depend on the element, taken out of fill_input's loop.
std::uint64_t stream_key(std::uint64_t seed, std::uint64_t call, int gpu) {
  return seed ^ mix(call * 0x100000001B3ULL + static_cast<std::uint64_t>(gpu));
}

// The hash of element e of a stream, in 32-bit arithmetic so that the fp32
// loop below vectorises (SSE2 has no 64-bit multiply): a Weyl step of e
// xor the key's low half, Wellons' lowbias32 rounds, with the key's high
// half mixed in between (so one GPU's stream is not another's shifted).
// Elements repeat after 2^32 (16 GiB of fp32 per GPU).
inline std::uint32_t element_hash(std::uint64_t key, std::uint64_t e) {
  std::uint32_t x = (static_cast<std::uint32_t>(e) * 0x9E3779B9u) ^ static_cast<std::uint32_t>(key);
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= static_cast<std::uint32_t>(key >> 32);
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// The element's value from its hash.
inline std::uint32_t value_of(std::uint32_t h, DType t) {
  if (t == DType::kInt32) return static_cast<std::uint32_t>(static_cast<std::int32_t>(h % 2001) - 1000);
  // +-(1 + m) * 2^e, m in [0, 1) with 20 random bits, e in [-4, 3], built
  // bit by bit (no libm on this hot path).
  const std::uint32_t m20 = (h >> 1) & 0xFFFFF;
  const std::uint32_t e4 = (h >> 21) & 7;  // e + 4
  const std::uint32_t sign = h & 1;
  if (t == DType::kFp32)  // exact: 20 mantissa bits fit in fp32's 23
    return (sign << 31) | ((123 + e4) << 23) | (m20 << 3);
  const std::uint64_t bits = (static_cast<std::uint64_t>(sign) << 63) |
                             (static_cast<std::uint64_t>(1019 + e4) << 52) |
                             (static_cast<std::uint64_t>(m20) << 32);
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return t == DType::kFp16 ? double_to_fp16(v) : double_to_bf16(v);
}
}  // namespace

std::uint32_t input_value(std::uint64_t seed, std::uint64_t call, int gpu, std::uint64_t element,
                          DType t) {
  return value_of(element_hash(stream_key(seed, call, gpu), element), t);
}

void fill_input(std::uint64_t seed, std::uint64_t call, int gpu, std::uint64_t first,
                std::uint64_t count, DType t, std::uint8_t* out) {
  // Every read response, store and golden slice comes through here (n x S
  // elements each per call): the stream key is hoisted and fp32 gets its own
  // loop, so the dtype test is not taken per element.
  const std::uint64_t key = stream_key(seed, call, gpu);
  if (t == DType::kFp32) {
    // 32-bit lanes, one store each (little-endian, as the packets carry it).
    const auto f = static_cast<std::uint32_t>(first);
    for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(count); ++i) {
      const std::uint32_t v = value_of(element_hash(key, f + i), DType::kFp32);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      std::memcpy(out + 4 * static_cast<std::size_t>(i), &v, 4);
#else
      for (std::size_t b = 0; b < 4; ++b) out[4 * i + b] = static_cast<std::uint8_t>(v >> (8 * b));
#endif
    }
    return;
  }
  const std::size_t es = element_bytes(t);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint32_t v = value_of(element_hash(key, first + i), t);
    for (std::size_t b = 0; b < es; ++b) out[i * es + b] = static_cast<std::uint8_t>(v >> (8 * b));
  }
}

int RingPlan::chunk_of(std::uint64_t e) const {
  // chunk_begin is monotone; start from the proportional guess and adjust.
  int c = static_cast<int>(e * static_cast<std::uint64_t>(n) / std::max<std::uint64_t>(1, elements));
  c = std::min(c, n - 1);
  while (c > 0 && chunk_begin(c) > e) --c;
  while (c + 1 < n && chunk_begin(c + 1) <= e) ++c;
  return c;
}

CollectiveSweep::CollectiveSweep(const Config& cfg, int gpus, int per_domain)
    : cfg_(cfg.collective),
      straggler_(cfg.straggler),
      n_(gpus),
      seed_(static_cast<std::uint64_t>(cfg.sim.seed)) {
  if (!cfg.collective.data) cfg_.check = false;  // timing only: nothing to check
  if (per_domain < 1 || gpus % per_domain != 0)
    throw InvariantError("collective: " + std::to_string(gpus) + " GPUs are not whole domains of " +
                         std::to_string(per_domain));
  hier_.per_domain = per_domain;
  hier_.domains = gpus / per_domain;
  sharp_ = cfg.topology.kind == TopologyKind::kScaleOut && cfg.scaleout.sharp;
  hier_.tree = !sharp_ && cfg.collective.inter != InterAlgo::kRing;
  hier_.double_tree = hier_.tree && cfg.collective.inter == InterAlgo::kDoubleTree;
  nccl_ = cfg.collective.protocol != Protocol::kIdeal;
  protocol_ = cfg.collective.protocol;
  if (nccl_) {
    for (const Protocol p : {Protocol::kSimple, Protocol::kLl, Protocol::kLl128})
      shapes_[shape_index(p)] = NcclRingShape::from(cfg, p);
    tuner_.graph_gbps = cfg.gpu.tuner_graph_gbps;
    tuner_.channels = static_cast<int>(cfg.collective.channels);
    tuner_.nvlink_gbps = cfg.gpu.tuner_nvlink_gbps;
    nvls_shape_ = NcclNvlsShape::from(cfg);
    launch_ = ns_to_ps(cfg.gpu.cuda_graph ? cfg.gpu.graph_launch_ns : cfg.gpu.launch_ns);
    host_call_ = cfg.gpu.cuda_graph ? 0 : ns_to_ps(cfg.gpu.host_call_ns);
    symmetric_start_ = ns_to_ps(cfg.gpu.symmetric_start_ns);
    symmetric_ctas_ = static_cast<int>(cfg.gpu.symmetric_ctas);
  }
  // Where fast-forward cannot be exact, every long call runs whole.
  if (cfg_.data)
    ff_refusal_ = "collective.data=true: the skipped elements would go unchecked";
  else if (!cfg_.workload.empty())
    ff_refusal_ = "a training workload (collective.workload): its calls run whole";
  else if (!cfg.faults.list.empty())
    ff_refusal_ = "faults are scheduled (faults.list): the probes would meet them elsewhere";
  const auto es = static_cast<std::uint64_t>(element_bytes(cfg_.dtype));
  if (!cfg_.workload.empty()) {
    // A training step: the file's calls in order, collective.iterations times.
    workload_ = load_training(cfg_.workload, cfg_.groups);
    partitions_ = training_partitions(workload_, gpus);
    for (int it = 0; it < cfg_.iterations; ++it)
      for (std::size_t i = 0; i < workload_.calls.size(); ++i) {
        const TrainingCall& t = workload_.calls[i];
        CollectiveCall c;
        c.bytes = t.bytes / es * es;
        c.iteration = it;
        c.op = t.op;
        c.algorithm = t.algorithm;
        c.workload_call = static_cast<int>(i);
        c.gap = ns_to_ps(t.compute_ns);
        for (std::size_t k = 0; k < partitions_.size(); ++k)
          if (partitions_[k].name == t.group) c.partition = static_cast<int>(k);
        calls_.push_back(c);
      }
    return;
  }
  partitions_ = {whole_fabric(gpus)};
  tolerant_ = cfg.reduction.order == FoldOrder::kArrival && uses_reduction_engine(cfg) &&
              reduces(cfg_.op) && cfg_.redop == RedOp::kSum && cfg_.dtype != DType::kInt32;
  for (auto b = static_cast<std::uint64_t>(cfg_.min_bytes);
       b <= static_cast<std::uint64_t>(cfg_.max_bytes);
       b *= static_cast<std::uint64_t>(cfg_.step_factor)) {
    for (int it = 0; it < cfg_.iterations; ++it) {
      CollectiveCall c;
      c.bytes = b / es * es;
      c.iteration = it;
      c.op = cfg_.op;
      c.algorithm = cfg_.algorithm;
      if (c.algorithm == CollectiveAlgo::kAuto)  // NCCL's tuner picks ring or NVLS per size
        c.algorithm = tuner_.all_reduce(c.bytes, gpus, auto_may_pick_nvls(cfg), protocol_).algorithm;
      if (nccl_ && cfg_.registration == Registration::kSymmetric) pick_symmetric(c, gpus);
      c.gap = calls_.empty() ? 0 : ns_to_ps(cfg_.gap_ns);
      calls_.push_back(c);
    }
    if (b > static_cast<std::uint64_t>(cfg_.max_bytes) / static_cast<std::uint64_t>(cfg_.step_factor))
      break;
  }
}

// Registered buffers: NCCL's own model picks a symmetric kernel (or none);
// it runs RSxLDMC_AGxSTMC and falls back to the normal kernels for the rest
// (models/core/nccl_symmetric.hpp).
void CollectiveSweep::pick_symmetric(CollectiveCall& c, int n) const {
  if (c.op != CollectiveOp::kAllReduce) return;
  const SymPick pick = nccl_symmetric_pick(c.bytes, n, cfg_.dtype, cfg_.redop, true, symmetric_ctas_);
  if (pick.falls_back()) return;
  if (pick.kernel != SymKernel::kRsLdMcAgStMc)
    throw ConfigError("collective.registration=symmetric: NCCL would run its " +
                      std::string(nccl_name(pick.kernel)) + " kernel for " + std::to_string(c.bytes) +
                      " B on " + std::to_string(n) + " GPUs, which the model does not implement "
                      "(it has RSxLDMC_AGxSTMC); use collective.registration=none");
  c.algorithm = CollectiveAlgo::kNvls;
  c.symmetric = true;
  c.channels = pick.ctas;
}

void CollectiveSweep::begin(Ps t) {
  CollectiveCall& c = current();
  c.start = t;
  const auto es = static_cast<std::uint64_t>(element_bytes(cfg_.dtype));
  plan_.n = hierarchical() ? hier_.per_domain : partition(c.partition).size();
  plan_.elements = c.bytes / es;
  plan_.slice_elements = static_cast<std::uint64_t>(cfg_.payload_bytes) / es;
  if (c.symmetric) {
    symmetric_plan_ = NcclSymmetricPlan(plan_.elements, es, plan_.n, c.channels);
  } else if (nccl_ && c.algorithm == CollectiveAlgo::kNvls) {
    c.protocol = Protocol::kSimple;  // NCCL runs NVLS with Simple only (auto too)
    nvls_plan_ = NcclNvlsPlan(plan_.elements, es, plan_.n, nvls_shape_);
    c.channels = nvls_plan_.channels();
  } else if (nccl_) {
    c.protocol = protocol_ == Protocol::kAuto ? tuner_.ring_protocol(c.bytes, plan_.n) : protocol_;
    nccl_shape_ = shapes_[shape_index(c.protocol)];
    nccl_plan_ = NcclRingPlan(plan_.elements, es, plan_.n, nccl_shape_);
    c.channels = nccl_plan_.channels();
  }
  if (ff_call_ != current_) plan_fast_forward(c);
  if (ff_) shorten(c, ff_->removed());
  hier_.intra = plan_;
  c.intra_done = c.inter_done = 0;  // a probe's own
  c.stores_waiting_max = 0;
  ff_expected_ = 0;
  c.gpu_done.assign(static_cast<size_t>(n_), 0);
  c.gpu_mid.assign(static_cast<size_t>(n_), 0);
  c.gpu_inter.assign(static_cast<size_t>(n_), 0);
  finished_ = 0;
  golden_.clear();
}

Ps CollectiveSweep::start_delay(std::size_t call, int g) const {
  Ps d = launch_ + (g == straggler_.gpu ? ns_to_ps(straggler_.delay_ns) : 0);
  // The kernel's own start with its protocol (NVLS runs Simple's primitives),
  // which begin() has resolved.
  if (calls_[call].symmetric) {
    d += symmetric_start_;
  } else if (nccl_) {
    const Protocol p = calls_[call].protocol;
    if (p == Protocol::kIdeal || p == Protocol::kAuto)
      throw InvariantError("collective: call " + std::to_string(call) + " has not begun");
    d += shapes_[shape_index(p)].start_ps;
  }
  if (straggler_.jitter_ns > 0) {
    // Its own stream per (call, GPU): the same seed gives the same jitter.
    Rng rng(seed_ ^ 0x5747AU, call * 0x10000u + static_cast<std::uint64_t>(g));
    d += static_cast<Ps>(rng.uniform() * static_cast<double>(ns_to_ps(straggler_.jitter_ns)));
  }
  return d;
}

bool CollectiveSweep::gpu_finished(int g, Ps t) {
  current().gpu_done[static_cast<size_t>(g)] = t;
  if (++finished_ < n_) return false;
  // The host issues calls back to back without waiting for the GPUs, one
  // per host_call_: a call whose kernels end sooner ends when the host has
  // issued the next (gpu.host_call_ns).
  const Ps end = std::max(t, current().start + host_call_);
  CollectiveCall& c = current();
  c.end = end;
  if (ff_) {
    // A probe ended: the next one starts as the call did (its gap after the
    // previous end), or the probes give the call's figures.
    c.ff.probe_bytes.push_back(plan_.elements * element_bytes(cfg_.dtype));
    c.ff.probe_time.push_back(end - c.start);
    if (on_call_end_) on_call_end_(c);
    std::vector<double> values = probe_values(c);
    // The next probe's traffic counts from here.
    ff_tier_start_[0] = c.tier_bytes[0];
    ff_tier_start_[1] = c.tier_bytes[1];
    const bool more = ff_->finish_probe(std::move(values), ff_lanes_);
    if (ff_->rounds().size() > c.ff.rounds.size()) {
      c.ff.rounds = ff_->rounds();
      if (on_ff_round_) on_ff_round_(c);
    }
    if (more) {
      start(end + c.gap);
      return false;
    }
    apply_fast_forward(c, end);
    c.finished = true;
  } else {
    c.finished = true;
    if (on_call_end_) on_call_end_(c);
  }
  ++current_;
  if (done()) return true;
  start(end + current().gap);
  return false;
}

// Fast-forward (models/core/fast_forward.hpp): a long call whose plan has
// enough whole periods gets probes; the period is the plan's own.
void CollectiveSweep::plan_fast_forward(CollectiveCall& c) {
  ff_.reset();
  ff_call_ = current_;
  if (cfg_.fast_forward == FastForwardMode::kOff ||
      c.bytes < static_cast<std::uint64_t>(cfg_.fast_forward_min_bytes))
    return;
  if (!ff_refusal_.empty()) {
    c.ff.why_not = ff_refusal_;
    return;
  }
  const auto es = static_cast<std::uint64_t>(element_bytes(cfg_.dtype));
  std::uint64_t removable = 0;
  if (c.symmetric) {
    ff_period_ = symmetric_plan_.period_elements();
    removable = symmetric_plan_.removable_rounds();
  } else if (nccl_ && c.algorithm == CollectiveAlgo::kNvls) {
    ff_period_ = nvls_plan_.period_elements();
    removable = nvls_plan_.removable_loops();
  } else if (nccl_) {
    ff_period_ = nccl_plan_.period_elements();
    removable = nccl_plan_.removable_loops();
  } else {
    // Every chunk (and, hierarchical, each of its sub-chunks, on either
    // tree) loses whole slices: n slices a period, or all GPUs' x 2.
    ff_period_ = plan_.slice_elements * static_cast<std::uint64_t>(plan_.n);
    if (hierarchical()) ff_period_ = plan_.slice_elements * static_cast<std::uint64_t>(n_) * 2;
    removable = plan_.elements / ff_period_;
    removable = removable > 0 ? removable - 1 : 0;
  }
  // At least two periods: the first whole period after the start is not yet
  // the steady one where a period is long (NCCL's ring on 4 GPUs: 192 MiB
  // loops; the second loop after the start took 879 us, later ones 822-833),
  // and two probes that differ by it alone carry it over every skipped period.
  std::uint64_t least = 2;
  // NCCL's NVLS with timed copies (gpu.nvls_warp_copy_gbps): the scatters,
  // the heads' reads and the gathers run at about one rate, each at most
  // gpu.slots loops ahead of the next, and their backlog settles over about
  // twice that (2 GPUs, 512 MiB: probes of 5 and 9 loops came out 1.0% slow
  // against the whole call, estimated 0.35%; of 16 and 32 loops 0.28%).
  if (nccl_ && !c.symmetric && c.algorithm == CollectiveAlgo::kNvls && nvls_shape_.warp_copy_gbps > 0)
    least = 2 * nvls_shape_.slots;
  auto periods_of = [&](std::uint64_t bytes) { return (bytes / es + ff_period_ - 1) / ff_period_; };
  const std::uint64_t fresh =
      std::max<std::uint64_t>(least, periods_of(static_cast<std::uint64_t>(cfg_.fast_forward_probe_bytes)));
  // A sweep's next call starts its probes a doubling below the size the
  // last call accepted was accepted at (a call run whole leaves it), when
  // that is more than a fresh first probe: its probes, shorter, would be
  // rejected again. Its first round is compared with a second like any
  // other: the probes run after the last call's and may share the start
  // state it left, which no check inside one round sees.
  const std::uint64_t accepted = periods_of(ff_accepted_bytes_);
  const std::uint64_t base = accepted > fresh ? std::max(fresh, accepted / 2) : fresh;
  c.ff.period_bytes = ff_period_ * es;
  c.ff.periods = removable;
  if (!FastForward::worth(removable, base)) {
    c.ff.why_not = "too few periods: " + std::to_string(removable) + " of " +
                   std::to_string(c.ff.period_bytes) + " B, while the probes would keep " +
                   std::to_string(base) + " x 7 (two rounds), which must be under half of them "
                   "(collective.fast_forward_probe_bytes)";
    return;
  }
  // What probe_values() measures, in its order.
  std::vector<FfValue> kinds = {FfValue::kEnd, FfValue::kPhase, FfValue::kPhase, FfValue::kCount,
                                FfValue::kCount};
  kinds.insert(kinds.end(), static_cast<std::size_t>(n_), FfValue::kFinish);
  kinds.insert(kinds.end(), 2 * static_cast<std::size_t>(n_), FfValue::kPhase);
  ff_.emplace(removable, base, cfg_.fast_forward_tolerance, std::move(kinds));
  c.ff.used = true;
  const bool first = current_ == 0;
  ff_tier_start_[0] = first ? 0 : calls_[current_ - 1].tier_bytes[0];
  ff_tier_start_[1] = first ? 0 : calls_[current_ - 1].tier_bytes[1];
}

// The current call's plans with `removed` whole periods taken out.
void CollectiveSweep::shorten(const CollectiveCall& c, std::uint64_t removed) {
  if (removed == 0) return;
  const auto es = static_cast<std::uint64_t>(element_bytes(cfg_.dtype));
  if (c.symmetric) {
    symmetric_plan_ =
        NcclSymmetricPlan(plan_.elements - removed * ff_period_, es, plan_.n, c.channels);
    plan_.elements = symmetric_plan_.elements();
  } else if (nccl_ && c.algorithm == CollectiveAlgo::kNvls) {
    nvls_plan_ = nvls_plan_.shortened(removed);
    plan_.elements = nvls_plan_.elements();
  } else if (nccl_) {
    nccl_plan_ = nccl_plan_.shortened(removed);
    plan_.elements = nccl_plan_.elements();
  } else {
    plan_.elements -= removed * ff_period_;
  }
}

// What a probe measured, each affine in the periods it kept: its times from
// its start (-1: the call has no such phase) and its link traffic per tier.
std::vector<double> CollectiveSweep::probe_values(const CollectiveCall& c) const {
  auto since = [&c](Ps t) { return t == 0 ? -1.0 : static_cast<double>(t - c.start); };
  // The kernels' end (the last GPU's), not the call's: the host's floor
  // (gpu.host_call_ns) is applied to the extrapolated call.
  const Ps kernels = *std::max_element(c.gpu_done.begin(), c.gpu_done.end());
  std::vector<double> v = {static_cast<double>(kernels - c.start), since(c.intra_done),
                           since(c.inter_done), c.tier_bytes[0] - ff_tier_start_[0],
                           c.tier_bytes[1] - ff_tier_start_[1]};
  // Every GPU finishes (a GPU without output at its start, which may be 0);
  // phases a call does not have stay 0.
  for (const Ps t : c.gpu_done) v.push_back(static_cast<double>(t - c.start));
  for (const auto* times : {&c.gpu_mid, &c.gpu_inter})
    for (const Ps t : *times) v.push_back(since(t));
  return v;
}

void CollectiveSweep::apply_fast_forward(CollectiveCall& c, Ps simulated_end) {
  const FastForward& f = *ff_;
  const std::vector<double>& v = f.values();
  auto at = [&c](double x) { return x < 0 ? Ps{0} : c.start + static_cast<Ps>(std::llround(x)); };
  c.end = std::max(at(v[0]), c.start + host_call_);
  c.intra_done = at(v[1]);
  c.inter_done = at(v[2]);
  c.ff.tier_bytes[0] = v[3];
  c.ff.tier_bytes[1] = v[4];
  std::size_t k = 5;
  for (auto* times : {&c.gpu_done, &c.gpu_mid, &c.gpu_inter})
    for (Ps& t : *times) t = at(v[k++]);
  c.ff.whole = f.whole();
  c.ff.skipped = f.skipped();
  c.ff.error = f.estimated_error();
  c.ff.rejected_error = f.rejected_error();
  c.ff.simulated_end = simulated_end;
  if (!f.whole())
    ff_accepted_bytes_ = f.base() * ff_period_ * static_cast<std::uint64_t>(element_bytes(cfg_.dtype));
  ff_.reset();
}

bool CollectiveSweep::within_tolerance(const Golden& g, std::uint64_t i,
                                       const std::uint8_t* got) const {
  const std::size_t es = element_bytes(cfg_.dtype);
  const double want = element_value(cfg_.dtype, g.data.data() + i * es);
  const double have = element_value(cfg_.dtype, got);
  if (!std::isfinite(want) || !std::isfinite(have)) return false;  // those compare exactly
  const double u = cfg_.dtype == DType::kFp32 ? 0x1p-24 : cfg_.dtype == DType::kFp16 ? 0x1p-11 : 0x1p-8;
  return std::fabs(have - want) <= 2.0 * (n_ - 1) * u * g.abs_sum[i];
}

double CollectiveSweep::bus_factor(const CollectiveCall& c) const {
  const double n = partition(c.partition).size();
  switch (c.op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
      return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return 1.0;
  }
  return 1.0;
}

// The golden slice: for reductions, the left fold over the members in the
// ring's order for that chunk (c+1, c+2, ..., c: the order the ring adds
// them); for all-gather, the owner's input.
CollectiveSweep::GoldenMap::iterator CollectiveSweep::golden(std::uint64_t first,
                                                            std::uint64_t count, int uses,
                                                            int group) {
  const std::vector<int>& members = partition(current().partition).groups[static_cast<size_t>(group)];
  const int n = static_cast<int>(members.size());
  const std::uint64_t key = first * partition(current().partition).groups.size() +
                            static_cast<std::uint64_t>(group);
  auto it = golden_.find(key);
  if (it != golden_.end()) return it;
  const std::size_t es = element_bytes(cfg_.dtype);
  const std::size_t bytes = static_cast<std::size_t>(count) * es;
  const std::uint64_t call = current_;
  const CollectiveOp op = current().op;
  const bool nccl_ring = nccl_ && current().algorithm == CollectiveAlgo::kRing;
  const int c = nccl_ring ? nccl_plan_.chunk_of(first) : plan_.chunk_of(first);
  Golden g{std::vector<std::uint8_t>(bytes), uses, {}};
  const int root = static_cast<int>(cfg_.root);
  if (op == CollectiveOp::kAllGather) {
    fill_input(seed_, call, members[static_cast<size_t>(c)], first, count, cfg_.dtype, g.data.data());
  } else if (op == CollectiveOp::kBroadcast) {
    fill_input(seed_, call, members[static_cast<size_t>(root)], first, count, cfg_.dtype,
               g.data.data());
  } else if (hierarchical()) {
    hier_golden(first, count, g.data.data());
  } else {
    // The ring adds chunk c in the order c+1, ..., c and a reduce chain in
    // the order root+1, ..., root; the switch engine and the direct
    // algorithm fold in member order 0, 1, ..., n-1.
    int start = 0;
    if (current().algorithm == CollectiveAlgo::kRing)
      start = op == CollectiveOp::kReduce ? root + 1 : c + 1;
    const auto member = [&](int k) { return members[static_cast<size_t>(k % n)]; };
    scratch_.resize(bytes);
    fill_input(seed_, call, member(start), first, count, cfg_.dtype, g.data.data());
    for (int k = 1; k < n; ++k) {
      fill_input(seed_, call, member(start + k), first, count, cfg_.dtype, scratch_.data());
      alu_accumulate(cfg_.redop, cfg_.dtype, g.data.data(), scratch_.data(), bytes);
    }
    if (tolerant_) {
      g.abs_sum.assign(static_cast<std::size_t>(count), 0.0);
      for (int k = 0; k < n; ++k) {
        fill_input(seed_, call, member(k), first, count, cfg_.dtype, scratch_.data());
        for (std::uint64_t i = 0; i < count; ++i)
          g.abs_sum[i] += std::fabs(element_value(cfg_.dtype, scratch_.data() + i * es));
      }
    }
  }
  return golden_.emplace(key, std::move(g)).first;
}

void CollectiveSweep::hier_golden(std::uint64_t first, std::uint64_t count, std::uint8_t* out) {
  const std::size_t bytes = static_cast<std::size_t>(count) * element_bytes(cfg_.dtype);
  const int dd = hier_.per_domain, m = hier_.domains;
  const int r = hier_.intra.chunk_of(first);
  const int k = hier_.inter(r).chunk_of(first - hier_.intra.chunk_begin(r));
  scratch_.resize(2 * bytes);
  std::uint8_t* partial = scratch_.data();
  std::uint8_t* x = scratch_.data() + bytes;
  // Domain d's sum of chunk r, as its ring adds it: ranks r+1, ..., r.
  const auto domain_sum = [&](int d, std::uint8_t* acc) {
    for (int j = 0; j < dd; ++j) {
      const int g = d * dd + (r + 1 + j) % dd;
      fill_input(seed_, current_, g, first, count, cfg_.dtype, j == 0 ? acc : x);
      if (j > 0) alu_accumulate(cfg_.redop, cfg_.dtype, acc, x, bytes);
    }
  };
  if (hier_.tree) {
    // Each node folds its own sum, then its children's subtrees in order
    // (by tree position; the slice's tree with a double tree).
    const int t = hier_.tree_of(r, first - hier_.intra.chunk_begin(r));
    std::vector<std::vector<std::uint8_t>> sub(static_cast<size_t>(m),
                                               std::vector<std::uint8_t>(bytes));
    for (int p = m - 1; p >= 0; --p) {
      std::uint8_t* acc = p == 0 ? out : sub[static_cast<size_t>(p)].data();
      domain_sum(hier_.tree_pos(t, p), acc);
      for (int child = 2 * p + 1; child <= 2 * p + 2 && child < m; ++child)
        alu_accumulate(cfg_.redop, cfg_.dtype, acc, sub[static_cast<size_t>(child)].data(), bytes);
    }
    return;
  }
  // Sub-chunk k across the domains, as the second ring adds it: k+1, ...,
  // k; or (SHARP) as the leaf's engine folds its members: 0, 1, ..., m-1.
  for (int j = 0; j < m; ++j) {
    const int d = sharp_ ? j : (k + 1 + j) % m;
    domain_sum(d, j == 0 ? out : partial);
    if (j > 0) alu_accumulate(cfg_.redop, cfg_.dtype, out, partial, bytes);
  }
}

void CollectiveSweep::check_copy(int src, std::uint64_t first, std::uint64_t count,
                                 const std::uint8_t* data) {
  if (!cfg_.check) return;
  const std::size_t es = element_bytes(cfg_.dtype);
  scratch_.resize(static_cast<std::size_t>(count) * es);
  fill_input(seed_, current_, src, first, count, cfg_.dtype, scratch_.data());
  std::uint64_t wrong = 0;
  // One comparison of the whole slice first: it almost always matches.
  if (std::memcmp(scratch_.data(), data, static_cast<std::size_t>(count) * es) != 0)
    for (std::uint64_t i = 0; i < count; ++i)
      if (std::memcmp(&scratch_[i * es], data + i * es, es) != 0) ++wrong;
  current().wrong += wrong;
  current().checked += count;
}

void CollectiveSweep::check(std::uint64_t first, std::uint64_t count, const std::uint8_t* data,
                            int expected_uses, int group) {
  if (!cfg_.check) return;
  // One lookup: in a large call the table is far bigger than the caches.
  const auto it = golden(first, count, expected_uses, group);
  const std::vector<std::uint8_t>& g = it->second.data;
  const std::size_t es = element_bytes(cfg_.dtype);
  std::uint64_t wrong = 0, rounded = 0;
  const bool all_equal = std::memcmp(g.data(), data, static_cast<std::size_t>(count) * es) == 0;
  for (std::uint64_t i = 0; i < count && !all_equal; ++i) {
    if (std::memcmp(&g[i * es], data + i * es, es) == 0) continue;
    if (tolerant_ && within_tolerance(it->second, i, data + i * es))
      ++rounded;
    else
      ++wrong;
  }
  current().wrong += wrong;
  current().rounded += rounded;
  current().checked += count;
  if (--it->second.uses_left == 0) golden_.erase(it);
}

}  // namespace fabricsim
