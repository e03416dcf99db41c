// Steady-state fast-forward (models/core/fast_forward.hpp): which probes run,
// the extrapolation, the estimated error, the doubling and the fall-back to
// the whole call; and the plans' shortened() keeping a call's structure.
#include "models/core/fast_forward.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "models/core/nccl_nvls.hpp"
#include "models/core/nccl_ring.hpp"
#include "models/core/nccl_symmetric.hpp"

namespace fabricsim {
namespace {

using Values = std::vector<double>;
const std::vector<FfValue> kEndOnly = {FfValue::kEnd};

double x(std::uint64_t k) {
  return static_cast<double>(k);
}

using Lanes = std::vector<OutputProgress>;

// One lane of a probe of k periods, 100 output elements a period: the first
// `early` periods take `fast` each, the rest `slow`; its last output comes
// `late` after that. Returns the progress and its last output's time.
OutputProgress progress(std::uint64_t k, double early, double fast, double slow,
                        double* last = nullptr, double late = 0) {
  OutputProgress p;
  p.start(k);  // 100 samples
  double t = 0;
  for (std::uint64_t e = 0; e < 100 * k; ++e) {
    t += (static_cast<double>(e) / 100 < early ? fast : slow) / 100;
    p.add(1, e + 1 == 100 * k ? t + late : t);
  }
  if (last) *last = t + late;
  return p;
}

// Runs the probes; `f` gives a probe's values and progress from its kept
// periods. Returns the periods each probe kept.
std::vector<std::uint64_t> drive(
    FastForward& ff, const std::function<std::pair<Values, Lanes>(std::uint64_t)>& f) {
  std::vector<std::uint64_t> kept;
  for (int guard = 0; guard < 100 && !ff.done(); ++guard) {
    const std::uint64_t k = ff.periods() - ff.removed();
    kept.push_back(k);
    auto [v, p] = f(k);
    ff.finish_probe(std::move(v), std::move(p));
  }
  return kept;
}

// Each kind of value carried its own way: the end by the period time, a
// GPU's finish at the same distance before it (or where it was, when it
// did not move), a phase by its slope scaled
// to the period time, a count by its slope; a phase no probe had stays none.
TEST(FastForward, SteadyCallIsExtrapolatedExactly) {
  FastForward ff(
      1000, 10, 0.01,
      {FfValue::kEnd, FfValue::kFinish, FfValue::kPhase, FfValue::kPhase, FfValue::kCount,
       FfValue::kFinish});
  const auto kept = drive(ff, [](std::uint64_t k) {
    return std::make_pair(
        Values{500 + 3 * x(k), 490 + 3 * x(k), 100 + 1.5 * x(k), -1, 7 * x(k), 0},
        Lanes{progress(k, 0, 3, 3)});
  });
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{10, 20, 40}));  // two rounds
  ASSERT_TRUE(ff.done());
  EXPECT_FALSE(ff.whole());
  EXPECT_NEAR(ff.values()[0], 500 + 3.0 * 1000, 1e-6);
  EXPECT_NEAR(ff.values()[1], 490 + 3.0 * 1000, 1e-6);
  EXPECT_NEAR(ff.values()[2], 100 + 1.5 * 1000, 1e-6);
  EXPECT_DOUBLE_EQ(ff.values()[3], -1);
  EXPECT_NEAR(ff.values()[4], 7.0 * 1000, 1e-6);
  EXPECT_DOUBLE_EQ(ff.values()[5], 0);  // a GPU without output: at its start
  EXPECT_NEAR(ff.estimated_error(), 0, 1e-9);
  EXPECT_EQ(ff.skipped(), 960u);
}

// The period time comes from the probes' progress, not from their ends'
// difference, which the last GPU's jitter moves: a small jitter (in the
// second round's longer probe) is accepted and counted in the estimate,
// as the ends' disagreement and as their slope's change since the first
// round, not carried over the call.
TEST(FastForward, PeriodTimeFromTheProgressNotTheEnds) {
  FastForward ff(1000, 10, 0.01, kEndOnly);
  drive(ff, [](std::uint64_t k) {
    const double late = k == 40 ? 0.05 : 0;
    return std::make_pair(Values{100 + 2 * x(k) + late},
                          Lanes{progress(k, 0, 2, 2, nullptr, late)});
  });
  ASSERT_FALSE(ff.whole());
  ASSERT_EQ(ff.rounds().size(), 2u);
  const double end = 180.05 + 2.0 * 960;
  EXPECT_NEAR(ff.values()[0], end, 1e-6);
  const double slope = 0.05 / 20;  // the ends' slope, 2.0025, off the period
  EXPECT_NEAR(ff.rounds()[1].spread, slope / (2 + slope), 1e-12);
  EXPECT_NEAR(ff.estimated_error(), 960 * (2 * slope / (2 + slope) + slope) / end, 1e-9);
}

