#include "models/core/traffic_pattern.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace fabricsim {
namespace {

TrafficConfig with(Pattern p, bool allow_self = true) {
  TrafficConfig t;
  t.pattern = p;
  t.allow_self = allow_self;
  return t;
}

TEST(TrafficPattern, UniformCoversAllPortsEvenly) {
  const int n = 16;
  TrafficPattern tp(with(Pattern::kUniform), n, 1);
  Rng rng(5);
  std::vector<int> hits(n, 0);
  for (int k = 0; k < 160000; ++k) ++hits[static_cast<size_t>(tp.destination(3, rng))];
  for (int h : hits) EXPECT_NEAR(h, 10000, 500);
}

TEST(TrafficPattern, UniformWithoutSelfNeverPicksTheSender) {
  const int n = 8;
  TrafficPattern tp(with(Pattern::kUniform, false), n, 1);
  Rng rng(5);
  std::vector<int> hits(n, 0);
  for (int k = 0; k < 70000; ++k) ++hits[static_cast<size_t>(tp.destination(2, rng))];
  EXPECT_EQ(hits[2], 0);
  for (int d = 0; d < n; ++d) {
    if (d != 2) {
      EXPECT_NEAR(hits[static_cast<size_t>(d)], 10000, 500);
    }
  }
}

TEST(TrafficPattern, PermutationIsABijectionFixedBySeed) {
  for (bool self : {true, false}) {
    TrafficPattern a(with(Pattern::kPermutation, self), 64, 9);
    TrafficPattern b(with(Pattern::kPermutation, self), 64, 9);
    TrafficPattern c(with(Pattern::kPermutation, self), 64, 10);
    EXPECT_EQ(a.permutation(), b.permutation());
    EXPECT_NE(a.permutation(), c.permutation());
    std::set<int> dst(a.permutation().begin(), a.permutation().end());
    EXPECT_EQ(dst.size(), 64u);
    for (int i = 0; i < 64 && !self; ++i) {
      EXPECT_NE(a.permutation()[static_cast<size_t>(i)], i);
    }
  }
}

TEST(TrafficPattern, HotspotShare) {
  TrafficConfig t = with(Pattern::kHotspot);
  t.hotspot_endpoint = 5;
  t.hotspot_fraction = 0.3;
  TrafficPattern tp(t, 10, 1);
  Rng rng(1);
  int hot = 0;
  const int draws = 100000;
  for (int k = 0; k < draws; ++k) hot += tp.destination(0, rng) == 5;
  // 0.3 directly + 0.7 * 1/10 through the uniform part.
  EXPECT_NEAR(hot / static_cast<double>(draws), 0.37, 0.01);
}

TEST(TrafficPattern, DeterministicPatterns) {
  Rng rng(1);
  TrafficPattern tr(with(Pattern::kTranspose), 16, 1);  // 4 x 4
  EXPECT_EQ(tr.destination(1, rng), 4);                   // (0,1) -> (1,0)
  EXPECT_EQ(tr.destination(6, rng), 9);                   // (1,2) -> (2,1)
  TrafficPattern br(with(Pattern::kBitReverse), 16, 1);
  EXPECT_EQ(br.destination(1, rng), 8);
  EXPECT_EQ(br.destination(3, rng), 12);
  TrafficPattern bc(with(Pattern::kBitComplement), 16, 1);
  EXPECT_EQ(bc.destination(1, rng), 14);
  TrafficPattern sh(with(Pattern::kShuffle), 16, 1);
  EXPECT_EQ(sh.destination(9, rng), 3);  // 1001 -> 0011
  TrafficPattern nb(with(Pattern::kNeighbor), 16, 1);
  EXPECT_EQ(nb.destination(15, rng), 0);
  TrafficPattern to(with(Pattern::kTornado), 16, 1);
  EXPECT_EQ(to.destination(0, rng), 7);
  EXPECT_EQ(to.destination(10, rng), 1);
}

}  // namespace
}  // namespace fabricsim
