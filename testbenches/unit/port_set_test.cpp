#include "models/core/port_set.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "models/core/bit_matrix.hpp"
#include "models/core/ring.hpp"
#include "models/core/rng.hpp"

namespace fabricsim {
namespace {

TEST(PortSet, AgainstAVectorOfBools) {
  Rng rng(3);
  for (int n : {1, 5, 63, 64, 65, 130, 1024}) {
    PortSet s(n);
    std::vector<bool> ref(static_cast<size_t>(n), false);
    for (int k = 0; k < 4 * n; ++k) {
      const int i = static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
      if (rng.bernoulli(0.6)) {
        s.set(i);
        ref[static_cast<size_t>(i)] = true;
      } else {
        s.reset(i);
        ref[static_cast<size_t>(i)] = false;
      }
    }
    int count = 0;
    std::vector<int> members;
    for (int i = 0; i < n; ++i)
      if (ref[static_cast<size_t>(i)]) {
        ++count;
        members.push_back(i);
      }
    EXPECT_EQ(s.count(), count);
    std::vector<int> seen;
    s.for_each([&](int i) { seen.push_back(i); });
    EXPECT_EQ(seen, members);
    for (int k = 0; k < count; ++k) EXPECT_EQ(s.nth(k), members[static_cast<size_t>(k)]);
    EXPECT_EQ(s.nth(count), PortSet::kNone);
    for (int start = 0; start < n; ++start) {
      int want = PortSet::kNone;
      for (int d = 0; d < n; ++d)
        if (ref[static_cast<size_t>((start + d) % n)]) {
          want = (start + d) % n;
          break;
        }
      EXPECT_EQ(s.find_cyclic(start), want) << n << " " << start;
    }
  }
}

TEST(PortSet, FillTrimsBeyondSize) {
  PortSet s(70);
  s.fill();
  EXPECT_EQ(s.count(), 70);
  PortSet t(70);
  t.set(3);
  EXPECT_FALSE(t.has_bits_outside(s));
  EXPECT_TRUE(s.has_bits_outside(t));
}

TEST(Ring, FifoOrderAcrossGrowth) {
  Ring<int> r;
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int k = 0; k < round; ++k) r.push_back(next_in++);
    for (int k = 0; k < round / 2; ++k) {
      ASSERT_EQ(r.front(), next_out++);
      r.pop_front();
    }
  }
  while (!r.empty()) {
    ASSERT_EQ(r.front(), next_out++);
    r.pop_front();
  }
  EXPECT_EQ(next_in, next_out);
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

TEST(BitMatrix, TransposeMatchesBitByBit) {
  Rng rng(11);
  for (auto [nr, nc] : {std::pair{1, 1}, {64, 64}, {3, 130}, {130, 3}, {100, 200}, {256, 256}}) {
    std::vector<PortSet> rows(static_cast<size_t>(nr), PortSet(nc));
    std::vector<PortSet> cols(static_cast<size_t>(nc), PortSet(nr));
    for (auto& c : cols) c.fill();  // stale content must be overwritten
    for (int r = 0; r < nr; ++r)
      for (int c = 0; c < nc; ++c)
        if (rng.bernoulli(0.4)) rows[static_cast<size_t>(r)].set(c);
    transpose(rows, cols);
    for (int r = 0; r < nr; ++r)
      for (int c = 0; c < nc; ++c)
        ASSERT_EQ(cols[static_cast<size_t>(c)].test(r), rows[static_cast<size_t>(r)].test(c))
            << nr << "x" << nc << " at " << r << "," << c;
  }
}

}  // namespace
}  // namespace fabricsim