// Ends that disagree with the progress by more than a jitter: the two
// probes' tails are not the same, and the round is not accepted. The next
// round reuses the longer probe; the round after the disturbed probe sees
// the end's slope move since the round before (the spread), so the first
// round clear of it is the one accepted.
TEST(FastForward, TailsThatDisagreeAreRejected) {
  FastForward ff(1000, 10, 0.01, kEndOnly);
  const auto kept = drive(ff, [](std::uint64_t k) {
    return std::make_pair(Values{100 + 2 * x(k) + (k == 20 ? 5 : 0)}, Lanes{progress(k, 0, 2, 2)});
  });
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{10, 20, 40, 80, 160}));
  EXPECT_NEAR(ff.values()[0], 100 + 2.0 * 1000, 1e-6);
  EXPECT_GT(ff.rejected_error(), 0.1);
  ASSERT_EQ(ff.rounds().size(), 4u);
  EXPECT_FALSE(ff.rounds()[1].accepted);
  EXPECT_FALSE(ff.rounds()[2].accepted);
  EXPECT_NEAR(ff.rounds()[2].spread, (2 - 1.75) / 2, 1e-9);  // the end's slope: 35/20, then 80/40
  EXPECT_TRUE(ff.rounds()[3].accepted);
  EXPECT_FALSE(ff.rounds()[3].by_ends);
  EXPECT_NEAR(ff.rounds()[3].spread, 0, 1e-9);
}

// A fabric still filling: its first 8 periods are faster. Two probes of 10
// and 20 periods see their leads differ where the shorter one was filling;
// 20 (again) and 40 agree with each other, but their period moved since
// the first round (the spread), so it takes 40 and 80 to hold.
TEST(FastForward, FillingFabricDoublesTheProbes) {
  FastForward ff(1000, 10, 0.01, kEndOnly);
  const auto kept = drive(ff, [](std::uint64_t k) {
    double last = 0;
    OutputProgress p = progress(k, 8, 1, 2, &last);
    return std::make_pair(Values{last}, Lanes{std::move(p)});
  });
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{10, 20, 40, 80}));
  ASSERT_TRUE(ff.done());
  EXPECT_FALSE(ff.whole());
  EXPECT_NEAR(ff.values()[0], 8 * 1 + 992 * 2, 1e-6);
  EXPECT_GT(ff.rejected_error(), 0.01);
  EXPECT_GT(ff.rounds()[1].spread, 0.01);
  EXPECT_EQ(ff.base(), 40u);
}

// A regime that settles over longer than the first probes (the first 25
// periods twice as fast as the rest, as a start state the fabric forgets
// slowly): the first round, 10 and 20 periods, sees the fast regime alone
// and agrees with itself; accepted then it would be 2x fast. No round is
// accepted before a second is compared with it: the rounds that follow see
// the period move (the spread) until it holds.
TEST(FastForward, APeriodThatMovesBetweenRoundsIsNotCarried) {
  FastForward ff(10000, 10, 0.01, kEndOnly);
  drive(ff, [](std::uint64_t k) {
    double last = 0;
    OutputProgress p = progress(k, 25, 1, 2, &last);
    return std::make_pair(Values{last}, Lanes{std::move(p)});
  });
  ASSERT_TRUE(ff.done());
  EXPECT_FALSE(ff.whole());
  EXPECT_FALSE(ff.rounds()[0].accepted);
  EXPECT_LE(ff.rounds()[0].error, 0.01);     // it agrees with itself
  EXPECT_LT(ff.rounds()[0].spread, 0);       // nothing to compare with
  ASSERT_GE(ff.rounds().size(), 3u);
  EXPECT_GT(ff.rounds()[1].spread, 0.01);
  EXPECT_NEAR(ff.values()[0], 25 + 9975 * 2.0, 1e-6);
  EXPECT_LE(ff.estimated_error(), 0.01);
}

// A lane of k periods, 100 outputs a period, whose output e comes at
// f(e / 100, k).
OutputProgress shaped(std::uint64_t k, const std::function<double(double, double)>& f) {
  OutputProgress p;
  p.start(k);
  for (std::uint64_t e = 0; e < 100 * k; ++e) p.add(1, f(static_cast<double>(e + 1) / 100, x(k)));
  return p;
}

