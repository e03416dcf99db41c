#include "models/sc/fabric.hpp"

#include "models/core/params.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include <fnmatch.h>

#include "models/core/errors.hpp"

namespace fabricsim {

Fabric::Fabric(const sc_core::sc_module_name& name, const Config& cfg, const AluFactory& rtl_alu,
               const EndpointFactory& endpoints)
    : sc_core::sc_module(name),
      cfg_(cfg),
      // TLM initiators decide how long a run lasts (sc_start): statistics
      // cover all of it, and finish() closes the window where it stopped.
      window_{cfg.workload.kind == WorkloadKind::kTlm ? Window{0, kNever / 2}
                                                      : Window{ns_to_ps(cfg.sim.warmup_ns),
                                                               ns_to_ps(cfg.sim.warmup_ns) +
                                                                   ns_to_ps(cfg.sim.duration_ns)}},
      scheduler_("kernel"),
      topo_(build_topology(cfg)),
      pattern_(cfg.traffic, topo_.endpoints, static_cast<std::uint64_t>(cfg.sim.seed)),
      payloads_(static_cast<std::size_t>(cfg.collective.payload_bytes)) {
  if (!cfg_.collective.data) payloads_.set_timing_only();
  validate(cfg_);
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    throw InvariantError("fabricsim needs the SystemC time resolution to be 1 ps");
  const int vcs = static_cast<int>(cfg.sw.vcs);
  const Ps flit = flit_time_ps(cfg.link);
  const Ps lat = ns_to_ps(cfg.link.latency_ns);
  // A degraded GPU's links (straggler.lanes) serialize more slowly.
  LinkConfig degraded = cfg.link;
  if (cfg.straggler.lanes > 0) degraded.lanes = cfg.straggler.lanes;
  const Ps slow_flit = flit_time_ps(degraded);
  auto flit_of_endpoint = [&](int e) {
    return cfg.straggler.gpu == e && cfg.straggler.lanes > 0 ? slow_flit : flit;
  };
  auto lanes_of_endpoint = [&](int e) {
    return static_cast<int>(cfg.straggler.gpu == e && cfg.straggler.lanes > 0 ? cfg.straggler.lanes
                                                                              : cfg.link.lanes);
  };
  const int switch_credits = static_cast<int>(cfg.sw.input_buffer_flits / vcs);
  const int endpoint_credits = static_cast<int>(cfg.endpoint.rx_buffer_flits / vcs);
  const std::string base = std::string(this->name()) + ".";

  const bool rtl = cfg_.reduction.alu == AluKind::kRtl && uses_reduction_engine(cfg_);
  if (rtl && !rtl_alu)
    throw ConfigError("reduction.alu=rtl: this program was built without the RTL co-simulation "
                      "(pass an AluFactory to Fabric; the fabricsim command does)");
  // Scale-out: leaves and spines, NIC links and the links between them run
  // with the scale-out tier's parameters (scaleout.*).
  const bool scaled_out = cfg_.topology.kind == TopologyKind::kScaleOut;
  if (scaled_out) tier_cfg_ = scaleout_tier_config(cfg_);
  const Ps so_flit = scaled_out ? flit_time_ps(tier_cfg_.link) : 0;
  const Ps so_lat = scaled_out ? ns_to_ps(tier_cfg_.link.latency_ns) : 0;
  const int so_credits = scaled_out ? static_cast<int>(tier_cfg_.sw.input_buffer_flits / vcs) : 0;
  auto tier = [&](int sw) { return topo_.switch_tier[static_cast<size_t>(sw)]; };
  for (int s = 0; s < topo_.switches; ++s) {
    const Config& sw_cfg = tier(s) > 0 ? tier_cfg_ : cfg_;
    switches_.push_back(std::make_unique<Switch>(
        ("sw" + std::to_string(s)).c_str(), scheduler_, sw_cfg, uses_reduction_engine(sw_cfg),
        pool_, window_, topo_.ports_of_switch(s), topo_.routes[static_cast<size_t>(s)],
        &payloads_, rtl ? rtl_alu() : nullptr));
  }
  // Endpoints: synthetic sources/sinks, or GPUs running collectives.
  std::vector<TimedModule*> ep_modules;
  if (cfg_.workload.kind == WorkloadKind::kCollective) {
    sweep_ = std::make_unique<CollectiveSweep>(cfg_, topo_.endpoints, topo_.per_domain);
    sweep_->set_on_call_end([this](CollectiveCall& c) {
      tier_bytes(c.tier_bytes);
      if (log_.on(LogLevel::kInfo))
        log_.log->write(c.end, this->name(),
                        "call " + std::to_string(sweep_->current_index() + 1) + "/" +
                            std::to_string(sweep_->calls().size()) + " " + to_string(c.op) + " " +
                            std::to_string(c.bytes) + " B done in " +
                            format_real(ps_to_ns(c.end - c.start) / 1000.0) + " us");
    });
    // Multicast group 0: every GPU (the collective's communicator).
    std::vector<int> all(static_cast<size_t>(topo_.endpoints));
    for (int e = 0; e < topo_.endpoints; ++e) all[static_cast<size_t>(e)] = e;
    // scaleout.sharp: group 1 + r holds the GPUs of rank r of every domain
    // (the leaves' engines reduce across the domains).
    std::vector<std::vector<int>> groups = {all};
    if (cfg_.topology.kind == TopologyKind::kScaleOut && cfg_.scaleout.sharp)
      for (int r = 0; r < topo_.per_domain; ++r) {
        groups.emplace_back();
        for (int e = r; e < topo_.endpoints; e += topo_.per_domain) groups.back().push_back(e);
      }
    for (auto& sw : switches_) sw->set_multicast_groups(groups);
    for (int e = 0; e < topo_.endpoints; ++e) {
      gpus_.push_back(std::make_unique<Gpu>(("gpu" + std::to_string(e)).c_str(), scheduler_, e,
                                            cfg_, pool_, payloads_, *sweep_,
                                            topo_.links_of(e)));
      ep_modules.push_back(gpus_.back().get());
    }
    sweep_->set_start_call([this](Ps t) {
      for (auto& g : gpus_) g->begin_call(t);
    });
  } else if (cfg_.workload.kind == WorkloadKind::kTlm) {
    if (!endpoints)
      throw ConfigError("workload.kind=tlm: the endpoints are TLM-2.0 targets for your SystemC "
                        "initiators; build a program with tlm/tlm_fabric.hpp (docs/tlm.md) "
                        "instead of running the fabricsim command");
    // Multicast group k: the members of object k of tlm.multicast.
    const AddressMap map(topo_.endpoints, static_cast<std::uint64_t>(cfg_.tlm.window_bytes),
                         static_cast<std::uint64_t>(cfg_.tlm.multicast_base), cfg_.tlm.multicast);
    std::vector<std::vector<int>> groups;
    for (std::size_t k = 0; k < map.objects().size(); ++k)
      groups.push_back(map.members(static_cast<int>(k)));
    if (!groups.empty())
      for (auto& sw : switches_) sw->set_multicast_groups(groups);
    const EndpointContext ctx{scheduler_, cfg_, pool_, payloads_};
    for (int e = 0; e < topo_.endpoints; ++e) {
      external_.push_back(endpoints(e, topo_.links_of(e), ctx));
      ep_modules.push_back(external_.back().get());
    }
  } else {
    for (int e = 0; e < topo_.endpoints; ++e) {
      endpoints_.push_back(std::make_unique<Endpoint>(("ep" + std::to_string(e)).c_str(),
                                                      scheduler_, e, cfg_, pattern_, pool_, sink_,
                                                      window_, topo_.links_of(e)));
      ep_modules.push_back(endpoints_.back().get());
    }
  }
  auto connect_endpoint = [&](int e, int k, Link* tx, Link* rx, int peer_switch) {
    if (collective())
      gpus_[static_cast<size_t>(e)]->connect(k, tx, rx, peer_switch);
    else if (!external_.empty())
      external_[static_cast<size_t>(e)]->connect(k, tx, rx, peer_switch);
    else
      endpoints_[static_cast<size_t>(e)]->connect(k, tx, rx);
  };

  // Every switch output drives a link into its peer: an endpoint (delivered
  // at the tail) or another switch's input (cut-through at the head).
  std::vector<std::vector<Link*>> out(static_cast<size_t>(topo_.switches));
  for (int s = 0; s < topo_.switches; ++s) {
    Switch& sw = *switches_[static_cast<size_t>(s)];
    for (int p = 0; p < topo_.ports_of_switch(s); ++p) {
      const PortPeer& peer = topo_.switch_ports[static_cast<size_t>(s)][static_cast<size_t>(p)];
      // A scale-out link: out of a leaf or spine, or into one.
      const bool so = tier(s) > 0 || (peer.is_switch && tier(peer.id) > 0);
      auto link = std::make_unique<Link>(base + "sw" + std::to_string(s) + ".out" + std::to_string(p),
                                         so ? so_flit : peer.is_switch ? flit : flit_of_endpoint(peer.id),
                                         so ? so_lat : lat, vcs,
                                         so ? so_credits : peer.is_switch ? switch_credits : endpoint_credits,
                                         window_,
                                         so || peer.is_switch ? static_cast<int>(so ? 1 : cfg.link.lanes)
                                                              : lanes_of_endpoint(peer.id));
      link->bind_tx(&sw, static_cast<std::uint32_t>(p));
      if (peer.is_switch) {
        Switch& to = *switches_[static_cast<size_t>(peer.id)];
        link->bind_rx(&to, static_cast<std::uint32_t>(peer.port), /*deliver_at_tail=*/false);
        to.connect_input(peer.port, link.get());
      } else {
        link->bind_rx(ep_modules[static_cast<size_t>(peer.id)], static_cast<std::uint32_t>(peer.port),
                      /*deliver_at_tail=*/true);
      }
      sw.connect_output(p, link.get());
      out[static_cast<size_t>(s)].push_back(link.get());
      links_.push_back(std::move(link));
      link_tier_.push_back(so ? LinkTier::kScaleOut : LinkTier::kScaleUp);
      senders_.push_back({&sw, nullptr, p});
    }
  }
  for (int e = 0; e < topo_.endpoints; ++e) {
    TimedModule& ep = *ep_modules[static_cast<size_t>(e)];
    for (int k = 0; k < topo_.links_of(e); ++k) {
      const PortPeer& peer = topo_.endpoint_ports[static_cast<size_t>(e)][static_cast<size_t>(k)];
      Switch& to = *switches_[static_cast<size_t>(peer.id)];
      const bool nic = topo_.is_nic(e, k);
      auto link = std::make_unique<Link>(base + (ends_with_work() ? "gpu" : "ep") + std::to_string(e) +
                                             (nic ? ".nic" : ".tx") + std::to_string(k),
                                         nic ? so_flit : flit_of_endpoint(e), nic ? so_lat : lat, vcs,
                                         nic ? so_credits : switch_credits, window_,
                                         nic ? 1 : lanes_of_endpoint(e));
      link->bind_tx(&ep, static_cast<std::uint32_t>(k));
      link->bind_rx(&to, static_cast<std::uint32_t>(peer.port), /*deliver_at_tail=*/false);
      to.connect_input(peer.port, link.get());
      connect_endpoint(e, k, link.get(), out[static_cast<size_t>(peer.id)][static_cast<size_t>(peer.port)],
                       peer.id);
      links_.push_back(std::move(link));
      link_tier_.push_back(nic ? LinkTier::kNicOut : LinkTier::kScaleUp);
      senders_.push_back({nullptr, collective() ? gpus_[static_cast<size_t>(e)].get() : nullptr, k});
    }
  }
  if (scaled_out)
    for (int e = 0; e < static_cast<int>(gpus_.size()); ++e) {
      std::vector<std::int64_t> fb;
      for (int k = 0; k < topo_.links_of(e); ++k)
        fb.push_back(topo_.is_nic(e, k) ? tier_cfg_.link.flit_bytes : cfg_.link.flit_bytes);
      gpus_[static_cast<size_t>(e)]->set_port_groups(topo_.up_ports[static_cast<size_t>(e)],
                                                      topo_.nic_ports[static_cast<size_t>(e)],
                                                      topo_.per_domain, std::move(fb));
    }
  if (cfg_.sw.egress == Egress::kAligned) {
    // Endpoint d's links are numbered switch by switch (topology order): its
    // links into switch s start at the count of its links into earlier ones.
    for (int s = 0; s < topo_.switches; ++s) {
      std::vector<std::pair<int, int>> align(static_cast<size_t>(topo_.endpoints), {0, 1});
      for (int d = 0; d < topo_.endpoints; ++d) {
        const auto& ports = topo_.endpoint_ports[static_cast<size_t>(d)];
        int first = -1;
        for (int k = 0; k < static_cast<int>(ports.size()); ++k)
          if (ports[static_cast<size_t>(k)].id == s && first < 0) first = k;
        align[static_cast<size_t>(d)] = {first < 0 ? 0 : first, static_cast<int>(ports.size())};
      }
      switches_[static_cast<size_t>(s)]->set_egress_alignment(std::move(align));
    }
  }
  build_faults();
  if (cfg_.sim.watchdog_ns > 0) {
    Watchdog::Probes probes;
    probes.progress = [this] {
      std::uint64_t n = 0;
      for (auto& l : links_) n += l->transmissions();
      return n;
    };
    probes.stuck_flits = [this] {
      // Held by an endpoint whose memory is still answering: not stuck.
      for (auto& x : external_)
        if (x->busy()) return false;
      for (auto& l : links_)
        for (int v = 0; v < l->vcs(); ++v)
          if (l->flits_outstanding(v) > 0) return true;
      return false;
    };
    // A link still serialising (or replaying: go-back-N books a packet's
    // retries when it starts it) is progress even if nothing new started.
    probes.busy = [this](Ps now) {
      for (auto& l : links_)
        if (l->free_at() > now) return true;
      return false;
    };
    probes.stuck_link = [this](Ps now, Ps period) {
      // While links retry, the links behind them may wait a long time for
      // credits without anything being stuck.
      for (auto& l : links_)
        if (l->replaying_until() + period > now) return false;
      for (auto& l : links_)
        if (l->starved(now, period)) return true;
      return false;
    };
    probes.report = [this](Ps now, Ps since) { return stuck_report(now, since); };
    watchdog_ = std::make_unique<Watchdog>(ns_to_ps(cfg_.sim.watchdog_ns), std::move(probes));
    scheduler_.set_watch(std::string(this->name()) + ".watchdog", watchdog_->period(),
                         [this](Ps t) { watchdog_->check(t); },
                         [this](Ps t) { watchdog_->drained(t); });
  }
  if (link_reliability_on(cfg_)) {
    // Each link draws its errors from its own stream of the run's seed; a
    // scale-out link has its tier's settings (scaleout.ber, .fec, .retry).
    auto reliability = [&](const LinkConfig& lc) {
      LinkReliability r;
      r.ber = lc.ber;
      r.burst_bits = lc.burst_bits;
      r.fec = lc.fec;
      r.fec_ps = fec_latency_ps(lc);
      r.retry = lc.retry;
      r.replay_buffer_flits = lc.replay_buffer_flits;
      r.ack_delay_ps = ns_to_ps(lc.ack_delay_ns);
      r.flit_bytes = lc.flit_bytes;
      r.seed = static_cast<std::uint64_t>(cfg_.sim.seed);
      return r;
    };
    const LinkReliability up = reliability(cfg_.link);
    LinkReliability nic = scaled_out ? reliability(tier_cfg_.link) : up;
    nic.keys = "scaleout";
    for (std::size_t i = 0; i < links_.size(); ++i) {
      LinkReliability r = link_tier_[i] == LinkTier::kScaleUp ? up : nic;
      r.stream = 1000000u + i;
      links_[i]->set_reliability(r);
    }
  }
}

Fabric::~Fabric() = default;

std::uint64_t Fabric::delivered_flits_total() const {
  std::uint64_t n = 0;
  for (auto& e : endpoints_) n += e->delivered_flits();
  for (auto& g : gpus_) n += g->delivered_flits();
  for (auto& x : external_) n += x->delivered_flits();
  return n;
}

std::uint64_t Fabric::events() const {
  std::uint64_t n = 0;
  for (auto& s : switches_) n += s->events();
  for (auto& e : endpoints_) n += e->events();
  for (auto& g : gpus_) n += g->events();
  for (auto& x : external_) n += x->events();
  return n;
}

void Fabric::start_of_simulation() {
  if (!collective() || sweep_->done()) return;
  sweep_->start(sweep_->current().gap);
}

bool Fabric::run() {
  // TLM initiators wait on events the fabric notifies: no run-ahead there.
  if (cfg_.sim.run_ahead && cfg_.workload.kind != WorkloadKind::kTlm)
    scheduler_.set_run_ahead(window_.end);
  sc_core::sc_start(sc_core::sc_time::from_value(window_.end));
  scheduler_.set_run_ahead(0);
  if (interrupted_) return finish_interrupted();
  if (collective() && !sweep_->done() && !scheduler_.errors().failed()) {
    finished_ = true;
    error_ = "the collective sweep did not finish by " + std::to_string(ps_to_ns(window_.end)) +
             " ns (sim.warmup_ns + sim.duration_ns): call " +
             std::to_string(sweep_->current_index() + 1) + " of " +
             std::to_string(sweep_->calls().size()) + " was running";
    // Say why if the fabric is stuck rather than slow.
    try {
      check_end_of_run(window_.end);
    } catch (const InvariantError& e) {
      error_ += "; " + std::string(e.what());
    }
    return false;
  }
  return finish();
}

bool Fabric::finish() {
  if (finished_) return error_.empty();  // the checks add to statistics: once only
  finished_ = true;
  if (scheduler_.errors().failed()) {
    error_ = scheduler_.errors().message();
    return false;
  }
  // A collective run stops when its sweep is done; statistics cover [0, now).
  const Ps end = ends_with_work() ? scheduler_.now() : window_.end;
  if (ends_with_work()) {
    window_ = Window{0, end};
    for (auto& l : links_) l->close_window(window_);
    for (auto& sw : switches_) sw->close_window(window_);
  }
  try {
    check_end_of_run(end);
  } catch (const InvariantError& e) {
    error_ = std::string("end-of-run check failed: ") + e.what();
    return false;
  }
  checked_ = true;
  if (wave_) {
    try {
      timeline_events();
      wave_->write(end);
    } catch (const std::exception& e) {
      error_ = e.what();
      return false;
    }
  }
  if (fold_sink_) {
    try {
      fold_sink_->finish(end);
    } catch (const std::exception& e) {
      error_ = e.what();
      return false;
    }
  }
  return true;
}

void Fabric::enable_wave(WaveTrace::Options o) {
  wave_ = std::make_unique<WaveTrace>(std::move(o));
  for (auto& l : links_) l->trace(*wave_);
  for (auto& sw : switches_) sw->trace(*wave_);
}

void Fabric::enable_log(const Log& log) {
  log_.enable(log, name());
  for (auto& l : links_) l->enable_log(log);
  for (auto& sw : switches_) sw->enable_log(log);
  for (auto& e : endpoints_) e->enable_log(log);
  for (auto& g : gpus_) g->enable_log(log);
  if (faults_) faults_->enable_log(log);
}

double Fabric::progress() const {
  if (sweep_) {
    double done = 0, all = 0;
    for (std::size_t i = 0; i < sweep_->calls().size(); ++i) {
      const double b = static_cast<double>(sweep_->calls()[i].bytes) + 1;
      all += b;
      if (i < sweep_->current_index()) done += b;
    }
    return all > 0 ? done / all : 0;
  }
  return window_.end > 0 ? static_cast<double>(scheduler_.now()) / static_cast<double>(window_.end) : 0;
}

std::string Fabric::progress_detail() const {
  if (!sweep_) return "";
  return "call " + std::to_string(std::min(sweep_->current_index() + 1, sweep_->calls().size())) +
         "/" + std::to_string(sweep_->calls().size());
}

void Fabric::enable_fold_trace(FoldSink& sink) {
  fold_sink_ = &sink;
  for (auto& sw : switches_)
    if (sw->has_engine()) sw->trace_folds(sink);
}

void Fabric::build_faults() {
  const auto& list = cfg_.faults.list;
  if (list.empty()) return;
  std::vector<std::vector<std::string>> names;
  for (const Fault& f : list) {
    std::vector<int> hits;
    std::vector<std::string> hit_names;
    const bool gpu = f.kind == FaultKind::kSlow;
    const std::size_t n = gpu ? gpus_.size() : links_.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::string nm = gpu ? std::string(gpus_[i]->name()) : links_[i]->name();
      // Targets may name this fabric's instance or, as the CLI does, "fabric".
      const std::string own = std::string(name()) + ".";
      const std::string canonical =
          nm.compare(0, own.size(), own) == 0 ? "fabric." + nm.substr(own.size()) : nm;
      if (fnmatch(f.target.c_str(), nm.c_str(), 0) != 0 &&
          fnmatch(f.target.c_str(), canonical.c_str(), 0) != 0)
        continue;
      if (f.kind == FaultKind::kLinkDown && !senders_[i].sw && !senders_[i].gpu)
        throw ConfigError("faults: '" + f.text + "' takes down " + nm +
                          ", a synthetic endpoint's link: link_down is modelled on switch links "
                          "and GPU links (collective workloads) only");
      hits.push_back(static_cast<int>(i));
      hit_names.push_back(nm);
    }
    if (hits.empty())
      throw ConfigError("faults: '" + f.text + "' matches no " + (gpu ? "GPU" : "link") + ": " +
                        (gpu ? "GPUs are named " + std::string(name()) + ".gpuN"
                             : "links are named " + links_.front()->name() + " ... " +
                                   links_.back()->name()) +
                        " (a glob: * ? [..])");
    fault_hits_.push_back(std::move(hits));
    names.push_back(std::move(hit_names));
  }
  faults_ = std::make_unique<FaultInjector>("faults", scheduler_, list, std::move(names),
                                            [this](std::size_t f, std::size_t k) { apply_fault(f, k); });
}

