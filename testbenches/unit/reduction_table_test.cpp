// The reduction engine's table without a kernel: entries, member and arrival
// fold order, completion, and the invariants it refuses to break.
#include "models/core/reduction_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/reduction_alu.hpp"
#include "models/core/rng.hpp"

namespace fabricsim {
namespace {

// Group 0: endpoints 4, 1, 6 in that order (members 0, 1, 2); group 1: 0..7.
ReductionTable make_table(bool arrival_order, std::size_t capacity = 4) {
  ReductionTable t(capacity, arrival_order);
  t.set_groups({{4, 1, 6}, {0, 1, 2, 3, 4, 5, 6, 7}}, 8);
  return t;
}

using Folds = std::vector<std::pair<PayloadId, PayloadId>>;

TEST(ReductionTable, FoldsInMemberOrderWhateverTheArrivalOrder) {
  ReductionTable t = make_table(false);
  EXPECT_EQ(t.member(0, 4), 0);
  EXPECT_EQ(t.member(0, 1), 1);
  EXPECT_EQ(t.member(0, 6), 2);
  EXPECT_EQ(t.member(0, 0), -1);
  EXPECT_EQ(t.members(0), 3);
  EXPECT_EQ(t.members(1), 8);
  const std::uint64_t k = ReductionTable::key(0, 0x1000);
  ReductionTable::Entry& e = t.open(k);
  e.group = 0;
  Folds folds;
  auto fold = [&](PayloadId acc, PayloadId in) { folds.emplace_back(acc, in); };
  // Member 2 (endpoint 6) first: it waits for members 0 and 1.
  EXPECT_FALSE(t.contribute(e, 6, 12, 100, fold));
  EXPECT_TRUE(folds.empty());
  EXPECT_EQ(e.next_member, 0);
  EXPECT_TRUE(e.started);
  EXPECT_EQ(e.first, 100);
  // Member 0 starts the accumulator without a fold.
  EXPECT_FALSE(t.contribute(e, 4, 10, 200, fold));
  EXPECT_TRUE(folds.empty());
  EXPECT_EQ(e.acc, 10u);
  EXPECT_EQ(e.next_member, 1);
  // Member 1 folds, then the waiting member 2 at once.
  EXPECT_TRUE(t.contribute(e, 1, 11, 300, fold));
  EXPECT_EQ(folds, (Folds{{10, 11}, {10, 12}}));
  EXPECT_EQ(e.next_member, 3);
  EXPECT_EQ(e.first, 100);
}

TEST(ReductionTable, FoldsInArrivalOrderWhenAsked) {
  ReductionTable t = make_table(true);
  ReductionTable::Entry& e = t.open(ReductionTable::key(0, 64));
  e.group = 0;
  Folds folds;
  auto fold = [&](PayloadId acc, PayloadId in) { folds.emplace_back(acc, in); };
  EXPECT_FALSE(t.contribute(e, 6, 12, 5, fold));
  EXPECT_EQ(e.acc, 12u);
  EXPECT_FALSE(t.contribute(e, 1, 11, 6, fold));
  EXPECT_TRUE(t.contribute(e, 4, 10, 7, fold));
  EXPECT_EQ(folds, (Folds{{12, 11}, {12, 10}}));
}

// Floating-point sums depend on their order: member order gives the same
// bits for every arrival order, arrival order need not.
TEST(ReductionTable, MemberOrderMakesFloatingPointSumsReproducible) {
  const std::vector<float> values{1e8f, 1.0f, -1e8f, 0.5f, 3.0f, -2.5f, 7e7f, 1e-3f};
  std::vector<int> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<float> member_results;
  std::vector<float> arrival_results;
  Rng rng(5, 0);
  for (int perm = 0; perm < 24; ++perm) {
    for (std::size_t i = order.size() - 1; i > 0; --i)  // a random arrival order
      std::swap(order[i], order[static_cast<std::size_t>(rng.below(i + 1))]);
    for (bool arrival : {false, true}) {
      ReductionTable t = make_table(arrival);
      std::vector<float> data(values);  // payload id = endpoint = index
      ReductionTable::Entry& e = t.open(ReductionTable::key(1, 0));
      e.group = 1;
      bool done = false;
      for (int src : order)
        done = t.contribute(e, src, static_cast<PayloadId>(src), 0, [&](PayloadId acc, PayloadId in) {
          alu_accumulate(RedOp::kSum, DType::kFp32, reinterpret_cast<std::uint8_t*>(&data[acc]),
                         reinterpret_cast<const std::uint8_t*>(&data[in]), sizeof(float));
        });
      ASSERT_TRUE(done);
      (arrival ? arrival_results : member_results).push_back(data[e.acc]);
    }
  }
  auto bits = [](float f) {
    std::uint32_t b = 0;
    std::memcpy(&b, &f, sizeof b);
    return b;
  };
  for (float r : member_results) EXPECT_EQ(bits(r), bits(member_results.front()));
  // The sum in member order, folded by hand.
  float ref = values[0];
  for (std::size_t i = 1; i < values.size(); ++i) ref += values[i];
  EXPECT_EQ(member_results.front(), ref);
  EXPECT_NE(*std::min_element(arrival_results.begin(), arrival_results.end()),
            *std::max_element(arrival_results.begin(), arrival_results.end()));
}

TEST(ReductionTable, CountsEntriesAgainstItsCapacity) {
  ReductionTable t = make_table(false, 2);
  EXPECT_EQ(t.capacity(), 2u);
  EXPECT_EQ(t.free(), 2u);
  const std::uint64_t a = ReductionTable::key(0, 0), b = ReductionTable::key(1, 0);
  EXPECT_NE(a, b);  // the same address in two groups: two entries
  t.open(a);
  EXPECT_TRUE(t.contains(a));
  EXPECT_FALSE(t.contains(b));
  t.open(b);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.free(), 0u);
  t.close(a);
  EXPECT_FALSE(t.contains(a));
  EXPECT_EQ(t.free(), 1u);
  EXPECT_NO_THROW(t.at(b));
  EXPECT_THROW(t.at(a), InvariantError);
}

TEST(ReductionTable, RefusesNonMembersAndSecondContributions) {
  for (bool arrival : {false, true}) {
    ReductionTable t = make_table(arrival);
    ReductionTable::Entry& e = t.open(ReductionTable::key(0, 0));
    e.group = 0;
    auto fold = [](PayloadId, PayloadId) {};
    EXPECT_THROW(t.contribute(e, 0, 1, 0, fold), InvariantError);  // endpoint 0 not in group 0
    EXPECT_FALSE(t.contribute(e, 1, 1, 0, fold));  // member 1 waits (member order)
    EXPECT_THROW(t.contribute(e, 1, 2, 0, fold), InvariantError);
    EXPECT_FALSE(t.contribute(e, 4, 3, 0, fold));  // member 0: 0 and 1 folded
    EXPECT_THROW(t.contribute(e, 4, 4, 0, fold), InvariantError);
  }
}

}  // namespace
}  // namespace fabricsim
