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

// The word-wise operations take three paths (one word, inline words,
// heap words): each against a bit-by-bit reference at sizes on either side
// of the boundaries.
TEST(PortSet, WordOperationsAgainstBitByBit) {
  Rng rng(5);
  for (int n : {1, 40, 64, 65, 128, 200, 256, 257, 1024}) {
    for (int trial = 0; trial < 20; ++trial) {
      const double density = trial % 4 == 0 ? 0.02 : 0.5;  // sparse sets test any()
      PortSet a(n), b(n), c(n);
      for (int i = 0; i < n; ++i) {
        if (rng.bernoulli(density)) a.set(i);
        if (rng.bernoulli(density)) b.set(i);
        if (rng.bernoulli(0.5)) c.set(i);
      }
      auto bits = [&](const PortSet& s) {
        std::vector<bool> v(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = s.test(i);
        return v;
      };
      const std::vector<bool> ra = bits(a), rb = bits(b), rc = bits(c);
      auto expect = [&](const PortSet& got, auto f, const char* what) {
        for (int i = 0; i < n; ++i) {
          const auto k = static_cast<size_t>(i);
          ASSERT_EQ(got.test(i), f(ra[k], rb[k], rc[k])) << what << " n=" << n << " i=" << i;
        }
        std::vector<int> seen;
        got.for_each([&](int i) { seen.push_back(i); });
        ASSERT_EQ(static_cast<int>(seen.size()), got.count()) << what;
        ASSERT_EQ(got.any(), got.count() > 0) << what;
      };
      PortSet x = a;
      x &= b;
      expect(
          x, [](bool p, bool q, bool) { return p && q; }, "&=");
      x = a;
      x |= b;
      expect(
          x, [](bool p, bool q, bool) { return p || q; }, "|=");
      x = a;
      x.subtract(b);
      expect(
          x, [](bool p, bool q, bool) { return p && !q; }, "subtract");
      x = c;
      x.assign_and(a, b);
      expect(
          x, [](bool p, bool q, bool) { return p && q; }, "assign_and");
      x = c;
      x.or_and(a, b);
      expect(
          x, [](bool p, bool q, bool r) { return r || (p && q); }, "or_and");
      x = c;
      x.assign_andnot(a, b);
      expect(
          x, [](bool p, bool q, bool) { return p && !q; }, "assign_andnot");
      bool meet = false, outside = false;
      for (int i = 0; i < n; ++i) {
        const auto k = static_cast<size_t>(i);
        meet = meet || (ra[k] && rb[k]);
        outside = outside || (ra[k] && !rb[k]);
      }
      EXPECT_EQ(a.intersects(b), meet) << n;
      EXPECT_EQ(a.has_bits_outside(b), outside) << n;
      for (int from = 0; from < n; from += 7) {
        int want = PortSet::kNone;
        for (int i = from; i < n && want == PortSet::kNone; ++i)
          if (ra[static_cast<size_t>(i)]) want = i;
        EXPECT_EQ(a.find_next(from), want) << n << " " << from;
      }
    }
    PortSet e(n);
    EXPECT_FALSE(e.any());
    e.fill();
    EXPECT_EQ(e.count(), n);
    e.clear();
    EXPECT_FALSE(e.any());
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

// Sets of one word, inline words and heap words copied, assigned and moved
// into each other: every copy holds its source's bits and owns its words.
TEST(PortSet, CopiesAndMovesAcrossStorage) {
  auto filled = [](int n, int seed) {
    PortSet s(n);
    for (int i = seed % 7; i < n; i += 3 + seed % 5) s.set(i);
    return s;
  };
  auto same = [](const PortSet& a, const PortSet& b) {
    if (a.size() != b.size()) return false;
    for (int i = 0; i < a.size(); ++i)
      if (a.test(i) != b.test(i)) return false;
    return true;
  };
  const std::vector<int> sizes = {40, 100, 256, 300, 700};  // 1, 2, 4, 5 and 11 words
  for (int a : sizes) {
    for (int b : sizes) {
      const PortSet src = filled(a, a + b);
      PortSet copy(src);
      EXPECT_TRUE(same(copy, src));
      copy.set(a - 1);
      copy.reset(0);
      EXPECT_TRUE(same(src, filled(a, a + b)));  // the copy owns its words
      PortSet dst = filled(b, 1);
      dst = src;  // assignment across storage kinds
      EXPECT_TRUE(same(dst, src));
      dst.fill();
      EXPECT_TRUE(same(src, filled(a, a + b)));
      PortSet moved(std::move(copy));
      copy = src;  // a moved-from set can be assigned again
      EXPECT_TRUE(same(copy, src));
      PortSet target = filled(b, 2);
      target = std::move(moved);
      PortSet expect(src);  // what `copy` held when it was moved
      expect.set(a - 1);
      expect.reset(0);
      EXPECT_TRUE(same(target, expect));
      const PortSet& self = target;
      target = self;  // self-assignment keeps the set
      EXPECT_TRUE(same(target, expect));
    }
  }
  std::vector<PortSet> grown;  // vector growth moves the sets
  for (int k = 0; k < 40; ++k)
    // NOLINTNEXTLINE(performance-inefficient-vector-operation): growth is what is tested
    grown.push_back(filled(sizes[static_cast<size_t>(k) % sizes.size()], k));
  for (int k = 0; k < 40; ++k)
    EXPECT_TRUE(same(grown[static_cast<size_t>(k)],
                     filled(sizes[static_cast<size_t>(k) % sizes.size()], k)));
}

TEST(Ring, CopiesAndMovesKeepTheOrder) {
  Ring<int> r;
  for (int k = 0; k < 40; ++k) r.push_back(k);
  for (int k = 0; k < 25; ++k) r.pop_front();  // head not at the buffer's start
  for (int k = 40; k < 50; ++k) r.push_back(k);
  Ring<int> c(r);
  Ring<int> a;
  a.push_back(-1);
  a = r;
  Ring<int> m(std::move(c));
  for (Ring<int>* x : {&r, &a, &m}) {
    ASSERT_EQ(x->size(), 25u);
    for (int k = 0; k < 25; ++k) EXPECT_EQ((*x)[static_cast<size_t>(k)], 25 + k);
  }
  c = std::move(m);  // a moved-from ring is usable again
  c.push_back(50);
  EXPECT_EQ(c.back(), 50);
  EXPECT_EQ(c.front(), 25);
  EXPECT_EQ(r.size(), 25u);  // the copies did not share storage
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