void Fabric::apply_fault(std::size_t fi, std::size_t k) {
  const Fault& f = cfg_.faults.list[fi];
  const auto i = static_cast<std::size_t>(fault_hits_[fi][k]);
  switch (f.kind) {
    case FaultKind::kSlow:
      gpus_[i]->set_issue_factor(f.value);
      return;
    case FaultKind::kLaneDown: {
      Link& l = *links_[i];
      l.set_lanes(std::min(static_cast<int>(f.value), l.lanes()));
      return;
    }
    case FaultKind::kBer:
      links_[i]->set_ber(f.value);
      return;
    case FaultKind::kPortStall:
      links_[i]->stall_until(scheduler_.now() + ns_to_ps(f.value));
      return;
    case FaultKind::kLinkDown: {
      if (links_[i]->down()) return;
      links_[i]->set_down();
      const LinkSender& s = senders_[i];
      // Every GPU checks, from now on, that a link's switch still reaches
      // the packet's destination (this fault may have cut a switch off).
      for (auto& g : gpus_)
        g->network_changed([this](int sw, int dst) {
          return switches_[static_cast<std::size_t>(sw)]->can_reach(dst);
        });
      if (s.sw) s.sw->output_down(s.port);
      if (s.gpu) s.gpu->link_down(s.port);
      return;
    }
  }
}

