// Event-driven models: a SystemC kernel process per fabric that wakes the
// fabric's modules, and the base class of those modules.
//
// Why not one sc_event per module: SystemC's timed-notification queue costs
// about 100 ns per notification (it is a heap compared through a function
// pointer), several times the work of a whole packet hop. The Scheduler is a
// single SC_METHOD with one sc_event; it keeps its own heap of module wake
// times and runs every module due at an instant in one activation. Time is
// still SystemC time: other SystemC models interleave with the fabric
// normally.
//
// Each module keeps its work in
//   - channels: one FIFO per incoming link. A link delivers in time order, so
//     pushing is O(1) and only each channel's head sits in the heap;
//   - a small heap for everything else (its own timers, out-of-order items),
// ordered by (time, insertion order), and asks the scheduler to wake it at
// the earliest: it runs exactly when it has work, never on idle cycles.
// Items carry only integers (packet ids, ports): no sc_time arithmetic and no
// allocation on the hot path once the buffers have grown.
//
// Timing assumption: everything another module queues here is at least one
// link latency in the future, so all items of time t are queued before t is
// reached and the order within a time step is deterministic.
#pragma once
#include <systemc>

#include <cstdint>
#include <string>
#include <vector>

#include "models/core/ring.hpp"
#include "models/core/time.hpp"

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

  static Ps now() { return static_cast<Ps>(sc_core::sc_time_stamp().value()); }
  // `m` wants to run at time t (>= now).
  void request(TimedModule* m, Ps t);
  ErrorSink& errors() { return errors_; }
  std::uint64_t activations() const { return activations_; }

 private:
  struct Entry {
    Ps t;
    std::uint64_t seq;
    TimedModule* m;
  };
  void run();

  ErrorSink errors_;
  sc_core::sc_event event_;
  std::vector<Entry> heap_;
  std::uint64_t seq_ = 0;
  std::uint64_t activations_ = 0;
  Ps notified_at_ = kNever;
};

struct Item {
  Ps time;
  std::uint64_t seq;
  std::uint32_t a;
  std::uint32_t b;
  std::uint32_t c;
  std::uint16_t kind;
  std::int16_t channel;  // -1: heap item; else the channel it came from
};

class TimedModule : public sc_core::sc_module {
 public:
  TimedModule(const sc_core::sc_module_name& name, Scheduler& scheduler);

  // Queues an item for time t (>= now) and makes sure the module wakes then.
  void schedule(Ps t, std::uint16_t kind, std::uint32_t a = 0, std::uint32_t b = 0,
                std::uint32_t c = 0);
  // A new input channel (one per incoming link direction).
  int add_channel();
  // Queues an item on a channel; items of a channel should come in time
  // order (an out-of-order item still works, through the heap).
  void push(int channel, Ps t, std::uint16_t kind, std::uint32_t a = 0, std::uint32_t b = 0,
            std::uint32_t c = 0);

  static Ps now() { return Scheduler::now(); }
  std::uint64_t events() const { return events_; }
  // Calls f(item) for every queued item (end-of-run accounting).
  template <class F>
  void for_each_pending(F&& f) const {
    for (auto& it : heap_)
      if (it.channel < 0) f(it);
    for (auto& ch : channels_)
      for (std::size_t i = 0; i < ch.size(); ++i) f(ch[i]);
  }

 protected:
  virtual void handle(const Item& item) = 0;
  // Runs after all items of the current time are handled (e.g. allocation).
  virtual void after_items() {}

 private:
  friend class Scheduler;
  // Called by the scheduler at the time it was asked for. Returns false
  // after a model error (reported to the scheduler's ErrorSink).
  bool wake(Ps t);
  void heap_push(const Item& it);
  void notify_for(Ps t) {
    if (t < wake_at_) {
      wake_at_ = t;
      scheduler_.request(this, t);
    }
  }

  Scheduler& scheduler_;
  std::vector<Item> heap_;  // heap items + the head of each non-empty channel
  std::vector<Ring<Item>> channels_;
  std::uint64_t seq_ = 0;
  std::uint64_t events_ = 0;
  Ps wake_at_ = kNever;  // the wake-up the scheduler holds for us
};

}  // namespace fabricsim
