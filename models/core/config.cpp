#include "models/core/config.hpp"

#include <filesystem>

#include "models/core/topology.hpp"
#include "models/core/training.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace fabricsim {

namespace {
const std::vector<std::pair<std::string, Queueing>> kQueueing = {
    {"fifo", Queueing::kFifo}, {"voq", Queueing::kVoq}, {"output", Queueing::kOutput}};
const std::vector<std::pair<std::string, Multicast>> kMulticast = {
    {"engine", Multicast::kEngine}, {"crossbar", Multicast::kCrossbar}};
const std::vector<std::pair<std::string, Egress>> kEgress = {{"hash", Egress::kHash},
                                                              {"aligned", Egress::kAligned}};
const std::vector<std::pair<std::string, Fec>> kFecs = {{"none", Fec::kNone},
                                                         {"rs544", Fec::kRs544}};
const std::vector<std::pair<std::string, Retry>> kRetries = {{"none", Retry::kNone},
                                                             {"go_back_n", Retry::kGoBackN}};
const std::vector<std::pair<std::string, AluKind>> kAluKinds = {{"model", AluKind::kModel},
                                                                 {"rtl", AluKind::kRtl}};
const std::vector<std::pair<std::string, FoldOrder>> kFoldOrders = {
    {"member", FoldOrder::kMember}, {"arrival", FoldOrder::kArrival}};
const std::vector<std::pair<std::string, AllocatorKind>> kAllocators = {
    {"islip", AllocatorKind::kISlip},
    {"pim", AllocatorKind::kPim},
    {"rr", AllocatorKind::kRoundRobin}};
const std::vector<std::pair<std::string, Pattern>> kPatterns = {
    {"uniform", Pattern::kUniform},         {"permutation", Pattern::kPermutation},
    {"hotspot", Pattern::kHotspot},         {"transpose", Pattern::kTranspose},
    {"bitreverse", Pattern::kBitReverse},   {"bitcomplement", Pattern::kBitComplement},
    {"shuffle", Pattern::kShuffle},         {"neighbor", Pattern::kNeighbor},
    {"tornado", Pattern::kTornado}};
const std::vector<std::pair<std::string, Process>> kProcesses = {
    {"bernoulli", Process::kBernoulli}, {"bursty", Process::kBursty}};
const std::vector<std::pair<std::string, TopologyKind>> kTopologies = {
    {"single", TopologyKind::kSingle},
    {"scaleup", TopologyKind::kScaleUp},
    {"scaleout", TopologyKind::kScaleOut}};
const std::vector<std::pair<std::string, Placement>> kPlacements = {
    {"rail", Placement::kRail}, {"packed", Placement::kPacked}};
const std::vector<std::pair<std::string, WorkloadKind>> kWorkloads = {
    {"synthetic", WorkloadKind::kSynthetic},
    {"collective", WorkloadKind::kCollective},
    {"tlm", WorkloadKind::kTlm}};
const std::vector<std::pair<std::string, CollectiveOp>> kCollectiveOps = {
    {"all_reduce", CollectiveOp::kAllReduce},
    {"reduce_scatter", CollectiveOp::kReduceScatter},
    {"all_gather", CollectiveOp::kAllGather},
    {"all_to_all", CollectiveOp::kAllToAll},
    {"broadcast", CollectiveOp::kBroadcast},
    {"reduce", CollectiveOp::kReduce}};
const std::vector<std::pair<std::string, InterAlgo>> kInterAlgos = {{"ring", InterAlgo::kRing},
                                                                    {"tree", InterAlgo::kTree},
                                                                    {"double_tree", InterAlgo::kDoubleTree}};
const std::vector<std::pair<std::string, CollectiveAlgo>> kCollectiveAlgos = {
    {"ring", CollectiveAlgo::kRing}, {"nvls", CollectiveAlgo::kNvls},
    {"push", CollectiveAlgo::kPush}, {"direct", CollectiveAlgo::kDirect},
    {"hierarchical", CollectiveAlgo::kHierarchical}};
const std::vector<std::pair<std::string, DType>> kDTypes = {
    {"fp32", DType::kFp32}, {"fp16", DType::kFp16}, {"bf16", DType::kBf16}, {"int32", DType::kInt32}};
const std::vector<std::pair<std::string, RedOp>> kRedOps = {
    {"sum", RedOp::kSum}, {"min", RedOp::kMin}, {"max", RedOp::kMax}};
const std::vector<std::pair<std::string, LinkPolicy>> kLinkPolicies = {
    {"stripe", LinkPolicy::kStripe},
    {"round_robin", LinkPolicy::kRoundRobin},
    {"random", LinkPolicy::kRandom}};

template <class E>
std::string name_of(const std::vector<std::pair<std::string, E>>& table, E v) {
  for (auto& n : table)
    if (n.second == v) return n.first;
  return "?";
}

bool is_pow2(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
}  // namespace

std::string to_string(Queueing q) { return name_of(kQueueing, q); }
std::string to_string(Multicast m) { return name_of(kMulticast, m); }
std::string to_string(Fec f) { return name_of(kFecs, f); }
std::string to_string(Retry r) { return name_of(kRetries, r); }
std::string to_string(AllocatorKind a) { return name_of(kAllocators, a); }
std::string to_string(Pattern p) { return name_of(kPatterns, p); }
std::string to_string(TopologyKind k) { return name_of(kTopologies, k); }
std::string to_string(CollectiveOp op) { return name_of(kCollectiveOps, op); }
std::string to_string(CollectiveAlgo a) { return name_of(kCollectiveAlgos, a); }

int packet_flits_for(const Config& c, std::int64_t payload_bytes) {
  return 1 + static_cast<int>((payload_bytes + c.link.flit_bytes - 1) / c.link.flit_bytes);
}

bool carries_data(const Config& c) {
  return c.workload.kind == WorkloadKind::kCollective || c.workload.kind == WorkloadKind::kTlm;
}

bool uses_reduction_engine(const Config& c) {
  // TLM initiators may issue multimem operations on any multicast object.
  if (c.workload.kind == WorkloadKind::kTlm) return !c.tlm.multicast.empty();
  if (c.workload.kind != WorkloadKind::kCollective) return false;
  const CollectiveAlgo a = c.collective.algorithm;
  if (a == CollectiveAlgo::kPush) return true;
  if (a != CollectiveAlgo::kNvls) return false;
  // NVLS all-gather only multicasts: it needs the engine only to replicate
  // there (the ideal output-queued switch replicates at once anyway).
  return c.collective.op == CollectiveOp::kAllReduce ||
         (c.sw.multicast == Multicast::kEngine && c.sw.queueing != Queueing::kOutput);
}

std::uint64_t stripe_bytes(const Config& c) {
  const std::int64_t payload = carries_data(c)
                                   ? c.collective.payload_bytes
                                   : std::max<std::int64_t>(1, c.traffic.packet_flits - 1) *
                                         c.link.flit_bytes;
  return static_cast<std::uint64_t>(std::max(c.endpoint.stripe_bytes, payload));
}

int max_packet_flits(const Config& c) {
  if (carries_data(c))
    return packet_flits_for(c, c.collective.payload_bytes);
  return static_cast<int>(c.traffic.packet_flits);
}

int endpoint_count(const Config& c) {
  if (c.topology.kind == TopologyKind::kScaleOut)
    return static_cast<int>(c.scaleout.domains * c.topology.endpoints);
  return static_cast<int>(c.topology.kind == TopologyKind::kSingle ? c.sw.ports
                                                                    : c.topology.endpoints);
}

Config scaleout_tier_config(const Config& c) {
  Config t = c;
  const ScaleOutConfig& so = c.scaleout;
  t.link.lanes = 1;
  t.link.lane_gbps = so.link_gbps;
  t.link.encoding_efficiency = 1.0;
  t.link.latency_ns = so.latency_ns;
  t.link.flit_bytes = so.flit_bytes;
  t.sw.ports = so.switch_ports;
  t.sw.input_buffer_flits = so.buffer_flits;
  // One allocation per flit time, as the scale-up switches.
  const double flit_ns = static_cast<double>(flit_time_ps(t.link)) / 1000.0;
  t.sw.clock_ghz = 1.0 / flit_ns;
  t.sw.pipeline_cycles = static_cast<std::int64_t>(std::llround(so.switch_latency_ns / flit_ns));
  // A granted packet holds output-buffer space from its grant through the
  // pipeline until its tail leaves: the buffer covers the pipeline at the
  // link rate plus four packets, so the latency does not cap throughput.
  t.sw.output_buffer_flits = t.sw.pipeline_cycles + 4 * max_packet_flits(t);
  t.link.ber = so.ber;
  t.link.fec = so.fec;
  t.link.retry = so.retry;
  t.link.replay_buffer_flits = so.replay_buffer_flits;
  // SHARP: the leaves' engines take push-style contributions (IB SHARP's
  // data flow), so the tier's switches are built with one.
  if (so.sharp) t.collective.algorithm = CollectiveAlgo::kPush;
  return t;
}

Schema<Config> config_schema() {
  Schema<Config> s;
  using C = Config;
  // sim
  s.add_int("sim.seed", &C::sim, &SimConfig::seed, "", 0, 9007199254740991LL,
            "seed of every random stream; same seed, same result bit for bit");
  s.add_real("sim.warmup_ns", &C::sim, &SimConfig::warmup_ns, "ns", 0, 1e12,
             "simulated time before statistics start (the network fills up)");
  s.add_real("sim.duration_ns", &C::sim, &SimConfig::duration_ns, "ns", 0, 1e12,
             "measurement window after warm-up; statistics cover exactly this window", true);
  s.add_real("sim.watchdog_ns", &C::sim, &SimConfig::watchdog_ns, "ns", 0, 1e12,
             "stop the run with a report of every stuck packet if no link starts a transmission "
             "for this long while flits sit in buffers (0: no watchdog)");
  s.add_bool("sim.run_ahead", &C::sim, &SimConfig::run_ahead,
             "run the fabric's next instant in the same SystemC activation when nothing else in "
             "the kernel comes before it (same results; false hands every instant to the kernel, "
             "to check that; never with TLM endpoints)");
  // workload
  s.add_choice("workload.kind", &C::workload, &WorkloadConfig::kind, kWorkloads,
               "synthetic: open-loop traffic (traffic.*); collective: every endpoint is a GPU "
               "running the collective.* sweep; tlm: every endpoint is a TLM-2.0 target "
               "driven by the user's SystemC initiators (tlm.*, docs/tlm.md; a program built "
               "with tlm/, not the fabricsim command)");
  // collective
  s.add_choice("collective.op", &C::collective, &CollectiveConfig::op, kCollectiveOps,
               "the collective every GPU calls");
  s.add_choice("collective.algorithm", &C::collective, &CollectiveConfig::algorithm,
               kCollectiveAlgos,
               "how it moves data: ring (NCCL's ring or chain, pipelined per packet: "
               "all_reduce, reduce_scatter, all_gather, broadcast, reduce); nvls (NVLink "
               "SHARP: all_reduce by multimem.ld_reduce then multimem.st; all_gather and "
               "broadcast by multimem.st); push (every GPU writes its data to the switches' "
               "reduction engines, which multicast the result (all_reduce) or send it to "
               "collective.root (reduce)); direct (one shot: every GPU writes to every "
               "other: all_reduce, all_to_all); hierarchical (all_reduce: ring "
               "reduce-scatter inside each scale-up domain, ring all-reduce of each chunk "
               "across the domains, ring all-gather inside; docs/scale-out.md)");
  s.add_bool("collective.data", &C::collective, &CollectiveConfig::data,
             "carry the data: every packet's payload is computed, reduced and checked; false: "
             "timing only, no payloads (the timing does not depend on the values, so every "
             "time and count is the same; nothing is checked, collective.check is ignored; "
             "faster, docs/performance.md)");
  s.add_choice("collective.inter", &C::collective, &CollectiveConfig::inter, kInterAlgos,
               "collective.algorithm=hierarchical, phase 2 (across the domains, among the GPUs "
               "of one rank): ring (reduce-scatter then all-gather over the m domains: "
               "2(m-1)/m x S/D per NIC, 2(m-1) steps) or tree (a binary tree over the domains, "
               "domain 0 its root: reduce up, broadcast down, pipelined per packet: up to 3 x "
               "S/D into an inner node's NIC, 2 log2(m) steps), or double_tree (NCCL's: each half "
               "of the chunk on its own tree, the second the first mirrored, so a domain inner "
               "in one is a leaf in the other: up to 2 x S/D into a NIC); scaleout.sharp=true "
               "does it in the leaves instead");
  s.add_custom<CollectiveConfig, std::string>(
      "collective.workload", &C::collective, &CollectiveConfig::workload, "path",
      "a JSON file (traces/workloads/README.md), or empty",
      "a training step's collectives, each on its group of GPUs with the compute time before "
      "it (traces/workloads/README.md); replaces op, algorithm and the size sweep "
      "(collective.iterations repeats the step); empty: the nccl-tests-like sweep. A relative "
      "path is relative to the YAML file that sets it (to the current directory from --set)",
      [](const std::string&, const std::string& t) { return t; },
      [](const std::string& v) { return v; });
  s.add_custom<CollectiveConfig, std::string>(
      "collective.groups", &C::collective, &CollectiveConfig::groups, "group layouts",
      "NAME=SIZExSTRIDE[+SIZExSTRIDE...],... for groups the workload defines",
      "re-maps the workload's groups onto the GPUs, e.g. tp=4x1+2x8,dp=2x4+2x16 "
      "(docs/scale-out.md); empty: the file's layouts",
      [](const std::string&, const std::string& t) { return t; },
      [](const std::string& v) { return v; });
  s.add_int("collective.min_bytes", &C::collective, &CollectiveConfig::min_bytes, "B", 1,
            std::int64_t{1} << 40, "smallest message size of the sweep, per GPU (nccl-tests -b)");
  s.add_int("collective.max_bytes", &C::collective, &CollectiveConfig::max_bytes, "B", 1,
            std::int64_t{1} << 40, "largest message size of the sweep, per GPU (nccl-tests -e)");
  s.add_int("collective.step_factor", &C::collective, &CollectiveConfig::step_factor, "", 2, 1024,
            "each size is the previous one times this (nccl-tests -f)");
  s.add_int("collective.root", &C::collective, &CollectiveConfig::root, "GPU", 0, 4095,
            "the root of broadcast (its data goes to all) and reduce (the result goes to it)");
  s.add_choice("collective.dtype", &C::collective, &CollectiveConfig::dtype, kDTypes,
               "element type");
  s.add_choice("collective.redop", &C::collective, &CollectiveConfig::redop, kRedOps,
               "reduction operator");
  s.add_int("collective.iterations", &C::collective, &CollectiveConfig::iterations, "", 1, 100000,
            "timed calls per size (the table shows their mean)");
  s.add_real("collective.gap_ns", &C::collective, &CollectiveConfig::gap_ns, "ns", 0.001, 1e9,
             "idle time between one call's completion on every GPU and the next call");
  s.add_int("collective.payload_bytes", &C::collective, &CollectiveConfig::payload_bytes, "B", 4,
            4096, "data bytes per packet (128 like SM stores, 256 like copy engines)");
  s.add_int("collective.outstanding", &C::collective, &CollectiveConfig::outstanding, "requests",
            1, 1 << 20, "reads (multimem.ld_reduce) a GPU may have in flight at once; "
               "as many stores waiting to leave also stop new reads");
  // TLM faces (docs/tlm.md)
  s.add_int("tlm.window_bytes", &C::tlm, &TlmConfig::window_bytes, "B", 4096,
            std::int64_t{1} << 40,
            "each GPU's memory window in the global address map: GPU g owns "
            "[g x window, (g+1) x window)");
  s.add_int("tlm.multicast_base", &C::tlm, &TlmConfig::multicast_base, "B", 0,
            std::int64_t{1} << 52,
            "first address of the multicast objects (above every GPU window)");
  s.add_custom<TlmConfig, std::vector<McObject>>(
      "tlm.multicast", &C::tlm, &TlmConfig::multicast, "object list", multicast_allowed(),
      "multicast objects for multimem.st and multimem.ld_reduce, e.g. 16777216@0 (16 MiB at "
      "offset 0 of every GPU's memory); object k is multicast group k at "
      "tlm.multicast_base + its offset",
      parse_multicast, format_multicast);
  s.add_int("tlm.queue_packets", &C::tlm, &TlmConfig::queue_packets, "packets", 1, 1 << 20,
            "packets an endpoint holds waiting for its links; a transaction that does not fit "
            "is not accepted (LT: b_transport waits; AT: END_REQ is withheld)");
  s.add_int("tlm.outstanding", &C::tlm, &TlmConfig::outstanding, "transactions", 1, 1 << 16,
            "reads, atomics and ld_reduces an endpoint may have waiting for data at once");
  s.add_int("tlm.max_bytes", &C::tlm, &TlmConfig::max_bytes, "B", 1, 1 << 20,
            "longest transaction accepted (longer: TLM_BURST_ERROR_RESPONSE); it travels as "
            "packets of up to collective.payload_bytes");
  s.add_real("tlm.memory_read_ns", &C::tlm, &TlmConfig::memory_read_ns, "ns", 0, 1e6,
             "read latency of the default memory model (DMI and b_transport)");
  s.add_real("tlm.memory_write_ns", &C::tlm, &TlmConfig::memory_write_ns, "ns", 0, 1e6,
             "write latency of the default memory model (DMI and b_transport)");
  s.add_bool("collective.check", &C::collective, &CollectiveConfig::check,
             "compare every output element with the golden reduction (the #wrong column)");
  // stragglers
  s.add_int("straggler.gpu", &C::straggler, &StragglerConfig::gpu, "", -1, 4095,
            "collectives: the GPU the straggler.delay_ns / issue_factor / lanes apply to "
            "(-1: none)");
  s.add_real("straggler.delay_ns", &C::straggler, &StragglerConfig::delay_ns, "ns", 0, 1e9,
             "straggler.gpu starts every call this much later (its kernel launches late)");
  s.add_real("straggler.jitter_ns", &C::straggler, &StragglerConfig::jitter_ns, "ns", 0, 1e9,
             "every GPU starts every call a uniform random 0 .. jitter later (seeded)");
  s.add_real("straggler.issue_factor", &C::straggler, &StragglerConfig::issue_factor, "", 0, 1,
             "straggler.gpu sends at most this fraction of its links' rate (a throttled GPU)",
             true);
  s.add_int("straggler.lanes", &C::straggler, &StragglerConfig::lanes, "lanes", 0, 64,
            "straggler.gpu's links (both directions) run on this many lanes (0: link.lanes)");
  // faults
  s.add_custom<FaultConfig, std::vector<Fault>>(
      "faults", &C::faults, &FaultConfig::list, "fault list", faults_allowed(),
      "faults injected at a time, each logged when it happens (docs/reliability.md), e.g. "
      "lane_down@5000:fabric.gpu0.tx3=1",
      parse_faults, format_faults);
  // reduction engine
  s.add_int("reduction.table_entries", &C::reduction, &ReductionConfig::table_entries, "entries",
            1, 1 << 24,
            "concurrent reductions per switch chip (one per address being reduced); a full "
            "table withholds the contributions that need a new entry");
  s.add_int("reduction.replication_slots", &C::reduction, &ReductionConfig::replication_slots,
            "writes", 1, 1 << 24,
            "multicast writes the engine holds at once while their copies leave "
            "(switch.multicast=engine); when all are taken, writes wait in their input buffers");
  s.add_int("reduction.ports", &C::reduction, &ReductionConfig::ports, "ports", 1, 64,
            "crossbar ports of the engine (each with its own ALU); addresses are spread over "
            "them, so up to this many contributions enter per cycle");
  s.add_int("reduction.alu_bytes_per_cycle", &C::reduction, &ReductionConfig::alu_bytes_per_cycle,
            "B/cycle", 1, 1 << 20,
            "throughput of each engine port's ALU: contribution bytes reduced per switch cycle");
  s.add_int("reduction.port_bytes_per_cycle", &C::reduction,
            &ReductionConfig::port_bytes_per_cycle, "B/cycle", 1, 1 << 20,
            "width of each engine crossbar port: bytes it takes in (contributions, writes, "
            "read requests) or sends out (copies, results) per switch cycle; sending, it may "
            "start packets to several outputs in one cycle while their data fits");
  s.add_choice("reduction.order", &C::reduction, &ReductionConfig::order, kFoldOrders,
               "the order the engine folds an address's contributions in: member (the "
               "group's member order 0..n-1, early ones wait: bit-exact and reproducible) or "
               "arrival (as they come: floating-point sums then vary with timing, and the "
               "check allows the rounding error of any order)");
  s.add_choice("reduction.alu", &C::reduction, &ReductionConfig::alu, kAluKinds,
               "what computes the engine's reductions: model (the C++ golden model) or rtl "
               "(the Verilated rtl/reduction_alu.sv, evaluated only while it has work); same "
               "timing and the same bits either way");
  s.add_int("reduction.pipeline_cycles", &C::reduction, &ReductionConfig::pipeline_cycles,
            "cycles", 0, 100000, "ALU pipeline depth: cycles from accepting data to its result");
  // topology
  s.add_choice("topology.kind", &C::topology, &TopologyConfig::kind, kTopologies,
               "single: one switch with an endpoint on each of its switch.ports ports; "
               "scaleup: topology.endpoints endpoints wired to topology.switches switch chips; "
               "scaleout: scaleout.domains such scale-up domains whose GPUs also have NICs "
               "into a leaf/spine network (scaleout.*)");
  s.add_int("topology.endpoints", &C::topology, &TopologyConfig::endpoints, "", 1, 4096,
            "scaleup: number of endpoints (GPUs)");
  s.add_int("topology.switches", &C::topology, &TopologyConfig::switches, "", 1, 1024,
            "scaleup: number of switch chips");
  s.add_int_list("topology.links", &C::topology, &TopologyConfig::links, "links", 0, 1024,
                 "scaleup: links from an endpoint to each switch: one value per switch (every "
                 "endpoint alike) or one row of them per endpoint");
  s.add_int_list("topology.switch_links", &C::topology, &TopologyConfig::switch_links, "", 0,
                 1 << 20,
                 "scaleup: switch-to-switch links as triples a, b, count (routes take the "
                 "fewest switch hops and spread over equal choices)");
  // scale-out tier (topology.kind=scaleout, docs/scale-out.md)
  s.add_int("scaleout.domains", &C::scaleout, &ScaleOutConfig::domains, "domains", 1, 4096,
            "scale-up domains (each topology.endpoints GPUs on topology.switches chips) joined "
            "by the scale-out network");
  s.add_int("scaleout.nics_per_gpu", &C::scaleout, &ScaleOutConfig::nics_per_gpu, "NICs", 1, 16,
            "scale-out NIC ports per GPU (a DGX H100 has one 400 Gb/s NIC per GPU)");
  s.add_choice("scaleout.placement", &C::scaleout, &ScaleOutConfig::placement, kPlacements,
               "which leaf a NIC goes to: rail (NIC k of GPU g of every domain on leaf "
               "g x scaleout.nics_per_gpu + k, as in NVIDIA's rail-optimized SuperPODs: the "
               "same GPU of every domain shares a leaf) or packed (NICs fill leaves in GPU order, "
               "whole domains per leaf)");
  s.add_int("scaleout.tiers", &C::scaleout, &ScaleOutConfig::tiers, "tiers", 1, 2,
            "1: one switch takes every NIC; 2: leaf switches (NICs down, links up) and spine "
            "switches, one link from every leaf to every spine");
  s.add_int("scaleout.switch_ports", &C::scaleout, &ScaleOutConfig::switch_ports, "ports", 2,
            1024, "radix of the leaf and spine switches (64 like NVIDIA Quantum-2)");
  s.add_real("scaleout.oversubscription", &C::scaleout, &ScaleOutConfig::oversubscription, "",
             1, 64,
             "a leaf's down ports (to NICs) per up port (to spines): 1 is a non-blocking fat "
             "tree, 2 halves the bandwidth out of a leaf");
  s.add_real("scaleout.link_gbps", &C::scaleout, &ScaleOutConfig::link_gbps, "Gb/s", 1, 1e5,
             "rate of a NIC link and of the leaf/spine links, per direction (400: NDR, 400GbE)",
             true);
  s.add_real("scaleout.latency_ns", &C::scaleout, &ScaleOutConfig::latency_ns, "ns", 0.001, 1e6,
             "one-way latency of a scale-out link (NIC pipeline, SerDes, FEC, cable)");
  s.add_int("scaleout.flit_bytes", &C::scaleout, &ScaleOutConfig::flit_bytes, "B", 4, 4096,
            "unit of scale-out serialization and credits (InfiniBand: 64-B credits); a packet "
            "is a header flit and its payload in these units");
  s.add_real("scaleout.switch_latency_ns", &C::scaleout, &ScaleOutConfig::switch_latency_ns, "ns",
             0, 1e6, "port-to-port pipeline of a leaf or spine switch (cut-through)");
  s.add_int("scaleout.buffer_flits", &C::scaleout, &ScaleOutConfig::buffer_flits, "flits", 1,
            1 << 24,
            "input buffer of each leaf/spine port and NIC receive buffer, in scaleout.flit_bytes "
            "units, split over switch.vcs (credits must cover a link round trip)");
  s.add_real("scaleout.ber", &C::scaleout, &ScaleOutConfig::ber, "", 0, 0.1,
             "bit error rate of the NIC, leaf and spine links before FEC (0: error-free); "
             "link.burst_bits applies");
  s.add_choice("scaleout.fec", &C::scaleout, &ScaleOutConfig::fec, kFecs,
               "FEC of the scale-out links: none or rs544 (RS(544,514), as 400GbE and NDR "
               "use); link.fec_decode_ns applies");
  s.add_choice("scaleout.retry", &C::scaleout, &ScaleOutConfig::retry, kRetries,
               "link-level retry of the scale-out links: none (InfiniBand: lossless by "
               "credits; a CRC failure stops the run) or go_back_n (Ultra Ethernet's "
               "link-level retry); link.ack_delay_ns applies");
  s.add_int("scaleout.replay_buffer_flits", &C::scaleout, &ScaleOutConfig::replay_buffer_flits,
            "flits", 1, 16777216,
            "scaleout.retry=go_back_n: flits a sender keeps until acknowledged, in "
            "scaleout.flit_bytes units (must cover the ack round trip of a scale-out link)");
  s.add_bool("scaleout.sharp", &C::scaleout, &ScaleOutConfig::sharp,
             "in-network aggregation (InfiniBand SHARP-like) for collective.algorithm="
             "hierarchical: across the domains, the GPUs of a rank push their chunk to their "
             "leaf's reduction engine (reduction.*), which folds them in domain order and "
             "multicasts the sum back: S/D each way per GPU instead of the ring's "
             "2(m-1)/m x S/D. Needs each rank's NICs on one leaf (placement rail, or 1 tier)");
  // link
  s.add_int("link.lanes", &C::link, &LinkConfig::lanes, "lanes", 1, 64,
            "SerDes lanes per link direction");
  s.add_real("link.lane_gbps", &C::link, &LinkConfig::lane_gbps, "Gb/s", 0, 10000,
             "data rate of one lane, per direction", true);
  s.add_real("link.encoding_efficiency", &C::link, &LinkConfig::encoding_efficiency, "", 0, 1,
             "fraction of the lane rate left for flits after line coding / FEC overhead", true);
  s.add_real("link.latency_ns", &C::link, &LinkConfig::latency_ns, "ns", 0, 1e6,
             "one-way latency of a flit's first bit: SerDes + FEC + wire (credits return with it too)",
             true);
  s.add_int("link.flit_bytes", &C::link, &LinkConfig::flit_bytes, "B", 4, 1024,
            "flit size: the unit of serialization and of credits");
  s.add_real("link.ber", &C::link, &LinkConfig::ber, "", 0, 0.1,
             "bit error rate on the wire, before FEC (0: an error-free link)");
  s.add_real("link.burst_bits", &C::link, &LinkConfig::burst_bits, "bits", 1, 10000,
             "bits corrupted by one error event (1: independent bit errors; the event rate is "
             "ber / burst_bits, so the bit error rate stays link.ber)");
  s.add_choice("link.fec", &C::link, &LinkConfig::fec, kFecs,
               "forward error correction: none, or rs544 = RS(544,514) over 10-bit symbols, "
               "up to 15 symbol errors corrected per codeword; adds one codeword time at the "
               "lane rate plus link.fec_decode_ns to every flit's latency");
  s.add_real("link.fec_decode_ns", &C::link, &LinkConfig::fec_decode_ns, "ns", 0, 10000,
             "FEC decoder latency (assumption: public figures give ~100 ns for codeword plus "
             "decode on 100G PAM4 lanes)");
  s.add_choice("link.retry", &C::link, &LinkConfig::retry, kRetries,
               "link-level retry of packets that fail their CRC: none (a CRC failure stops the "
               "run: the data is lost) or go_back_n (the receiver nacks, the sender replays "
               "from its replay buffer)");
  s.add_int("link.replay_buffer_flits", &C::link, &LinkConfig::replay_buffer_flits, "flits", 1,
            16777216,
            "go_back_n: flits the sender keeps until acknowledged; a full buffer stops the "
            "sender (must cover the ack round trip)");
  s.add_real("link.ack_delay_ns", &C::link, &LinkConfig::ack_delay_ns, "ns", 0, 10000,
             "go_back_n: time from a packet's tail (after FEC) to its ack or nack leaving the "
             "receiver (CRC check, ack scheduling; assumption)");
  // switch
  s.add_int("switch.ports", &C::sw, &SwitchConfig::ports, "ports", 2, 1024,
            "switch radix (ports per chip); with topology.kind=single one endpoint is attached "
            "to each port");
  s.add_int("switch.vcs", &C::sw, &SwitchConfig::vcs, "VCs", 1, 16,
            "virtual channels per port; each has its own credits and queues");
  s.add_int("switch.input_buffer_flits", &C::sw, &SwitchConfig::input_buffer_flits, "flits", 1,
            1 << 24,
            "input buffer per port, split evenly between VCs; it is the upstream credit pool");
  s.add_int("switch.output_buffer_flits", &C::sw, &SwitchConfig::output_buffer_flits, "flits", 1,
            1 << 24,
            "output buffer per port and VC between crossbar and link (unbounded when queueing=output)");
  s.add_choice("switch.queueing", &C::sw, &SwitchConfig::queueing, kQueueing,
               "input queues: fifo (one per VC, head-of-line blocking), voq (one per VC and "
               "output), output (ideal output-queued switch)");
  s.add_choice("switch.allocator", &C::sw, &SwitchConfig::allocator, kAllocators,
               "switch allocator: islip, pim (parallel iterative matching), rr (separable "
               "input-first round-robin)");
  s.add_int("switch.iterations", &C::sw, &SwitchConfig::iterations, "", 1, 64,
            "allocator iterations per allocation cycle");
  s.add_choice("switch.egress", &C::sw, &SwitchConfig::egress, kEgress,
               "which of a switch's parallel links toward an endpoint a packet takes: hash (its "
               "address spread over them) or aligned (the link with the index the destination "
               "itself would use for that address: with every endpoint wired alike, each ingress "
               "link feeds one egress link; an assumption either way, NVSwitch's is not public)");
  s.add_choice("switch.multicast", &C::sw, &SwitchConfig::multicast, kMulticast,
               "where a multicast write (multimem.st) is replicated: engine (it crosses the "
               "crossbar once, to the multicast/reduction engine, whose port sends the copies "
               "at its own width; an assumption about NVSwitch) or crossbar (copies made at "
               "the input, each crossing from there; one traversal fans out to the member "
               "outputs free at that edge)");
  s.add_real("switch.speedup", &C::sw, &SwitchConfig::speedup, "x", 1, 16,
             "crossbar port bandwidth as a multiple of the link rate");
  s.add_int("switch.pipeline_cycles", &C::sw, &SwitchConfig::pipeline_cycles, "cycles", 0, 100000,
            "cycles from allocation to the head flit entering the output buffer (route, "
            "allocate, traverse)");
  s.add_real("switch.clock_ghz", &C::sw, &SwitchConfig::clock_ghz, "GHz", 0, 100,
             "switch core clock: one allocation per cycle", true);
  // traffic
  s.add_choice("traffic.pattern", &C::traffic, &TrafficConfig::pattern, kPatterns,
               "destination of each packet (see docs/models/endpoint.md)");
  s.add_real("traffic.load", &C::traffic, &TrafficConfig::load, "", 0, 1,
             "offered load per endpoint as a fraction of its link's flit rate (header flits count)");
  s.add_int("traffic.packet_flits", &C::traffic, &TrafficConfig::packet_flits, "flits", 1, 18,
            "packet length: one header flit + payload flits");
  s.add_choice("traffic.process", &C::traffic, &TrafficConfig::process, kProcesses,
               "arrival process: bernoulli (each flit slot independently) or bursty (on/off)");
  s.add_real("traffic.burst_packets", &C::traffic, &TrafficConfig::burst_packets, "packets", 1,
             1e9, "bursty process: mean packets per on-period (geometric), sent back to back");
  s.add_int("traffic.hotspot_endpoint", &C::traffic, &TrafficConfig::hotspot_endpoint, "", 0,
            4095, "hotspot pattern: the hot destination endpoint");
  s.add_real("traffic.hotspot_fraction", &C::traffic, &TrafficConfig::hotspot_fraction, "", 0, 1,
             "hotspot pattern: share of packets sent to the hot destination; the rest is uniform");
  s.add_real("traffic.read_fraction", &C::traffic, &TrafficConfig::read_fraction, "", 0, 1,
             "share of operations that are reads: a one-flit request (request VCs) answered by "
             "the destination with traffic.packet_flits of data (the last VC); the rest are "
             "posted writes. Needs switch.vcs >= 2");
  s.add_int("traffic.outstanding_reads", &C::traffic, &TrafficConfig::outstanding_reads,
            "reads", 1, 1 << 20,
            "reads an endpoint may have in flight; a read at the head of a source queue waits "
            "for a slot (and holds what is queued behind it)");
  s.add_bool("traffic.allow_self", &C::traffic, &TrafficConfig::allow_self,
             "uniform/hotspot/permutation may pick the sender itself (true: the classic "
             "switching-theory model)");
  // endpoint
  s.add_int("endpoint.rx_buffer_flits", &C::endpoint, &EndpointConfig::rx_buffer_flits, "flits",
            1, 1 << 24,
            "endpoint receive buffer per link, split evenly between VCs; drained as each tail "
            "arrives");
  s.add_choice("endpoint.link_policy", &C::endpoint, &EndpointConfig::link_policy, kLinkPolicies,
               "which of its links an endpoint sends a packet on: stripe (by address, "
               "interleaved every endpoint.stripe_bytes, as NVLink does), round_robin, random");
  s.add_int("endpoint.stripe_bytes", &C::endpoint, &EndpointConfig::stripe_bytes, "B", 1,
            1 << 30, "address interleaving granularity across an endpoint's links (and across a "
            "switch's parallel links to one destination)");
  return s;
}

double link_gbps(const LinkConfig& l) {
  return static_cast<double>(l.lanes) * l.lane_gbps * l.encoding_efficiency;
}

Ps flit_time_ps(const LinkConfig& l) {
  return static_cast<Ps>(
      std::llround(static_cast<double>(l.flit_bytes) * 8.0 / link_gbps(l) * 1000.0));
}

Ps fec_latency_ps(const LinkConfig& l) {
  if (l.fec == Fec::kNone) return 0;
  const double codeword_ns = static_cast<double>(kRsCodewordBits) / l.lane_gbps;
  return ns_to_ps(codeword_ns + l.fec_decode_ns);
}

std::int64_t replay_round_trip_flits(const LinkConfig& l, int flits) {
  const Ps flit = flit_time_ps(l);
  const Ps rtt = static_cast<Ps>(flits) * flit + 2 * (ns_to_ps(l.latency_ns) + fec_latency_ps(l)) +
                 ns_to_ps(l.ack_delay_ns);
  return static_cast<std::int64_t>((rtt + flit - 1) / flit);
}

bool link_reliability_on(const LinkConfig& l) {
  return l.ber > 0 || l.fec != Fec::kNone || l.retry != Retry::kNone;
}

bool link_reliability_on(const Config& c) {
  if (link_reliability_on(c.link)) return true;
  if (c.topology.kind == TopologyKind::kScaleOut &&
      (c.scaleout.ber > 0 || c.scaleout.fec != Fec::kNone || c.scaleout.retry != Retry::kNone))
    return true;
  for (const Fault& f : c.faults.list)
    if (f.kind == FaultKind::kBer) return true;
  return false;
}

Ps switch_cycle_ps(const SwitchConfig& s) {
  return static_cast<Ps>(std::llround(1000.0 / s.clock_ghz));
}

// Go-back-N: the replay buffer must cover a link's ack round trip, or the
// sender stalls on every packet. `keys`: the tier's parameter prefix;
// `whose`: the link in words.
static void check_replay_buffer(const LinkConfig& l, int max_flits, const std::string& keys,
                                const std::string& whose) {
  if (l.retry != Retry::kGoBackN) return;
  const auto rt = replay_round_trip_flits(l, max_flits);
  if (l.replay_buffer_flits < rt)
    throw ConfigError("inconsistent config: " + keys + ".replay_buffer_flits=" +
                      std::to_string(l.replay_buffer_flits) + " is smaller than " + whose +
                      " ack round trip of " + std::to_string(rt) + " flits (a " +
                      std::to_string(max_flits) + "-flit packet, then 2 x (" + keys +
                      ".latency_ns + FEC latency) + link.ack_delay_ns at the flit rate): the "
                      "sender would stall on every packet; use at least " + std::to_string(rt));
}

void validate(const Config& c) {
  auto fail = [](const std::string& m) { throw ConfigError("inconsistent config: " + m); };
  const std::int64_t L = max_packet_flits(c);
  const std::string ls =
      carries_data(c)
          ? "collective.payload_bytes=" + std::to_string(c.collective.payload_bytes) + ": " +
                std::to_string(L) + " flits"
          : "traffic.packet_flits=" + std::to_string(L);
  if (c.sw.input_buffer_flits / c.sw.vcs < L)
    fail("switch.input_buffer_flits=" + std::to_string(c.sw.input_buffer_flits) +
         " split over switch.vcs=" + std::to_string(c.sw.vcs) +
         " leaves less than one packet (" + ls +
         ") per VC; virtual cut-through needs a whole packet's credits");
  if (c.endpoint.rx_buffer_flits / c.sw.vcs < L)
    fail("endpoint.rx_buffer_flits=" + std::to_string(c.endpoint.rx_buffer_flits) +
         " split over switch.vcs=" + std::to_string(c.sw.vcs) +
         " leaves less than one packet (" + ls + ") per VC");
  if (c.sw.queueing != Queueing::kOutput && c.sw.output_buffer_flits < L)
    fail("switch.output_buffer_flits=" + std::to_string(c.sw.output_buffer_flits) +
         " is smaller than one packet (" + ls + ")");
  const std::int64_t n = endpoint_count(c);
  const std::string nkey = (c.topology.kind == TopologyKind::kSingle ? "switch.ports="
                                                                       : "topology.endpoints=") +
                           std::to_string(n);
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
  if (flit_time_ps(c.link) < 1)
    fail("link.flit_bytes / (link.lanes x link.lane_gbps x link.encoding_efficiency) is below "
         "the 1 ps time resolution");
  if (switch_cycle_ps(c.sw) < 1) fail("switch.clock_ghz gives a cycle below 1 ps");
  if (c.sim.watchdog_ns > 0 && c.sim.watchdog_ns < 10 * (c.link.latency_ns + ps_to_ns(fec_latency_ps(c.link))))
    fail("sim.watchdog_ns=" + format_real(c.sim.watchdog_ns) +
         " is shorter than 10 link latencies (link.latency_ns=" + format_real(c.link.latency_ns) +
         " plus FEC): a busy but healthy fabric could look stuck; use at least " +
         format_real(10 * (c.link.latency_ns + ps_to_ns(fec_latency_ps(c.link)))) + ", or 0 to turn it off");
  if (c.sim.watchdog_ns > 0 && c.straggler.delay_ns + c.straggler.jitter_ns > 0 &&
      c.sim.watchdog_ns <= c.straggler.delay_ns + c.straggler.jitter_ns)
    fail("sim.watchdog_ns=" + format_real(c.sim.watchdog_ns) +
         " is not longer than the straggler's start delay (straggler.delay_ns=" +
         format_real(c.straggler.delay_ns) + " + straggler.jitter_ns=" + format_real(c.straggler.jitter_ns) +
         "): the data waiting for it would look stuck; raise sim.watchdog_ns or set it to 0");
  for (std::size_t i = 0; i < c.faults.list.size(); ++i) {
    const Fault& f = c.faults.list[i];
    const std::string which = "faults: '" + f.text + "'";
    if (f.kind == FaultKind::kLaneDown && f.value >= static_cast<double>(c.link.lanes))
      fail(which + " leaves " + format_real(f.value) + " lanes, not fewer than link.lanes=" +
           std::to_string(c.link.lanes));
    if (f.kind == FaultKind::kSlow && c.workload.kind != WorkloadKind::kCollective)
      fail(which + ": slow applies to GPUs, which only collective workloads have "
           "(workload.kind=collective)");
    if (f.kind == FaultKind::kBer && f.value > 0 && c.link.retry == Retry::kNone &&
        c.link.fec == Fec::kNone)
      fail(which + " adds bit errors to links with neither link.fec nor link.retry: the first "
           "corrupted packet would stop the run; set link.retry=go_back_n (or link.fec=rs544)");
  }
  check_replay_buffer(c.link, max_packet_flits(c), "link", "the link's");
  if (ns_to_ps(c.link.latency_ns) < 1) fail("link.latency_ns must be at least 0.001 ns");
  if (ns_to_ps(c.sim.duration_ns) < 1) fail("sim.duration_ns must be at least 0.001 ns");
  if (c.traffic.pattern != Pattern::kUniform && c.traffic.pattern != Pattern::kHotspot &&
      c.traffic.pattern != Pattern::kPermutation && n < 2)
    fail("traffic.pattern=" + pn + " needs at least 2 endpoints, got " + nkey);
  if (!c.traffic.allow_self && n < 2)
    fail("traffic.allow_self=false needs at least 2 endpoints, got " + nkey);
  if (c.workload.kind == WorkloadKind::kCollective) {
    const auto& k = c.collective;
    if (k.min_bytes > k.max_bytes)
      fail("collective.min_bytes=" + std::to_string(k.min_bytes) + " is above collective.max_bytes=" +
           std::to_string(k.max_bytes));
    // Which algorithm implements which collective.
    const auto supports = [&](CollectiveAlgo a) -> std::string {
      switch (a) {
        case CollectiveAlgo::kRing:
          return "all_reduce, reduce_scatter, all_gather, broadcast, reduce";
        case CollectiveAlgo::kNvls:
          return "all_reduce, all_gather, broadcast";
        case CollectiveAlgo::kPush:
          return "all_reduce, reduce";
        case CollectiveAlgo::kDirect:
          return "all_reduce, all_to_all";
        case CollectiveAlgo::kHierarchical:
          return "all_reduce";
      }
      return "";
    };
    const std::string ops = supports(k.algorithm);
    if ((", " + ops + ",").find(", " + to_string(k.op) + ",") == std::string::npos)
      fail("collective.algorithm=" + to_string(k.algorithm) + " supports collective.op=" + ops +
           ", not " + to_string(k.op));
    if (k.root >= n)
      fail("collective.root=" + std::to_string(k.root) + " does not exist with " + nkey +
           " GPUs (allowed 0 .. " + std::to_string(n - 1) + ")");
    if (k.algorithm == CollectiveAlgo::kNvls && k.op == CollectiveOp::kAllReduce && c.sw.vcs < 2)
      fail("collective.algorithm=nvls all_reduce reads through the switch: requests and "
           "responses need separate VCs, so switch.vcs must be at least 2 (got " +
           std::to_string(c.sw.vcs) + ")");
    if (uses_reduction_engine(c) && c.sw.queueing == Queueing::kOutput)
      fail("in-switch reduction (collective.algorithm=" + to_string(k.algorithm) + ") needs an input-queued switch (switch.queueing=fifo or "
           "voq): the ideal output-queued model has no crossbar to reach the reduction engine");
    if (uses_reduction_engine(c) && c.topology.kind == TopologyKind::kScaleUp &&
        c.topology.links.size() != static_cast<size_t>(c.topology.switches))
      fail("in-switch reduction needs every GPU wired alike (topology.links with one value "
           "per switch), so each address stripe reaches the same chip from every GPU");
    if (uses_reduction_engine(c) && !c.topology.switch_links.empty())
      fail("in-switch reduction needs GPUs attached directly to every chip "
           "(no topology.switch_links)");
    const auto es = static_cast<std::int64_t>(element_bytes(k.dtype));
    if (!k.workload.empty()) {
      const TrainingWorkload w = load_training(k.workload, k.groups);
      training_partitions(w, static_cast<int>(n));  // every layout tiles the GPUs
      for (const TrainingCall& call : w.calls)
        if (call.bytes < static_cast<std::uint64_t>(es))
          fail("workload '" + k.workload + "' call " + call.name + ": bytes=" +
               std::to_string(call.bytes) + " is less than one " + to_string(k.dtype) +
               " element (collective.dtype)");
    } else if (!k.groups.empty()) {
      fail("collective.groups=" + k.groups + " re-maps a workload's groups: set collective.workload");
    }
    if (k.min_bytes < es || k.payload_bytes % es != 0)
      fail("collective.min_bytes=" + std::to_string(k.min_bytes) + " and collective.payload_bytes=" +
           std::to_string(k.payload_bytes) + " must hold whole " + to_string(k.dtype) +
           " elements (" + std::to_string(es) + " B)");
  }
  if (c.topology.kind == TopologyKind::kScaleOut) {
    // This first scale-out model carries flat collectives across both tiers.
    if (c.workload.kind != WorkloadKind::kCollective)
      fail("topology.kind=scaleout runs collectives (workload.kind=collective) for now: the "
           "synthetic traffic statistics count flits of one link type, and TLM endpoints are "
           "scale-up only");
    const bool flat = c.collective.algorithm == CollectiveAlgo::kRing ||
                      c.collective.algorithm == CollectiveAlgo::kHierarchical ||
                      (c.collective.algorithm == CollectiveAlgo::kDirect &&
                       c.collective.op == CollectiveOp::kAllToAll);
    if (!flat)
      fail("topology.kind=scaleout: collective.algorithm=" + to_string(c.collective.algorithm) +
           " with collective.op=" + to_string(c.collective.op) +
           " is not modelled across domains yet; use ring or hierarchical (or direct all_to_all)");
    if (c.scaleout.sharp && c.scaleout.tiers == 2 && c.scaleout.placement != Placement::kRail)
      fail("scaleout.sharp=true aggregates each rank's chunk in one leaf: it needs "
           "scaleout.placement=rail (or scaleout.tiers=1); a reduction tree over leaves and "
           "spines is not modelled");
    if (c.scaleout.sharp && c.collective.inter != InterAlgo::kRing)
      fail("scaleout.sharp=true reduces across the domains in the leaves; collective.inter=" +
           name_of(kInterAlgos, c.collective.inter) + " would do it in the GPUs: choose one");
    if (c.scaleout.sharp && c.sw.queueing == Queueing::kOutput)
      fail("scaleout.sharp=true needs an input-queued switch (switch.queueing=fifo or voq): "
           "the ideal output-queued model has no crossbar to reach the reduction engine");
    const Config t = scaleout_tier_config(c);
    const std::int64_t so_flits = max_packet_flits(t);
    if (c.scaleout.buffer_flits / c.sw.vcs < so_flits)
      fail("scaleout.buffer_flits=" + std::to_string(c.scaleout.buffer_flits) +
           " split over switch.vcs=" + std::to_string(c.sw.vcs) + " leaves less than one " +
           std::to_string(so_flits) + "-flit packet (collective.payload_bytes=" +
           std::to_string(c.collective.payload_bytes) + " in scaleout.flit_bytes=" +
           std::to_string(c.scaleout.flit_bytes) + " units) per VC");
    if (flit_time_ps(t.link) < 1)
      fail("scaleout.flit_bytes / scaleout.link_gbps is below the 1 ps time resolution");
    check_replay_buffer(t.link, so_flits, "scaleout", "a scale-out link's");
    if (c.sim.watchdog_ns > 0 && c.sim.watchdog_ns < 10 * c.scaleout.latency_ns)
      fail("sim.watchdog_ns=" + format_real(c.sim.watchdog_ns) +
           " is shorter than 10 scale-out link latencies (scaleout.latency_ns=" +
           format_real(c.scaleout.latency_ns) + "): a healthy fabric could look stuck; use at "
           "least " + format_real(10 * c.scaleout.latency_ns) + ", or 0 to turn it off");
  }
  if (!c.collective.data && c.workload.kind == WorkloadKind::kTlm)
    fail("collective.data=false (timing only) does not apply to workload.kind=tlm: TLM "
         "initiators read and write real data");
  if (!c.collective.data && c.reduction.alu == AluKind::kRtl && uses_reduction_engine(c))
    fail("collective.data=false (timing only) leaves reduction.alu=rtl nothing to compute; "
         "use reduction.alu=model or collective.data=true");
  if (c.workload.kind == WorkloadKind::kTlm) {
    if (c.sw.vcs < 2)
      fail("workload.kind=tlm carries reads: requests and responses need separate VCs, so "
           "switch.vcs must be at least 2 (got " + std::to_string(c.sw.vcs) + ")");
    if (c.collective.payload_bytes % 4 != 0)
      fail("workload.kind=tlm: collective.payload_bytes=" + std::to_string(c.collective.payload_bytes) +
           " (each packet's data) must be a multiple of 4 B, so a packet holds whole elements of "
           "every multimem dtype");
    const std::int64_t most = c.tlm.queue_packets * c.collective.payload_bytes;
    if (c.tlm.max_bytes > most)
      fail("tlm.max_bytes=" + std::to_string(c.tlm.max_bytes) + " would never fit in an endpoint's "
           "queue of tlm.queue_packets=" + std::to_string(c.tlm.queue_packets) + " packets of "
           "collective.payload_bytes=" + std::to_string(c.collective.payload_bytes) +
           " B; allowed up to " + std::to_string(most));
    if (c.tlm.queue_packets + c.tlm.outstanding > 65536)
      fail("tlm.queue_packets + tlm.outstanding = " +
           std::to_string(c.tlm.queue_packets + c.tlm.outstanding) +
           " transactions could be open per endpoint; packets name them in 16 bits (at most 65536)");
    AddressMap(static_cast<int>(n), static_cast<std::uint64_t>(c.tlm.window_bytes),
               static_cast<std::uint64_t>(c.tlm.multicast_base), c.tlm.multicast);
    if (uses_reduction_engine(c) && c.sw.queueing == Queueing::kOutput)
      fail("tlm.multicast objects use the switches' reduction engines, which need an "
           "input-queued switch (switch.queueing=fifo or voq)");
    if (uses_reduction_engine(c) && c.topology.kind == TopologyKind::kScaleUp &&
        c.topology.links.size() != static_cast<size_t>(c.topology.switches))
      fail("tlm.multicast needs every GPU wired alike (topology.links with one value per "
           "switch), so each address stripe reaches the same chip from every GPU");
    if (uses_reduction_engine(c) && !c.topology.switch_links.empty())
      fail("tlm.multicast needs GPUs attached directly to every chip (no topology.switch_links)");
  }
  if (c.workload.kind == WorkloadKind::kSynthetic && c.traffic.read_fraction > 0 && c.sw.vcs < 2)
    fail("traffic.read_fraction=" + format_real(c.traffic.read_fraction) +
         " sends reads: requests and responses need separate VCs, so switch.vcs must be at "
         "least 2 (got " + std::to_string(c.sw.vcs) + ")");
  if (c.straggler.gpu >= n)
    fail("straggler.gpu=" + std::to_string(c.straggler.gpu) + " does not exist with " + nkey +
         " endpoints (allowed -1 .. " + std::to_string(n - 1) + ")");
  if (c.straggler.lanes > c.link.lanes)
    fail("straggler.lanes=" + std::to_string(c.straggler.lanes) + " is more than link.lanes=" +
         std::to_string(c.link.lanes) + " (a degraded link has fewer lanes)");
  build_topology(c);  // wiring, port budgets, reachability
}

namespace {
// Applies a YAML file; a top-level `base: other.yaml` (relative to this file)
// is applied first, so a workload can build on a system preset.
void apply_file(const Schema<Config>& schema, Config& c, const std::string& path, int depth) {
  if (depth > 8) throw ConfigError(path + ": 'base' files nest more than 8 deep (a cycle?)");
  // A directory opens like a file on Linux and fails on the first read (the
  // stream then throws std::ios_base::failure): refuse it by name first.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError("cannot read config file '" + path + "': it is a directory");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError("cannot read config file '" + path + "'");
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ": YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                      ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {  // the stream's own read errors
    throw ConfigError("cannot read config file '" + path + "': " + e.what());
  }
  const auto dir = path.find('/') == std::string::npos ? std::string()
                                                        : path.substr(0, path.rfind('/') + 1);
  if (root && root.IsMap() && root["base"]) {
    const YAML::Node base = root["base"];
    if (!base.IsScalar() || base.Scalar().empty())
      throw ConfigError(path + ": 'base' must name one YAML file (got " +
                        (base.IsScalar() ? std::string("an empty value") : std::string("a list or map")) +
                        ")");
    apply_file(schema, c, base.Scalar().front() == '/' ? base.Scalar() : dir + base.Scalar(),
               depth + 1);
    root.remove("base");
  }
  // A workload file named in a config file is found next to it.
  const std::string workload = c.collective.workload;
  schema.apply_yaml(c, root, path);
  std::string& w = c.collective.workload;
  if (w != workload && !w.empty() && w.front() != '/') w = dir + w;
}
}  // namespace

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  const Schema<Config> schema = config_schema();
  Config c;
  if (!path.empty()) apply_file(schema, c, path, 0);
  for (auto& o : overrides) {
    try {
      schema.set_assignment(c, o);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string("--set ") + o + ": " + e.what());
    }
  }
  validate(c);
  return c;
}

