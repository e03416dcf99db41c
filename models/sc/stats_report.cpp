#include "models/sc/stats_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "models/core/time.hpp"
#include "models/core/collective.hpp"
#include "models/sc/fabric.hpp"

namespace fabricsim {

nlohmann::json latency_json(const Histogram& h) {
  nlohmann::json j;
  j["count"] = h.count();
  j["mean"] = h.mean() / 1000.0;
  j["min"] = ps_to_ns(h.min());
  j["p50"] = ps_to_ns(h.percentile(50));
  j["p99"] = ps_to_ns(h.percentile(99));
  j["p999"] = ps_to_ns(h.percentile(99.9));
  j["max"] = ps_to_ns(h.max());
  return j;
}

nlohmann::json config_json(const Config& c) {
  nlohmann::json j = nlohmann::json::object();
  const auto schema = config_schema();
  for (const auto& e : schema.entries()) {
    const std::string v = e.get(c);
    switch (e.info.type) {
      case ParamType::kInt:
        j[e.info.key] = std::strtoll(v.c_str(), nullptr, 10);
        break;
      case ParamType::kReal:
        j[e.info.key] = std::strtod(v.c_str(), nullptr);
        break;
      case ParamType::kBool:
        j[e.info.key] = v == "true";
        break;
      case ParamType::kChoice:
        j[e.info.key] = v;
        break;
      case ParamType::kIntList:
        j[e.info.key] = parse_int_list(e.info, v);
        break;
      case ParamType::kCustom:
        j[e.info.key] = v;
        break;
    }
  }
  return j;
}

namespace {

// collective.workload: one row per call of the step (the last iteration's
// figures; every iteration's step time), with what each tier carried
// during the call and the compute gap before it.
nlohmann::json workload_json(const CollectiveSweep& sweep) {
  using nlohmann::json;
  const TrainingWorkload& w = *sweep.workload();
  const auto& calls = sweep.calls();
  json rows = json::array();
  json steps = json::array();
  std::uint64_t wrong = 0, checked = 0;
  double prev_tier[2] = {0, 0};
  Ps prev_end = 0, step_start = 0;
  for (const CollectiveCall& c : calls) {
    const TrainingCall& t = w.calls[static_cast<size_t>(c.workload_call)];
    if (c.workload_call == 0) step_start = prev_end;
    if (!c.finished) break;
    wrong += c.wrong;
    checked += c.checked;
    const double ns = ps_to_ns(c.end - c.start);
    const double algbw = ns > 0 ? static_cast<double>(c.bytes) / ns : 0;
    const Partition& p = sweep.partition(c.partition);
    json r = {{"iteration", c.iteration},
              {"name", t.name},
              {"op", to_string(c.op)},
              {"algorithm", to_string(c.algorithm)},
              {"group", p.name},
              {"layout", p.layout},
              {"group_size", p.size()},
              {"groups", p.groups.size()},
              {"size_bytes", c.bytes},
              {"compute_us", ps_to_ns(c.gap) / 1000.0},
              {"start_us", ps_to_ns(c.start) / 1000.0},
              {"time_us", ns / 1000.0},
              {"algbw_GBps", algbw},
              {"busbw_GBps", algbw * sweep.bus_factor(c)},
              {"scale_up_bytes", c.tier_bytes[0] - prev_tier[0]},
              {"scale_out_bytes", c.tier_bytes[1] - prev_tier[1]},
              {"wrong", c.wrong},
              {"checked_elements", c.checked}};
    if (c.algorithm == CollectiveAlgo::kHierarchical) {
      r["intra_done_us"] = ps_to_ns(c.intra_done - c.start) / 1000.0;
      r["inter_done_us"] = ps_to_ns(c.inter_done - c.start) / 1000.0;
    }
    rows.push_back(r);
    prev_tier[0] = c.tier_bytes[0];
    prev_tier[1] = c.tier_bytes[1];
    prev_end = c.end;
    if (c.workload_call + 1 == static_cast<int>(w.calls.size()))
      steps.push_back(ps_to_ns(c.end - step_start) / 1000.0);
  }
  // A step: from the previous step's end (0 for the first) to its last
  // call's end, compute gaps included.
  double comm = 0, comp = 0;
  for (const auto& r : rows)
    if (r["iteration"].get<int>() == calls.back().iteration) {
      comm += r["time_us"].get<double>();
      comp += r["compute_us"].get<double>();
    }
  return {{"workload", w.name},
          {"file", w.path},
          {"gpus", sweep.gpus()},
          {"check", sweep.config().check},
          {"wrong", wrong},
          {"checked_elements", checked},
          {"step_time_us", steps},
          {"last_step_communication_us", comm},
          {"last_step_compute_us", comp},
          {"rows", rows}};
}

// The calls of one size: sums over its finished iterations.
struct SizeTotals {
  double time_ns = 0, intra_ns = 0, inter_ns = 0;
  std::uint64_t wrong = 0, checked = 0, rounded = 0, stores_max = 0;
  int done = 0;
  std::vector<double> times;  // per iteration, for the tail
  std::vector<double> wait;   // [gpu]

