// A dynamic bitset over port indices, sized at construction. The allocators
// work on rows and columns of these: one 64-bit word covers 64 ports, so a
// round-robin "first requester at or after the pointer" is a couple of
// count-trailing-zero instructions instead of a loop over ports. Up to 256
// ports the words live inside the object (no heap block per set: a switch
// scans hundreds of these per allocation, and scattered blocks cost more
// in cache misses than the bit operations themselves). A switch of up to 64
// ports has one word: the operations take it directly, without the loop and
// the storage choice (with them, those took a fifth of a dgx-h100 NVLS run's
// instructions).
// A pointer to the words in use (inline or on the heap) saves the storage
// choice on every bit access too.
#pragma once
#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace fabricsim {

class PortSet {
 public:
  static constexpr int kNone = -1;

  PortSet() = default;
  explicit PortSet(int size) : size_(size), nw_(static_cast<std::uint32_t>((size + 63) / 64)) {
    if (nw_ > kInline) {
      heap_ = std::make_unique<std::uint64_t[]>(nw_);  // zeroed
      p_ = heap_.get();
    }
  }
  PortSet(const PortSet& o) : size_(o.size_), nw_(o.nw_), inline_(o.inline_) {
    if (o.heap_) {
      heap_.reset(new std::uint64_t[nw_]);
      std::copy(o.heap_.get(), o.heap_.get() + nw_, heap_.get());
      p_ = heap_.get();
    }
  }
  PortSet(PortSet&& o) noexcept
      : size_(o.size_), nw_(o.nw_), inline_(o.inline_), heap_(std::move(o.heap_)) {
    if (heap_) p_ = heap_.get();
    o.become_empty();
  }
  // Switches copy sets into scratch sets at every allocation: inline words
  // are a fixed-size copy.
  PortSet& operator=(const PortSet& o) {
    if (this == &o) return *this;
    if (o.nw_ > kInline) {
      if (!heap_ || nw_ != o.nw_) heap_.reset(new std::uint64_t[o.nw_]);
      std::copy(o.heap_.get(), o.heap_.get() + o.nw_, heap_.get());
      p_ = heap_.get();
    } else {
      if (nw_ > kInline) heap_.reset();
      inline_ = o.inline_;
      p_ = inline_.data();
    }
    size_ = o.size_;
    nw_ = o.nw_;
    return *this;
  }
  PortSet& operator=(PortSet&& o) noexcept {
    if (this == &o) return *this;
    size_ = o.size_;
    nw_ = o.nw_;
    inline_ = o.inline_;
    heap_ = std::move(o.heap_);
    p_ = heap_ ? heap_.get() : inline_.data();
    o.become_empty();
    return *this;
  }
  ~PortSet() = default;

  int size() const { return size_; }
  void set(int i) { w()[idx(i)] |= bit(i); }
  void reset(int i) { w()[idx(i)] &= ~bit(i); }
  bool test(int i) const { return (w()[idx(i)] & bit(i)) != 0; }
  void clear() {
    // One word covers switches up to 64 ports: a store, not a memset call.
    if (nw_ == 1) {
      w()[0] = 0;
      return;
    }
    for (std::size_t k = 0; k < nw_; ++k) w()[k] = 0;
  }
  void fill() {
    for (std::size_t k = 0; k < nw_; ++k) w()[k] = ~std::uint64_t{0};
    trim();
  }
  bool any() const {
    return some_word(*this, [](std::uint64_t x, std::uint64_t) { return x; });
  }
  int count() const {
    int n = 0;
    for (std::size_t k = 0; k < nw_; ++k) n += __builtin_popcountll(w()[k]);
    return n;
  }

  PortSet& operator&=(const PortSet& o) {
    zip(*this, o, [](std::uint64_t& d, std::uint64_t x, std::uint64_t y) { d = x & y; });
    return *this;
  }
  PortSet& operator|=(const PortSet& o) {
    zip(*this, o, [](std::uint64_t& d, std::uint64_t x, std::uint64_t y) { d = x | y; });
    return *this;
  }
  // this &= ~o
  PortSet& subtract(const PortSet& o) {
    zip(*this, o, [](std::uint64_t& d, std::uint64_t x, std::uint64_t y) { d = x & ~y; });
    return *this;
  }
  bool intersects(const PortSet& o) const {
    return some_word(o, [](std::uint64_t x, std::uint64_t y) { return x & y; });
  }
  // this = a & b (all three the same size).
  void assign_and(const PortSet& a, const PortSet& b) {
    zip(a, b, [](std::uint64_t& d, std::uint64_t x, std::uint64_t y) { d = x & y; });
  }
  // this |= a & b
  void or_and(const PortSet& a, const PortSet& b) {
    zip(a, b, [](std::uint64_t& d, std::uint64_t x, std::uint64_t y) { d |= x & y; });
  }
  // this = a & ~b
  void assign_andnot(const PortSet& a, const PortSet& b) {
    zip(a, b, [](std::uint64_t& d, std::uint64_t x, std::uint64_t y) { d = x & ~y; });
  }