std::vector<std::pair<std::string, std::string>> config_values(const Config& c) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto schema = config_schema();
  for (auto& e : schema.entries()) out.emplace_back(e.info.key, e.get(c));
  return out;
}

std::string params_text() {
  const auto schema = config_schema();
  const Config defaults;
  std::ostringstream os;
  for (auto& e : schema.entries()) {
    os << e.info.key << "\n    type " << e.info.type_name();
    if (!e.info.unit.empty()) os << ", unit " << e.info.unit;
    os << ", default " << e.get(defaults) << ", allowed " << e.info.allowed() << "\n    "
       << e.info.description << "\n";
  }
  return os.str();
}

std::string params_markdown() {
  const auto schema = config_schema();
  const Config defaults;
  std::ostringstream os;
  os << "# Configuration parameters\n\n"
     << "<!-- Generated by `build/fabricsim params --markdown`; a test fails when this page "
        "and the code differ. Do not edit by hand. -->\n\n"
     << "Set them in a YAML file (nested maps: `link: {lanes: 2}`, or dotted keys) and override "
        "any with `--set key=value`. An unknown key, a wrong type or a value out of range stops "
        "the run with exit status 2 before anything is simulated.\n\n";
  std::string section;
  for (auto& e : schema.entries()) {
    const std::string sec = e.info.key.substr(0, e.info.key.find('.'));
    if (sec != section) {
      section = sec;
      os << "\n## " << sec << "\n\n| key | type | unit | default | allowed | description |\n"
         << "|---|---|---|---|---|---|\n";
    }
    std::string allowed = e.info.allowed();
    for (std::string::size_type p = 0; (p = allowed.find('|', p)) != std::string::npos; p += 2)
      allowed.replace(p, 1, "\\|");
    os << "| `" << e.info.key << "` | " << e.info.type_name() << " | " << e.info.unit << " | `"
       << e.get(defaults) << "` | " << allowed << " | " << e.info.description << " |\n";
  }
  return os.str();
}

}  // namespace fabricsim
