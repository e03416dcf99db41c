// The fabric at run time: the kernel's run, the end-of-run checks, the
// watchdog's probes and report, faults applied, the sweep's call ends.
// Elaboration is fabric_build.cpp's; stats.json is stats_report.cpp's.
#include "models/sc/fabric.hpp"

#include "models/core/params.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "models/core/errors.hpp"

namespace fabricsim {

// The sweep's call-end callback (set by the builder).
void Fabric::call_ended(CollectiveCall& c) {
  tier_bytes(c.tier_bytes);
  if (log_.on(LogLevel::kInfo))
    log_.log->write(c.end, name(),
                    "call " + std::to_string(sweep_->current_index() + 1) + "/" +
                        std::to_string(sweep_->calls().size()) + " " + to_string(c.op) + " " +
                        std::to_string(c.bytes) + " B done in " +
                        format_real(ps_to_ns(c.end - c.start) / 1000.0) + " us" +
                        (c.ff.used ? " (fast-forward probe of " +
                                         std::to_string(c.ff.probe_bytes.back()) + " B)"
                                   : std::string()));
}

// What a round of fast-forward probes measured, as it settles (the period
// time from the output progress and from the ends, in ns).
void Fabric::ff_round(const CollectiveCall& c) {
  if (!log_.on(LogLevel::kInfo)) return;
  const FastForward::Round& r = c.ff.rounds.back();
  log_.log->write(
      c.end, name(),
      fmt::format("call {}/{} fast-forward round from {} B: period {} B; lane {} ends last: {:.4f} ns "
                  "a period by its output progress, {:.4f} by its last outputs, drift {:.4f}; "
                  "{:.4f} ns averaged over the lanes; the kernels' end {:.4f} ns a period; "
                  "{}estimated error {:.4f}: {}",
                  sweep_->current_index() + 1, sweep_->calls().size(), r.base * c.ff.period_bytes,
                  c.ff.period_bytes, r.lane, r.t / 1000.0, r.ends_t / 1000.0, r.drift,
                  r.t_mean / 1000.0, r.end_slope / 1000.0,
                  r.spread >= 0 ? fmt::format("spread since the round before {:.4f}; ", r.spread)
                                : std::string(),
                  r.error,
                  r.by_ends ? "accepted (the end's slope held)" : r.accepted ? "accepted" : "rejected"));
}

Watchdog::Probes Fabric::watchdog_probes() {
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
  return probes;
}

Fabric::~Fabric() = default;

std::uint64_t Fabric::delivered_flits_total() const {
  std::uint64_t n = 0;
  for (const auto& e : endpoints_) n += e->delivered_flits();
  for (const auto& g : gpus_) n += g->delivered_flits();
  for (const auto& x : external_) n += x->delivered_flits();
  return n;
}

std::uint64_t Fabric::events() const {
  std::uint64_t n = 0;
  for (const auto& s : switches_) n += s->events();
  for (const auto& e : endpoints_) n += e->events();
  for (const auto& g : gpus_) n += g->events();
  for (const auto& x : external_) n += x->events();
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
