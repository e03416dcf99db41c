// NCCL's tuning model for the ring (models/core/nccl_tuner.hpp) against the
// worked example of ../shared/notes/NCCL.md section 3 (8 x H100, 2.29
// constants, ring graph 12 x 30 GB/s): Simple 56.0 us + bytes at 205.7 GB/s,
// LL128 40.6 us at 189.3, LL 15.0 us at 80.6; LL up to about 3.6 MB, LL128
// up to about 36 MB, Simple above.
#include "models/core/nccl_tuner.hpp"

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

TEST(NcclTuner, RingTimesAndChoiceOnEightH100) {
  const NcclTuner t{360, 24};
  EXPECT_NEAR(t.ring_time_us(Protocol::kSimple, 0, 8), 56.0, 1e-9);
  EXPECT_NEAR(t.ring_time_us(Protocol::kLl128, 0, 8), 40.6, 1e-9);
  EXPECT_NEAR(t.ring_time_us(Protocol::kLl, 0, 8), 15.0, 1e-9);
  // 1 GB at the algorithm bandwidth: 1e9 / (1000 x GB/s) us.
  EXPECT_NEAR(t.ring_time_us(Protocol::kSimple, 1000000000, 8) - 56.0, 1e6 / (360.0 * 8 / 14),
              1e-6);
  EXPECT_EQ(t.ring_protocol(1 << 20, 8), Protocol::kLl);
  EXPECT_EQ(t.ring_protocol(3500000, 8), Protocol::kLl);
  EXPECT_EQ(t.ring_protocol(3700000, 8), Protocol::kLl128);
  EXPECT_EQ(t.ring_protocol(36000000, 8), Protocol::kLl128);
  EXPECT_EQ(t.ring_protocol(37500000, 8), Protocol::kSimple);
  EXPECT_EQ(t.ring_protocol(std::uint64_t{8} << 30, 8), Protocol::kSimple);
}

// NVLS on one node (tuning.cc, search.cc, topo.h): the graph's speed is 60
// GB/s per head up to 7 GPUs and 50 on 8 (60 x 8 > 370.8 x 8/7). Per head,
// speed x 0.85 x (n-1)/n x 2 is capped at the graph's inter-node speed,
// which is the same speed on one node; so from 3 GPUs up the bus bandwidth
// is n x speed: 400 GB/s on 8 x H100, an algorithm bandwidth of 400 x 8/14
// after 25 us.
TEST(NcclTuner, NvlsTimeOnH100) {
  const NcclTuner t{360, 24};
  EXPECT_EQ(t.nvls_graph_gbps(2), 60);
  EXPECT_EQ(t.nvls_graph_gbps(7), 60);
  EXPECT_EQ(t.nvls_graph_gbps(8), 50);
  EXPECT_NEAR(t.nvls_time_us(0, 8), 25.0, 1e-12);
  EXPECT_NEAR(t.nvls_time_us(400000000, 8) - 25.0, 1000.0 * 14 / 8, 1e-6);
  // n = 2: 2 x 60 x 0.85 x 1/2 x 2 = 102 GB/s (below the cap of 2 x 60), of
  // bus and of algorithm bandwidth.
  EXPECT_NEAR(t.nvls_time_us(102000000, 2) - 25.0, 1000.0, 1e-6);
}

