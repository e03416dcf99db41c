// KeySet against std::set: random inserts and erases with many collisions
// (keys that share their slot), growth, and erasing from wrapped probe runs.
#include "models/core/key_set.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "models/core/rng.hpp"

namespace fabricsim {
namespace {

TEST(KeySet, MatchesStdSetUnderRandomInsertsAndErases) {
  for (std::uint64_t universe : {40u, 1000u, 1000000u}) {
    Rng rng(99, universe);
    KeySet s(4);  // small: forces growth
    std::set<std::uint64_t> ref;
    for (int step = 0; step < 200000; ++step) {
      // Reduction-table-like keys: group in the top bits, address below.
      const std::uint64_t k = (rng.below(3) << 48) | (rng.below(universe) * 256);
      if (rng.bernoulli(0.55)) {
        ASSERT_EQ(s.insert(k), ref.insert(k).second) << step;
      } else {
        ASSERT_EQ(s.erase(k), ref.erase(k) == 1) << step;
      }
      ASSERT_EQ(s.size(), ref.size());
      const std::uint64_t q = (rng.below(3) << 48) | (rng.below(universe) * 256);
      ASSERT_EQ(s.contains(q), ref.count(q) == 1) << step;
    }
    for (std::uint64_t k : ref) EXPECT_TRUE(s.contains(k));
  }
}

TEST(KeySet, EmptiesCompletelyAndRejectsTheReservedKey) {
  KeySet s;
  for (std::uint64_t k = 0; k < 5000; ++k) ASSERT_TRUE(s.insert(k * 7919));
  EXPECT_FALSE(s.insert(7919));
  for (std::uint64_t k = 0; k < 5000; ++k) ASSERT_TRUE(s.erase(k * 7919));
  EXPECT_EQ(s.size(), 0u);
  for (std::uint64_t k = 0; k < 5000; ++k) ASSERT_FALSE(s.contains(k * 7919));
  EXPECT_FALSE(s.erase(1));
  EXPECT_THROW(s.insert(~std::uint64_t{0}), std::invalid_argument);
}

}  // namespace
}  // namespace fabricsim
