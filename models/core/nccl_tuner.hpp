// NCCL's tuning model for the ring all-reduce on one node (plain logic):
// the time it predicts per protocol, and the protocol it picks, the
// cheapest (collective.protocol=auto; docs/models/gpu.md).
//
// From NVIDIA/nccl v2.29.7 src/graph/tuning.cc (../shared/notes/NCCL.md
// section 3): time (us) = latency + bytes / (1000 x algorithm bandwidth in
// GB/s), with
//   latency = base + 2(n-1) x the NVLink per-step latency,
//             base LL 6.6, LL128 14.0, Simple 8.4 us; per step 0.6, 1.9, 3.4 us;
//   bus bandwidth = the ring graph's (channels x per-channel bandwidth),
//             LL: min(141 GB/s, 0.5 x it) (Hopper's llMaxBw, one node),
//             LL128: min(0.92 x it, channels x 36.7 GB/s),
//             Simple: it;
//   algorithm bandwidth = bus bandwidth x n / 2(n-1).
#pragma once
#include <cstdint>

#include "models/core/config_enums.hpp"

namespace fabricsim {

struct NcclTuner {
  double graph_gbps = 360;  // the ring graph's bandwidth (gpu.tuner_graph_gbps)
  int channels = 24;        // collective.channels
  // Predicted time (us) of a ring all-reduce of `bytes` per GPU on n GPUs.
  double ring_time_us(Protocol p, std::uint64_t bytes, int n) const;
  // The protocol NCCL would pick: the least predicted time (Simple, LL,
  // LL128 in NCCL's order on a tie).
  Protocol ring_protocol(std::uint64_t bytes, int n) const;
};

}  // namespace fabricsim
