// One simulated fabric: endpoints and switch chips wired as the topology
// says (a single switch, or a scale-up fabric of several chips), joined by a
// link in each direction. Everything a run
// needs lives here (packet pool, statistics, error sink): two Fabric objects
// can coexist in one process.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/alu_backend.hpp"
#include "models/core/config.hpp"
#include "models/core/packet.hpp"
#include "models/core/topology.hpp"
#include "models/core/traffic_pattern.hpp"
#include "models/core/fold_trace.hpp"
#include "models/core/wave_trace.hpp"
#include "models/sc/fault_injector.hpp"
#include "models/sc/watchdog.hpp"
#include "models/core/collective.hpp"
#include "models/sc/endpoint.hpp"
#include "models/sc/fabric_endpoint.hpp"
#include "models/sc/fabric_params.hpp"
#include "models/sc/gpu.hpp"
#include "models/sc/link.hpp"
#include "models/sc/switch.hpp"
#include "models/sc/timed_module.hpp"

namespace fabricsim {

struct Conservation {
  std::uint64_t generated = 0;      // packets drawn by the sources up to the end
  std::uint64_t source_queued = 0;  // generated, not yet injected
  std::uint64_t injected = 0;       // left a source
  std::uint64_t delivered = 0;      // tail reached its destination
  std::uint64_t on_links = 0;       // in flight on a link
  std::uint64_t in_switch_inputs = 0;
  std::uint64_t in_switch_outputs = 0;
  std::uint64_t replicated = 0;  // multicast copies made by switches
  std::uint64_t retired = 0;     // multicast originals retired after their last copy
  std::uint64_t results = 0;     // reduction results made by switch engines
  std::uint64_t consumed = 0;    // contributions folded (and freed) by switch engines
  // What the packet pool holds besides in_flight(): packets GPUs made and
  // have not sent (a collective cut short), less multicast copies that are
  // still references to their originals (in_flight() counts them).
  std::uint64_t held_by_gpus = 0;
  std::uint64_t copies_unmade = 0;
  std::uint64_t in_flight() const { return on_links + in_switch_inputs + in_switch_outputs; }
  // Packets that are neither delivered nor anywhere in the fabric (multicast
  // turns one original into copies: + copies made, - originals retired).
  std::int64_t lost() const {
    return static_cast<std::int64_t>(injected + replicated + results) -
           static_cast<std::int64_t>(retired + consumed) - static_cast<std::int64_t>(delivered) -
           static_cast<std::int64_t>(in_flight());
  }
};

class Fabric : public sc_core::sc_module {
 public:
  // `rtl_alu` makes each switch's ALU backend when reduction.alu=rtl (the
  // RTL adapter lives above the models: rtl/rtl_alu.hpp). `endpoints` makes
  // the endpoints of workload.kind=tlm (the TLM adapters: tlm/tlm_fabric.hpp).
  // Elaboration is Fabric::Builder's (fabric_build.cpp).
  Fabric(const sc_core::sc_module_name& name, const Config& cfg, const AluFactory& rtl_alu = {},
         const EndpointFactory& endpoints = {});
  ~Fabric() override;
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  // Runs warm-up + window, then finish(). Returns false (and error() says
  // why) if a model invariant or a conservation check failed.
  bool run();
  // The end-of-run checks, once simulated time has reached window().end
  // (for callers that run the kernel themselves, e.g. several fabrics).
  bool finish();
  const std::string& error() const { return error_; }

  const Config& config() const { return cfg_; }
  const Window& window() const { return window_; }
  const Conservation& conservation() const { return cons_; }
  // True once finish() ran every end-of-run check and they all held.
  bool checked() const { return checked_; }
  std::uint64_t delivered_flits_total() const;  // whole run, warm-up included
  const SinkStats& sink() const { return sink_; }
  std::uint64_t events() const;
  Switch& sw(int s = 0) { return *switches_[static_cast<size_t>(s)]; }
  const Topology& topology() const { return topo_; }
  Endpoint& endpoint(int i) { return *endpoints_[static_cast<size_t>(i)]; }
  const std::vector<std::unique_ptr<Link>>& links() const { return links_; }
  // The collective sweep (workload.kind=collective), else nullptr.
  const CollectiveSweep* sweep() const { return sweep_.get(); }
  CollectiveSweep* sweep() { return sweep_.get(); }

  // Waveforms (VCD) of every link and switch whose signal names match
  // `o.scope`, inside [o.begin, o.end]; call before run(). Written by finish().
  void enable_wave(WaveTrace::Options o);
  const WaveTrace* wave() const { return wave_.get(); }
  // Every reduction-engine fold goes to `sink` too (--wave-rtl: replayed
  // through a traced RTL ALU); the sink outlives the run, finish() closes it.
  void enable_fold_trace(FoldSink& sink);

