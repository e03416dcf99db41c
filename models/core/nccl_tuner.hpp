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
// NVLS (Simple only), one node: latency 25 us (the NVLink hardware latency
// alone, no base); bus bandwidth = channels x min(speed x nvlsEfficiency
// 0.85 x (channels-1)/channels x 2 ("all-reduce pipelines two
// operations"), the graph's inter-node speed, equal to speed on one node), with
// the NVLS graph's channels = n (one head per GPU, src/graph/search.cc) and
// its speed the first of sm90SpeedArrayIntra {60, 50, 40, 30, 24, 20, 15,
// 12, 11, 6, 3} GB/s at which speed <= the GPU's NVLink bandwidth and
// n x speed <= that bandwidth x n/(n-1) (search.cc: NVLS graphs may exceed
// the total by n/(n-1)); the GPU's NVLink bandwidth is 18 links x
// SM90_NVLINK_BW 20.6 = 370.8 GB/s (src/graph/topo.h). That the search
// keeps the first speed is our reading (inferred): it only places heads.
#pragma once
#include <cstdint>

#include "models/core/config_enums.hpp"

namespace fabricsim {

struct NcclTuner {
  double graph_gbps = 360;  // the ring graph's bandwidth (gpu.tuner_graph_gbps)
  int channels = 24;        // collective.channels
  double nvlink_gbps = 370.8;  // a GPU's NVLink bandwidth as NCCL's topology sees it (gpu.tuner_nvlink_gbps)
  // Predicted time (us) of a ring all-reduce of `bytes` per GPU on n GPUs.
  double ring_time_us(Protocol p, std::uint64_t bytes, int n) const;
  // The protocol NCCL would pick: the least predicted time (Simple, LL,
  // LL128 in NCCL's order on a tie).
  Protocol ring_protocol(std::uint64_t bytes, int n) const;

  // The NVLS graph's per-channel speed on n GPUs (GB/s).
  double nvls_graph_gbps(int n) const;
  // Predicted time (us) of an NVLS all-reduce (Simple) of `bytes` on n GPUs.
  double nvls_time_us(std::uint64_t bytes, int n) const;

  // NCCL's choice for an all-reduce: the least predicted time over the ring
  // with each protocol and, when `nvls` (the fabric has NVLink SHARP), NVLS
  // with Simple; ring before NVLS and Simple before LL and LL128 on a tie.
  // `only` other than auto is the one protocol allowed (NCCL_PROTO).
  struct Choice {
    CollectiveAlgo algorithm = CollectiveAlgo::kRing;
    Protocol protocol = Protocol::kSimple;
    double time_us = 0;
  };
  Choice all_reduce(std::uint64_t bytes, int n, bool nvls, Protocol only = Protocol::kAuto) const;
};

}  // namespace fabricsim