  explicit SizeTotals(int gpus) : wait(static_cast<size_t>(gpus), 0.0) {}
  void add(const CollectiveCall& c) {
    time_ns += ps_to_ns(c.end - c.start);
    intra_ns += ps_to_ns(c.intra_done - c.start);
    inter_ns += ps_to_ns(c.inter_done - c.start);
    times.push_back(ps_to_ns(c.end - c.start));
    // A GPU that has its output waits for the slowest before the next call.
    for (std::size_t g = 0; g < wait.size(); ++g) wait[g] += ps_to_ns(c.end - c.gpu_done[g]);
    wrong += c.wrong;
    checked += c.checked;
    rounded += c.rounded;
    stores_max = std::max(stores_max, c.stores_waiting_max);
    ++done;
  }
  // The p-th percentile of the (sorted) times, in us.
  double percentile_us(double p) const {
    if (times.empty()) return 0.0;
    auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(times.size())));
    return times[std::max<std::size_t>(rank, 1) - 1] / 1000.0;
  }
};

// Whether and how the calls [first, end) of one size were fast-forwarded
// (collective.fast_forward): null when none was long enough to be asked.
nlohmann::json fast_forward_json(const CollectiveSweep& sweep, std::size_t first, std::size_t end) {
  using nlohmann::json;
  int used = 0, whole = 0, done = 0;
  double simulated = 0, error = 0, rejected = 0, tier[2] = {0, 0};
  std::uint64_t skipped = 0;
  std::string why_not;
  const CollectiveCall* with = nullptr;  // the first call that had probes
  for (std::size_t j = first; j < end; ++j) {
    const CollectiveCall& c = sweep.calls()[j];
    if (!c.finished) continue;
    ++done;
    if (!c.ff.why_not.empty()) why_not = c.ff.why_not;
    if (!c.ff.used) {
      simulated += static_cast<double>(c.bytes);
      continue;
    }
    if (!with) with = &c;
    ++used;
    whole += c.ff.whole ? 1 : 0;
    for (const std::uint64_t b : c.ff.probe_bytes) simulated += static_cast<double>(b);
    error = std::max(error, c.ff.error);
    rejected = std::max(rejected, c.ff.rejected_error);
    skipped += c.ff.skipped;
    tier[0] += c.ff.tier_bytes[0];
    tier[1] += c.ff.tier_bytes[1];
  }
  if (!with) return why_not.empty() ? json() : json{{"used", false}, {"why_not", why_not}};
  json probes = json::array();
  for (std::size_t p = 0; p < with->ff.probe_bytes.size(); ++p)
    probes.push_back({{"bytes", with->ff.probe_bytes[p]},
                      {"time_us", ps_to_ns(with->ff.probe_time[p]) / 1000.0}});
  json rounds = json::array();
  for (const FastForward::Round& r : with->ff.rounds)
    rounds.push_back({{"probe_bytes", r.base * with->ff.period_bytes},
                      {"lane", r.lane},
                      {"period_ns", r.t / 1000.0},
                      {"period_ns_lane_mean", r.t_mean / 1000.0},
                      {"period_ns_by_ends", r.ends_t / 1000.0},
                      {"drift", r.drift},
                      {"spread", r.spread >= 0 ? json(r.spread) : json(nullptr)},
                      {"estimated_error", r.error},
                      {"end_period_ns", r.end_slope / 1000.0},
                      {"accepted", r.accepted},
                      {"accepted_by_end_slope", r.by_ends}});
  const double all = static_cast<double>(with->bytes) * done;
  return {{"used", true},
          {"calls", used},
          {"run_whole", whole},
          {"period_bytes", with->ff.period_bytes},
          {"periods", with->ff.periods},
          {"skipped_periods_mean", static_cast<double>(skipped) / used},
          {"simulated_fraction", all > 0 ? simulated / all : 0.0},
          {"estimated_error", error},
          {"rejected_error", rejected},
          {"scale_up_bytes_mean", tier[0] / used},
          {"scale_out_bytes_mean", tier[1] / used},
          {"probes", probes},
          {"rounds", rounds}};
}