  // --log / --watch: every module takes its level from `log` (kept by the
  // caller for the run).
  void enable_log(const Log& log);
  // Work done so far, 0..1: a collective sweep's bytes of finished calls
  // (sizes grow geometrically: bytes follow the host time better than the
  // call count), else simulated time over the run's end.
  double progress() const;
  std::string progress_detail() const;  // "call 3/12" or ""
  Scheduler& scheduler() { return scheduler_; }

  // stats.json (host figures are added by the caller).
  nlohmann::json stats() const;
  // Bytes the links of each tier (scale-up, scale-out) have carried so far:
  // flits sent x the tier's flit size.
  void tier_bytes(double out[2]) const;

 protected:
  void start_of_simulation() override;

 private:
  void check_end_of_run(Ps end);
  // stats.json's sections (stats_report.cpp).
  nlohmann::json sim_json() const;
  nlohmann::json throughput_json() const;
  nlohmann::json tiers_json() const;
  nlohmann::json conservation_json() const;
  nlohmann::json links_json() const;
  nlohmann::json reliability_json(nlohmann::json& links) const;
  nlohmann::json switches_json() const;
  double window_flit_cycles() const;  // the window's length in flit times
  // The watchdog's report: where every stuck packet sits, what it waits for,
  // and a cycle of links waiting on each other if there is one.
  std::string stuck_report(Ps now, Ps since);
  bool collective() const { return sweep_ != nullptr; }
  // The run ends when its work does (collectives, TLM initiators), not at
  // the window's end: statistics then cover [0, end].
  bool ends_with_work() const { return collective() || !external_.empty(); }

  // Elaboration, step by step (fabric_build.cpp): it fills the members below.
  class Builder;

  Config cfg_;
  // Each part's parameters, resolved once by the builder; the scale-out
  // tier's link and switch parameters (tier_config()) for the statistics.
  FabricParams params_;
  Window window_;
  Scheduler scheduler_;
  Topology topo_;
  PacketPool pool_;
  SinkStats sink_;
  TrafficPattern pattern_;
  std::vector<std::unique_ptr<Switch>> switches_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;  // synthetic workload
  PayloadPool payloads_;
  std::unique_ptr<CollectiveSweep> sweep_;           // collective workload
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<std::unique_ptr<FabricEndpoint>> external_;  // workload.kind=tlm
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<LinkTier> link_tier_;  // [link], for the statistics by tier
  Conservation cons_;
  std::string error_;
  bool checked_ = false;
  bool finished_ = false;
  std::unique_ptr<WaveTrace> wave_;
  LogPoint log_;  // the fabric's own lines (calls finished)
  // --timeline: each GPU's calls and phases, late starts and faults, from
  // what the run recorded (fabric_timeline.cpp).
  void timeline_events();
  FoldSink* fold_sink_ = nullptr;
  std::unique_ptr<Watchdog> watchdog_;
  // Faults: who sends on each link (to route around it when it goes down).
  struct LinkSender {
    Switch* sw = nullptr;
    Gpu* gpu = nullptr;
    int port = -1;
  };
  std::vector<LinkSender> senders_;          // [link]
  std::vector<std::vector<int>> fault_hits_;  // [fault] link or GPU indexes
  std::unique_ptr<FaultInjector> faults_;
  void apply_fault(std::size_t f, std::size_t k);
  // What the watchdog asks of the fabric (is anything moving, stuck, ...).
  Watchdog::Probes watchdog_probes();
  // A collective call ended: its bytes by tier, the log line.
  void call_ended(CollectiveCall& c);
  void ff_round(const CollectiveCall& c);  // a round of fast-forward probes settled (logged)

 public:
  const FaultInjector* faults() const { return faults_.get(); }

  // Stopping early on request (fabricsim's Ctrl-C; fabric_interrupt.cpp).
  // interrupt() ends the run at the end of the simulated instant being run:
  // call it from inside the simulation (the scheduler's progress hook, which
  // runs at the start of an instant). run() then closes the statistics and
  // the end-of-run checks at that instant, with what is still moving counted
  // as in flight, and writes the waveforms and timeline of the part simulated.
  void interrupt();
  // run() ended at interrupt() before its work or window did.
  bool interrupted() const { return interrupted_; }

 private:
  bool finish_interrupted();
  bool interrupted_ = false;
};

}  // namespace fabricsim
