// Cross-parameter checks of a Config: what a single key's range cannot
// express. Each concern is a check function listed in kChecks; validate()
// runs them in that order and the first failure is the error, naming every
// key involved. The order is part of the behaviour: a config with several
// problems reports the first one, and later checks rely on earlier ones (the
// replay round trip divides by the flit time checked before it; the wiring
// is built last, from parameters already known to be consistent).
//
// The only config file that uses topology and training: they depend on the
// Config types, and checking a config means building its wiring and reading
// its training workload.
#include "models/core/collective_algorithms.hpp"
#include "models/core/config.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>

#include "models/core/topology.hpp"
#include "models/core/training.hpp"

namespace fabricsim {

namespace {

[[noreturn]] void fail(const std::string& m) {
  throw ConfigError("inconsistent config: " + m);
}

bool is_pow2(std::int64_t x) {
  return x > 0 && (x & (x - 1)) == 0;
}

// The key that sets the endpoint count, with the count, for messages.
std::string endpoint_count_key(const Config& c) {
  return (c.topology.kind == TopologyKind::kSingle ? "switch.ports=" : "topology.endpoints=") +
         std::to_string(endpoint_count(c));
}

// Go-back-N: the replay buffer must cover a link's ack round trip, or the
// sender stalls on every packet. `keys`: the tier's parameter prefix;
// `whose`: the link in words.
void check_replay_buffer(const LinkConfig& l, int max_flits, const std::string& keys,
                         const std::string& whose) {
  if (l.retry != Retry::kGoBackN) return;
  const auto rt = replay_round_trip_flits(l, max_flits);
  if (l.replay_buffer_flits < rt)
    fail(keys + ".replay_buffer_flits=" + std::to_string(l.replay_buffer_flits) +
         " is smaller than " + whose + " ack round trip of " + std::to_string(rt) + " flits (a " +
         std::to_string(max_flits) + "-flit packet, then 2 x (" + keys +
         ".latency_ns + FEC latency) + link.ack_delay_ns at the flit rate): the sender would "
         "stall on every packet; use at least " +
         std::to_string(rt));
}

// Virtual cut-through: every buffer a packet enters holds a whole packet per VC.
void check_packet_buffers(const Config& c) {
  const std::int64_t L = max_packet_flits(c);
  const std::string ls =
      carries_data(c) ? "collective.payload_bytes=" + std::to_string(c.collective.payload_bytes) +
                            ": " + std::to_string(L) + " flits"
                      : "traffic.packet_flits=" + std::to_string(L);
  if (c.sw.input_buffer_flits / c.sw.vcs < L)
    fail("switch.input_buffer_flits=" + std::to_string(c.sw.input_buffer_flits) +
         " split over switch.vcs=" + std::to_string(c.sw.vcs) + " leaves less than one packet (" +
         ls + ") per VC; virtual cut-through needs a whole packet's credits");
  if (c.endpoint.rx_buffer_flits / c.sw.vcs < L)
    fail("endpoint.rx_buffer_flits=" + std::to_string(c.endpoint.rx_buffer_flits) +
         " split over switch.vcs=" + std::to_string(c.sw.vcs) + " leaves less than one packet (" +
         ls + ") per VC");
  if (c.sw.queueing != Queueing::kOutput && c.sw.output_buffer_flits < L)
    fail("switch.output_buffer_flits=" + std::to_string(c.sw.output_buffer_flits) +
         " is smaller than one packet (" + ls + ")");
}

// The traffic pattern's destinations exist among the endpoints.
void check_traffic_destinations(const Config& c) {
  const std::int64_t n = endpoint_count(c);
  const std::string nkey = endpoint_count_key(c);
  if (c.traffic.hotspot_endpoint >= n)
    fail("traffic.hotspot_endpoint=" + std::to_string(c.traffic.hotspot_endpoint) +
         " does not exist with " + nkey + " endpoints (allowed 0.." + std::to_string(n - 1) + ")");
  const std::string pn = to_string(c.traffic.pattern);
  switch (c.traffic.pattern) {
    case Pattern::kTranspose: {
      const auto k = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
      if (k * k != n)
        fail("traffic.pattern=transpose needs the endpoint count to be a perfect square, got " +
             nkey);
      break;
    }
    case Pattern::kBitReverse:
    case Pattern::kBitComplement:
    case Pattern::kShuffle:
      if (!is_pow2(n))
        fail("traffic.pattern=" + pn + " needs the endpoint count to be a power of two, got " +
             nkey);
      break;
    default:
      break;
  }
}

// Times are integer picoseconds: a flit time or a switch cycle must not round to 0.
void check_time_resolution(const Config& c) {
  if (flit_time_ps(c.link) < 1)
    fail(
        "link.flit_bytes / (link.lanes x link.lane_gbps x link.encoding_efficiency) is below "
        "the 1 ps time resolution");
  if (switch_cycle_ps(c.sw) < 1) fail("switch.clock_ghz gives a cycle below 1 ps");
}

// sim.watchdog_ns must outlast what a healthy fabric waits for: link
// latencies and a straggler's late start.
void check_watchdog(const Config& c) {
  const double link_ns = c.link.latency_ns + ps_to_ns(fec_latency_ps(c.link));
  if (c.sim.watchdog_ns > 0 && c.sim.watchdog_ns < 10 * link_ns)
    fail("sim.watchdog_ns=" + format_real(c.sim.watchdog_ns) +
         " is shorter than 10 link latencies (link.latency_ns=" + format_real(c.link.latency_ns) +
         " plus FEC): a busy but healthy fabric could look stuck; use at least " +
         format_real(10 * link_ns) + ", or 0 to turn it off");
  const double late_ns = c.straggler.delay_ns + c.straggler.jitter_ns;
  if (c.sim.watchdog_ns > 0 && late_ns > 0 && c.sim.watchdog_ns <= late_ns)
    fail("sim.watchdog_ns=" + format_real(c.sim.watchdog_ns) +
         " is not longer than the straggler's start delay (straggler.delay_ns=" +
         format_real(c.straggler.delay_ns) +
         " + straggler.jitter_ns=" + format_real(c.straggler.jitter_ns) +
         "): the data waiting for it would look stuck; raise sim.watchdog_ns or set it to 0");
}

void check_faults(const Config& c) {
  for (const Fault& f : c.faults.list) {
    const std::string which = "faults: '" + f.text + "'";
    if (f.kind == FaultKind::kLaneDown && f.value >= static_cast<double>(c.link.lanes))
      fail(which + " leaves " + format_real(f.value) +
           " lanes, not fewer than link.lanes=" + std::to_string(c.link.lanes));
    if (f.kind == FaultKind::kSlow && c.workload.kind != WorkloadKind::kCollective)
      fail(which +
           ": slow applies to GPUs, which only collective workloads have "
           "(workload.kind=collective)");
    if (f.kind == FaultKind::kBer && f.value > 0 && c.link.retry == Retry::kNone &&
        c.link.fec == Fec::kNone)
      fail(which +
           " adds bit errors to links with neither link.fec nor link.retry: the first "
           "corrupted packet would stop the run; set link.retry=go_back_n (or link.fec=rs544)");
  }
}

void check_link(const Config& c) {
  check_replay_buffer(c.link, max_packet_flits(c), "link", "the link's");
  if (ns_to_ps(c.link.latency_ns) < 1) fail("link.latency_ns must be at least 0.001 ns");
}

void check_sim_window(const Config& c) {
  if (ns_to_ps(c.sim.duration_ns) < 1) fail("sim.duration_ns must be at least 0.001 ns");
}

// Patterns other than uniform, hotspot and permutation, and allow_self=false,
// need someone else to send to.
void check_traffic_endpoint_count(const Config& c) {
  const std::int64_t n = endpoint_count(c);
  if (c.traffic.pattern != Pattern::kUniform && c.traffic.pattern != Pattern::kHotspot &&
      c.traffic.pattern != Pattern::kPermutation && n < 2)
    fail("traffic.pattern=" + to_string(c.traffic.pattern) + " needs at least 2 endpoints, got " +
         endpoint_count_key(c));
  if (!c.traffic.allow_self && n < 2)
    fail("traffic.allow_self=false needs at least 2 endpoints, got " + endpoint_count_key(c));
}

// Which collective ops an algorithm implements, as messages list them.
std::string algorithm_ops(CollectiveAlgo a) {
  std::string out;
  for (const CollectiveOp op : traits_of(a).ops) out += (out.empty() ? "" : ", ") + to_string(op);
  return out;
}

// An engine reduces what every GPU sends to one address, so that address
// must reach the same chip from every GPU. `who`: what uses the engine.
void check_engine_wiring(const Config& c, const std::string& who) {
  if (c.topology.kind == TopologyKind::kScaleUp &&
      c.topology.links.size() != static_cast<size_t>(c.topology.switches))
    fail(who +
         " needs every GPU wired alike (topology.links with one value per switch), so "
         "each address stripe reaches the same chip from every GPU");
  if (!c.topology.switch_links.empty())
    fail(who + " needs GPUs attached directly to every chip (no topology.switch_links)");
}

// The training workload's calls (collective.workload) fit the GPUs and the dtype.
void check_training_workload(const Config& c, std::int64_t n) {
  const auto& k = c.collective;
  const auto es = static_cast<std::int64_t>(element_bytes(k.dtype));
  if (!k.workload.empty()) {
    const TrainingWorkload w = load_training(k.workload, k.groups);
    training_partitions(w, static_cast<int>(n));  // every layout tiles the GPUs
    for (const TrainingCall& call : w.calls)
      if (call.bytes < static_cast<std::uint64_t>(es))
        fail("workload '" + k.workload + "' call " + call.name +
             ": bytes=" + std::to_string(call.bytes) + " is less than one " + to_string(k.dtype) +
             " element (collective.dtype)");
  } else if (!k.groups.empty()) {
    fail("collective.groups=" + k.groups + " re-maps a workload's groups: set collective.workload");
  }
  if (k.min_bytes < es || k.payload_bytes % es != 0)
    fail("collective.min_bytes=" + std::to_string(k.min_bytes) +
         " and collective.payload_bytes=" + std::to_string(k.payload_bytes) + " must hold whole " +
         to_string(k.dtype) + " elements (" + std::to_string(es) + " B)");
}

// The GPU side's protocols implement the ring all-reduce of one domain, and
// NVLS's with Simple (docs/models/gpu.md); everything else runs with
// collective.protocol=ideal.
void check_protocol(const Config& c) {
  const auto& k = c.collective;
  if (k.protocol == Protocol::kIdeal) {
    if (k.registration != Registration::kNone)
      fail("collective.registration=" + to_string(k.registration) +
           " picks NCCL's kernels for registered buffers, a GPU-side model: set "
           "collective.protocol (simple, ll, ll128 or auto), not ideal");
    if (k.algorithm == CollectiveAlgo::kAuto)
      fail("collective.algorithm=auto picks ring or nvls per size as NCCL's tuner does, from "
           "the GPU side's protocols: set collective.protocol (simple, ll, ll128 or auto), not "
           "ideal");
    return;
  }
  const std::string p = "collective.protocol=" + to_string(k.protocol);
  if (!k.workload.empty())
    fail(p + " runs the size sweep only, not a training workload (collective.workload=" +
         k.workload + "); use collective.protocol=ideal");
  const bool picks = k.algorithm == CollectiveAlgo::kAuto;
  const bool nvls = k.algorithm == CollectiveAlgo::kNvls || auto_may_pick_nvls(c);
  if ((k.algorithm != CollectiveAlgo::kRing && k.algorithm != CollectiveAlgo::kNvls && !picks) ||
      k.op != CollectiveOp::kAllReduce)
    fail(p + " implements collective.algorithm=ring, nvls or auto with collective.op=all_reduce, not " +
         to_string(k.algorithm) + " " + to_string(k.op) + "; use collective.protocol=ideal");
  if (nvls && (k.protocol == Protocol::kLl || k.protocol == Protocol::kLl128))
    fail(p + ": NCCL runs collective.algorithm=nvls with the Simple protocol only "
         "(NVIDIA/nccl src/graph/tuning.cc); use collective.protocol=simple (or auto, which is "
         "simple for nvls) or ideal");
  if (nvls && k.redop != RedOp::kSum && (k.dtype == DType::kFp32))
    fail(p + ": multimem.ld_reduce has no " + to_string(k.redop) + " for " + to_string(k.dtype) +
         ", so NCCL does not run NVLS for it (sum only for fp32: NVIDIA/nccl "
         "src/device/reduce_kernel.h LoadMultimem_BigPackSize); use collective.protocol=ideal");
  if (nvls && c.gpu.nvls_chunk_bytes % 16384 != 0)
    fail(p + ": gpu.nvls_chunk_bytes=" + std::to_string(c.gpu.nvls_chunk_bytes) +
         " must be a multiple of 16384 (NCCL shrinks it by halves down to 16 KiB and aligns "
         "the last loop's chunk to 16 KiB)");
  if (nvls && k.payload_bytes > 4096)
    fail(p + ": collective.payload_bytes=" + std::to_string(k.payload_bytes) +
         " is what one multimem.ld_reduce request covers; with nvls it must be at most a "
         "warp's 16-byte loads of one unroll step (4096 B)");
  if (c.topology.kind == TopologyKind::kScaleOut)
    fail(p + " runs inside one scale-up domain, not topology.kind=scaleout; use "
         "collective.protocol=ideal");
  const auto steps = [&](const char* key, std::int64_t bytes, std::int64_t grain, const char* what) {
    if (bytes % c.gpu.slots != 0 || bytes / c.gpu.slots % grain != 0)
      fail(p + ": " + key + "=" + std::to_string(bytes) + " must split into gpu.slots=" +
           std::to_string(c.gpu.slots) + " steps of a whole number of " + std::to_string(grain) +
           " B (" + what + ")");
  };
  const bool any = k.protocol == Protocol::kAuto;
  const auto uses = [&](Protocol q) { return any || k.protocol == q; };
  if (uses(Protocol::kSimple))
    steps("gpu.buffer_bytes", c.gpu.buffer_bytes, 512, "NCCL's Simple grain");
  if (uses(Protocol::kLl)) steps("gpu.ll_buffer_bytes", c.gpu.ll_buffer_bytes, 16, "LL lines");
  if (uses(Protocol::kLl128))
    steps("gpu.ll128_buffer_bytes", c.gpu.ll128_buffer_bytes, 128, "LL128 lines");
  // A write of LL lines carries half its bytes as data, of LL128 lines 120 of 128.
  const auto es = static_cast<std::int64_t>(element_bytes(k.dtype));
  for (const auto& [q, line, data] :
       {std::tuple<Protocol, std::int64_t, std::int64_t>{Protocol::kLl, 16, k.payload_bytes / 2},
        {Protocol::kLl128, 128, k.payload_bytes / 128 * 120}})
    if (uses(q) && (k.payload_bytes % line != 0 || data % es != 0))
      fail(p + ": collective.payload_bytes=" + std::to_string(k.payload_bytes) + " must be whole " +
           std::to_string(line) + "-byte lines whose data is whole " + to_string(k.dtype) +
           " elements (" + to_string(q) + ")");
}

void check_collective(const Config& c) {
  if (c.workload.kind != WorkloadKind::kCollective) return;
  const auto& k = c.collective;
  const std::int64_t n = endpoint_count(c);
  if (k.min_bytes > k.max_bytes)
    fail("collective.min_bytes=" + std::to_string(k.min_bytes) +
         " is above collective.max_bytes=" + std::to_string(k.max_bytes));
  const AlgorithmTraits& traits = traits_of(k.algorithm);
  const std::string ops = algorithm_ops(k.algorithm);
  if (!has_op(traits.ops, k.op))
    fail("collective.algorithm=" + to_string(k.algorithm) + " supports collective.op=" + ops +
         ", not " + to_string(k.op));
  if (k.root >= n)
    fail("collective.root=" + std::to_string(k.root) + " does not exist with " +
         endpoint_count_key(c) + " GPUs (allowed 0 .. " + std::to_string(n - 1) + ")");
  // What reads and reduces through the switches: the algorithm, or NCCL's
  // symmetric kernel on registered buffers whatever the algorithm.
  const bool symmetric = may_run_symmetric_kernel(c);
  const std::string reducer = symmetric ? std::string("collective.registration=symmetric (NCCL's symmetric kernel)")
                                        : "collective.algorithm=" + to_string(k.algorithm);
  if ((has_op(traits.reads_through_switch, k.op) || symmetric) && c.sw.vcs < 2)
    fail(reducer + " " + to_string(k.op) +
         " reads through the switch: requests and responses need separate VCs, so "
         "switch.vcs must be at least 2 (got " +
         std::to_string(c.sw.vcs) + ")");
  if (uses_reduction_engine(c)) {
    if (c.sw.queueing == Queueing::kOutput)
      fail("in-switch reduction (" + reducer +
           ") needs an input-queued switch (switch.queueing=fifo or voq): the ideal "
           "output-queued model has no crossbar to reach the reduction engine");
    check_engine_wiring(c, "in-switch reduction");
  }
  check_protocol(c);
  check_training_workload(c, n);
}

void check_scaleout(const Config& c) {
  if (c.topology.kind != TopologyKind::kScaleOut) return;
  // The scale-out model carries flat collectives across both tiers.
  if (c.workload.kind != WorkloadKind::kCollective)
    fail(
        "topology.kind=scaleout runs collectives (workload.kind=collective) for now: the "
        "synthetic traffic statistics count flits of one link type, and TLM endpoints are "
        "scale-up only");
  const CollectiveAlgo a = c.collective.algorithm;
  if (!has_op(traits_of(a).across_domains, c.collective.op))
    fail("topology.kind=scaleout: collective.algorithm=" + to_string(a) +
         " with collective.op=" + to_string(c.collective.op) +
         " is not modelled across domains yet; use ring or hierarchical (or direct all_to_all)");
  const ScaleOutConfig& so = c.scaleout;
  if (so.sharp && so.tiers == 2 && so.placement != Placement::kRail)
    fail(
        "scaleout.sharp=true aggregates each rank's chunk in one leaf: it needs "
        "scaleout.placement=rail (or scaleout.tiers=1); a reduction tree over leaves and "
        "spines is not modelled");
  if (so.sharp && c.collective.inter != InterAlgo::kRing)
    fail("scaleout.sharp=true reduces across the domains in the leaves; collective.inter=" +
         to_string(c.collective.inter) + " would do it in the GPUs: choose one");
  if (so.sharp && c.sw.queueing == Queueing::kOutput)
    fail(
        "scaleout.sharp=true needs an input-queued switch (switch.queueing=fifo or voq): "
        "the ideal output-queued model has no crossbar to reach the reduction engine");
  const Config t = scaleout_tier_config(c);
  const std::int64_t so_flits = max_packet_flits(t);
  if (so.buffer_flits / c.sw.vcs < so_flits)
    fail("scaleout.buffer_flits=" + std::to_string(so.buffer_flits) + " split over switch.vcs=" +
         std::to_string(c.sw.vcs) + " leaves less than one " + std::to_string(so_flits) +
         "-flit packet (collective.payload_bytes=" + std::to_string(c.collective.payload_bytes) +
         " in scaleout.flit_bytes=" + std::to_string(so.flit_bytes) + " units) per VC");
  if (flit_time_ps(t.link) < 1)
    fail("scaleout.flit_bytes / scaleout.link_gbps is below the 1 ps time resolution");
  check_replay_buffer(t.link, static_cast<int>(so_flits), "scaleout", "a scale-out link's");
  if (c.sim.watchdog_ns > 0 && c.sim.watchdog_ns < 10 * so.latency_ns)
    fail("sim.watchdog_ns=" + format_real(c.sim.watchdog_ns) +
         " is shorter than 10 scale-out link latencies (scaleout.latency_ns=" +
         format_real(so.latency_ns) + "): a healthy fabric could look stuck; use at least " +
         format_real(10 * so.latency_ns) + ", or 0 to turn it off");
}

// collective.data=false: timing only, where nothing needs the values.
void check_timing_only(const Config& c) {
  if (c.collective.data) return;
  if (c.workload.kind == WorkloadKind::kTlm)
    fail(
        "collective.data=false (timing only) does not apply to workload.kind=tlm: TLM "
        "initiators read and write real data");
  if (c.reduction.alu == AluKind::kRtl && uses_reduction_engine(c))
    fail(
        "collective.data=false (timing only) leaves reduction.alu=rtl nothing to compute; "
        "use reduction.alu=model or collective.data=true");
}

void check_tlm(const Config& c) {
  if (c.workload.kind != WorkloadKind::kTlm) return;
  const TlmConfig& m = c.tlm;
  const std::int64_t payload = c.collective.payload_bytes;
  if (c.sw.vcs < 2)
    fail(
        "workload.kind=tlm carries reads: requests and responses need separate VCs, so "
        "switch.vcs must be at least 2 (got " +
        std::to_string(c.sw.vcs) + ")");
  if (payload % 4 != 0)
    fail("workload.kind=tlm: collective.payload_bytes=" + std::to_string(payload) +
         " (each packet's data) must be a multiple of 4 B, so a packet holds whole elements of "
         "every multimem dtype");
  const std::int64_t most = m.queue_packets * payload;
  if (m.max_bytes > most)
    fail("tlm.max_bytes=" + std::to_string(m.max_bytes) +
         " would never fit in an endpoint's "
         "queue of tlm.queue_packets=" +
         std::to_string(m.queue_packets) +
         " packets of "
         "collective.payload_bytes=" +
         std::to_string(payload) + " B; allowed up to " + std::to_string(most));
  if (m.queue_packets + m.outstanding > 65536)
    fail(
        "tlm.queue_packets + tlm.outstanding = " + std::to_string(m.queue_packets + m.outstanding) +
        " transactions could be open per endpoint; packets name them in 16 bits (at most 65536)");
  // Building the map checks the multicast objects against the windows (it throws).
  const AddressMap checked(endpoint_count(c), static_cast<std::uint64_t>(m.window_bytes),
                           static_cast<std::uint64_t>(m.multicast_base), m.multicast);
  (void)checked;
  if (uses_reduction_engine(c)) {
    if (c.sw.queueing == Queueing::kOutput)
      fail(
          "tlm.multicast objects use the switches' reduction engines, which need an "
          "input-queued switch (switch.queueing=fifo or voq)");
    check_engine_wiring(c, "tlm.multicast");
  }
}

void check_traffic_reads(const Config& c) {
  if (c.workload.kind == WorkloadKind::kSynthetic && c.traffic.read_fraction > 0 && c.sw.vcs < 2)
    fail("traffic.read_fraction=" + format_real(c.traffic.read_fraction) +
         " sends reads: requests and responses need separate VCs, so switch.vcs must be at "
         "least 2 (got " +
         std::to_string(c.sw.vcs) + ")");
}

void check_straggler(const Config& c) {
  const std::int64_t n = endpoint_count(c);
  if (c.straggler.gpu >= n)
    fail("straggler.gpu=" + std::to_string(c.straggler.gpu) + " does not exist with " +
         endpoint_count_key(c) + " endpoints (allowed -1 .. " + std::to_string(n - 1) + ")");
  if (c.straggler.lanes > c.link.lanes)
    fail("straggler.lanes=" + std::to_string(c.straggler.lanes) + " is more than link.lanes=" +
         std::to_string(c.link.lanes) + " (a degraded link has fewer lanes)");
}

// Wiring, port budgets, reachability (build_topology throws naming the keys).
void check_topology(const Config& c) {
  build_topology(c);
}

using Check = void (*)(const Config&);
// A new section's checks are a new function here, after the checks whose
// conclusions it relies on.
constexpr Check kChecks[] = {
    check_packet_buffers,  check_traffic_destinations,
    check_time_resolution, check_watchdog,
    check_faults,          check_link,
    check_sim_window,      check_traffic_endpoint_count,
    check_collective,      check_scaleout,
    check_timing_only,     check_tlm,
    check_traffic_reads,   check_straggler,
    check_topology,
};

}  // namespace

void validate(const Config& c) {
  for (const Check check : kChecks) check(c);
}

}  // namespace fabricsim
