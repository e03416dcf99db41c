// Steady-state fast-forward (collective.fast_forward; models/core/fast_forward.hpp)
// against full simulation on short cases: the call's time within 1%, the
// same end-of-run checks passing; calls whose estimate is not accepted run
// whole; where it cannot be exact it is not used, and the row says why.
// scripts/validate fast-forward runs the long cases (docs/performance.md).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "testbenches/common/run_fabrics.hpp"

namespace fabricsim {
namespace {

const std::string kDgx = FABRICSIM_SOURCE_DIR "/configs/dgx-h100-allreduce.yaml";
const std::string kNccl = FABRICSIM_SOURCE_DIR "/configs/dgx-h100-nccl.yaml";
const std::string kIb = FABRICSIM_SOURCE_DIR "/configs/dgx-h100-x4-ib.yaml";

// A sweep of two sizes, max / 2 and max (32 MiB), the probes from `probe`
// (max / 16 unless a case says): the long call follows a call either way,
// so the fabric it starts in is alike (a call's time depends on what the
// one before left in flight: up to ~1% at 16 MiB).
struct Case {
  std::string name, file;
  std::vector<std::string> sets;
  std::uint64_t probe = 2u << 20;
  std::uint64_t max = 32u << 20;
};

Config sweep(const Case& c, bool ff) {
  std::vector<std::string> sets = {
      "workload.kind=collective",
      "sim.warmup_ns=0",
      "sim.duration_ns=1e8",
      "collective.data=false",
      "collective.step_factor=2",
      "collective.min_bytes=" + std::to_string(c.max / 2),
      "collective.max_bytes=" + std::to_string(c.max),
      "collective.fast_forward_min_bytes=" + std::to_string(c.max),
      "collective.fast_forward_probe_bytes=" + std::to_string(c.probe),
      ff ? "collective.fast_forward=auto" : "collective.fast_forward=off"};
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  return load_config(c.file, sets);
}

// Each case fast-forwarded and whole, in one kernel; the long calls' rows
// compared.
void expect_within_one_percent(const std::vector<Case>& cases) {
  std::vector<Config> cs;
  for (const Case& c : cases)
    for (const bool ff : {true, false}) cs.push_back(sweep(c, ff));
  const auto s = run_fabrics(cs);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const auto& fast = s[2 * k]["collectives"]["rows"][1];
    const auto& whole = s[2 * k + 1]["collectives"]["rows"][1];
    SCOPED_TRACE(cases[k].name);
    ASSERT_TRUE(fast.contains("fast_forward")) << fast.dump();
    const auto& f = fast["fast_forward"];
    EXPECT_TRUE(f["used"].get<bool>()) << f.dump();
    EXPECT_EQ(f["run_whole"].get<int>(), 0) << f.dump();
    EXPECT_GT(f["skipped_periods_mean"].get<double>(), 0);
    EXPECT_LE(f["estimated_error"].get<double>(), 0.01);
    EXPECT_FALSE(whole.contains("fast_forward"));
    const double a = fast["time_us"].get<double>(), b = whole["time_us"].get<double>();
    EXPECT_LT(std::fabs(a - b) / b, 0.01) << a << " us fast-forwarded, " << b << " us whole";
  }
}

TEST(FastForward, IdealAlgorithmsWithinOnePercent) {
  // Not the ring: at 32 MiB its probes' ends disagree with their progress
  // (by 12% from 2 MiB, 1.7% from 4 MiB), so the call runs whole; from
  // 16 MiB probes it is within 0.05% at 256 MiB and 1 GiB (scripts/validate
  // fast-forward).
  expect_within_one_percent({{"push", kDgx, {"collective.algorithm=push"}},
                             {"direct", kDgx, {"collective.algorithm=direct"}}});
}

// The ring on a 256 MiB call, probes from 4 MiB: its rounds from 4 and
// 8 MiB are rejected, the one from 16 MiB accepted by its progress. (From
// the default 16 MiB the round from 32 MiB sees the ends' slope move by
// 1.1%, and the call runs whole after its probes.)
TEST(FastForward, RingWithinOnePercentAt256MiB) {
  expect_within_one_percent({{"ring", kDgx, {"collective.algorithm=ring"}, 4u << 20, 256u << 20}});
}

// NCCL's kernels: whole loops of every channel taken out (the ring on 2
// channels of a 64 KiB staging buffer: 256 KiB loops; NVLS on 1 channel of
// 16 KiB chunks on 8 GPUs: 128 KiB loops); their outputs come in bursts (a
// loop's all-gather, a step's gather), lined up alike in both probes.
TEST(FastForward, NcclRingWithinOnePercent) {
  expect_within_one_percent({{"nccl ring simple", kNccl,
                              {"collective.algorithm=ring", "collective.protocol=simple",
                               "collective.channels=2", "gpu.buffer_bytes=65536"}}});
}

// NVLS with its copies timed keeps 2 x gpu.slots loops per probe at least,
// and two rounds of probes (16, 32, 64 loops) must keep under half the
// call: one channel of 16 KiB chunks makes its loops 128 KiB, 256 of them in
// 32 MiB.
TEST(FastForward, NcclNvlsWithinOnePercent) {
  expect_within_one_percent({{"nccl nvls", kNccl,
                              {"collective.algorithm=nvls", "gpu.nvls_channels=1",
                               "gpu.nvls_chunk_bytes=16384"}}});
}

// An estimate above the tolerance (0 here) doubles the probes until they
// would keep more than half the call, which then runs whole: its time is
// the simulated one.
TEST(FastForward, RejectedEstimateRunsWhole) {
  const auto s = run_fabrics({sweep(
      {"push", kDgx, {"collective.algorithm=push", "collective.fast_forward_tolerance=0"}}, true)});
  const auto& row = s[0]["collectives"]["rows"][1];
  const auto& f = row["fast_forward"];
  EXPECT_TRUE(f["used"].get<bool>());
  EXPECT_EQ(f["run_whole"].get<int>(), 1) << f.dump();
  EXPECT_GT(f["rejected_error"].get<double>(), 0);
  EXPECT_EQ(f["skipped_periods_mean"].get<double>(), 0);
  // 2 and 4 MiB, then 8 (the second round reuses 4), then (16 more would
  // pass half the call) the call.
  EXPECT_EQ(f["probes"].size(), 4u);
  ASSERT_EQ(f["rounds"].size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& r = f["rounds"][k];
    EXPECT_FALSE(r["accepted"].get<bool>()) << r.dump();
    EXPECT_GT(r["estimated_error"].get<double>(), 0) << r.dump();
    const int lane = r["lane"].get<int>();
    EXPECT_TRUE(lane >= 0 && lane < 8) << r.dump();
    // The kernels' end per period is the round's two probes' time apart
    // over the periods between them (1024 periods of 2 KiB, then 2048).
    const double apart = f["probes"][k + 1]["time_us"].get<double>() - f["probes"][k]["time_us"].get<double>();
    EXPECT_NEAR(r["end_period_ns"].get<double>() * (1024 << k), apart * 1000, 1e-3) << r.dump();
  }
  EXPECT_EQ(f["rounds"][1]["probe_bytes"].get<std::uint64_t>(), 4u << 20);
  const auto& last = f["probes"].back();
  EXPECT_EQ(last["bytes"].get<std::uint64_t>(), 33554432u);
  EXPECT_DOUBLE_EQ(last["time_us"].get<double>(), row["time_us"].get<double>());
  EXPECT_GT(f["simulated_fraction"].get<double>(), 1.0);
}

// Where it could not be exact the call runs whole and the row says why;
// below the minimum size, or off, the row has no fast_forward entry.
TEST(FastForward, RefusedWhereItCannotBeExact) {
  auto small = [](std::vector<std::string> sets) {
    sets.insert(sets.begin(), {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e8",
                               "collective.min_bytes=524288", "collective.max_bytes=1048576",
                               "collective.fast_forward_min_bytes=1048576",
                               "collective.fast_forward_probe_bytes=16384"});
    return load_config(kDgx, sets);
  };
  const auto s = run_fabrics(
      {small({"collective.data=true"}),
       small({"collective.data=false", "faults=link_down@2000:fabric.gpu0.tx0"}),
       small({"collective.data=false", "collective.fast_forward=off"}),
       small({"collective.data=false", "collective.fast_forward_probe_bytes=1048576"}),
       small({"collective.data=false", "collective.fast_forward_probe_bytes=1"})});
  auto why = [&](int k) {
    const auto& rows = s[static_cast<std::size_t>(k)]["collectives"]["rows"];
    EXPECT_FALSE(rows[0].contains("fast_forward"));  // below the minimum
    return rows[1].contains("fast_forward") ? rows[1]["fast_forward"] : nlohmann::json();
  };
  EXPECT_NE(why(0)["why_not"].get<std::string>().find("collective.data=true"), std::string::npos);
  EXPECT_FALSE(why(0)["used"].get<bool>());
  EXPECT_NE(why(1)["why_not"].get<std::string>().find("faults"), std::string::npos);
  EXPECT_TRUE(why(2).is_null());
  EXPECT_NE(why(3)["why_not"].get<std::string>().find("too few periods"), std::string::npos);
  // A probe keeps two periods at least, whatever fast_forward_probe_bytes
  // asks: the first probe is those two and the one period every call keeps.
  const auto f = why(4);
  ASSERT_TRUE(f["used"].get<bool>()) << f.dump();
  EXPECT_EQ(f["probes"][0]["bytes"].get<std::uint64_t>(), 3 * f["period_bytes"].get<std::uint64_t>()) << f.dump();
}

}  // namespace
}  // namespace fabricsim
