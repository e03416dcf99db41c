// The Verilated reduction ALU (rtl/reduction_alu.sv, LANES=4, STAGES=2)
// against the C++ golden model, bit for bit: directed corner cases and
// random vectors per dtype and op, pushed through the valid/ready interface
// with random gaps and random output back-pressure, both sides watched by a
// passive handshake checker (which a negative test shows catches a
// violation). Vectors per dtype and op: FABRICSIM_RTL_VECTORS (default
// 50000; the full run uses 1000000).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "Vreduction_alu4.h"
#include "models/core/reduction_alu.hpp"
#include "models/core/rng.hpp"
#include "rtl/rtl_alu.hpp"
#include "testbenches/rtl/handshake_checker.hpp"
#include "verilated.h"

namespace fabricsim {
namespace {

constexpr int kLanes = 4;

struct Beat {
  DType dtype;
  RedOp op;
  std::uint32_t a[kLanes];
  std::uint32_t b[kLanes];
};

// What the golden model says for one 32-bit lane (two elements of a 16-bit type).
std::uint32_t expect_lane(DType t, RedOp op, std::uint32_t a, std::uint32_t b) {
  if (element_bytes(t) == 4) return alu_apply(op, t, a, b);
  const std::uint32_t lo = alu_apply(op, t, a & 0xFFFFu, b & 0xFFFFu);
  const std::uint32_t hi = alu_apply(op, t, a >> 16, b >> 16);
  return (hi << 16) | lo;
}

std::uint64_t digest(const std::uint32_t* w, int n, std::uint64_t extra) {
  std::uint64_t h = extra * 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < n; ++i) h = (h ^ w[i]) * 0x100000001B3ULL;
  return h;
}

// Drives the ALU with a list of beats; returns a description of the first
// mismatch or protocol error, or "" when every lane matched the model.
class Bench {
 public:
  explicit Bench(std::uint64_t seed) : rng_(seed, 7) {
    ctx_ = std::make_unique<VerilatedContext>();
    top_ = std::make_unique<Vreduction_alu4>(ctx_.get());
    top_->rst_n = 0;
    top_->in_valid = 0;
    top_->out_ready = 0;
    for (int i = 0; i < 3; ++i) edge();
    top_->rst_n = 1;
    edge();
  }
  ~Bench() { top_->final(); }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // `misbehave`: the driver changes a waiting beat's data (a protocol
  // violation the input checker must report).
  std::string run(const std::vector<Beat>& beats, double offer = 0.8, double accept = 0.7,
                  bool misbehave = false) {
    std::size_t next = 0, done = 0;
    bool offering = false, stalled = false;
    std::uint64_t idle = 0;
    while (done < beats.size()) {
      if (!offering && next < beats.size() && rng_.bernoulli(offer)) offering = true;
      top_->in_valid = offering;
      if (offering) {
        Beat b = beats[next];
        if (misbehave && stalled) b.a[0] ^= 1;
        drive(b, static_cast<std::uint16_t>(next));
      }
      top_->out_ready = rng_.bernoulli(accept);
      top_->clk = 0;
      top_->eval();
      std::uint32_t in_words[2 * kLanes], out_words[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        in_words[l] = top_->in_a[l];
        in_words[kLanes + l] = top_->in_b[l];
        out_words[l] = top_->out_y[l];
      }
      in_check_.sample(cycle_, top_->in_valid, top_->in_ready,
                       digest(in_words, 2 * kLanes, top_->in_tag | top_->in_dtype << 16 | top_->in_op << 18));
      out_check_.sample(cycle_, top_->out_valid, top_->out_ready,
                        digest(out_words, kLanes, top_->out_tag));
      if (!in_check_.ok()) return in_check_.error();
      if (!out_check_.ok()) return out_check_.error();
      const bool took_in = top_->in_valid && top_->in_ready;
      stalled = top_->in_valid && !top_->in_ready;
      if (top_->out_valid && top_->out_ready) {
        if (top_->out_tag != static_cast<std::uint16_t>(done))
          return "out of order: tag " + std::to_string(top_->out_tag) + ", expected " +
                 std::to_string(done % 65536);
        const Beat& b = beats[done];
        for (int l = 0; l < kLanes; ++l) {
          const std::uint32_t want = expect_lane(b.dtype, b.op, b.a[l], b.b[l]);
          if (out_words[l] != want) {
            char msg[200];
            std::snprintf(msg, sizeof msg, "%s %s lane %d: a=%08x b=%08x rtl=%08x model=%08x",
                          to_string(b.dtype).c_str(), to_string(b.op).c_str(), l, b.a[l], b.b[l],
                          out_words[l], want);
            return msg;
          }
        }
        ++done;
        idle = 0;
      } else if (++idle > 1000) {
        return "no output for 1000 cycles (" + std::to_string(done) + " of " +
               std::to_string(beats.size()) + " done)";
      }
      top_->clk = 1;
      top_->eval();
      ++cycle_;
      if (took_in) {
        offering = false;
        ++next;
      }
    }
    if (!in_check_.ok()) return in_check_.error();
    if (!out_check_.ok()) return out_check_.error();
    return "";
  }

