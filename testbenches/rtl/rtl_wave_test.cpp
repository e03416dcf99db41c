// --wave-rtl's replay (rtl/rtl_wave.hpp) without a fabric: folds reported by
// hand, replayed through the traced Verilated ALU, read back from the FST
// file. Checks the time placement (switch-clock edges, a busy ALU delays the
// next fold a cycle), the scope, multi-beat folds, and that a result the
// RTL does not reproduce stops the run with the evidence.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/fst_writer.hpp"
#include "models/core/reduction_alu.hpp"
#include "models/core/rng.hpp"
#include "rtl/rtl_wave.hpp"

namespace fabricsim {
namespace {

constexpr Ps kCycle = 625;  // 1.6 GHz switch clock

struct FoldData {
  std::vector<std::uint8_t> a, b, y;
};

FoldData fp32_sum(std::size_t bytes, std::uint64_t seed) {
  Rng rng(seed);
  FoldData d;
  std::vector<float> a(bytes / 4), b(bytes / 4);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(rng.uniform() * 100.0 - 50.0);
    b[i] = static_cast<float>(rng.uniform() * 100.0 - 50.0);
  }
  d.a.assign(reinterpret_cast<const std::uint8_t*>(a.data()),
             reinterpret_cast<const std::uint8_t*>(a.data()) + bytes);
  d.b.assign(reinterpret_cast<const std::uint8_t*>(b.data()),
             reinterpret_cast<const std::uint8_t*>(b.data()) + bytes);
  d.y = d.a;
  alu_accumulate(RedOp::kSum, DType::kFp32, d.y.data(), d.b.data(), bytes);
  return d;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".fst"))
      .string();
}

using Changes = std::vector<std::pair<std::uint64_t, std::string>>;

TEST(RtlWave, FoldsLandOnClockEdgesInTimeOrderAndAreChecked) {
  const std::string path = temp_path("rtl_wave_edges");
  RtlWave w({path, "fabric.sw0.*", 0, kNever});
  const int a0 = w.alu("fabric.sw0.engine.alu0", kCycle);
  const int a1 = w.alu("fabric.sw0.engine.alu1", kCycle);
  EXPECT_EQ(w.alu("fabric.sw1.engine.alu0", kCycle), -1);  // outside the scope
  ASSERT_GE(a0, 0);
  ASSERT_GE(a1, 0);
  const FoldData f1 = fp32_sum(256, 1), f2 = fp32_sum(256, 2), f3 = fp32_sum(256, 3),
                 f4 = fp32_sum(600, 4);
  // Reported in the engine's order, which need not be the replay's.
  w.fold(a0, 1000, 7, RedOp::kSum, DType::kFp32, f1.a.data(), f1.b.data(), f1.y.data(), 256);
  w.fold(a1, 1300, 9, RedOp::kSum, DType::kFp32, f3.a.data(), f3.b.data(), f3.y.data(), 256);
  w.fold(a0, 1100, 8, RedOp::kSum, DType::kFp32, f2.a.data(), f2.b.data(), f2.y.data(), 256);
  w.fold(a0, 5000, 10, RedOp::kSum, DType::kFp32, f4.a.data(), f4.b.data(), f4.y.data(), 600);
  w.finish(10000);
  EXPECT_EQ(w.folds(), 4u);
  EXPECT_EQ(w.alus_traced(), 2u);
  EXPECT_EQ(w.beats_checked(), 6u);  // 1 + 1 + 1 + 3 (600 B: 256 + 256 + 88)

  // alu0: the first fold takes the edge at 1250 (first at or after 1000);
  // the second (1100) finds the ALU busy and takes the next, 1875; the
  // 3-beat fold at 5000 (an edge) keeps in_valid up for three cycles.
  const Changes v0 = fst_changes(path, "fabric.sw0.engine.alu0.in_valid");
  EXPECT_EQ(v0, (Changes{{1250, "1"}, {2500, "0"}, {5000, "1"}, {6875, "0"}}));
  const Changes tag0 = fst_changes(path, "fabric.sw0.engine.alu0.in_tag [15:0]");
  ASSERT_GE(tag0.size(), 3u);
  EXPECT_EQ(tag0[0], (std::pair<std::uint64_t, std::string>{1250, "0000000000000111"}));
  EXPECT_EQ(tag0[1], (std::pair<std::uint64_t, std::string>{1875, "0000000000001000"}));
  // alu1 shares the time axis: its fold at 1300 starts on the edge at 1875.
  const Changes v1 = fst_changes(path, "fabric.sw0.engine.alu1.in_valid");
  EXPECT_EQ(v1, (Changes{{1250, "0"}, {1875, "1"}, {2500, "0"}}));
  // The result leaves one cycle after its beat went in (STAGES=1): out_valid
  // rises on the rising edge after the beat, half a cycle later.
  const Changes o1 = fst_changes(path, "fabric.sw0.engine.alu1.out_valid");
  ASSERT_GE(o1.size(), 2u);
  EXPECT_EQ(o1[1], (std::pair<std::uint64_t, std::string>{1875 + kCycle / 2, "1"}));
  // Nothing of the ALU left out by the scope.
  for (const auto& [name, n] : fst_count_changes(path))
    EXPECT_EQ(name.rfind("fabric.sw0.engine.alu", 0), 0u) << name;
  std::filesystem::remove(path);
}

TEST(RtlWave, AResultTheRtlDoesNotReproduceStopsWithTheEvidence) {
  const std::string path = temp_path("rtl_wave_mismatch");
  RtlWave w({path, "*", 0, kNever});
  const int a = w.alu("fabric.sw2.engine.alu3", kCycle);
  FoldData f = fp32_sum(256, 5);
  f.y[12] ^= 1;  // lane 3's result (its bytes 12 to 15) one ulp off
  w.fold(a, 2000, 1, RedOp::kSum, DType::kFp32, f.a.data(), f.b.data(), f.y.data(), 256);
  try {
    w.finish(3000);
    FAIL() << "a wrong result passed";
  } catch (const InvariantError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("fabric.sw2.engine.alu3"), std::string::npos) << m;
    EXPECT_NE(m.find("lane 3"), std::string::npos) << m;
    EXPECT_NE(m.find("the engine computed"), std::string::npos) << m;
  }
  std::filesystem::remove(path);
}

TEST(RtlWave, TheWindowKeepsOnlyItsFolds) {
  RtlWave w({temp_path("rtl_wave_window"), "*", 2000, 3000});
  EXPECT_FALSE(w.wants(1999));
  EXPECT_TRUE(w.wants(2000));
  EXPECT_TRUE(w.wants(3000));
  EXPECT_FALSE(w.wants(3001));
}

TEST(RtlWave, AnUnwritablePathIsAnError) {
  RtlWave w({"/nonexistent-dir/x/alu.fst", "*", 0, kNever});
  const int a = w.alu("fabric.sw0.engine.alu0", kCycle);
  const FoldData f = fp32_sum(256, 6);
  w.fold(a, 0, 0, RedOp::kSum, DType::kFp32, f.a.data(), f.b.data(), f.y.data(), 256);
  EXPECT_THROW(w.finish(1000), std::runtime_error);
}

}  // namespace
}  // namespace fabricsim
