// The golden check of collective outputs: bit for bit in member order, and
// within the rounding of any order when the switches fold in arrival order
// (reduction.order=arrival), which must still catch a wrong value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "models/core/collective.hpp"
#include "models/core/config.hpp"

namespace fabricsim {
namespace {

constexpr int kGpus = 8;
constexpr std::uint64_t kCount = 64;  // one 256-B slice of fp32

CollectiveSweep make_sweep(const char* order) {
  const Config c = load_config(
      "", {"workload.kind=collective", "topology.kind=single", "switch.ports=8",
           "collective.algorithm=push", "collective.min_bytes=256", "collective.max_bytes=256",
           std::string("reduction.order=") + order});
  CollectiveSweep s(c, kGpus, kGpus);
  s.begin(0);
  return s;
}

// The sum of the 8 inputs folded in the order `perm` (as an engine folding
// in arrival order would).
std::vector<std::uint8_t> fold_in(const CollectiveSweep& s, const std::vector<int>& perm) {
  std::vector<std::uint8_t> acc(kCount * 4), in(kCount * 4);
  fill_input(s.seed(), 0, perm[0], 0, kCount, DType::kFp32, acc.data());
  for (std::size_t k = 1; k < perm.size(); ++k) {
    fill_input(s.seed(), 0, perm[k], 0, kCount, DType::kFp32, in.data());
    alu_accumulate(RedOp::kSum, DType::kFp32, acc.data(), in.data(), acc.size());
  }
  return acc;
}

const std::vector<int> kReversed = {7, 6, 5, 4, 3, 2, 1, 0};

TEST(CollectiveCheck, MemberOrderIsExactAndAnotherOrderIsNot) {
  CollectiveSweep s = make_sweep("member");
  std::vector<int> member(kGpus);
  std::iota(member.begin(), member.end(), 0);
  s.check(0, kCount, fold_in(s, member).data(), 2, 0);
  EXPECT_EQ(s.current().wrong, 0u);
  s.check(0, kCount, fold_in(s, kReversed).data(), 2, 0);
  EXPECT_GT(s.current().wrong, 0u);  // the inputs are built so that order shows
  EXPECT_FALSE(s.tolerant());
}

TEST(CollectiveCheck, ArrivalOrderAcceptsRoundingButNotErrors) {
  CollectiveSweep s = make_sweep("arrival");
  ASSERT_TRUE(s.tolerant());
  std::vector<std::uint8_t> other = fold_in(s, kReversed);
  s.check(0, kCount, other.data(), 2, 0);
  EXPECT_EQ(s.current().wrong, 0u);
  EXPECT_GT(s.current().rounded, 0u);
  // One element off by a part in a thousand: far beyond 2 (n-1) u sum|x|.
  float v = 0;
  std::memcpy(&v, other.data(), 4);
  v *= 1.001f;
  std::memcpy(other.data(), &v, 4);
  s.check(0, kCount, other.data(), 1, 0);
  EXPECT_EQ(s.current().wrong, 1u);
}

// The call barrier: only the last GPU of a call ends it; that starts the
// next call on every GPU (the start_call hook) the next call's gap later;
// the last call's end reports the sweep done and starts nothing.
TEST(CollectiveSweepBarrier, LastGpuStartsTheNextCallAfterItsGap) {
  const Config c = load_config(
      "", {"workload.kind=collective", "topology.kind=single", "switch.ports=4",
           "collective.min_bytes=256", "collective.max_bytes=512", "collective.gap_ns=100"});
  CollectiveSweep s(c, 4, 4);
  ASSERT_EQ(s.calls().size(), 2u);
  std::vector<Ps> starts;
  int ended = 0;
  s.set_start_call([&](Ps t) { starts.push_back(t); });
  s.set_on_call_end([&](CollectiveCall&) { ++ended; });
  s.start(0);
  ASSERT_EQ(starts, std::vector<Ps>{0});
  for (int g : {2, 0, 3}) EXPECT_FALSE(s.gpu_finished(g, 1000 + g));
  EXPECT_EQ(starts.size(), 1u);
  EXPECT_EQ(ended, 0);
  EXPECT_FALSE(s.gpu_finished(1, 5000));  // the last: the next call starts
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(s.calls()[0].end, 5000);
  EXPECT_EQ(s.calls()[0].gpu_done, (std::vector<Ps>{1000, 5000, 1002, 1003}));
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[1], 5000 + ns_to_ps(100));
  EXPECT_EQ(s.current_index(), 1u);
  EXPECT_EQ(s.current().start, starts[1]);
  for (int g : {0, 1, 2}) EXPECT_FALSE(s.gpu_finished(g, 9000));
  EXPECT_TRUE(s.gpu_finished(3, 9000));  // the sweep's end
  EXPECT_TRUE(s.done());
  EXPECT_EQ(starts.size(), 2u);
  EXPECT_EQ(ended, 2);
}

}  // namespace
}  // namespace fabricsim
