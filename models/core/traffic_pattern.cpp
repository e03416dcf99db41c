#include "models/core/traffic_pattern.hpp"

#include <cmath>
#include <numeric>

namespace fabricsim {

TrafficPattern::TrafficPattern(const TrafficConfig& t, int ports, std::uint64_t seed)
    : pattern_(t.pattern),
      ports_(ports),
      allow_self_(t.allow_self),
      hot_fraction_(t.hotspot_fraction),
      hot_port_(static_cast<int>(t.hotspot_endpoint)) {
  while ((1 << bits_) < ports_) ++bits_;
  side_ = static_cast<int>(std::lround(std::sqrt(static_cast<double>(ports_))));
  if (pattern_ == Pattern::kPermutation) {
    perm_.resize(static_cast<size_t>(ports_));
    std::iota(perm_.begin(), perm_.end(), 0);
    Rng rng(seed, 0xBE2A7u);
    // Fisher-Yates; Sattolo's variant (j < i) yields a single cycle, so no
    // endpoint maps to itself when self traffic is not allowed.
    for (int i = ports_ - 1; i > 0; --i) {
      const auto bound = static_cast<std::uint64_t>(allow_self_ ? i + 1 : i);
      const auto j = static_cast<int>(rng.below(bound));
      std::swap(perm_[static_cast<size_t>(i)], perm_[static_cast<size_t>(j)]);
    }
  }
}

int TrafficPattern::uniform(int src, Rng& rng) const {
  if (allow_self_) return static_cast<int>(rng.below(static_cast<std::uint64_t>(ports_)));
  const auto r = static_cast<int>(rng.below(static_cast<std::uint64_t>(ports_ - 1)));
  return r >= src ? r + 1 : r;
}

int TrafficPattern::destination(int src, Rng& rng) const {
  const int mask = ports_ - 1;
  switch (pattern_) {
    case Pattern::kUniform:
      return uniform(src, rng);
    case Pattern::kPermutation:
      return perm_[static_cast<size_t>(src)];
    case Pattern::kHotspot:
      if (rng.uniform() < hot_fraction_ && (allow_self_ || src != hot_port_)) return hot_port_;
      return uniform(src, rng);
    case Pattern::kTranspose:
      return (src % side_) * side_ + src / side_;
    case Pattern::kBitReverse: {
      int d = 0;
      for (int b = 0; b < bits_; ++b)
        if (src & (1 << b)) d |= 1 << (bits_ - 1 - b);
      return d;
    }
    case Pattern::kBitComplement:
      return ~src & mask;
    case Pattern::kShuffle:
      return ((src << 1) | (src >> (bits_ - 1))) & mask;
    case Pattern::kNeighbor:
      return (src + 1) % ports_;
    case Pattern::kTornado:
      return (src + (ports_ + 1) / 2 - 1) % ports_;
  }
  return src;
}

}  // namespace fabricsim
