// Destination choice for synthetic traffic (BookSim's naming where it has one).
#pragma once
#include <cstdint>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/rng.hpp"

namespace fabricsim {

class TrafficPattern {
 public:
  // `seed` fixes the random permutation of the `permutation` pattern.
  TrafficPattern(const TrafficConfig& t, int ports, std::uint64_t seed);

  // Destination of the next packet from `src`; random patterns draw from `rng`.
  int destination(int src, Rng& rng) const;

  const std::vector<int>& permutation() const { return perm_; }

 private:
  int uniform(int src, Rng& rng) const;

  Pattern pattern_;
  int ports_;
  int bits_ = 0;  // log2(ports) for the bit patterns
  int side_ = 0;  // sqrt(ports) for transpose
  bool allow_self_;
  double hot_fraction_;
  int hot_port_;
  std::vector<int> perm_;
};

}  // namespace fabricsim
