// Event-driven models: a SystemC kernel process per fabric that wakes the
// fabric's modules, and the base class of those modules.
//
// Why not one sc_event per module: SystemC's timed-notification queue is a
// heap compared through a function pointer; with one event per module it took
// about a quarter of the instructions of the 64-port benchmark. The Scheduler
// is a single SC_METHOD with one sc_event. Each TimedModule keeps its pending
// work as items (time, kind, integers) and asks the scheduler to wake it at
// its earliest item; the scheduler runs every module due at an instant in
// one activation, and with run-ahead the fabric's following instants too
// while nothing else in the kernel is due before them. Time is still SystemC
// time: other SystemC models interleave with the fabric normally.
//
// Both keep pending work in time buckets: one bucket per distinct time, in a
// vector sorted by time. Work in a fabric falls on few distinct times (the
// flit and clock grids), new times are almost always the latest (pushed at
// the back) and the earliest is taken from the front, so queuing and taking
// an item are O(1) in the common case, with no heap sifting. Within a time,
// items run in the order they were queued: the order is (time, insertion).
// Items carry only integers (packet ids, ports): no sc_time arithmetic and no
// allocation once the buckets have grown.
//
// Timing assumption: everything another module queues here is at least one
// link latency in the future, so all items of time t are queued before t is
// reached and the order within a time step is deterministic.
#pragma once
#include <systemc>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/core/log.hpp"
#include "models/core/time.hpp"
#include "models/core/time_buckets.hpp"

namespace fabricsim {

class TimedModule;

// Collects the first model error (invariant violation) so it can stop the
// kernel cleanly instead of unwinding through it.
class ErrorSink {
 public:
  void report(const std::string& where, Ps when, const std::string& what);
  bool failed() const { return failed_; }
  const std::string& message() const { return message_; }

 private:
  bool failed_ = false;
  std::string message_;
};


class Scheduler : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Scheduler);
  explicit Scheduler(const sc_core::sc_module_name& name);

  // The kernel's time. The fabric's may be ahead of it (run-ahead, below).
  static Ps kernel_now() { return static_cast<Ps>(sc_core::sc_time_stamp().value()); }
  // The fabric's time: the instant being run, else the kernel's.
  Ps now() const { return running_ ? last_run_ : std::max(kernel_now(), last_run_); }
  // `m` wants to run at time t (>= now).
  void request(TimedModule* m, Ps t);
  // Run-ahead: after an instant, the scheduler goes on to the fabric's next
  // instant in the same kernel activation when no other SystemC activity
  // comes before it and it is before `until` (the end of the caller's
  // sc_start). What that skips is the kernel's work per activation (a timed
  // notification, the scheduler's evaluate and update phases): 14% of a
  // lightly loaded switch's run. The order of everything is unchanged: the
  // fabric's instants run in time order, and nothing else could have run in
  // between. Only for fabrics whose modules never notify SystemC events
  // (not with TLM endpoints, whose initiators wait on the fabric).
  void set_run_ahead(Ps until) { run_ahead_until_ = until; }
  // Stops the kernel (sc_stop) and the current activation's run-ahead.
  void stop();
  ErrorSink& errors() { return errors_; }
  // Called every 16384 instants (a progress line checks the host clock).
  void set_progress(std::function<void()> f) { progress_ = std::move(f); }
  // The fabric's instants run so far, and the kernel activations that ran
  // them (fewer with run-ahead).
  std::uint64_t instants() const { return instants_; }
  std::uint64_t activations() const { return activations_; }
  // The time of the current (or last) instant: a cheap lower bound of now.
  Ps last_run() const { return last_run_; }
  // After an instant at t >= the last call + period, calls check(t)
  // (the watchdog); an exception from it is reported as `name`'s error and
  // stops the simulation. One comparison per instant, no event.
  // `drained(t)` runs when no work is left at all after an instant.
  void set_watch(std::string name, Ps period, std::function<void(Ps)> check,
                 std::function<void(Ps)> drained) {
    watch_name_ = std::move(name);
    watch_period_ = period;
    watch_next_ = period;
    watch_ = std::move(check);
    drained_ = std::move(drained);
  }

 private:
  void run();

  ErrorSink errors_;
  sc_core::sc_event event_;
  TimeBuckets<TimedModule*> pending_;
  std::uint64_t instants_ = 0;
  std::uint64_t activations_ = 0;
  Ps notified_at_ = kNever;
  Ps last_run_ = 0;
  Ps run_ahead_until_ = 0;  // 0: off
  bool running_ = false;
  bool stopped_ = false;
  std::string watch_name_;
  Ps watch_period_ = 0;
  Ps watch_next_ = kNever;
  std::function<void(Ps)> watch_;
  std::function<void(Ps)> drained_;
  std::function<void()> progress_;
};

struct Item {
  Ps time;
  std::uint32_t a;
  std::uint32_t b;
  std::uint32_t c;
  std::uint16_t kind;
};

class TimedModule : public sc_core::sc_module {
 public:
  TimedModule(const sc_core::sc_module_name& name, Scheduler& scheduler);

  // Queues an item for time t (>= now) and makes sure the module wakes then.
  void schedule(Ps t, std::uint16_t kind, std::uint32_t a = 0, std::uint32_t b = 0,
                std::uint32_t c = 0);

  Ps now() const { return scheduler_.now(); }
  std::uint64_t events() const { return events_; }
  void enable_log(const Log& l) { log_.enable(l, name()); }
  // Calls f(item) for every queued item (end-of-run accounting).
  template <class F>
  void for_each_pending(F&& f) const {
    items_.for_each(f);
  }

 protected:
  virtual void handle(const Item& item) = 0;
  void log(const std::string& text) const { log_.log->write(now(), name(), text); }
  // Ends the simulation (sc_stop) after the current instant.
  void stop_kernel() { scheduler_.stop(); }
  LogPoint log_;
  // Runs after all items of the current time are handled (e.g. allocation).
  virtual void after_items() {}

 private:
  friend class Scheduler;
  // Called by the scheduler at the time it was asked for. Returns false
  // after a model error (reported to the scheduler's ErrorSink).
  bool wake(Ps t);
  // Staged cache hints for the scheduler's walk (see Scheduler::run).
  void prefetch_self() const {
    const char* at = reinterpret_cast<const char*>(&scheduler_);
    __builtin_prefetch(at);  // the members below, up to the calendar's slots
    __builtin_prefetch(at + 64);
  }
  void prefetch_calendar() const { items_.prefetch_front(); }
  void prefetch_values() const { items_.prefetch_front_values(); }

  // A wake and a schedule() from another module read these first, and the
  // calendar's hot members lead it: together they span about 100 bytes
  // after the sc_module base, which the hot paths do not touch.
  Scheduler& scheduler_;
  Ps wake_at_ = kNever;  // the wake-up the scheduler holds for us
  std::uint64_t events_ = 0;
  bool waking_ = false;
  TimeBuckets<Item> items_;
};

}  // namespace fabricsim
