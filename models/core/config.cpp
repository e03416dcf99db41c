// Quantities derived from a Config: endpoint counts, packet sizes, link and
// switch timing, the scale-out tier's parameters.
#include "models/core/config.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/collective_algorithms.hpp"

namespace fabricsim {

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
  const AlgorithmTraits& t = traits_of(c.collective.algorithm);
  if (has_op(t.reduces_in_switch, c.collective.op) || may_run_symmetric_kernel(c)) return true;
  // Multicast alone (NVLS all-gather) needs the engine only to replicate
  // there (the ideal output-queued switch replicates at once anyway).
  return t.multicasts && c.sw.multicast == Multicast::kEngine &&
         c.sw.queueing != Queueing::kOutput;
}

bool may_run_symmetric_kernel(const Config& c) {
  const auto& k = c.collective;
  // NCCL's symmetric all-reduce kernels are for sums of floating-point types
  // (nccl_symmetric_pick).
  return c.workload.kind == WorkloadKind::kCollective && k.protocol != Protocol::kIdeal &&
         k.registration == Registration::kSymmetric && k.op == CollectiveOp::kAllReduce &&
         k.redop == RedOp::kSum && k.dtype != DType::kInt32;
}

bool auto_may_pick_nvls(const Config& c) {
  const auto& k = c.collective;
  const bool simple = k.protocol == Protocol::kSimple || k.protocol == Protocol::kAuto;
  const bool fp = k.dtype != DType::kInt32;
  return k.algorithm == CollectiveAlgo::kAuto && simple && (k.redop == RedOp::kSum || !fp);
}

std::uint64_t stripe_bytes(const Config& c) {
  const std::int64_t payload =
      carries_data(c) ? c.collective.payload_bytes
                      : std::max<std::int64_t>(1, c.traffic.packet_flits - 1) * c.link.flit_bytes;
  return static_cast<std::uint64_t>(std::max(c.endpoint.stripe_bytes, payload));
}

int max_packet_flits(const Config& c) {
  if (carries_data(c)) return packet_flits_for(c, c.collective.payload_bytes);
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
  t.sw.output_buffer_flits = t.sw.pipeline_cycles + 4 * static_cast<std::int64_t>(max_packet_flits(t));
  t.link.ber = so.ber;
  t.link.fec = so.fec;
  t.link.retry = so.retry;
  t.link.replay_buffer_flits = so.replay_buffer_flits;
  // Whether the tier's switches have reduction engines (scaleout.sharp) is
  // the fabric builder's decision, per switch (models/sc/fabric_params.cpp);
  // how their engines are built is the tier's own.
  t.reduction.organisation = so.sharp_organisation;
  return t;
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
  return std::any_of(c.faults.list.begin(), c.faults.list.end(),
                     [](const Fault& f) { return f.kind == FaultKind::kBer; });
}

Ps switch_cycle_ps(const SwitchConfig& s) {
  return static_cast<Ps>(std::llround(1000.0 / s.clock_ghz));
}

}  // namespace fabricsim
