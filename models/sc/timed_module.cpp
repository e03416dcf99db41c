#include "models/sc/timed_module.hpp"

#include <algorithm>
#include <exception>

namespace fabricsim {

namespace {
struct LaterItem {
  bool operator()(const Item& x, const Item& y) const {
    return x.time != y.time ? x.time > y.time : x.seq > y.seq;
  }
};
}  // namespace

void ErrorSink::report(const std::string& where, Ps when, const std::string& what) {
  if (failed_) return;
  failed_ = true;
  message_ = where + " at " + std::to_string(ps_to_ns(when)) + " ns: " + what;
}

// ---------------------------------------------------------------- Scheduler

Scheduler::Scheduler(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
  heap_.reserve(256);
  SC_METHOD(run);
  sensitive << event_;
  dont_initialize();
}

void Scheduler::request(TimedModule* m, Ps t) {
  heap_.push_back(Entry{t, seq_++, m});
  std::push_heap(heap_.begin(), heap_.end(), [](const Entry& x, const Entry& y) {
    return x.t != y.t ? x.t > y.t : x.seq > y.seq;
  });
  if (t < notified_at_) {
    const Ps n = now();
    event_.notify(sc_core::sc_time::from_value(t > n ? t - n : 0));
    notified_at_ = t;
  }
}

void Scheduler::run() {
  const Ps t = now();
  notified_at_ = kNever;
  ++activations_;
  auto later = [](const Entry& x, const Entry& y) {
    return x.t != y.t ? x.t > y.t : x.seq > y.seq;
  };
  while (!heap_.empty() && heap_.front().t <= t) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const Entry e = heap_.back();
    heap_.pop_back();
    // A module that asked again for an earlier time left a stale entry.
    if (e.m->wake_at_ != e.t) continue;
    if (!e.m->wake(t)) {
      sc_core::sc_stop();
      return;
    }
  }
  if (!heap_.empty()) {
    notified_at_ = heap_.front().t;
    event_.notify(sc_core::sc_time::from_value(notified_at_ - t));
  }
}

// ------------------------------------------------------------- TimedModule

TimedModule::TimedModule(const sc_core::sc_module_name& name, Scheduler& scheduler)
    : sc_core::sc_module(name), scheduler_(scheduler) {
  heap_.reserve(64);
}

int TimedModule::add_channel() {
  channels_.emplace_back();
  return static_cast<int>(channels_.size() - 1);
}

void TimedModule::heap_push(const Item& it) {
  heap_.push_back(it);
  std::push_heap(heap_.begin(), heap_.end(), LaterItem{});
  notify_for(it.time);
}

void TimedModule::schedule(Ps t, std::uint16_t kind, std::uint32_t a, std::uint32_t b,
                           std::uint32_t c) {
  heap_push(Item{t, seq_++, a, b, c, kind, -1});
}

void TimedModule::push(int channel, Ps t, std::uint16_t kind, std::uint32_t a, std::uint32_t b,
                       std::uint32_t c) {
  Ring<Item>& ch = channels_[static_cast<size_t>(channel)];
  const Item it{t, seq_++, a, b, c, kind, static_cast<std::int16_t>(channel)};
  if (ch.empty()) {
    ch.push_back(it);
    heap_push(it);
  } else if (t >= ch.back().time) {
    ch.push_back(it);  // behind the channel's head, which is already in the heap
  } else {
    Item h = it;  // out of order for this channel: keep it in the heap
    h.channel = -1;
    heap_push(h);
  }
}

bool TimedModule::wake(Ps t) {
  wake_at_ = kNever;
  try {
    while (!heap_.empty() && heap_.front().time <= t) {
      while (!heap_.empty() && heap_.front().time <= t) {
        std::pop_heap(heap_.begin(), heap_.end(), LaterItem{});
        const Item item = heap_.back();
        heap_.pop_back();
        if (item.channel >= 0) {
          Ring<Item>& ch = channels_[static_cast<size_t>(item.channel)];
          ch.pop_front();
          if (!ch.empty()) {
            heap_.push_back(ch.front());
            std::push_heap(heap_.begin(), heap_.end(), LaterItem{});
          }
        }
        ++events_;
        handle(item);
      }
      after_items();
    }
  } catch (const std::exception& e) {
    scheduler_.errors().report(name(), t, e.what());
    return false;
  }
  if (!heap_.empty()) notify_for(heap_.front().time);
  return true;
}

}  // namespace fabricsim