// The tuning tables NCCL 2.29.2 printed (NCCL_DEBUG_SUBSYS=TUNING, AllReduce
// row: latency us / algorithm bandwidth GB/s) on the machine the measured
// logs come from, 2, 4 and 6 GPUs of an HGX H100: waynehacking8/
// nccl-collectives-bench@ec97f06, results/scaling_attributed/g{2,4,6}_auto.log
// (traces/nccl-tests/*-attrib-* are those runs' tables).
TEST(NcclTuner, ReproducesTheTablesNcclPrintedOnTheMeasuredMachine) {
  struct Row {
    int n;
    double ll_lat, ll_bw, ll128_lat, ll128_bw, simple_lat, simple_bw, nvls_bw;
  };
  const Row rows[] = {
      {2, 7.8, 141.0, 17.8, 331.2, 15.2, 360.0, 102.0},
      {4, 10.2, 94.0, 25.4, 220.8, 28.8, 240.0, 160.0},
      {6, 12.6, 84.6, 33.0, 198.7, 42.4, 216.0, 216.0},
  };
  const NcclTuner t{360, 24};
  const std::uint64_t gb = 1000000000;
  // Algorithm bandwidth (GB/s) from the time of 1 GB over the latency.
  const auto bw = [gb](double t0, double t1) { return 1e6 / (t1 - t0) * (gb / 1e9); };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.n);
    const struct {
      Protocol p;
      double lat, alg;
    } ring[] = {{Protocol::kLl, r.ll_lat, r.ll_bw},
                {Protocol::kLl128, r.ll128_lat, r.ll128_bw},
                {Protocol::kSimple, r.simple_lat, r.simple_bw}};
    for (const auto& e : ring) {
      const double t0 = t.ring_time_us(e.p, 0, r.n);
      EXPECT_NEAR(t0, e.lat, 0.05);
      EXPECT_NEAR(bw(t0, t.ring_time_us(e.p, gb, r.n)), e.alg, 0.05);
    }
    const double n0 = t.nvls_time_us(0, r.n);
    EXPECT_NEAR(n0, 25.0, 1e-12);
    EXPECT_NEAR(bw(n0, t.nvls_time_us(gb, r.n)), r.nvls_bw, 0.05);
  }
}

// NCCL's algorithm choice for an all-reduce, against what the measured 2, 4
// and 6 x H100 logs attribute to it at large sizes (traces/nccl-tests: Ring
// at 2 and 4 GPUs, NVLS at 6) and NCCL.md's 8-GPU reading (NVLS above
// about 1 MB).
TEST(NcclTuner, AllReduceAlgorithmChoice) {
  const NcclTuner t{360, 24};
  const std::uint64_t big = std::uint64_t{256} << 20;
  EXPECT_EQ(t.all_reduce(big, 2, true).algorithm, CollectiveAlgo::kRing);
  EXPECT_EQ(t.all_reduce(big, 4, true).algorithm, CollectiveAlgo::kRing);
  EXPECT_EQ(t.all_reduce(big, 6, true).algorithm, CollectiveAlgo::kNvls);
  EXPECT_EQ(t.all_reduce(big, 6, true).protocol, Protocol::kSimple);
  EXPECT_EQ(t.all_reduce(big, 8, true).algorithm, CollectiveAlgo::kNvls);
  EXPECT_EQ(t.all_reduce(500000, 8, true).algorithm, CollectiveAlgo::kRing);
  EXPECT_EQ(t.all_reduce(500000, 8, true).protocol, Protocol::kLl);
  EXPECT_EQ(t.all_reduce(2000000, 8, true).algorithm, CollectiveAlgo::kNvls);
  // One protocol allowed (NCCL_PROTO): NVLS runs Simple only.
  EXPECT_EQ(t.all_reduce(big, 8, true, Protocol::kLl).algorithm, CollectiveAlgo::kRing);
  EXPECT_EQ(t.all_reduce(big, 8, true, Protocol::kLl).protocol, Protocol::kLl);
  EXPECT_EQ(t.all_reduce(big, 8, true, Protocol::kSimple).algorithm, CollectiveAlgo::kNvls);
  EXPECT_EQ(t.all_reduce(500000, 8, true, Protocol::kLl128).protocol, Protocol::kLl128);
  // Without NVLink SHARP, the ring's own choice.
  const NcclTuner::Choice r = t.all_reduce(big, 8, false);
  EXPECT_EQ(r.algorithm, CollectiveAlgo::kRing);
  EXPECT_EQ(r.protocol, t.ring_protocol(big, 8));
  EXPECT_DOUBLE_EQ(r.time_us, t.ring_time_us(r.protocol, big, 8));
}

}  // namespace
}  // namespace fabricsim