// The ends' slope holds at 2 from round to round, while the progress's
// two parts disagree by a little more than the tolerance within each round
// (its drift). Where the progress also moved between rounds by more than
// that disagreement (each doubling 5% slower: a regime that wanders), the
// move is the period's and the ends alone are not trusted; where it did not
// (the same uneven shape at every length, as push's noisy progress), they
// are.
TEST(FastForward, AProgressThatMovesBeyondItsDriftOverrulesTheEnds) {
  auto slope = [](double k) { return 2 * (1 + 0.05 * std::log2(k / 10)); };
  FastForward moving(10000, 10, 0.01, kEndOnly);
  drive(moving, [&](std::uint64_t k) {
    Lanes l{shaped(k, [&](double e, double kk) { return slope(kk) * e; })};
    return std::make_pair(Values{5 + 2 * x(k)}, std::move(l));
  });
  ASSERT_GE(moving.rounds().size(), 2u);
  for (const auto& r : moving.rounds()) EXPECT_FALSE(r.accepted);
  // The second round: the ends' slope has not moved, the progress's drift
  // is over the tolerance, and the progress moved by more than it.
  EXPECT_NEAR(moving.rounds()[1].end_slope, moving.rounds()[0].end_slope, 1e-12);
  EXPECT_GT(moving.rounds()[1].drift, 0.01);
  EXPECT_GT(moving.rounds()[1].spread, moving.rounds()[1].drift);
  EXPECT_TRUE(moving.whole());

  FastForward noisy(10000, 10, 0.01, kEndOnly);
  drive(noisy, [&](std::uint64_t k) {
    Lanes l{shaped(k, [](double e, double kk) { return 2 * e + 0.6 * kk * std::sin(6.283185307 * e / kk); })};
    return std::make_pair(Values{5 + 2 * x(k)}, std::move(l));
  });
  ASSERT_EQ(noisy.rounds().size(), 2u);
  EXPECT_GT(noisy.rounds()[1].drift, 0.01);
  EXPECT_TRUE(noisy.rounds()[1].by_ends);
  EXPECT_NEAR(noisy.values()[0], 5 + 2.0 * 10000, 1e-6);
}

// Two GPUs' outputs at different rates (lane 1 is 10% slower): the call
// ends when the slower lane's output does, not at the lanes' mean rate.
TEST(FastForward, TheSlowestLaneSetsTheEnd) {
  FastForward ff(1000, 10, 0.01, kEndOnly);
  drive(ff, [](std::uint64_t k) {
    double last = 0;
    Lanes lanes{progress(k, 0, 2, 2), progress(k, 0, 2.2, 2.2, &last)};
    return std::make_pair(Values{last + 1}, std::move(lanes));
  });
  ASSERT_TRUE(ff.done());
  EXPECT_FALSE(ff.whole());
  EXPECT_NEAR(ff.values()[0], 1 + 2.2 * 1000, 1e-6);
  EXPECT_EQ(ff.rounds().back().lane, 1);
  EXPECT_NEAR(ff.rounds().back().t_mean, 2.1, 1e-9);
}

// A tail that grows with the call (the kernels end 0.1 a period later than
// the progress says) behind a progress that is not steady within a round
// (its two parts disagree by more than the tolerance, as push's do): the
// ends' slope holds from one doubling to the next, and the call's end is
// carried at that slope.
TEST(FastForward, AnEndSlopeThatHoldsIsAccepted) {
  FastForward ff(1000, 10, 0.01, kEndOnly);
  const auto kept = drive(ff, [](std::uint64_t k) {
    Lanes l{shaped(k, [](double e, double kk) { return 2 * e + 0.6 * kk * std::sin(6.283185307 * e / kk); })};
    return std::make_pair(Values{2.1 * x(k)}, std::move(l));
  });
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{10, 20, 40}));
  ASSERT_TRUE(ff.done());
  EXPECT_FALSE(ff.whole());
  EXPECT_NEAR(ff.values()[0], 2.1 * 1000, 1e-6);
  ASSERT_EQ(ff.rounds().size(), 2u);
  EXPECT_FALSE(ff.rounds()[0].accepted);
  EXPECT_GT(ff.rounds()[1].drift, 0.01);
  EXPECT_TRUE(ff.rounds()[1].by_ends);
  EXPECT_NEAR(ff.estimated_error(), 0, 1e-9);

  // Behind a steady progress that held from round to round, ends whose
  // slope moved (2, then 1.99: the longer probe ended 0.2 early) are the
  // noisier measure: the call is carried at the progress's period, the
  // ends' disagreement counted in its error.
  FastForward steady(1000, 10, 0.01, kEndOnly);
  drive(steady, [](std::uint64_t k) {
    return std::make_pair(Values{100 + 2 * x(k) - (k == 40 ? 0.2 : 0)}, Lanes{progress(k, 0, 2, 2)});
  });
  ASSERT_EQ(steady.rounds().size(), 2u);
  EXPECT_TRUE(steady.rounds()[1].accepted);
  EXPECT_FALSE(steady.rounds()[1].by_ends);
  EXPECT_NEAR(steady.values()[0], 179.8 + 2.0 * 960, 1e-6);
}