std::string Fabric::stuck_report(Ps now, Ps since) {
  for (auto& l : links_) l->absorb(now);
  Switch::Stuck st;
  for (auto& sw : switches_) sw->diagnose(st);
  std::uint64_t held = 0;
  for (auto& l : links_)
    for (int v = 0; v < l->vcs(); ++v) held += static_cast<std::uint64_t>(l->flits_outstanding(v));
  std::string starved;
  for (auto& l : links_)
    if (l->starved(now, ns_to_ps(cfg_.sim.watchdog_ns))) starved += (starved.empty() ? "" : ", ") + l->name();
  std::string r =
      since == kNever
          ? fmt::format("no event is left anywhere while {} flits sit in receive buffers: nothing can "
                        "move again; the fabric is deadlocked",
                        held)
          : fmt::format(
      "no progress for sim.watchdog_ns={} ns: {}; the fabric is stuck", format_real(cfg_.sim.watchdog_ns),
      starved.empty()
          ? fmt::format("no link has started a transmission since {:.1f} ns while {} flits sit in "
                        "receive buffers",
                        ps_to_ns(since), held)
          : fmt::format("links waiting for credits since {:.1f} ns or earlier with none coming back: {}",
                        ps_to_ns(since), starved));
  // A cycle of links each waiting for the buffer the next one drains: a
  // deadlock of the routing and VCs, not a slow component.
  std::map<const Link*, std::vector<const Link*>> next;
  for (const auto& [a, b] : st.waits) next[a].push_back(b);
  std::map<const Link*, int> state;  // 1 on the path, 2 done
  std::vector<const Link*> path, cycle;
  std::function<bool(const Link*)> dfs = [&](const Link* l) {
    state[l] = 1;
    path.push_back(l);
    for (const Link* m : next[l]) {
      if (state[m] == 1) {
        cycle.assign(std::find(path.begin(), path.end(), m), path.end());
        return true;
      }
      if (state[m] == 0 && dfs(m)) return true;
    }
    path.pop_back();
    state[l] = 2;
    return false;
  };
  for (const auto& [l, _] : next)
    if (state[l] == 0 && dfs(l)) break;
  if (!cycle.empty()) {
    r += ".\nDeadlock: a cycle of links, each waiting for buffer space that only the next can "
         "free (add VCs that break the cycle, e.g. switch.vcs, or routes without it):\n  ";
    for (const Link* l : cycle) r += l->name() + " -> ";
    r += cycle.front()->name();
  }
  r += "\nWhere the packets are:";
  constexpr std::size_t kMaxLines = 40;
  for (std::size_t i = 0; i < st.lines.size() && i < kMaxLines; ++i) r += "\n  " + st.lines[i];
  if (st.lines.size() > kMaxLines)
    r += "\n  ... and " + std::to_string(st.lines.size() - kMaxLines) + " more queues";
  std::uint64_t queued = 0;
  for (auto& e : endpoints_) queued += e->source_queued();
  if (queued > 0) r += "\n  " + std::to_string(queued) + " packets wait at their sources";
  return r;
}