// One row per size: the mean over its iterations (calls [first, end)), like
// nccl-tests.
nlohmann::json size_row(const CollectiveSweep& sweep, std::size_t first, std::size_t end) {
  using nlohmann::json;
  const CollectiveConfig& k = sweep.config();
  const CollectiveCall& c = sweep.calls()[first];
  SizeTotals s(sweep.gpus());
  for (std::size_t j = first; j < end; ++j)
    if (sweep.calls()[j].finished) s.add(sweep.calls()[j]);
  std::sort(s.times.begin(), s.times.end());
  json wait_us = json::array();
  for (double w : s.wait) wait_us.push_back(s.done ? w / s.done / 1000.0 : 0.0);
  const double t = s.done ? s.time_ns / s.done : 0;
  const auto bytes = static_cast<double>(c.bytes);
  const double algbw = t > 0 ? bytes / t : 0;  // bytes per ns = GB/s
  json row = {{"size_bytes", c.bytes},
              {"count", c.bytes / element_bytes(k.dtype)},
              {"type", to_string(k.dtype)},
              {"redop", reduces(k.op) ? to_string(k.redop) : "none"},
              {"iterations", s.done},
              {"time_us", t / 1000.0},
              {"time_us_p50", s.percentile_us(50)},
              {"time_us_p99", s.percentile_us(99)},
              {"time_us_max", s.times.empty() ? 0.0 : s.times.back() / 1000.0},
              {"gpu_wait_us_mean", wait_us},
              {"algbw_GBps", algbw},
              {"busbw_GBps", algbw * sweep.bus_factor(c)},
              {"wrong", s.wrong},
              {"within_rounding", s.rounded},
              {"checked_elements", s.checked},
              {"stores_waiting_max", s.stores_max}};
  if (c.algorithm == CollectiveAlgo::kHierarchical && s.done) {
    // When the last GPU had its chunk reduced inside its domain, and
    // across the domains (from the call's start; the all-gather inside
    // the domains ends at time_us).
    row["intra_done_us"] = s.intra_ns / s.done / 1000.0;
    row["inter_done_us"] = s.inter_ns / s.done / 1000.0;
  }
  const nlohmann::json ff = fast_forward_json(sweep, first, end);
  if (!ff.is_null()) row["fast_forward"] = ff;
  if (k.protocol != Protocol::kIdeal) {  // the GPU side: how NCCL would run it
    row["algorithm"] = to_string(c.algorithm);  // collective.algorithm=auto: NCCL's pick
    // NCCL's symmetric kernel has no FIFO protocol: it says so instead.
    row["protocol"] = c.symmetric ? std::string("symmetric") : to_string(c.protocol);
    row["channels"] = c.channels;
  }
  return row;
}

}  // namespace

nlohmann::json collective_json(const CollectiveSweep& sweep) {
  if (sweep.workload()) return workload_json(sweep);
  using nlohmann::json;
  const CollectiveConfig& k = sweep.config();
  json rows = json::array();
  const auto& calls = sweep.calls();
  for (std::size_t i = 0; i < calls.size();) {
    std::size_t j = i;
    while (j < calls.size() && calls[j].bytes == calls[i].bytes) ++j;
    rows.push_back(size_row(sweep, i, j));
    i = j;
  }
  return {{"op", to_string(k.op)},
          {"algorithm", to_string(k.algorithm)},
          {"gpus", sweep.gpus()},
          {"bus_factor", calls.empty() ? 1.0 : sweep.bus_factor(calls[0])},
          {"check", k.check},
          {"check_within_rounding", sweep.tolerant()},
          {"rows", rows}};
}

