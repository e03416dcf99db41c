#include "models/core/nccl_tuner.hpp"

#include <algorithm>
#include <iterator>

namespace fabricsim {

namespace {
// Hopper, one node (NVIDIA/nccl v2.29.7 src/graph/tuning.cc).
constexpr double kLlMaxGbps = 141.0;
constexpr double kLl128PerChannelGbps = 36.7;
constexpr double kLl128Share = 0.92;
// NVLS (tuning.cc, search.cc).
constexpr double kNvlsLatencyUs = 25.0;
constexpr double kNvlsEfficiency = 0.85;
constexpr double kSm90Speeds[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
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

double NcclTuner::nvls_graph_gbps(int n) const {
  const double total = n > 1 ? nvlink_gbps * n / (n - 1) : nvlink_gbps;
  for (const double s : kSm90Speeds)
    if (s <= nvlink_gbps && s * n <= total) return s;
  return kSm90Speeds[std::size(kSm90Speeds) - 1];
}

double NcclTuner::nvls_time_us(std::uint64_t bytes, int n) const {
  if (n < 2) return 0;
  // Per head: the graph's intra-node speed x efficiency x (heads-1)/heads x
  // 2, capped at its inter-node speed, which the search sets equal to the
  // intra-node one on a single node (search.cc: bwIntra = bwInter).
  const double speed = nvls_graph_gbps(n);
  const double bus = n * std::min(speed * kNvlsEfficiency * (n - 1) / n * 2, speed);
  const double alg = bus * n / (2.0 * (n - 1));
  return kNvlsLatencyUs + static_cast<double>(bytes) / (1000.0 * alg);
}

NcclTuner::Choice NcclTuner::all_reduce(std::uint64_t bytes, int n, bool nvls, Protocol only) const {
  const bool any = only == Protocol::kAuto || only == Protocol::kIdeal;
  Choice c;
  c.protocol = any ? ring_protocol(bytes, n) : only;
  c.time_us = ring_time_us(c.protocol, bytes, n);
  if (nvls && n >= 2 && (any || only == Protocol::kSimple)) {
    const double t = nvls_time_us(bytes, n);
    if (t < c.time_us) c = {CollectiveAlgo::kNvls, Protocol::kSimple, t};
  }
  return c;
}

}  // namespace fabricsim