void Fabric::check_end_of_run(Ps end) {
  cons_ = Conservation{};
  for (auto& g : gpus_) {
    g->finish(end);
    cons_.generated += g->injected();
    cons_.injected += g->injected();
    cons_.delivered += g->delivered();
  }
  for (auto& x : external_) {
    x->finish(end);
    cons_.generated += x->injected();
    cons_.injected += x->injected();
    cons_.delivered += x->delivered();
  }
  for (auto& e : endpoints_) {
    e->finish(end);
    cons_.generated += e->generated();
    cons_.source_queued += e->source_queued();
    cons_.injected += e->injected();
    cons_.delivered += e->delivered();
  }
  for (auto& l : links_) {
    l->finish(end);
    cons_.on_links += l->in_flight();
    l->check_credit_conservation();
  }
  for (auto& s : switches_) {
    s->finish(end);
    s->check_end_of_run(end);
    cons_.in_switch_inputs += s->packets_in_inputs();
    cons_.in_switch_outputs += s->packets_in_outputs();
    cons_.replicated += s->copies_made();
    cons_.retired += s->originals_retired();
    cons_.results += s->results_made();
    cons_.consumed += s->contributions_consumed();
    cons_.copies_unmade += s->copies_unmade();
  }
  for (auto& g : gpus_) cons_.held_by_gpus += g->packets_waiting();
  for (auto& e : endpoints_) e->check_end_of_run(end);
  for (auto& g : gpus_) g->check_end_of_run(end);
  for (auto& x : external_) x->check_end_of_run(end);

  // Two independent counts must agree: what the components hold, and what
  // the packet pool still has alive.
  if (cons_.lost() != 0)
    throw InvariantError(std::to_string(cons_.lost()) + " packets lost: injected " +
                         std::to_string(cons_.injected) + ", delivered " +
                         std::to_string(cons_.delivered) + ", in flight " +
                         std::to_string(cons_.in_flight()));
  if (pool_.live() + cons_.copies_unmade != cons_.in_flight() + cons_.held_by_gpus)
    throw InvariantError("packet pool holds " + std::to_string(pool_.live()) +
                         " live packets but the fabric accounts for " +
                         std::to_string(cons_.in_flight() + cons_.held_by_gpus -
                                        cons_.copies_unmade) +
                         " (in flight " + std::to_string(cons_.in_flight()) +
                         ", waiting at GPUs " + std::to_string(cons_.held_by_gpus) +
                         ", multicast copies not made " + std::to_string(cons_.copies_unmade) +
                         ")");
  // Payload slots follow the packets: with nothing in flight, none is held
  // but what endpoints keep outside packets (TLM data waiting to leave).
  std::uint64_t held_outside = 0;
  for (auto& x : external_) held_outside += x->payload_slots_held();
  if (cons_.in_flight() == 0 && payloads_.live() != held_outside)
    throw InvariantError(std::to_string(payloads_.live()) + " payload slots still held with no "
                         "packet in flight, " + std::to_string(held_outside) +
                         " of them by endpoints (a data leak)");
  if (cons_.generated != cons_.injected + cons_.source_queued)
    throw InvariantError("sources: generated != injected + queued");
}

}  // namespace fabricsim
