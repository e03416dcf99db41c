// Simulated time inside the models: integer picoseconds.
// SystemC's default time resolution is 1 ps; keeping the same unit means the
// conversion at the SystemC boundary is exact and no sc_time arithmetic runs
// on the hot path.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

namespace fabricsim {

using Ps = std::uint64_t;
constexpr Ps kNever = std::numeric_limits<Ps>::max();

inline Ps ns_to_ps(double ns) { return static_cast<Ps>(std::llround(ns * 1000.0)); }
inline double ps_to_ns(Ps ps) { return static_cast<double>(ps) / 1000.0; }

// Smallest multiple of `period` that is >= t (clock edge at or after t).
inline Ps edge_at_or_after(Ps t, Ps period) { return (t + period - 1) / period * period; }

// Length of the overlap of [a, b) with [lo, hi).
inline Ps overlap(Ps a, Ps b, Ps lo, Ps hi) {
  const Ps s = a > lo ? a : lo;
  const Ps e = b < hi ? b : hi;
  return e > s ? e - s : 0;
}

}  // namespace fabricsim
