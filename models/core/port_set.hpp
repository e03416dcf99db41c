// A dynamic bitset over port indices, sized at construction. The allocators
// work on rows and columns of these: one 64-bit word covers 64 ports, so a
// round-robin "first requester at or after the pointer" is a couple of
// count-trailing-zero instructions instead of a loop over ports. Up to 256
// ports the words live inside the object (no heap block per set: a switch
// scans hundreds of these per allocation, and scattered blocks cost more
// in cache misses than the bit operations themselves).
#pragma once
#include <cassert>
#include <cstddef>
#include <array>
#include <cstdint>
#include <vector>

namespace fabricsim {

class PortSet {
 public:
  static constexpr int kNone = -1;

  PortSet() = default;
  explicit PortSet(int size)
      : size_(size), nw_(static_cast<std::size_t>((size + 63) / 64)) {
    if (nw_ > kInline) heap_.assign(nw_, 0);
  }
  PortSet(const PortSet& o) = default;
  PortSet& operator=(const PortSet& o) = default;
  PortSet(PortSet&& o) = default;
  PortSet& operator=(PortSet&& o) = default;

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
    for (std::size_t k = 0; k < nw_; ++k)
      if (w()[k]) return true;
    return false;
  }
  int count() const {
    int n = 0;
    for (std::size_t k = 0; k < nw_; ++k) n += __builtin_popcountll(w()[k]);
    return n;
  }

  PortSet& operator&=(const PortSet& o) {
    for (std::size_t k = 0; k < nw_; ++k) w()[k] &= o.w()[k];
    return *this;
  }
  PortSet& operator|=(const PortSet& o) {
    for (std::size_t k = 0; k < nw_; ++k) w()[k] |= o.w()[k];
    return *this;
  }
  // this &= ~o
  PortSet& subtract(const PortSet& o) {
    for (std::size_t k = 0; k < nw_; ++k) w()[k] &= ~o.w()[k];
    return *this;
  }
  bool intersects(const PortSet& o) const {
    for (std::size_t k = 0; k < nw_; ++k)
      if (w()[k] & o.w()[k]) return true;
    return false;
  }
  // this = a & b (all three the same size).
  void assign_and(const PortSet& a, const PortSet& b) {
    for (std::size_t k = 0; k < nw_; ++k) w()[k] = a.w()[k] & b.w()[k];
  }
  // this |= a & b
  void or_and(const PortSet& a, const PortSet& b) {
    for (std::size_t k = 0; k < nw_; ++k) w()[k] |= a.w()[k] & b.w()[k];
  }
  // this = a & ~b
  void assign_andnot(const PortSet& a, const PortSet& b) {
    for (std::size_t k = 0; k < nw_; ++k) w()[k] = a.w()[k] & ~b.w()[k];
  }

  // Raw 64-bit words (bit i of word k is index 64k + i), for bit-parallel
  // algorithms such as the matrix transpose of the allocators.
  std::size_t word_count() const { return nw_; }
  std::uint64_t word(std::size_t k) const { return w()[k]; }
  void set_word(std::size_t k, std::uint64_t v) { w()[k] = v; }

  // Some index is in this set but not in `o`.
  bool has_bits_outside(const PortSet& o) const {
    for (std::size_t k = 0; k < nw_; ++k)
      if (w()[k] & ~o.w()[k]) return true;
    return false;
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
  std::uint64_t* w() { return nw_ > kInline ? heap_.data() : inline_.data(); }
  const std::uint64_t* w() const { return nw_ > kInline ? heap_.data() : inline_.data(); }
  int size_ = 0;
  std::size_t nw_ = 0;
  std::array<std::uint64_t, kInline> inline_{};
  std::vector<std::uint64_t> heap_;
};

}  // namespace fabricsim
