#include "models/sc/timed_module.hpp"

#include <exception>

#include "models/core/errors.hpp"

#include <fmt/format.h>

namespace fabricsim {

void ErrorSink::report(const std::string& where, Ps when, const std::string& what) {
  if (failed_) return;
  failed_ = true;
  message_ = fmt::format("{} at {:.3f} ns: {}", where, ps_to_ns(when), what);
}

// ---------------------------------------------------------------- Scheduler

Scheduler::Scheduler(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
  SC_METHOD(run);
  sensitive << event_;
  dont_initialize();
}

void Scheduler::request(TimedModule* m, Ps t) {
  pending_.add(t, m);
  // Inside run() the notification is made once, at its end.
  if (t < notified_at_ && !running_) {
    event_.notify(sc_core::sc_time::from_value(t - kernel_now()));
    notified_at_ = t;
  }
}

void Scheduler::stop() {
  stopped_ = true;
  sc_core::sc_stop();
}

void Scheduler::run() {
  notified_at_ = kNever;
  running_ = true;
  ++activations_;
  Ps t = kernel_now();
  // The kernel's next activity other than ours: constant while we run (no
  // other process runs meanwhile, and the fabric's modules notify no event),
  // so asked once per activation, when the first run-ahead is considered.
  Ps other_at = 0;
  bool other_known = false;
  for (;;) {
    last_run_ = t;
    ++instants_;
    if (progress_ && (instants_ & 0x3FFF) == 0) progress_();
    while (!pending_.empty() && pending_.next_time() <= t) {
      auto& b = pending_.front();
      // A module may queue work for another module at this very time (no
      // model does today: links have positive latency), which appends to this
      // bucket: walk it by index.
      for (std::size_t i = 0; i < b.items.size(); ++i) {
        // A large fabric wakes many modules per instant (the 576-GPU one
        // handles about 150 events an instant), each stalling on its own
        // lines: ask for the ones ahead in stages, each a few wakes before
        // the stage that reads what it brought (module, its calendar's front
        // bucket, that bucket's items). The distances are a guess, not
        // tuned (docs/performance.md, "Cache hints in the scheduler").
        const std::size_t n = b.items.size();
        if (i + 6 < n) b.items[i + 6]->prefetch_self();
        if (i + 3 < n) b.items[i + 3]->prefetch_calendar();
        if (i + 1 < n) b.items[i + 1]->prefetch_values();
        TimedModule* m = b.items[i];
        // A module that asked again for an earlier time left a stale entry.
        if (m->wake_at_ != b.t) continue;
        if (!m->wake(t)) {
          running_ = false;
          sc_core::sc_stop();
          return;
        }
      }
      pending_.pop_front();
    }
    if (t >= watch_next_ || (drained_ && pending_.empty())) {
      watch_next_ = t + watch_period_;
      try {
        if (pending_.empty())
          drained_(t);
        else
          watch_(t);
      } catch (const std::exception& e) {
        errors_.report(watch_name_, t, e.what());
        running_ = false;
        sc_core::sc_stop();
        return;
      }
    }
    if (stopped_ || pending_.empty()) break;
    // Run ahead to our next instant if nothing else in the kernel comes
    // first (strictly: at the same time the kernel's order would decide).
    const Ps next = pending_.next_time();
    if (next >= run_ahead_until_) break;
    if (!other_known) {
      other_known = true;
      // 0 if something else runs now; sc_max_time() - now if nothing is pending.
      // (Unsigned: the sum is sc_max_time() then, never earlier than our next.)
      other_at = kernel_now() + sc_core::sc_time_to_pending_activity().value();
    }
    if (other_at <= next) break;
    t = next;
  }
  running_ = false;
  if (!pending_.empty() && !stopped_) {
    notified_at_ = pending_.next_time();
    event_.notify(sc_core::sc_time::from_value(notified_at_ - kernel_now()));
  }
}

// ------------------------------------------------------------- TimedModule

TimedModule::TimedModule(const sc_core::sc_module_name& name, Scheduler& scheduler)
    : sc_core::sc_module(name), scheduler_(scheduler) {}

void TimedModule::schedule(Ps t, std::uint16_t kind, std::uint32_t a, std::uint32_t b,
                           std::uint32_t c) {
  // Work in the past would be lost or run out of order: a model bug. (The
  // scheduler's instant stands for now: sc_time_stamp() costs a
  // library call on this hot path.)
  if (t < scheduler_.last_run())
    throw InvariantError(std::string(name()) + ": work queued for " + std::to_string(ps_to_ns(t)) +
                         " ns, in the past");
  items_.add(t, Item{t, a, b, c, kind});
  // While waking, items due now are handled by the running loop and the
  // next wake-up is requested once at its end.
  if (t < wake_at_ && !waking_) {
    wake_at_ = t;
    scheduler_.request(this, t);
  }
}

bool TimedModule::wake(Ps t) {
  wake_at_ = kNever;
  waking_ = true;
  try {
    while (!items_.empty() && items_.next_time() <= t) {
      auto& b = items_.front();
      // Items queued for time t while we handle these land in this bucket:
      // index, and copy each item, because the vector may grow.
      for (std::size_t i = 0; i < b.items.size(); ++i) {  // NOLINT(modernize-loop-convert): it grows
        const Item item = b.items[i];
        ++events_;
        handle(item);
      }
      items_.pop_front();
      after_items();
    }
  } catch (const std::exception& e) {
    waking_ = false;
    scheduler_.errors().report(name(), t, e.what());
    return false;
  }
  waking_ = false;
  if (!items_.empty()) {
    wake_at_ = items_.next_time();
    scheduler_.request(this, wake_at_);
  }
  return true;
}

}  // namespace fabricsim