  // Raw 64-bit words (bit i of word k is index 64k + i), for bit-parallel
  // algorithms such as the matrix transpose of the allocators.
  std::size_t word_count() const { return nw_; }
  std::uint64_t word(std::size_t k) const { return w()[k]; }
  void set_word(std::size_t k, std::uint64_t v) { w()[k] = v; }

  // Some index is in this set but not in `o`.
  bool has_bits_outside(const PortSet& o) const {
    return some_word(o, [](std::uint64_t x, std::uint64_t y) { return x & ~y; });
  }
  bool operator==(const PortSet& o) const {
    if (size_ != o.size_) return false;
    for (std::size_t k = 0; k < nw_; ++k)
      if (w()[k] != o.w()[k]) return false;
    return true;
  }

  // First set index >= from, or kNone.
  int find_next(int from) const {
    if (from >= size_) return kNone;
    if (nw_ == 1) {
      const std::uint64_t x = inline_[0] & (~std::uint64_t{0} << from);
      return x ? __builtin_ctzll(x) : kNone;
    }
    std::size_t k = idx(from);
    std::uint64_t x = w()[k] & (~std::uint64_t{0} << (from & 63));
    while (true) {
      if (x) return static_cast<int>(k * 64 + static_cast<std::size_t>(__builtin_ctzll(x)));
      if (++k == nw_) return kNone;
      x = w()[k];
    }
  }
  int find_first() const { return find_next(0); }
  // First set index in cyclic order starting at `start` (round-robin pointer).
  int find_cyclic(int start) const {
    const int a = find_next(start);
    if (a != kNone) return a;
    return start > 0 ? find_next(0) : kNone;
  }
  // The k-th set index (0-based) in ascending order, or kNone.
  int nth(int k) const {
    for (std::size_t j = 0; j < nw_; ++j) {
      std::uint64_t x = w()[j];
      const int c = __builtin_popcountll(x);
      if (k < c) {
        for (; k > 0; --k) x &= x - 1;
        return static_cast<int>(j * 64 + static_cast<std::size_t>(__builtin_ctzll(x)));
      }
      k -= c;
    }
    return kNone;
  }

  template <class F>
  void for_each(F&& f) const {
    if (nw_ == 1) {
      for (std::uint64_t x = inline_[0]; x; x &= x - 1) f(__builtin_ctzll(x));
      return;
    }
    for (std::size_t k = 0; k < nw_; ++k) {
      std::uint64_t x = w()[k];
      while (x) {
        f(static_cast<int>(k * 64 + static_cast<std::size_t>(__builtin_ctzll(x))));
        x &= x - 1;
      }
    }
  }

 private:
  static std::size_t idx(int i) { return static_cast<std::size_t>(i) >> 6; }
  static std::uint64_t bit(int i) { return std::uint64_t{1} << (i & 63); }
  void trim() {
    if (size_ % 64 && nw_ > 0) w()[nw_ - 1] &= (std::uint64_t{1} << (size_ % 64)) - 1;
  }
  static constexpr std::size_t kInline = 4;
  // Word-wise operations on sets of one size. One word (switches of up to 64
  // ports) is taken directly; inline words as a loop of fixed length the
  // compiler unrolls and vectorises (words past nw_ stay zero in every set);
  // heap words as a loop. zip: f(this word, a's, b's) for every word.
  template <class F>
  void zip(const PortSet& a, const PortSet& b, F f) {
    assert(a.nw_ == nw_ && b.nw_ == nw_);
    if (nw_ == 1) {
      f(inline_[0], a.inline_[0], b.inline_[0]);
    } else if (nw_ <= kInline) {
      for (std::size_t k = 0; k < kInline; ++k) f(inline_[k], a.inline_[k], b.inline_[k]);
    } else {
      for (std::size_t k = 0; k < nw_; ++k) f(heap_[k], a.heap_[k], b.heap_[k]);
    }
  }
  // Some word k has f(this word, o's) != 0.
  template <class F>
  bool some_word(const PortSet& o, F f) const {
    assert(o.nw_ == nw_);
    if (nw_ == 1) return f(inline_[0], o.inline_[0]) != 0;
    if (nw_ <= kInline) {
      std::uint64_t x = 0;
      for (std::size_t k = 0; k < kInline; ++k) x |= f(inline_[k], o.inline_[k]);
      return x != 0;
    }
    for (std::size_t k = 0; k < nw_; ++k)
      if (f(heap_[k], o.heap_[k]) != 0) return true;
    return false;
  }
  std::uint64_t* w() { return p_; }
  const std::uint64_t* w() const { return p_; }
  // A moved-from set: size 0, inline (still assignable and destructible).
  void become_empty() {
    size_ = 0;
    nw_ = 0;
    inline_.fill(0);
    p_ = inline_.data();
  }
  // What every operation reads comes first (48 bytes); the heap words'
  // owner, used only beyond kInline words, last.
  int size_ = 0;
  std::uint32_t nw_ = 0;
  std::array<std::uint64_t, kInline> inline_{};
  std::uint64_t* p_ = inline_.data();  // the words: inline_ or heap_ (after inline_: made from it)
  std::unique_ptr<std::uint64_t[]> heap_;  // words beyond kInline (nw_ > kInline only)
};

}  // namespace fabricsim
