// The schema of Config: every key with its type, unit, default (from the
// structs in config.hpp), allowed range and description, declared section by
// section. A new section is a new add_*_keys function listed in kSections;
// the list's order is the order 'fabricsim params' and docs/config.md show.
#include "models/core/collective_algorithms.hpp"
#include "models/core/config.hpp"

#include <string>
#include <utility>
#include <vector>

namespace fabricsim {

namespace {
// Names of every choice, in the order 'fabricsim params' lists them.
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
const std::vector<std::pair<std::string, EngineOrganisation>> kEngineOrganisations = {
    {"central", EngineOrganisation::kCentral},
    {"sliced", EngineOrganisation::kSliced},
    {"distributed", EngineOrganisation::kDistributed}};
const std::vector<std::pair<std::string, FoldOrder>> kFoldOrders = {
    {"member", FoldOrder::kMember}, {"arrival", FoldOrder::kArrival}};
const std::vector<std::pair<std::string, AllocatorKind>> kAllocators = {
    {"islip", AllocatorKind::kISlip},
    {"pim", AllocatorKind::kPim},
    {"rr", AllocatorKind::kRoundRobin}};
const std::vector<std::pair<std::string, Pattern>> kPatterns = {
    {"uniform", Pattern::kUniform},       {"permutation", Pattern::kPermutation},
    {"hotspot", Pattern::kHotspot},       {"transpose", Pattern::kTranspose},
    {"bitreverse", Pattern::kBitReverse}, {"bitcomplement", Pattern::kBitComplement},
    {"shuffle", Pattern::kShuffle},       {"neighbor", Pattern::kNeighbor},
    {"tornado", Pattern::kTornado}};
const std::vector<std::pair<std::string, Process>> kProcesses = {{"bernoulli", Process::kBernoulli},
                                                                 {"bursty", Process::kBursty}};
const std::vector<std::pair<std::string, TopologyKind>> kTopologies = {
    {"single", TopologyKind::kSingle},
    {"scaleup", TopologyKind::kScaleUp},
    {"scaleout", TopologyKind::kScaleOut}};
const std::vector<std::pair<std::string, Placement>> kPlacements = {{"rail", Placement::kRail},
                                                                    {"packed", Placement::kPacked}};
const std::vector<std::pair<std::string, WorkloadKind>> kWorkloads = {
    {"synthetic", WorkloadKind::kSynthetic},
    {"collective", WorkloadKind::kCollective},
    {"tlm", WorkloadKind::kTlm}};
const std::vector<std::pair<std::string, CollectiveOp>> kCollectiveOps = {
    {"all_reduce", CollectiveOp::kAllReduce}, {"reduce_scatter", CollectiveOp::kReduceScatter},
    {"all_gather", CollectiveOp::kAllGather}, {"all_to_all", CollectiveOp::kAllToAll},
    {"broadcast", CollectiveOp::kBroadcast},  {"reduce", CollectiveOp::kReduce}};
const std::vector<std::pair<std::string, InterAlgo>> kInterAlgos = {
    {"ring", InterAlgo::kRing},
    {"tree", InterAlgo::kTree},
    {"double_tree", InterAlgo::kDoubleTree}};
// The algorithms' names, from their table (collective_algorithms.hpp).
std::vector<std::pair<std::string, CollectiveAlgo>> algorithm_choices() {
  std::vector<std::pair<std::string, CollectiveAlgo>> out;
  for (const AlgorithmTraits& t : collective_algorithms()) out.emplace_back(t.name, t.id);
  return out;
}
const std::vector<std::pair<std::string, CollectiveAlgo>> kCollectiveAlgos = algorithm_choices();
const std::vector<std::pair<std::string, DType>> kDTypes = {{"fp32", DType::kFp32},
                                                            {"fp16", DType::kFp16},
                                                            {"bf16", DType::kBf16},
                                                            {"int32", DType::kInt32}};
const std::vector<std::pair<std::string, RedOp>> kRedOps = {
    {"sum", RedOp::kSum}, {"min", RedOp::kMin}, {"max", RedOp::kMax}};
const std::vector<std::pair<std::string, LinkPolicy>> kLinkPolicies = {
    {"stripe", LinkPolicy::kStripe},
    {"round_robin", LinkPolicy::kRoundRobin},
    {"random", LinkPolicy::kRandom}};
}  // namespace

std::string to_string(Queueing q) {
  return name_of(kQueueing, q);
}
std::string to_string(Multicast m) {
  return name_of(kMulticast, m);
}
std::string to_string(Fec f) {
  return name_of(kFecs, f);
}
std::string to_string(Retry r) {
  return name_of(kRetries, r);
}
std::string to_string(AllocatorKind a) {
  return name_of(kAllocators, a);
}
std::string to_string(Pattern p) {
  return name_of(kPatterns, p);
}
std::string to_string(TopologyKind k) {
  return name_of(kTopologies, k);
}
std::string to_string(CollectiveOp op) {
  return name_of(kCollectiveOps, op);
}
std::string to_string(CollectiveAlgo a) {
  return name_of(kCollectiveAlgos, a);
}
std::string to_string(InterAlgo a) {
  return name_of(kInterAlgos, a);
}

namespace {
using Keys = Schema<Config>;
using C = Config;

// Run control: seed, warm-up, measurement window, watchdog.
void add_sim_keys(Keys& s) {
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
}

// What the endpoints are: traffic sources, GPUs or TLM targets.
void add_workload_keys(Keys& s) {
  s.add_choice("workload.kind", &C::workload, &WorkloadConfig::kind, kWorkloads,
               "synthetic: open-loop traffic (traffic.*); collective: every endpoint is a GPU "
               "running the collective.* sweep; tlm: every endpoint is a TLM-2.0 target "
               "driven by the user's SystemC initiators (tlm.*, docs/tlm.md; a program built "
               "with tlm/, not the fabricsim command)");
}

// The collective and its nccl-tests-like size sweep (or a training step).
void add_collective_keys(Keys& s) {
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
               "across the domains, ring all-gather inside; docs/scale-out.md); auto (all_reduce "
               "with the GPU side, collective.protocol other than ideal: ring or nvls per size, "
               "as NCCL's tuner picks; docs/models/gpu.md)");
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
  s.add_int("collective.outstanding", &C::collective, &CollectiveConfig::outstanding, "requests", 1,
            1 << 20,
            "reads (multimem.ld_reduce) a GPU may have in flight at once, issued in address order "
            "and counted from their issue (waiting for their link too) until the result is back; "
            "as many stores waiting to leave also stop new reads");
}

// TLM faces (docs/tlm.md): address map, queues, memory model.
void add_tlm_keys(Keys& s) {
  s.add_int("tlm.window_bytes", &C::tlm, &TlmConfig::window_bytes, "B", 4096, std::int64_t{1} << 40,
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
}

void add_collective_check_key(Keys& s) {
  s.add_bool("collective.check", &C::collective, &CollectiveConfig::check,
             "compare every output element with the golden reduction (the #wrong column)");
}

// Stragglers: one GPU late, slow or badly connected; jitter on every GPU.
void add_straggler_keys(Keys& s) {
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
}

// Faults injected at a time (docs/reliability.md).
void add_fault_keys(Keys& s) {
  s.add_custom<FaultConfig, std::vector<Fault>>(
      "faults", &C::faults, &FaultConfig::list, "fault list", faults_allowed(),
      "faults injected at a time, each logged when it happens (docs/reliability.md), e.g. "
      "lane_down@5000:fabric.gpu0.tx3=1",
      parse_faults, format_faults);
}

// The in-switch reduction engine of every switch chip.
void add_reduction_keys(Keys& s) {
  s.add_choice("reduction.organisation", &C::reduction, &ReductionConfig::organisation,
               kEngineOrganisations,
               "how each switch chip's engine is built (models/sc/reduction_engine.hpp, "
               "docs/models/reduction_engine.md): central (reduction.ports crossbar ports of one "
               "engine, each with its ALU, sharing one table and one pool of replication slots; "
               "an address always goes to the same port), sliced (reduction.ports slices chosen "
               "by address hash, each with its ALU and 1/reduction.ports of the table and the "
               "slots) or distributed (a slice of ALU, table and slots per "
               "reduction.slice_ports link ports, sized as that share of a "
               "reduction.chip_ports-port chip; an ld_reduce's address is reduced at the slice "
               "of the port it came in by)");
  s.add_int("reduction.chip_ports", &C::reduction, &ReductionConfig::chip_ports, "ports", 1, 4096,
            "organisation=distributed: the ports of the chip whose engine totals "
            "(reduction.ports x alu_bytes_per_cycle and x port_bytes_per_cycle, table_entries, "
            "replication_slots) are divided over its slices; 64 = NVSwitch gen3's NVLink ports "
            "(HARDWARE.md, stated by NVIDIA), so a one-port slice's ALU is 1024/64 = 16 B/cycle "
            "= 25 GB/s of fp32 at 1.5625 GHz, the stated 400 GFLOPS FP32 per chip spread over "
            "its ports (derived); the division itself (capacity in proportion to ports) is an "
            "assumption");
  s.add_int("reduction.slice_ports", &C::reduction, &ReductionConfig::slice_ports, "ports", 1, 4096,
            "organisation=distributed: link ports per engine slice (link port i belongs to slice "
            "i / slice_ports); 1, a slice per port, is an assumption (NVIDIA states no grouping)");
  s.add_int("reduction.table_entries", &C::reduction, &ReductionConfig::table_entries, "entries", 1,
            1 << 24,
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
  s.add_int("reduction.port_bytes_per_cycle", &C::reduction, &ReductionConfig::port_bytes_per_cycle,
            "B/cycle", 1, 1 << 20,
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
  s.add_int("reduction.pipeline_cycles", &C::reduction, &ReductionConfig::pipeline_cycles, "cycles",
            0, 100000, "ALU pipeline depth: cycles from accepting data to its result");
}

// Which endpoints and switch chips exist and how they are wired.
void add_topology_keys(Keys& s) {
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
}

// The scale-out tier (topology.kind=scaleout, docs/scale-out.md).
void add_scaleout_keys(Keys& s) {
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
  s.add_int("scaleout.switch_ports", &C::scaleout, &ScaleOutConfig::switch_ports, "ports", 2, 1024,
            "radix of the leaf and spine switches (64 like NVIDIA Quantum-2)");
  s.add_real("scaleout.oversubscription", &C::scaleout, &ScaleOutConfig::oversubscription, "", 1,
             64,
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
  s.add_choice("scaleout.sharp_organisation", &C::scaleout, &ScaleOutConfig::sharp_organisation,
               kEngineOrganisations,
               "scaleout.sharp: how a leaf's or spine's engine is built, as "
               "reduction.organisation for the scale-up chips (whose setting the tier does not "
               "inherit: a distributed slice is sized as a share of an NVSwitch chip and a "
               "scale-up link, reduction.chip_ports). An InfiniBand switch's aggregation "
               "organisation is not published: the default, central, is an assumption");
}

// Links: SerDes lanes, latency, flits, and their reliability.
void add_link_keys(Keys& s) {
  s.add_int("link.lanes", &C::link, &LinkConfig::lanes, "lanes", 1, 64,
            "SerDes lanes per link direction");
  s.add_real("link.lane_gbps", &C::link, &LinkConfig::lane_gbps, "Gb/s", 0, 10000,
             "data rate of one lane, per direction", true);
  s.add_real("link.encoding_efficiency", &C::link, &LinkConfig::encoding_efficiency, "", 0, 1,
             "fraction of the lane rate left for flits after line coding / FEC overhead", true);
  s.add_real(
      "link.latency_ns", &C::link, &LinkConfig::latency_ns, "ns", 0, 1e6,
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
}

// Switch chips: radix, VCs, buffers, queueing, allocation, pipeline.
void add_switch_keys(Keys& s) {
  s.add_int("switch.ports", &C::sw, &SwitchConfig::ports, "ports", 2, 1024,
            "switch radix (ports per chip); with topology.kind=single one endpoint is attached "
            "to each port");
  s.add_int("switch.vcs", &C::sw, &SwitchConfig::vcs, "VCs", 1, 16,
            "virtual channels per port; each has its own credits and queues");
  s.add_int("switch.input_buffer_flits", &C::sw, &SwitchConfig::input_buffer_flits, "flits", 1,
            1 << 24,
            "input buffer per port, split evenly between VCs; it is the upstream credit pool");
  s.add_int(
      "switch.output_buffer_flits", &C::sw, &SwitchConfig::output_buffer_flits, "flits", 1, 1 << 24,
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
}

// Synthetic open-loop traffic (workload.kind=synthetic).
void add_traffic_keys(Keys& s) {
  s.add_choice("traffic.pattern", &C::traffic, &TrafficConfig::pattern, kPatterns,
               "destination of each packet (see docs/models/endpoint.md)");
  s.add_real(
      "traffic.load", &C::traffic, &TrafficConfig::load, "", 0, 1,
      "offered load per endpoint as a fraction of its link's flit rate (header flits count)");
  s.add_int("traffic.packet_flits", &C::traffic, &TrafficConfig::packet_flits, "flits", 1, 18,
            "packet length: one header flit + payload flits");
  s.add_choice("traffic.process", &C::traffic, &TrafficConfig::process, kProcesses,
               "arrival process: bernoulli (each flit slot independently) or bursty (on/off)");
  s.add_real("traffic.burst_packets", &C::traffic, &TrafficConfig::burst_packets, "packets", 1, 1e9,
             "bursty process: mean packets per on-period (geometric), sent back to back");
  s.add_int("traffic.hotspot_endpoint", &C::traffic, &TrafficConfig::hotspot_endpoint, "", 0, 4095,
            "hotspot pattern: the hot destination endpoint");
  s.add_real("traffic.hotspot_fraction", &C::traffic, &TrafficConfig::hotspot_fraction, "", 0, 1,
             "hotspot pattern: share of packets sent to the hot destination; the rest is uniform");
  s.add_real("traffic.read_fraction", &C::traffic, &TrafficConfig::read_fraction, "", 0, 1,
             "share of operations that are reads: a one-flit request (request VCs) answered by "
             "the destination with traffic.packet_flits of data (the last VC); the rest are "
             "posted writes. Needs switch.vcs >= 2");
  s.add_int("traffic.outstanding_reads", &C::traffic, &TrafficConfig::outstanding_reads, "reads", 1,
            1 << 20,
            "reads an endpoint may have in flight; a read at the head of a source queue waits "
            "for a slot (and holds what is queued behind it)");
  s.add_bool("traffic.allow_self", &C::traffic, &TrafficConfig::allow_self,
             "uniform/hotspot/permutation may pick the sender itself (true: the classic "
             "switching-theory model)");
}

// Endpoints: receive buffers and how they spread packets over their links.
void add_endpoint_keys(Keys& s) {
  s.add_int("endpoint.rx_buffer_flits", &C::endpoint, &EndpointConfig::rx_buffer_flits, "flits", 1,
            1 << 24,
            "endpoint receive buffer per link, split evenly between VCs; drained as each tail "
            "arrives");
  s.add_choice("endpoint.link_policy", &C::endpoint, &EndpointConfig::link_policy, kLinkPolicies,
               "which of its links an endpoint sends a packet on: stripe (by address, "
               "interleaved every endpoint.stripe_bytes, as NVLink does), round_robin, random");
  s.add_int("endpoint.stripe_bytes", &C::endpoint, &EndpointConfig::stripe_bytes, "B", 1, 1 << 30,
            "address interleaving granularity across an endpoint's links (and across a "
            "switch's parallel links to one destination)");
}

using AddKeys = void (*)(Keys&);
// In the order 'fabricsim params' and docs/config.md list them (collective.check
// comes after the tlm.* keys there).
constexpr AddKeys kSections[] = {
    add_sim_keys,
    add_workload_keys,
    add_collective_keys,
    add_gpu_keys,
    add_fast_forward_keys,
    add_tlm_keys,
    add_collective_check_key,
    add_straggler_keys,
    add_fault_keys,
    add_reduction_keys,
    add_topology_keys,
    add_scaleout_keys,
    add_link_keys,
    add_switch_keys,
    add_traffic_keys,
    add_endpoint_keys,
};
}  // namespace

Schema<Config> config_schema() {
  Schema<Config> s;
  for (const AddKeys add : kSections) add(s);
  return s;
}

}  // namespace fabricsim