// nvl72's NVLS shape: the slowest lane's progress is steady within each
// round but reads above the kernels' ends (2.4 against 2.3 a period) and
// moves 0.2% per doubling, while the ends' slope holds exactly. The ends
// held better, so the call is carried at their slope, the progress's move
// in the error. Where the ends moved more than the progress (the second
// round's longer probe ended 0.2 late), they are not carried.
TEST(FastForward, EndsThatHeldBetterThanTheProgressAreCarried) {
  auto lane = [](std::uint64_t k) {
    const double t = 2.4 * (1 + 0.002 * std::log2(x(k) / 10));
    return progress(k, 0, t, t);
  };
  FastForward held(1000, 10, 0.01, kEndOnly);
  const auto kept = drive(held, [&](std::uint64_t k) {
    return std::make_pair(Values{100 + 2.3 * x(k)}, Lanes{lane(k)});
  });
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{10, 20, 40}));
  ASSERT_EQ(held.rounds().size(), 2u);
  const auto& r = held.rounds()[1];
  EXPECT_LE(r.drift, 0.01);
  EXPECT_GT(r.spread, 0.001);
  EXPECT_TRUE(r.by_ends);
  EXPECT_NEAR(held.values()[0], 100 + 2.3 * 1000, 1e-6);
  EXPECT_NEAR(held.estimated_error(), 960 * 2.3 * r.spread / (100 + 2.3 * 1000), 1e-9);

  FastForward moved(1000, 10, 0.01, kEndOnly);
  drive(moved, [&](std::uint64_t k) {
    return std::make_pair(Values{100 + 2.3 * x(k) + (k == 40 ? 0.2 : 0)}, Lanes{lane(k)});
  });
  ASSERT_GE(moved.rounds().size(), 2u);
  EXPECT_FALSE(moved.rounds()[1].accepted);
}

// Ends whose slope moved by more than the tolerance between rounds (the
// second round's longer probe ended 0.48 early: 2 then 1.976 a period)
// behind a progress that is not steady: the ends' slope has not held, and
// a call this short (the skipped periods 0.74 of its time) is not carried
// at it, though 0.74 x 1.2% would pass; with no third round affordable it
// runs whole.
TEST(FastForward, AnEndSlopeThatMovedIsNotCarried) {
  FastForward ff(300, 10, 0.01, kEndOnly);
  const auto kept = drive(ff, [](std::uint64_t k) {
    Lanes l{shaped(k, [](double e, double kk) { return 2 * e + 0.6 * kk * std::sin(6.283185307 * e / kk); })};
    return std::make_pair(Values{100 + 2 * x(k) - (k == 40 ? 0.48 : 0)}, std::move(l));
  });
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{10, 20, 40, 300}));
  ASSERT_EQ(ff.rounds().size(), 2u);
  EXPECT_GT(ff.rounds()[1].drift, 0.01);
  EXPECT_NEAR(ff.rounds()[1].end_slope, 1.976, 1e-12);
  EXPECT_FALSE(ff.rounds()[1].accepted);
  EXPECT_TRUE(ff.whole());
}

// Where another round would take the probes past half the call, the call
// runs whole and its figures are the simulated ones (here no progress is
// measured).
TEST(FastForward, FallsBackToTheWholeCall) {
  FastForward ff(150, 10, 0.01, kEndOnly);
  const auto kept = drive(
      ff, [](std::uint64_t k) { return std::make_pair(Values{x(k) * x(k)}, Lanes{}); });
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{10, 20, 40, 150}));
  EXPECT_TRUE(ff.whole());
  EXPECT_DOUBLE_EQ(ff.values()[0], 150.0 * 150.0);
  EXPECT_EQ(ff.skipped(), 0u);
  EXPECT_DOUBLE_EQ(ff.estimated_error(), 0);
}

