#include "models/core/nccl_tuner.hpp"

#include <algorithm>

namespace fabricsim {

namespace {
// Hopper, one node (NVIDIA/nccl v2.29.7 src/graph/tuning.cc).
constexpr double kLlMaxGbps = 141.0;
constexpr double kLl128PerChannelGbps = 36.7;
constexpr double kLl128Share = 0.92;
struct Latency {
  double base, per_step;  // us
};
Latency ring_latency(Protocol p) {
  switch (p) {
    case Protocol::kLl:
      return {6.6, 0.6};
    case Protocol::kLl128:
      return {14.0, 1.9};
    default:
      return {8.4, 3.4};
  }
}
}  // namespace

double NcclTuner::ring_time_us(Protocol p, std::uint64_t bytes, int n) const {
  const int steps = 2 * (n - 1);
  if (steps <= 0) return 0;
  const Latency lat = ring_latency(p);
  double bus = graph_gbps;
  if (p == Protocol::kLl) bus = std::min(kLlMaxGbps, 0.5 * graph_gbps);
  if (p == Protocol::kLl128)
    bus = std::min(kLl128Share * graph_gbps, channels * kLl128PerChannelGbps);
  const double alg = bus * n / steps;
  return lat.base + steps * lat.per_step + static_cast<double>(bytes) / (1000.0 * alg);
}

Protocol NcclTuner::ring_protocol(std::uint64_t bytes, int n) const {
  Protocol best = Protocol::kSimple;
  double t = ring_time_us(best, bytes, n);
  for (const Protocol p : {Protocol::kLl, Protocol::kLl128}) {
    const double u = ring_time_us(p, bytes, n);
    if (u < t) {
      best = p;
      t = u;
    }
  }
  return best;
}

}  // namespace fabricsim