void Fabric::tier_bytes(double out[2]) const {
  const bool so = cfg_.topology.kind == TopologyKind::kScaleOut;
  const double fb[2] = {static_cast<double>(cfg_.link.flit_bytes),
                        static_cast<double>(so ? params_.tier_config().link.flit_bytes : 0)};
  out[0] = out[1] = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const int t = link_tier_[i] == LinkTier::kScaleUp ? 0 : 1;
    out[t] += static_cast<double>(links_[i]->flits_sent()) * fb[t];
  }
}

nlohmann::json Fabric::sim_json() const {
  const Ps flit = flit_time_ps(cfg_.link);
  nlohmann::json j = {{"simulated_ns", ps_to_ns(window_.end)},
                      {"warmup_ns", ps_to_ns(window_.begin)},
                      {"window_ns", ps_to_ns(window_.length())},
                      {"events", events()},
                      {"instants", scheduler_.instants()},
                      {"kernel_activations", scheduler_.activations()},
                      {"packets_alive_max", pool_.slots()},
                      {"payload_slots_max", payloads_.slots()},
                      {"seed", cfg_.sim.seed},
                      {"flit_time_ns", ps_to_ns(flit)},
                      {"cycle_ns", ps_to_ns(switch_cycle_ps(cfg_.sw))},
                      {"window_flit_cycles", window_flit_cycles()}};
  // Only in a run stopped early (Ctrl-C): simulated_ns is then the time reached.
  if (interrupted_) j["interrupted"] = true;
  return j;
}

double Fabric::window_flit_cycles() const {
  return static_cast<double>(window_.length()) / static_cast<double>(flit_time_ps(cfg_.link));
}

// Throughput is per endpoint as a fraction of its links' flit rate: an
// endpoint with k links can inject k flits per flit time.
nlohmann::json Fabric::throughput_json() const {
  const int n = topo_.endpoints;
  const auto endpoint_links = static_cast<double>(topo_.total_endpoint_links());
  const Ps flit = flit_time_ps(cfg_.link);
  const double window_ns = ps_to_ns(window_.length());
  const double cycles = window_flit_cycles();
  const auto L = static_cast<double>(cfg_.traffic.packet_flits);
  std::uint64_t offered = 0, accepted = 0, packets = 0, data_packets = 0;
  double min_acc = endpoints_.empty() ? 0 : 1e300, max_acc = 0;
  for (const auto& e : endpoints_) {
    offered += e->offered_flits_in_window();
    accepted += e->accepted_flits_in_window();
    packets += e->accepted_packets_in_window();
    data_packets += e->accepted_data_packets_in_window();
    const double a =
        cycles > 0 ? static_cast<double>(e->accepted_flits_in_window()) / (cycles * e->links()) : 0;
    min_acc = std::min(min_acc, a);
    max_acc = std::max(max_acc, a);
  }
  const double denom = cycles * endpoint_links;
  const double payload_bytes =
      static_cast<double>(data_packets) * (L - 1.0) * static_cast<double>(cfg_.link.flit_bytes);
  return {
      {"offered", denom > 0 ? static_cast<double>(offered) / denom : 0.0},
      {"accepted", denom > 0 ? static_cast<double>(accepted) / denom : 0.0},
      {"accepted_min_endpoint", min_acc},
      {"accepted_max_endpoint", max_acc},
      {"offered_flits", offered},
      {"accepted_flits", accepted},
      {"accepted_packets", packets},
      {"accepted_payload_GBps_per_endpoint", window_ns > 0 ? payload_bytes / window_ns / n : 0.0},
      {"accepted_raw_GBps_per_endpoint",
       window_ns > 0 ? static_cast<double>(accepted) * static_cast<double>(cfg_.link.flit_bytes) /
                           window_ns / n
                     : 0.0},
      // The modelled rate: flit_bytes per flit time (rounded to 1 ps).
      {"link_GBps", static_cast<double>(cfg_.link.flit_bytes) * 1000.0 / static_cast<double>(flit)}};
}

