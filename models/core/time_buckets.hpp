// Values queued by time, in buckets of equal time, taken earliest first;
// within a time, values keep the order they were queued in (the fabric's
// determinism rests on it). Plain C++ (the SystemC scheduler in
// models/sc/timed_module.hpp uses it for its modules and for each module's
// items), so unit tests and micro-benchmarks use it without a kernel.
//
// A calendar: the near future is a ring of slots of 2^shift ps each, a slot
// holding its buckets as a short list sorted by time, with a bitmap of the
// slots in use; times beyond the ring's span go to a sorted overflow and
// move into the ring as it advances. A fabric queues most work one link
// latency or less ahead (100 ns on the presets), far from the back of a
// single sorted list when a GPU's 18 links deliver out of phase; there the
// sorted list cost a search and a move of the entries behind (a tenth of a
// large NVLS run's instructions), the calendar a shift and a short walk.
//
// add() refuses a time before the last bucket taken (the scheduler queues
// nothing in the past).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/time.hpp"

namespace fabricsim {

template <class T>
class TimeBuckets {
 public:
  struct Bucket {
    Ps t = 0;
    std::vector<T> items;  // in insertion order
    Bucket* next = nullptr;  // the next later bucket of the same slot
  };

  // Slots of 2^shift ps, 2^slot_bits of them (the default: 512 ps x 512,
  // a span of 262 ns).
  explicit TimeBuckets(int shift = 9, int slot_bits = 9)
      : shift_(shift),
        n_(std::uint64_t{1} << slot_bits),
        slots_(n_, nullptr),
        bits_((n_ + 63) / 64, 0) {}
  ~TimeBuckets() = default;
  TimeBuckets(const TimeBuckets&) = delete;
  TimeBuckets& operator=(const TimeBuckets&) = delete;

  bool empty() const { return front_ == nullptr; }
  Ps next_time() const { return front_->t; }
  Bucket& front() { return *front_; }
  // Hints for a caller that will take the front soon (the scheduler walks
  // many modules per instant, each stalling on its own calendar's lines):
  // the front bucket, then its values. They load front_ (and the second
  // the bucket's vector), which earlier hints should have brought in; no
  // effect on results.
  void prefetch_front() const {
    if (front_ != nullptr) __builtin_prefetch(front_);
  }
  void prefetch_front_values() const {
    if (front_ != nullptr) __builtin_prefetch(front_->items.data());
  }

  void add(Ps t, const T& v) {
    // Before the last bucket taken: taken out of order, or misplaced by the
    // ring (a slot of the future): a model bug, never a silent reordering.
    if (t < last_taken_) throw InvariantError("time buckets: a time before the last one taken");
    const std::uint64_t s = t >> shift_;
    Bucket* b = s < base_ + n_ ? in_ring(s, t) : in_overflow(t);
    b->items.push_back(v);
    if (front_ == nullptr || t < front_->t) front_ = b;
  }

  // Drops the earliest bucket (after its items were taken).
  void pop_front() {
    Bucket* b = front_;
    const std::uint64_t s = b->t >> shift_;
    if (s < base_ + n_) {  // in the ring, at the head of its slot (the earliest)
      const std::size_t k = s & (n_ - 1);
      slots_[k] = b->next;
      if (b->next == nullptr) bits_[k >> 6] &= ~(std::uint64_t{1} << (k & 63));
    } else {  // the ring is empty: the overflow's first
      ++over_head_;
    }
    b->items.clear();
    b->next = nullptr;
    spare_.push_back(b);
    base_ = s;  // nothing earlier can come any more
    last_taken_ = b->t;
    // Overflow times now within the ring's span move in (ascending, so
    // each lands behind what its slot already holds, if anything).
    while (over_head_ < overflow_.size() && (overflow_[over_head_]->t >> shift_) < base_ + n_) {
      Bucket* m = overflow_[over_head_++];
      const std::uint64_t ms = m->t >> shift_;
      link_at(place(ms, m->t), ms, m);
    }
    if (over_head_ == overflow_.size()) {
      overflow_.clear();
      over_head_ = 0;
    } else if (over_head_ >= 64 && 2 * over_head_ >= overflow_.size()) {
      overflow_.erase(overflow_.begin(), overflow_.begin() + static_cast<std::ptrdiff_t>(over_head_));
      over_head_ = 0;
    }
    front_ = first_in_ring();
    if (front_ == nullptr && over_head_ < overflow_.size()) front_ = overflow_[over_head_];
  }

