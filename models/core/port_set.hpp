// A dynamic bitset over port indices, sized at construction. The allocators
// work on rows and columns of these: one 64-bit word covers 64 ports, so a
// round-robin "first requester at or after the pointer" is a couple of
// count-trailing-zero instructions instead of a loop over ports.
#pragma once
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fabricsim {

class PortSet {
 public:
  static constexpr int kNone = -1;

  PortSet() = default;
  explicit PortSet(int size) : size_(size), words_(static_cast<std::size_t>((size + 63) / 64), 0) {}

  int size() const { return size_; }
  void set(int i) { words_[idx(i)] |= bit(i); }
  void reset(int i) { words_[idx(i)] &= ~bit(i); }
  bool test(int i) const { return (words_[idx(i)] & bit(i)) != 0; }
  void clear() {
    // One word covers switches up to 64 ports: a store, not a memset call.
    if (words_.size() == 1) {
      words_[0] = 0;
      return;
    }
    for (auto& w : words_) w = 0;
  }
  void fill() {
    for (auto& w : words_) w = ~std::uint64_t{0};
    trim();
  }
  bool any() const {
    for (auto w : words_)
      if (w) return true;
    return false;
  }
  int count() const {
    int n = 0;
    for (auto w : words_) n += __builtin_popcountll(w);
    return n;
  }

  PortSet& operator&=(const PortSet& o) {
    for (std::size_t k = 0; k < words_.size(); ++k) words_[k] &= o.words_[k];
    return *this;
  }
  PortSet& operator|=(const PortSet& o) {
    for (std::size_t k = 0; k < words_.size(); ++k) words_[k] |= o.words_[k];
    return *this;
  }
  // this &= ~o
  PortSet& subtract(const PortSet& o) {
    for (std::size_t k = 0; k < words_.size(); ++k) words_[k] &= ~o.words_[k];
    return *this;
  }
  bool intersects(const PortSet& o) const {
    for (std::size_t k = 0; k < words_.size(); ++k)
      if (words_[k] & o.words_[k]) return true;
    return false;
  }
  // this = a & b (all three the same size).
  void assign_and(const PortSet& a, const PortSet& b) {
    for (std::size_t k = 0; k < words_.size(); ++k) words_[k] = a.words_[k] & b.words_[k];
  }
  // this |= a & b
  void or_and(const PortSet& a, const PortSet& b) {
    for (std::size_t k = 0; k < words_.size(); ++k) words_[k] |= a.words_[k] & b.words_[k];
  }
  // this = a & ~b
  void assign_andnot(const PortSet& a, const PortSet& b) {
    for (std::size_t k = 0; k < words_.size(); ++k) words_[k] = a.words_[k] & ~b.words_[k];
  }

  // Raw 64-bit words (bit i of word k is index 64k + i), for bit-parallel
  // algorithms such as the matrix transpose of the allocators.
  std::size_t word_count() const { return words_.size(); }
  std::uint64_t word(std::size_t k) const { return words_[k]; }
  void set_word(std::size_t k, std::uint64_t w) { words_[k] = w; }

  // Some index is in this set but not in `o`.
  bool has_bits_outside(const PortSet& o) const {
    for (std::size_t k = 0; k < words_.size(); ++k)
      if (words_[k] & ~o.words_[k]) return true;
    return false;
  }
  bool operator==(const PortSet& o) const { return size_ == o.size_ && words_ == o.words_; }

  // First set index >= from, or kNone.
  int find_next(int from) const {
    if (from >= size_) return kNone;
    std::size_t k = idx(from);
    std::uint64_t w = words_[k] & (~std::uint64_t{0} << (from & 63));
    while (true) {
      if (w) return static_cast<int>(k * 64 + static_cast<std::size_t>(__builtin_ctzll(w)));
      if (++k == words_.size()) return kNone;
      w = words_[k];
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
    for (std::size_t w = 0; w < words_.size(); ++w) {
      std::uint64_t x = words_[w];
      const int c = __builtin_popcountll(x);
      if (k < c) {
        for (; k > 0; --k) x &= x - 1;
        return static_cast<int>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(x)));
      }
      k -= c;
    }
    return kNone;
  }

  template <class F>
  void for_each(F&& f) const {
    for (std::size_t k = 0; k < words_.size(); ++k) {
      std::uint64_t w = words_[k];
      while (w) {
        f(static_cast<int>(k * 64 + static_cast<std::size_t>(__builtin_ctzll(w))));
        w &= w - 1;
      }
    }
  }

 private:
  static std::size_t idx(int i) { return static_cast<std::size_t>(i) >> 6; }
  static std::uint64_t bit(int i) { return std::uint64_t{1} << (i & 63); }
  void trim() {
    if (size_ % 64 && !words_.empty()) words_.back() &= (std::uint64_t{1} << (size_ % 64)) - 1;
  }
  int size_ = 0;
  std::vector<std::uint64_t> words_;
};

}  // namespace fabricsim