// Per tier: what its links carried (flits x that tier's flit size) and how
// busy they were; "boundary" is what GPUs sent into their NICs.
nlohmann::json Fabric::tiers_json() const {
  const std::int64_t fb[2] = {cfg_.link.flit_bytes, params_.tier_config().link.flit_bytes};
  double bytes[2] = {0, 0}, util[2] = {0, 0};
  tier_bytes(bytes);
  int count[2] = {0, 0};
  double boundary = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const int t = link_tier_[i] == LinkTier::kScaleUp ? 0 : 1;
    const double b = static_cast<double>(links_[i]->flits_sent()) * static_cast<double>(fb[t]);
    util[t] += links_[i]->utilization();
    ++count[t];
    if (link_tier_[i] == LinkTier::kNicOut) boundary += b;
  }
  const char* names[2] = {"scale_up", "scale_out"};
  nlohmann::json tiers = nlohmann::json::object();
  for (int t = 0; t < 2; ++t)
    tiers[names[t]] = {{"links", count[t]},
                       {"bytes", bytes[t]},
                       {"utilization_mean", count[t] ? util[t] / count[t] : 0.0}};
  tiers["boundary_bytes"] = boundary;
  tiers["domains"] = cfg_.scaleout.domains;
  int leaves = 0, spines = 0;
  for (int k : topo_.switch_tier) {
    if (k == 1) ++leaves;
    if (k == 2) ++spines;
  }
  tiers["leaves"] = leaves;
  tiers["spines"] = spines;
  return tiers;
}

nlohmann::json Fabric::conservation_json() const {
  return {{"generated", cons_.generated},
          {"source_queued", cons_.source_queued},
          {"injected", cons_.injected},
          {"delivered", cons_.delivered},
          {"in_flight", cons_.in_flight()},
          {"in_flight_on_links", cons_.on_links},
          {"in_flight_switch_inputs", cons_.in_switch_inputs},
          {"in_flight_switch_outputs", cons_.in_switch_outputs},
          {"multicast_copies", cons_.replicated},
          {"multicast_originals_retired", cons_.retired},
          {"reduction_results", cons_.results},
          {"reduction_contributions", cons_.consumed},
          {"lost", cons_.lost()}};
}

namespace {

nlohmann::json added_latency_json(const Histogram& h) {
  return {{"mean", h.mean() / 1000.0}, {"p99", ps_to_ns(h.percentile(99))}, {"max", ps_to_ns(h.max())}};
}

nlohmann::json link_reliability_json(const ReliabilityStats& r, double span_ns) {
  return {{"codewords", r.codewords},
          {"corrected_codewords", r.corrected_codewords},
          {"uncorrectable_codewords", r.uncorrectable_codewords},
          {"crc_errors", r.crc_errors},
          {"replays", r.replays},
          {"retransmitted_packets", r.retransmitted_packets},
          {"retransmitted_bytes", r.retransmitted_bytes},
          {"replay_stall_ns", ps_to_ns(r.replay_stall_ps)},
          {"replay_buffer_max_flits", r.replay_buffer_max},
          {"goodput_GBps", span_ns > 0 ? static_cast<double>(r.delivered_bytes) / span_ns : 0.0},
          {"added_latency_ns", added_latency_json(r.added_ps)}};
}

}  // namespace

// Reliability (link.ber / fec / retry set): each link's entry of `links`
// gets its own; returns the sums.
nlohmann::json Fabric::reliability_json(nlohmann::json& links) const {
  using nlohmann::json;
  json total = {{"codewords", 0u}, {"corrected_codewords", 0u}, {"uncorrectable_codewords", 0u},
                {"crc_errors", 0u}, {"replays", 0u}, {"retransmitted_packets", 0u},
                {"retransmitted_bytes", 0u}, {"replay_stall_ns", 0.0}};
  Histogram added;
  const double span_ns = ps_to_ns(window_.length());
  for (const auto& l : links_) {
    const json jr = link_reliability_json(l->reliability(), span_ns);
    links[l->name()]["reliability"] = jr;
    for (const char* k : {"codewords", "corrected_codewords", "uncorrectable_codewords", "crc_errors",
                          "replays", "retransmitted_packets", "retransmitted_bytes"})
      total[k] = total[k].get<std::uint64_t>() + jr[k].get<std::uint64_t>();
    total["replay_stall_ns"] = total["replay_stall_ns"].get<double>() + jr["replay_stall_ns"].get<double>();
    added.merge(l->reliability().added_ps);
  }
  total["added_latency_ns"] = added_latency_json(added);
  total["fec"] = to_string(cfg_.link.fec);
  total["retry"] = to_string(cfg_.link.retry);
  total["fec_latency_ns"] = ps_to_ns(fec_latency_ps(cfg_.link));
  return total;
}