  // Every queued value, in time order.
  template <class F>
  void for_each(F&& f) const {
    for (std::uint64_t k = 0; k < n_; ++k)
      for (const Bucket* b = slots_[(base_ + k) & (n_ - 1)]; b != nullptr; b = b->next)
        for (const T& v : b->items) f(v);
    for (std::size_t k = over_head_; k < overflow_.size(); ++k)
      for (const T& v : overflow_[k]->items) f(v);
  }

 private:
  // The bucket of time t (slot s, within the span), made if new.
  Bucket* in_ring(std::uint64_t s, Ps t) {
    Bucket** at = place(s, t);
    if (*at != nullptr && (*at)->t == t) return *at;
    Bucket* b = fresh(t);
    link_at(at, s, b);
    return b;
  }
  // Slot s's link to the first bucket not earlier than t.
  Bucket** place(std::uint64_t s, Ps t) {
    Bucket** at = &slots_[s & (n_ - 1)];
    while (*at != nullptr && (*at)->t < t) at = &(*at)->next;
    return at;
  }
  void link_at(Bucket** at, std::uint64_t s, Bucket* b) {
    b->next = *at;
    *at = b;
    const std::size_t k = s & (n_ - 1);
    bits_[k >> 6] |= std::uint64_t{1} << (k & 63);
  }
  Bucket* in_overflow(Ps t) {
    const std::size_t n = overflow_.size();
    if (over_head_ < n && overflow_[n - 1]->t == t) return overflow_[n - 1];
    if (over_head_ == n || overflow_[n - 1]->t < t) {
      overflow_.push_back(fresh(t));
      return overflow_.back();
    }
    auto first = overflow_.begin() + static_cast<std::ptrdiff_t>(over_head_);
    auto it = std::lower_bound(first, overflow_.end(), t,
                               [](const Bucket* x, Ps y) { return x->t < y; });
    if ((*it)->t == t) return *it;
    return *overflow_.insert(it, fresh(t));
  }
  // The earliest bucket of the ring: the first slot in use from base_ on,
  // cyclically (every slot in use is within [base_, base_ + n_)).
  Bucket* first_in_ring() const {
    const std::size_t words = bits_.size();
    const std::size_t k0 = base_ & (n_ - 1);
    std::size_t w = k0 >> 6;
    std::uint64_t x = bits_[w] & (~std::uint64_t{0} << (k0 & 63));
    for (std::size_t step = 0; step <= words; ++step) {
      if (x != 0) return slots_[(w << 6) + static_cast<std::size_t>(__builtin_ctzll(x))];
      w = w + 1 == words ? 0 : w + 1;
      x = bits_[w];
      // Back at the start word: only its bits below k0 are left.
      if (step + 1 == words) x &= (std::uint64_t{1} << (k0 & 63)) - 1;
    }
    return nullptr;
  }
  Bucket* fresh(Ps t) {
    Bucket* b = nullptr;
    if (spare_.empty()) {
      owned_.push_back(std::make_unique<Bucket>());
      b = owned_.back().get();
    } else {
      b = spare_.back();
      spare_.pop_back();
    }
    b->t = t;
    b->next = nullptr;
    return b;
  }

  // What add(), next_time() and pop_front() read first, together at the
  // front (64 bytes up to slots_'s pointer): a module's calendar is usually
  // cold when another module queues into it or it wakes.
  Bucket* front_ = nullptr;  // the earliest bucket
  Ps last_taken_ = 0;        // time of the last bucket taken (its slot: base_)
  int shift_;
  std::uint64_t n_;             // slots, a power of two
  std::uint64_t base_ = 0;      // slot of the last bucket taken: the ring spans [base_, base_ + n_)
  std::vector<Bucket*> slots_;  // per slot: its buckets, ascending time
  std::vector<std::uint64_t> bits_;  // slots in use
  std::vector<Bucket*> overflow_;    // beyond the span, ascending time from over_head_
  std::size_t over_head_ = 0;
  std::vector<Bucket*> spare_;
  std::vector<std::unique_ptr<Bucket>> owned_;
};

}  // namespace fabricsim
