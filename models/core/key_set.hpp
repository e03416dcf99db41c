// A set of 64-bit keys in one flat array (open addressing, linear probing,
// backward-shift deletion): the reduction engine asks "has this address an
// entry?" for every waiting head at every allocation, and a node-based
// std::unordered_map answers with a division and a pointer chase each time
// (measured: over a third of a loaded nvl72 switch's allocation). Plain C++.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace fabricsim {

class KeySet {
 public:
  // Room for `capacity` keys at most half full (it grows if asked for more).
  explicit KeySet(std::size_t capacity = 16) { rehash(round_up(2 * capacity)); }

  bool contains(std::uint64_t k) const {
    for (std::size_t i = slot(k);; i = (i + 1) & mask_) {
      if (slots_[i] == k) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }
  // Adds k; false if it was already there.
  bool insert(std::uint64_t k) {
    if (k == kEmpty) throw std::invalid_argument("KeySet: the key ~0 is reserved");
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    std::size_t i = slot(k);
    for (; slots_[i] != kEmpty; i = (i + 1) & mask_)
      if (slots_[i] == k) return false;
    slots_[i] = k;
    ++size_;
    return true;
  }
  // Removes k; false if it was not there. Later keys of its probe run move
  // back into the hole, so lookups never need tombstones.
  bool erase(std::uint64_t k) {
    std::size_t i = slot(k);
    while (slots_[i] != k) {
      if (slots_[i] == kEmpty) return false;
      i = (i + 1) & mask_;
    }
    std::size_t hole = i;
    for (std::size_t j = (hole + 1) & mask_; slots_[j] != kEmpty; j = (j + 1) & mask_) {
      const std::size_t home = slot(slots_[j]);
      // Move j into the hole unless its home lies cyclically in (hole, j].
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = kEmpty;
    --size_;
    return true;
  }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  static std::size_t round_up(std::size_t n) {
    std::size_t p = 16;
    while (p < n) p *= 2;
    return p;
  }
  // Fibonacci hashing: the top bits of k times 2^64/phi.
  std::size_t slot(std::uint64_t k) const {
    return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  void rehash(std::size_t n) {
    std::vector<std::uint64_t> old;
    old.swap(slots_);
    slots_.assign(n, kEmpty);
    mask_ = n - 1;
    shift_ = 64;
    for (std::size_t m = n; m > 1; m >>= 1) --shift_;
    size_ = 0;
    for (std::uint64_t k : old)
      if (k != kEmpty) insert(k);
  }
  std::vector<std::uint64_t> slots_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace fabricsim