  std::uint64_t cycles() const { return cycle_; }

 private:
  void edge() {
    top_->clk = 0;
    top_->eval();
    top_->clk = 1;
    top_->eval();
    ++cycle_;
  }
  void drive(const Beat& b, std::uint16_t tag) {
    top_->in_dtype = static_cast<std::uint8_t>(b.dtype);
    top_->in_op = static_cast<std::uint8_t>(b.op);
    top_->in_tag = tag;
    for (int l = 0; l < kLanes; ++l) {
      top_->in_a[l] = b.a[l];
      top_->in_b[l] = b.b[l];
    }
  }

  Rng rng_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vreduction_alu4> top_;
  std::uint64_t cycle_ = 0;
  HandshakeChecker in_check_{"input"};
  HandshakeChecker out_check_{"output"};
};

// Bit patterns of one format worth hitting on purpose.
struct Fmt {
  int e, m;
  std::uint32_t sign() const { return 1u << (e + m); }
  std::uint32_t exp_ones() const { return ((1u << e) - 1) << m; }
  std::vector<std::uint32_t> specials() const {
    const std::uint32_t s = sign(), inf = exp_ones(), one = ((1u << (e - 1)) - 1) << m;
    std::vector<std::uint32_t> v = {0,   inf,     inf | (1u << (m - 1)), inf | 1,
                                    1,   (1u << m) - 1, 1u << m,   inf - 1,
                                    one, one + 1, one - 1};
    const std::size_t n = v.size();
    for (std::size_t i = 0; i < n; ++i) v.push_back(v[i] | s);
    return v;
  }
};

Fmt format_of(DType t) {
  switch (t) {
    case DType::kFp16: return {5, 10};
    case DType::kBf16: return {8, 7};
    default: return {8, 23};
  }
}

// One element: a special value, something close to `other` (cancellation,
// equal exponents, one ulp apart, a small exponent difference), or random bits.
std::uint32_t element(Rng& rng, DType t, std::uint32_t other) {
  const int bits = static_cast<int>(element_bytes(t)) * 8;
  const std::uint32_t mask = bits == 32 ? 0xFFFFFFFFu : 0xFFFFu;
  const auto r = rng.below(10);
  if (t != DType::kInt32 && r < 3) {
    const auto sp = format_of(t).specials();
    return sp[rng.below(sp.size())];
  }
  if (r < 6) {
    const Fmt f = format_of(t);
    switch (rng.below(5)) {
      case 0: return other ^ (t == DType::kInt32 ? 0x80000000u : f.sign());         // -other
      case 1: return (other + static_cast<std::uint32_t>(rng.below(3)) - 1) & mask; // ulps away
      case 2: return (other ^ f.sign()) + static_cast<std::uint32_t>(rng.below(4)); // near cancel
      case 3: return (other + (static_cast<std::uint32_t>(rng.below(5)) << f.m)) & mask;  // exp step
      default: return other;
    }
  }
  return static_cast<std::uint32_t>(rng.next()) & mask;
}

std::uint32_t lane(Rng& rng, DType t, std::uint32_t other) {
  if (element_bytes(t) == 4) return element(rng, t, other);
  return element(rng, t, other & 0xFFFFu) | element(rng, t, other >> 16) << 16;
}

std::vector<Beat> random_beats(DType t, RedOp op, std::uint64_t elements, std::uint64_t seed) {
  Rng rng(seed, static_cast<std::uint64_t>(t) * 8 + static_cast<std::uint64_t>(op));
  const std::uint64_t per_beat = kLanes * (4 / element_bytes(t));
  std::vector<Beat> beats((elements + per_beat - 1) / per_beat);
  for (Beat& b : beats) {
    b.dtype = t;
    b.op = op;
    for (int l = 0; l < kLanes; ++l) {
      b.a[l] = lane(rng, t, static_cast<std::uint32_t>(rng.next()));
      b.b[l] = lane(rng, t, b.a[l]);
    }
  }
  return beats;
}

std::uint64_t vectors() {
  const char* v = std::getenv("FABRICSIM_RTL_VECTORS");
  return v ? std::strtoull(v, nullptr, 10) : 50000;
}

const DType kTypes[] = {DType::kFp32, DType::kFp16, DType::kBf16, DType::kInt32};
const RedOp kOps[] = {RedOp::kSum, RedOp::kMin, RedOp::kMax};

// Every special value of each format against every other, every op: the
// corner cases (NaN, +-Inf, subnormal in and out, overflow, -0 + +0, ties).
TEST(RtlAlu, DirectedCornerCasesMatchTheModel) {
  Bench bench(1);
  std::vector<Beat> beats;
  for (DType t : kTypes) {
    std::vector<std::uint32_t> sp = t == DType::kInt32
                                        ? std::vector<std::uint32_t>{0, 1, 0x7FFFFFFFu, 0x80000000u,
                                                                     0xFFFFFFFFu, 0x80000001u}
                                        : format_of(t).specials();
    // Ties to even in fp32: 1 + 2^-24 (half an ulp) stays 1; 1+ulp + 2^-24 goes up.
    if (t == DType::kFp32) sp.insert(sp.end(), {0x33800000u, 0x3F800001u, 0x00800000u, 0x80800001u});
    for (RedOp op : kOps)
      for (std::uint32_t x : sp)
        for (std::size_t k = 0; k < sp.size(); k += kLanes) {
          Beat b{t, op, {}, {}};
          for (int l = 0; l < kLanes; ++l) {
            const std::uint32_t y = sp[(k + static_cast<std::size_t>(l)) % sp.size()];
            b.a[l] = element_bytes(t) == 4 ? x : (x | y << 16);
            b.b[l] = element_bytes(t) == 4 ? y : (y | x << 16);
          }
          beats.push_back(b);
        }
  }
  EXPECT_EQ(bench.run(beats), "");
}

class RtlAluRandom : public ::testing::TestWithParam<DType> {};

TEST_P(RtlAluRandom, MatchesTheModelBitForBit) {
  for (RedOp op : kOps) {
    Bench bench(static_cast<std::uint64_t>(GetParam()) + 10);
    EXPECT_EQ(bench.run(random_beats(GetParam(), op, vectors(), 42)), "") << to_string(op);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, RtlAluRandom, ::testing::ValuesIn(kTypes),
                         [](const auto& p) { return to_string(p.param); });

// Full throughput: with the output always ready and a beat offered every
// cycle, one beat goes in and one comes out per cycle after the pipeline fills.
TEST(RtlAlu, OneBeatPerCycleWithoutBackPressure) {
  Bench bench(3);
  const auto beats = random_beats(DType::kFp32, RedOp::kSum, std::uint64_t{4} * 1000, 5);
  const std::uint64_t before = bench.cycles();
  ASSERT_EQ(bench.run(beats, 1.0, 1.0), "");
  EXPECT_LE(bench.cycles() - before, beats.size() + 2 + 1);  // STAGES = 2
}

// The checker on the real interface: a driver that changes a beat while the
// ALU stalls it (the output held back) is caught at once.
TEST(RtlAlu, InputCheckerCatchesADriverViolation) {
  Bench bench(4);
  const std::string e = bench.run(random_beats(DType::kInt32, RedOp::kSum, std::uint64_t{4} * 200, 6), 1.0, 0.1,
                                  /*misbehave=*/true);
  EXPECT_NE(e.find("input: payload changed"), std::string::npos) << e;
}

// The checker itself: it must catch valid dropping before its beat is taken,
// and data changing while a beat waits, and accept a well-behaved stream.
TEST(HandshakeChecker, CatchesViolations) {
  HandshakeChecker good("good");
  good.sample(0, true, false, 7);
  good.sample(1, true, true, 7);
  good.sample(2, true, true, 8);
  good.sample(3, false, false, 0);
  EXPECT_TRUE(good.ok()) << good.error();
  EXPECT_EQ(good.beats(), 2u);

  HandshakeChecker dropped("dropped");
  dropped.sample(0, true, false, 7);
  dropped.sample(1, false, true, 7);
  EXPECT_FALSE(dropped.ok());
  EXPECT_NE(dropped.error().find("valid dropped at cycle 1"), std::string::npos) << dropped.error();

  HandshakeChecker changed("changed");
  changed.sample(0, true, false, 7);
  changed.sample(1, true, false, 9);
  EXPECT_FALSE(changed.ok());
  EXPECT_NE(changed.error().find("payload changed"), std::string::npos) << changed.error();
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// The co-simulation backend (one 64-lane model per dtype, clocked only
// inside a fold) against alu_accumulate, every dtype and op, on payloads of
// one beat, a partial beat and several beats; folds back to back, as the
// engine does them.
TEST(RtlAluBackend, AccumulateMatchesTheModelForEveryTypeAndOp) {
  RtlAlu rtl;
  Rng rng(9, 9);
  std::uint64_t folds = 0;
  for (DType t : kTypes)
    for (RedOp op : kOps)
      for (std::size_t bytes : {std::size_t{256}, std::size_t{36}, std::size_t{1000}, std::size_t{256}}) {
        const std::size_t n = bytes / element_bytes(t) * element_bytes(t);
        std::vector<std::uint8_t> a(n), b(n);
        for (std::size_t i = 0; i < n; i += 4) {
          const std::uint32_t x = lane(rng, t, static_cast<std::uint32_t>(rng.next()));
          const std::uint32_t y = lane(rng, t, x);
          std::memcpy(&a[i], &x, std::min<std::size_t>(4, n - i));
          std::memcpy(&b[i], &y, std::min<std::size_t>(4, n - i));
        }
        std::vector<std::uint8_t> want = a;
        alu_accumulate(op, t, want.data(), b.data(), n);
        rtl.accumulate(op, t, a.data(), b.data(), n);
        ASSERT_EQ(a, want) << to_string(t) << " " << to_string(op) << " " << n << " bytes";
        ++folds;
      }
  EXPECT_EQ(folds, 48u);
  EXPECT_EQ(rtl.beats(), 4u * 3u * (1 + 1 + 4 + 1));  // 1000 B is 4 beats of 256 B
}

}  // namespace
}  // namespace fabricsim
