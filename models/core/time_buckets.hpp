// Values queued by time, in buckets of equal time: one bucket per distinct
// time, in a vector sorted by time. Work in a fabric falls on few distinct
// times (the flit and clock grids), new times are almost always the latest
// (pushed at the back) and the earliest is taken from the front, so queuing
// and taking an item are O(1) in the common case, with no heap sifting.
// Within a time, items keep the order they were queued in. Plain C++ (the
// SystemC scheduler in models/sc/timed_module.hpp uses it twice), so the
// micro-benchmarks measure it without a kernel.
#pragma once
#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "models/core/time.hpp"

namespace fabricsim {

template <class T>
class TimeBuckets {
 public:
  struct Bucket {
    Ps t;
    std::vector<T> items;  // in insertion order
  };

  bool empty() const { return head_ == pending_.size(); }
  Ps next_time() const { return pending_[head_]->t; }
  Bucket& front() { return *pending_[head_]; }

  void add(Ps t, const T& v) {
    const std::size_t n = pending_.size();
    Bucket* b;
    if (head_ < n && pending_[n - 1]->t == t) {
      b = pending_[n - 1];
    } else if (head_ == n || pending_[n - 1]->t < t) {
      b = fresh(t);
      pending_.push_back(b);
    } else {
      // Usually near the back: step back a few buckets, then bisect.
      std::size_t hi = n - 1;  // pending_[hi]->t > t
      std::size_t steps = 0;
      while (hi > head_ && pending_[hi - 1]->t > t && ++steps < 4) --hi;
      auto first = pending_.begin() + static_cast<std::ptrdiff_t>(head_);
      auto last = pending_.begin() + static_cast<std::ptrdiff_t>(hi);
      auto it = std::lower_bound(first, last, t, [](const Bucket* x, Ps y) { return x->t < y; });
      if (it != last && (*it)->t == t) {
        b = *it;
      } else {
        b = fresh(t);
        pending_.insert(it, b);
      }
    }
    b->items.push_back(v);
  }

  // Drops the earliest bucket (after its items were taken).
  void pop_front() {
    Bucket* b = pending_[head_++];
    b->items.clear();
    spare_.push_back(b);
    if (head_ == pending_.size()) {
      pending_.clear();
      head_ = 0;
    } else if (head_ >= 64 && 2 * head_ >= pending_.size()) {
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  template <class F>
  void for_each(F&& f) const {
    for (std::size_t k = head_; k < pending_.size(); ++k)
      for (const T& v : pending_[k]->items) f(v);
  }

 private:
  Bucket* fresh(Ps t) {
    Bucket* b;
    if (spare_.empty()) {
      owned_.push_back(std::make_unique<Bucket>());
      b = owned_.back().get();
    } else {
      b = spare_.back();
      spare_.pop_back();
    }
    b->t = t;
    return b;
  }
  std::vector<Bucket*> pending_;  // ascending time from head_
  std::size_t head_ = 0;
  std::vector<Bucket*> spare_;
  std::vector<std::unique_ptr<Bucket>> owned_;
};

}  // namespace fabricsim
