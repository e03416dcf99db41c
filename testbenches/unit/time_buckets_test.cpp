// TimeBuckets: values come out by time, and in insertion order within a
// time, however the times were queued (the scheduler's determinism rests
// on it), with buckets reused after they are taken.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/time_buckets.hpp"

namespace fabricsim {
namespace {

// Takes every value due by `until`, in order.
std::vector<int> take_until(TimeBuckets<int>& q, Ps until, std::vector<Ps>* times = nullptr) {
  std::vector<int> out;
  while (!q.empty() && q.next_time() <= until) {
    for (int v : q.front().items) {
      out.push_back(v);
      if (times) times->push_back(q.front().t);
    }
    q.pop_front();
  }
  return out;
}

TEST(TimeBuckets, OrderIsTimeThenInsertion) {
  TimeBuckets<int> q;
  q.add(30, 0);
  q.add(10, 1);
  q.add(20, 2);
  q.add(10, 3);  // same time as 1: after it
  q.add(5, 4);   // before everything queued
  q.add(30, 5);
  q.add(25, 6);  // between two queued times
  std::vector<Ps> times;
  EXPECT_EQ(take_until(q, 100, &times), (std::vector<int>{4, 1, 3, 2, 6, 0, 5}));
  EXPECT_EQ(times, (std::vector<Ps>{5, 10, 10, 20, 25, 30, 30}));
  EXPECT_TRUE(q.empty());
}

// Against a reference (stable sort by time) under a scheduler's pattern:
// times at or after the last one taken, some far ahead (link arrivals), some
// one step ahead (allocation ticks), many repeated, taken a time at a time.
// `far` sets how far ahead the far ones go: beyond the calendar's span they
// pass through its overflow.
void check_against_stable_sort(TimeBuckets<int>& q, Ps far, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<Ps, int>> ref;  // (time, value) in insertion order
  Ps now = 0;
  int next_value = 0;
  std::size_t checked = 0;
  for (int round = 0; round < 20000; ++round) {
    const int adds = static_cast<int>(rng() % 4);
    for (int k = 0; k < adds; ++k) {
      const std::uint64_t kind = rng() % 6;
      const Ps dt = kind == 0 ? far + rng() % 8 : kind < 3 ? 100 + rng() % 8 : rng() % 5;
      q.add(now + dt, next_value);
      ref.emplace_back(now + dt, next_value++);
    }
    if (q.empty()) {
      now += 1 + rng() % 3 * far;  // sometimes a long idle gap
      continue;
    }
    now = q.next_time();
    std::vector<Ps> times;
    const std::vector<int> got = take_until(q, now, &times);
    // The reference: values due by now, stable by time.
    std::stable_sort(ref.begin(), ref.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<int> want;
    std::size_t n = 0;
    while (n < ref.size() && ref[n].first <= now) want.push_back(ref[n++].second);
    ref.erase(ref.begin(), ref.begin() + static_cast<std::ptrdiff_t>(n));
    ASSERT_EQ(got, want) << "round " << round;
    for (Ps t : times) ASSERT_EQ(t, now);
    checked += got.size();
  }
  EXPECT_GT(checked, 20000u);
}

TEST(TimeBuckets, MatchesAStableSortUnderRandomUse) {
  TimeBuckets<int> q;  // default span (262 ns): everything in the ring
  check_against_stable_sort(q, 1000, 7);
}

TEST(TimeBuckets, MatchesAStableSortThroughTheOverflow) {
  // Spans of 32 ps (slots of 4 ps) and 2 ps (slots of 1 ps): the far times,
  // and at 2 ps the +100 ones too, wait in the overflow and move into the
  // ring as it advances; a slot holds several times at 4 ps.
  TimeBuckets<int> a(2, 3);
  check_against_stable_sort(a, 1000, 11);
  TimeBuckets<int> b(0, 1);
  check_against_stable_sort(b, 1000, 13);
  TimeBuckets<int> c(2, 7);  // 512 ps: the ring wraps around many times
  check_against_stable_sort(c, 100000, 17);
}

TEST(TimeBuckets, AnEarlierTimeOvertakesTheOverflow) {
  TimeBuckets<int> q(2, 3);  // span 32 ps
  q.add(1000, 0);            // overflow, the ring empty
  q.add(1000, 1);            // same bucket
  EXPECT_EQ(q.next_time(), 1000u);
  q.add(10, 2);  // in the ring, earlier
  q.add(500, 3);  // overflow, between
  std::vector<Ps> times;
  EXPECT_EQ(take_until(q, 10, &times), (std::vector<int>{2}));
  q.add(20, 4);  // still in the ring's span
  EXPECT_EQ(take_until(q, 2000, &times), (std::vector<int>{4, 3, 0, 1}));
  EXPECT_EQ(times, (std::vector<Ps>{10, 20, 500, 1000, 1000}));
  EXPECT_TRUE(q.empty());
}

TEST(TimeBuckets, RefusesATimeBeforeTheLastTaken) {
  TimeBuckets<int> q(2, 3);  // slots of 4 ps
  q.add(102, 0);
  take_until(q, 102);
  q.add(102, 1);  // the same time is fine
  EXPECT_THROW(q.add(90, 2), InvariantError);   // an earlier slot
  EXPECT_THROW(q.add(101, 3), InvariantError);  // the same slot (100..103), earlier
  EXPECT_EQ(take_until(q, 200), (std::vector<int>{1}));
}

TEST(TimeBuckets, ForEachVisitsWhatIsQueued) {
  TimeBuckets<int> q;
  for (int v = 0; v < 10; ++v) q.add(static_cast<Ps>(100 - 10 * v), v);
  take_until(q, 40);  // takes 9, 8, 7, 6 (times 10 .. 40)
  int sum = 0, count = 0;
  q.for_each([&](int v) {
    sum += v;
    ++count;
  });
  EXPECT_EQ(count, 6);
  EXPECT_EQ(sum, 0 + 1 + 2 + 3 + 4 + 5);
}

}  // namespace
}  // namespace fabricsim