TEST(FastForward, WorthOnlyWhenTwoRoundsCostLessThanHalfTheCall) {
  // Two rounds from 10 periods keep 10 + 20 + 40: under half of 141, not 140.
  EXPECT_TRUE(FastForward::worth(141, 10));
  EXPECT_FALSE(FastForward::worth(140, 10));
  EXPECT_THROW(FastForward(140, 10, 0.01, kEndOnly), std::exception);
  EXPECT_THROW(FastForward(100, 10, 0.01, {FfValue::kCount}), std::exception);
}

TEST(FastForward, OutputProgressInterpolates) {
  OutputProgress p;
  p.start(10);
  for (int i = 1; i <= 1000; ++i) p.add(1, static_cast<double>(i));
  ASSERT_TRUE(p.complete());
  EXPECT_DOUBLE_EQ(p.all_but(0), 1000);
  EXPECT_DOUBLE_EQ(p.all_but(500), 500);
  EXPECT_DOUBLE_EQ(p.all_but(255), 745);
  EXPECT_DOUBLE_EQ(p.last(), 1000);
  EXPECT_EQ(p.total(), 1000u);
  OutputProgress few;
  few.start(50);
  few.add(50, 1.0);
  EXPECT_FALSE(few.complete());
}

// NCCL's ring plan with loops taken out: the same channels and last loops;
// every channel keeps its share less whole loops.
TEST(FastForwardPlans, NcclRingShortenedKeepsItsStructure) {
  NcclRingShape s;
  s.channels = 4;
  s.chunk_bytes = 4096;
  const std::uint64_t elements = 4 * 8 * 1024 * 5 + 12345;  // 4 channels, 8 ranks
  const NcclRingPlan full(elements, 4, 8, s);
  const std::uint64_t loops = full.removable_loops();
  ASSERT_GT(loops, 2u);
  const NcclRingPlan p = full.shortened(2);
  EXPECT_EQ(p.channels(), full.channels());
  EXPECT_EQ(p.elements(), full.elements() - 2 * full.period_elements());
  for (int c = 0; c < full.channels(); ++c) {
    const std::uint64_t a = full.channel_begin(c + 1) - full.channel_begin(c);
    const std::uint64_t b = p.channel_begin(c + 1) - p.channel_begin(c);
    EXPECT_EQ(a - b, 2 * 8 * 1024u);
    // The last loop's chunk is the same: the same ops from the channel's end.
    EXPECT_EQ(full.chunk_of(full.channel_begin(c + 1) - 1), p.chunk_of(p.channel_begin(c + 1) - 1));
  }
  EXPECT_EQ(p.removable_loops(), loops - 2);
  EXPECT_THROW(full.shortened(loops + 1), std::exception);
}

TEST(FastForwardPlans, NcclNvlsShortenedKeepsChunksAndLastLoops) {
  NcclNvlsShape s;
  const NcclNvlsPlan full((std::uint64_t{256} << 20) / 4 + 4096, 4, 8, s);
  const std::uint64_t loops = full.removable_loops();
  ASSERT_GT(loops, 3u);
  const NcclNvlsPlan p = full.shortened(3);
  ASSERT_EQ(p.channels(), full.channels());
  EXPECT_EQ(p.elements(), full.elements() - 3 * full.period_elements());
  std::uint64_t next = 0;
  for (int c = 0; c < p.channels(); ++c) {
    EXPECT_EQ(p.channel(c).first, next);
    next += p.channel(c).count;
    EXPECT_EQ(p.chunk_elements(c), full.chunk_elements(c));
    EXPECT_EQ(p.steps(c), full.steps(c) - 3);
    // The last step's pieces are the full plan's, moved.
    const std::uint64_t moved =
        full.channel(c).first - p.channel(c).first + std::uint64_t{24} * p.chunk_elements(c);
    for (int h = 0; h < 8; ++h) {
      const auto a = full.piece(c, full.steps(c) - 1, h);
      const auto b = p.piece(c, p.steps(c) - 1, h);
      EXPECT_EQ(a.count, b.count);
      if (a.count) {
        EXPECT_EQ(a.first, b.first + moved);
      }
    }
  }
}

TEST(FastForwardPlans, SymmetricRoundsKeepTheTail) {
  const NcclSymmetricPlan full(10 * 4 * 2 * 16 * 1024 + 777, 4, 4, 2);
  const std::uint64_t rounds = full.removable_rounds();
  EXPECT_EQ(rounds, 9u);
  const NcclSymmetricPlan p(full.elements() - 4 * full.period_elements(), 4, 4, 2);
  for (int r = 0; r < 4; ++r)
    for (int w = 0; w < p.warps(); ++w) EXPECT_EQ(full.hunks(r, w), p.hunks(r, w) + 4);
}

}  // namespace
}  // namespace fabricsim