nlohmann::json Fabric::links_json() const {
  nlohmann::json links = nlohmann::json::object();
  for (const auto& l : links_)
    links[l->name()] = {{"utilization", l->utilization()},
                        {"credit_stall_ns", ps_to_ns(l->credit_stall_ps())},
                        {"packets", l->packets_sent()},
                        {"flits", l->flits_sent()}};
  return links;
}

namespace {

// One switch: its input buffers' occupancy, its allocator and its engine.
nlohmann::json switch_json(const Switch& s, const Config& cfg, const Window& window) {
  using nlohmann::json;
  json per_port_mean = json::array(), per_port_max = json::array();
  double mean_sum = 0;
  int max_all = 0;
  for (int p = 0; p < s.ports(); ++p) {
    per_port_mean.push_back(s.mean_input_occupancy(p));
    per_port_max.push_back(s.max_input_occupancy(p));
    mean_sum += s.mean_input_occupancy(p);
    max_all = std::max(max_all, s.max_input_occupancy(p));
  }
  json sw;
  sw["ports"] = s.ports();
  sw["input_buffer_occupancy_flits"] = {{"mean", mean_sum / s.ports()},
                                        {"max", max_all},
                                        {"capacity", cfg.sw.input_buffer_flits},
                                        {"per_port_mean", per_port_mean},
                                        {"per_port_max", per_port_max}};
  sw["allocator"] = {{"cycles", s.allocation_cycles()}, {"grants", s.grants()}};
  if (s.has_engine()) {
    const auto& es = s.engine_stats();
    const auto w = static_cast<double>(window.length());
    sw["reduction_engine"] = {
        {"organisation", s.engine_organisation()},
        {"table_entries", cfg.reduction.table_entries},
        {"occupancy_mean", w > 0 ? es.occupancy_integral / w : 0.0},
        {"occupancy_max", es.max_occupancy},
        {"replication_slots", cfg.reduction.replication_slots},
        {"replication_slots_max", es.max_slots},
        {"completed", es.completed},
        {"contributions", es.contributions},
        {"wait_for_last_ns_mean", es.completed ? es.wait_sum_ns / static_cast<double>(es.completed) : 0.0},
        {"wait_for_last_ns_max", es.wait_max_ns},
        {"alu_utilization", w > 0 ? static_cast<double>(es.alu_busy) / w : 0.0}};
  }
  return sw;
}

}  // namespace

nlohmann::json Fabric::switches_json() const {
  nlohmann::json switches = nlohmann::json::object();
  for (std::size_t k = 0; k < switches_.size(); ++k)
    switches[std::string(name()) + ".sw" + std::to_string(k)] = switch_json(*switches_[k], cfg_, window_);
  return switches;
}

nlohmann::json Fabric::stats() const {
  using nlohmann::json;
  json j;
  j["sim"] = sim_json();
  j["throughput"] = throughput_json();
  if (collective()) j["collectives"] = collective_json(*sweep_);
  if (cfg_.topology.kind == TopologyKind::kScaleOut) j["tiers"] = tiers_json();
  if (!external_.empty()) {
    json eps = json::array();
    for (const auto& x : external_) eps.push_back(x->stats());
    j["endpoints"] = eps;
  }
  j["latency_ns"] = latency_json(sink_.latency_ps);
  j["network_latency_ns"] = latency_json(sink_.network_latency_ps);
  if (cfg_.traffic.read_fraction > 0 && !collective()) {
    std::uint64_t reads = 0;
    for (const auto& e : endpoints_) reads += e->reads_completed();
    j["reads"] = {{"completed", reads}, {"latency_ns", latency_json(sink_.read_latency_ps)}};
  }
  // Only a run whose end-of-run checks completed has meaningful counts.
  if (checked_) j["conservation"] = conservation_json();
  json links = links_json();
  if (link_reliability_on(cfg_)) j["reliability"] = reliability_json(links);
  j["links"] = links;
  if (faults_) {
    json log = json::array();
    for (const auto& a : faults_->applied())
      log.push_back({{"at_ns", ps_to_ns(a.t)}, {"fault", a.fault}, {"targets", a.targets}});
    j["faults"] = log;
  }
  j["switches"] = switches_json();
  j["config"] = config_json(cfg_);
  return j;
}

}  // namespace fabricsim
