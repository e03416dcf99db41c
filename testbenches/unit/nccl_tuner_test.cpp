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
// GB/s per head up to 7 GPUs and 50 on 8 (60 x 8 > 370.8 x 8/7), so on 8 x
// H100 its algorithm bandwidth is 8 x 50 x 0.85 x 7/8 x 2 x 8/14 = 340 GB/s
// after 25 us.
TEST(NcclTuner, NvlsTimeOnH100) {
  const NcclTuner t{360, 24};
  EXPECT_EQ(t.nvls_graph_gbps(2), 60);
  EXPECT_EQ(t.nvls_graph_gbps(7), 60);
  EXPECT_EQ(t.nvls_graph_gbps(8), 50);
  EXPECT_NEAR(t.nvls_time_us(0, 8), 25.0, 1e-12);
  EXPECT_NEAR(t.nvls_time_us(340000000, 8) - 25.0, 1000.0, 1e-6);
  // n = 2: 2 x 60 x 0.85 x 1/2 x 2 = 102 GB/s of bus and of algorithm bandwidth.
  EXPECT_NEAR(t.nvls_time_us(102000000, 2) - 25.0, 1000.0, 1e-6);
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
