// Deterministic random numbers: xoshiro256** seeded through splitmix64.
// std:: distributions are implementation-defined, so every draw the models
// make goes through these functions: same seed, same stream, bit for bit.
#pragma once
#include <cmath>
#include <cstdint>

namespace fabricsim {

__extension__ using Uint128 = unsigned __int128;

class Rng {
 public:
  // `stream` separates independent users of one seed (one per endpoint,
  // one per allocator ...), so adding a user does not shift the others.
  explicit Rng(std::uint64_t seed = 1, std::uint64_t stream = 0) {
    std::uint64_t x = seed ^ (0x9E3779B97F4A7C15ULL * (stream + 1));
    for (auto& w : s_) w = splitmix64(x);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), n >= 1 (Lemire's multiply-and-reject, unbiased).
  std::uint64_t below(std::uint64_t n) {
    Uint128 m = static_cast<Uint128>(next()) * n;
    auto lo = static_cast<std::uint64_t>(m);
    if (lo < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (lo < threshold) {
        m = static_cast<Uint128>(next()) * n;
        lo = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  bool bernoulli(double p) { return uniform() < p; }

  // Number of failures before the first success of a Bernoulli(p) trial
  // sequence, p in (0, 1]. Used to jump straight to the next packet instead
  // of flipping a coin every cycle.
  std::uint64_t geometric(double p) { return p >= 1.0 ? 0 : geometric_log(std::log1p(-p)); }
  // The same draw with log1p(-p) given (p < 1): a caller drawing with one p
  // all run computes it once (same bits: the division stays a division).
  std::uint64_t geometric_log(double log1p_minus_p) {
    const double u = 1.0 - uniform();  // (0, 1]
    const double k = std::floor(std::log(u) / log1p_minus_p);
    return k > 9.0e18 ? static_cast<std::uint64_t>(9.0e18) : static_cast<std::uint64_t>(k);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint64_t s_[4] = {};
};

}  // namespace fabricsim
