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

}  // namespace
}  // namespace fabricsim
