// Directed corner cases and exhaustive conversion checks for the reduction ALU
// golden model. The independent MPFR cross-check is reduction_alu_mpfr_test.cpp.
#include "models/core/reduction_alu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "models/core/rng.hpp"

namespace fabricsim {
namespace {

struct Case {
  std::uint32_t a, b, want;
};

std::string hex(std::uint32_t x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", x);
  return buf;
}

// Checks a op b and b op a (all three ops are commutative on values, and our
// NaN / signed-zero rules make them commutative on bit patterns too).
void check(RedOp op, DType t, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(hex(alu_apply(op, t, c.a, c.b)), hex(c.want))
        << to_string(t) << " " << to_string(op) << "(" << hex(c.a) << ", " << hex(c.b) << ")";
    EXPECT_EQ(hex(alu_apply(op, t, c.b, c.a)), hex(c.want))
        << to_string(t) << " " << to_string(op) << "(" << hex(c.b) << ", " << hex(c.a) << ")";
  }
}

// ---------------------------------------------------------------- sums

// The tables below are laid out by hand: one case per line, comment at the end.
// clang-format off
TEST(ReductionAlu, Fp32SumCorners) {
  const std::uint32_t nan = kFp32CanonicalNaN;
  check(RedOp::kSum, DType::kFp32, {
      // NaN in either input, whatever its sign, payload or signalling bit.
      {0x7F800001, 0x3F800000, nan},         // signalling NaN + 1
      {0x7FA00000, 0x00000000, nan},         // signalling NaN with payload + 0
      {0x7FC12345, 0x7F800000, nan},         // quiet NaN with payload + Inf
      {0xFFC00000, 0xFF800000, nan},         // negative NaN + -Inf
      {0xFFFFFFFF, 0x7FC00001, nan},         // NaN + NaN
      // Infinities.
      {0x7F800000, 0xFF800000, nan},         // Inf + -Inf
      {0x7F800000, 0x3F800000, 0x7F800000},  // Inf + 1
      {0xFF800000, 0x7F7FFFFF, 0xFF800000},  // -Inf + max
      {0x7F800000, 0x7F800000, 0x7F800000},  // Inf + Inf
      // Overflow: max = (2 - 2^-23) 2^127, ulp 2^104, threshold max + 2^103.
      {0x7F7FFFFF, 0x73000000, 0x7F800000},  // exactly the threshold: ties to even (Inf)
      {0x7F7FFFFF, 0x73000001, 0x7F800000},  // beyond it
      {0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000},  // max + max
      {0xFF7FFFFF, 0xF3000000, 0xFF800000},  // negative side
      {0x7F7FFFFF, 0x72FFFFFF, 0x7F7FFFFF},  // just below the threshold: max
      {0x7F7FFFFF, 0x72800000, 0x7F7FFFFF},  // max + quarter ulp: max
      // Ties to even at the last bit.
      {0x4B800000, 0x3F800000, 0x4B800000},  // 2^24 + 1: tie, down to even 2^24
      {0x4B800001, 0x3F800000, 0x4B800002},  // (2^24+2) + 1: tie, up to even 2^24+4
      {0x3F800000, 0x33800000, 0x3F800000},  // 1 + 2^-24: down to 1
      {0x3F800001, 0x33800000, 0x3F800002},  // (1+2^-23) + 2^-24: up to 1+2^-22
      {0x3F800000, 0x33800001, 0x3F800001},  // just above the tie (sticky bit)
      {0x3F800000, 0xB3000000, 0x3F800000},  // 1 - 2^-25: tie below 1, to even 1
      {0x3F800000, 0xB3000001, 0x3F7FFFFF},  // just below that tie
      // Subnormals (smallest 2^-149, smallest normal 2^-126).
      {0x00400000, 0x00400000, 0x00800000},  // subnormal + subnormal -> smallest normal
      {0x007FFFFF, 0x00000001, 0x00800000},
      {0x00000001, 0x00000001, 0x00000002},
      {0x00800001, 0x80800000, 0x00000001},  // normal - normal -> smallest subnormal
      {0x00C00000, 0x80800000, 0x00400000},  // 1.5 * 2^-126 - 2^-126 = 2^-127
      {0x80000001, 0x80000001, 0x80000002},
      // Far exponents: the exact sum needs ~277 bits.
      {0x7F000000, 0x00000001, 0x7F000000},  // 2^127 + 2^-149
      {0x3F800000, 0x80000001, 0x3F800000},  // 1 - 2^-149
      // Signed zeros.
      {0x80000000, 0x00000000, 0x00000000},  // -0 + +0 = +0
      {0x80000000, 0x80000000, 0x80000000},  // -0 + -0 = -0
      {0x00000000, 0x00000000, 0x00000000},
      {0x3F800000, 0xBF800000, 0x00000000},  // x + -x = +0
      {0x80000001, 0x00000001, 0x00000000},  // subnormal x + -x = +0
      {0x7F7FFFFF, 0xFF7FFFFF, 0x00000000},
      {0x80000000, 0x3F800000, 0x3F800000},  // -0 + x = x
      {0x80000000, 0x80000001, 0x80000001},
  });
}

TEST(ReductionAlu, Fp16SumCorners) {
  const std::uint32_t nan = kFp16CanonicalNaN;
  check(RedOp::kSum, DType::kFp16, {
      {0x7C01, 0x3C00, nan},     // signalling NaN + 1
      {0x7D00, 0x0000, nan},     // signalling NaN with payload
      {0x7E55, 0x7C00, nan},     // quiet NaN with payload + Inf
      {0xFE00, 0xFC00, nan},     // negative NaN + -Inf
      {0xFFFF, 0x7E01, nan},
      {0x7C00, 0xFC00, nan},     // Inf + -Inf
      {0x7C00, 0x3C00, 0x7C00},  // Inf + 1
      {0xFC00, 0x7BFF, 0xFC00},
      {0x7C00, 0x7C00, 0x7C00},
      // max 65504, ulp 32, threshold 65520.
      {0x7BFF, 0x4C00, 0x7C00},  // 65504 + 16: tie, to even (Inf)
      {0x7BFF, 0x4C01, 0x7C00},
      {0x7BFF, 0x7BFF, 0x7C00},
      {0xFBFF, 0xCC00, 0xFC00},
      {0x7BFF, 0x4BFF, 0x7BFF},  // 65504 + 15.99: max
      {0x7BFF, 0x4B00, 0x7BFF},  // 65504 + 14
      {0x6800, 0x3C00, 0x6800},  // 2048 + 1: tie, down to even 2048
      {0x6801, 0x3C00, 0x6802},  // 2050 + 1: tie, up to even 2052
      {0x3C00, 0x1000, 0x3C00},  // 1 + 2^-11
      {0x3C01, 0x1000, 0x3C02},
      {0x3C00, 0x1001, 0x3C01},  // just above the tie
      {0x3C00, 0x8C00, 0x3C00},  // 1 - 2^-12: tie below 1, to even 1
      {0x3C00, 0x8C01, 0x3BFF},
      {0x0200, 0x0200, 0x0400},  // subnormal + subnormal -> smallest normal
      {0x03FF, 0x0001, 0x0400},
      {0x0001, 0x0001, 0x0002},
      {0x0401, 0x8400, 0x0001},  // normal - normal -> smallest subnormal
      {0x0600, 0x8400, 0x0200},
      {0x7800, 0x0001, 0x7800},  // 2^15 + 2^-24
      {0x8000, 0x0000, 0x0000},  // -0 + +0 = +0
      {0x8000, 0x8000, 0x8000},  // -0 + -0 = -0
      {0x3C00, 0xBC00, 0x0000},  // x + -x = +0
      {0x8001, 0x0001, 0x0000},
      {0x8000, 0x3C00, 0x3C00},
  });
}

TEST(ReductionAlu, Bf16SumCorners) {
  const std::uint32_t nan = kBf16CanonicalNaN;
  check(RedOp::kSum, DType::kBf16, {
      {0x7F81, 0x3F80, nan},     // signalling NaN + 1
      {0x7FA5, 0x0000, nan},     // signalling NaN with payload
      {0x7FC1, 0x7F80, nan},     // quiet NaN with payload + Inf
      {0xFFC0, 0xFF80, nan},
      {0xFFFF, 0x7FC0, nan},
      {0x7F80, 0xFF80, nan},     // Inf + -Inf
      {0x7F80, 0x3F80, 0x7F80},
      {0xFF80, 0x7F7F, 0xFF80},
      {0x7F80, 0x7F80, 0x7F80},
      // max (2 - 2^-7) 2^127, ulp 2^120, threshold max + 2^119.
      {0x7F7F, 0x7B00, 0x7F80},  // tie, to even (Inf)
      {0x7F7F, 0x7B01, 0x7F80},
      {0x7F7F, 0x7F7F, 0x7F80},
      {0xFF7F, 0xFB00, 0xFF80},
      {0x7F7F, 0x7AFF, 0x7F7F},  // just below the threshold
      {0x7F7F, 0x7A80, 0x7F7F},
      {0x4380, 0x3F80, 0x4380},  // 256 + 1: tie, down to even 256
      {0x4381, 0x3F80, 0x4382},  // 258 + 1: tie, up to even 260
      {0x3F80, 0x3B80, 0x3F80},  // 1 + 2^-8
      {0x3F81, 0x3B80, 0x3F82},
      {0x3F80, 0x3B81, 0x3F81},  // just above the tie
      {0x3F80, 0xBB00, 0x3F80},  // 1 - 2^-9: tie below 1, to even 1
      {0x3F80, 0xBB01, 0x3F7F},
      {0x0040, 0x0040, 0x0080},  // subnormal + subnormal -> smallest normal
      {0x007F, 0x0001, 0x0080},
      {0x0001, 0x0001, 0x0002},
      {0x0081, 0x8080, 0x0001},  // normal - normal -> smallest subnormal
      {0x00C0, 0x8080, 0x0040},
      // Far exponents: the exact sum needs up to 261 bits (the model rounds twice).
      {0x7F00, 0x0001, 0x7F00},  // 2^127 + 2^-133
      {0x3F80, 0x8001, 0x3F80},  // 1 - 2^-133
      {0x3F81, 0x0001, 0x3F81},
      {0x8000, 0x0000, 0x0000},  // -0 + +0 = +0
      {0x8000, 0x8000, 0x8000},  // -0 + -0 = -0
      {0x3F80, 0xBF80, 0x0000},  // x + -x = +0
      {0x8001, 0x0001, 0x0000},
      {0x8000, 0x3F80, 0x3F80},
  });
}
// clang-format on

TEST(ReductionAlu, Int32SumWraps) {
  check(RedOp::kSum, DType::kInt32,
        {
            {0x7FFFFFFF, 0x00000001, 0x80000000},  // INT_MAX + 1 = INT_MIN
            {0x80000000, 0xFFFFFFFF, 0x7FFFFFFF},  // INT_MIN + -1 = INT_MAX
            {0x80000000, 0x80000000, 0x00000000},
            {0xFFFFFFFF, 0x00000001, 0x00000000},
            {0x00000005, 0xFFFFFFFD, 0x00000002},  // 5 + -3
        });
}

// ---------------------------------------------------------------- min / max

struct FloatFormat {
  DType t;
  std::uint32_t sign, zero, one, two, inf, max, min_sub, canonical;
  std::vector<std::uint32_t> nans;  // signalling, with payloads, negative
};

// clang-format off
std::vector<FloatFormat> float_formats() {
  //       type          sign        zero one         two         inf         max         min_sub
  return {{DType::kFp32, 0x80000000, 0,   0x3F800000, 0x40000000, 0x7F800000, 0x7F7FFFFF, 1,
           kFp32CanonicalNaN, {0x7F800001, 0x7FA00000, 0x7FC12345, 0xFFC00000, 0xFFFFFFFF}},
          {DType::kFp16, 0x8000,     0,   0x3C00,     0x4000,     0x7C00,     0x7BFF,     1,
           kFp16CanonicalNaN, {0x7C01, 0x7D00, 0x7E55, 0xFE00, 0xFFFF}},
          {DType::kBf16, 0x8000,     0,   0x3F80,     0x4000,     0x7F80,     0x7F7F,     1,
           kBf16CanonicalNaN, {0x7F81, 0x7FA5, 0x7FC1, 0xFFC0, 0xFFFF}}};
}
// clang-format on

TEST(ReductionAlu, FloatMinMaxCorners) {
  for (const FloatFormat& f : float_formats()) {
    const std::uint32_t s = f.sign;
    check(RedOp::kMin, f.t,
          {
              {s | f.zero, f.zero, s | f.zero},  // min(-0, +0) = -0
              {f.zero, f.zero, f.zero},
              {s | f.one, f.one, s | f.one},
              {s | f.one, s | f.two, s | f.two},
              {s | f.inf, s | f.max, s | f.inf},
              {f.inf, f.max, f.max},
              {f.min_sub, f.zero, f.zero},
              {s | f.min_sub, s | f.zero, s | f.min_sub},
              {f.one, f.one, f.one},
          });
    check(RedOp::kMax, f.t,
          {
              {s | f.zero, f.zero, f.zero},  // max(-0, +0) = +0
              {s | f.zero, s | f.zero, s | f.zero},
              {s | f.one, f.one, f.one},
              {s | f.one, s | f.two, s | f.one},
              {f.inf, f.max, f.inf},
              {s | f.inf, s | f.max, s | f.max},
              {f.min_sub, f.zero, f.min_sub},
              {s | f.min_sub, s | f.zero, s | f.zero},
          });
    for (std::uint32_t n : f.nans) {
      for (RedOp op : {RedOp::kMin, RedOp::kMax, RedOp::kSum}) {
        check(op, f.t,
              {{n, f.one, f.canonical},
               {n, s | f.inf, f.canonical},
               {n, f.zero, f.canonical},
               {n, n, f.canonical},
               {n, f.nans[0], f.canonical}});
      }
    }
  }
}

// Random pairs: min/max agree with the double comparison and return an input.
TEST(ReductionAlu, FloatMinMaxMatchValueOrder) {
  Rng rng(11);
  for (const FloatFormat& f : float_formats()) {
    const std::uint32_t mask = f.t == DType::kFp32 ? 0xFFFFFFFFu : 0xFFFFu;
    auto value = [&](std::uint32_t x) {
      if (f.t == DType::kFp32) return fp32_to_double(x);
      return f.t == DType::kFp16 ? fp16_to_double(static_cast<std::uint16_t>(x))
                                 : bf16_to_double(static_cast<std::uint16_t>(x));
    };
    for (int i = 0; i < 100000; ++i) {
      const auto a = static_cast<std::uint32_t>(rng.next()) & mask;
      auto b = static_cast<std::uint32_t>(rng.next()) & mask;
      if (i % 4 == 0) b = a ^ (static_cast<std::uint32_t>(rng.below(8)));  // close values
      const double va = value(a), vb = value(b);
      const std::uint32_t mn = alu_apply(RedOp::kMin, f.t, a, b);
      const std::uint32_t mx = alu_apply(RedOp::kMax, f.t, a, b);
      if (std::isnan(va) || std::isnan(vb)) {
        EXPECT_EQ(mn, f.canonical);
        EXPECT_EQ(mx, f.canonical);
        continue;
      }
      ASSERT_TRUE(mn == a || mn == b);
      ASSERT_TRUE(mx == a || mx == b);
      EXPECT_EQ(value(mn), std::fmin(va, vb)) << hex(a) << " " << hex(b);
      EXPECT_EQ(value(mx), std::fmax(va, vb)) << hex(a) << " " << hex(b);
      if (va == 0 && vb == 0) {  // both zeros: min takes -0 if any, max +0 if any
        EXPECT_EQ(mn, (a | b) & f.sign);
        EXPECT_EQ(mx, (a & b) & f.sign);
      }
    }
  }
}

TEST(ReductionAlu, Int32MinMaxSigned) {
  check(RedOp::kMin, DType::kInt32,
        {{0xFFFFFFFF, 0x00000001, 0xFFFFFFFF},
         {0x80000000, 0x7FFFFFFF, 0x80000000},
         {0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFE},
         {0, 0, 0}});
  check(RedOp::kMax, DType::kInt32,
        {{0xFFFFFFFF, 0x00000001, 0x00000001},
         {0x80000000, 0x7FFFFFFF, 0x7FFFFFFF},
         {0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFF},
         {0x80000000, 0x80000000, 0x80000000}});
}

TEST(ReductionAlu, SixteenBitTypesIgnoreUpperHalf) {
  EXPECT_EQ(alu_apply(RedOp::kSum, DType::kFp16, 0xABCD3C00, 0x12343C00), 0x4000u);
  EXPECT_EQ(alu_apply(RedOp::kMax, DType::kBf16, 0xFFFF3F80, 0x0000BF80), 0x3F80u);
  EXPECT_EQ(alu_apply(RedOp::kMin, DType::kFp16, 0xFFFF7E00, 0xFFFF3C00), 0x7E00u);
}

// ---------------------------------------------------------------- conversions

TEST(ReductionAlu, Fp16AndBf16RoundTripExhaustively) {
  for (std::uint32_t x = 0; x < 0x10000; ++x) {
    const auto h = static_cast<std::uint16_t>(x);
    const bool h_nan = (x & 0x7FFF) > 0x7C00;
    const bool b_nan = (x & 0x7FFF) > 0x7F80;
    // Independent decoding with ldexp.
    const double sign = (x & 0x8000) ? -1.0 : 1.0;
    const std::uint32_t he = (x >> 10) & 31, hf = x & 0x3FF;
    const std::uint32_t be = (x >> 7) & 255, bfr = x & 0x7F;
    if (!h_nan) {
      const double want = he == 31  ? sign * HUGE_VAL
                          : he == 0 ? sign * std::ldexp(hf, -24)
                                    : sign * std::ldexp(1024 + hf, static_cast<int>(he) - 25);
      ASSERT_EQ(fp16_to_double(h), want) << hex(x);
      ASSERT_EQ(std::signbit(fp16_to_double(h)), (x & 0x8000) != 0) << hex(x);
    } else {
      ASSERT_TRUE(std::isnan(fp16_to_double(h))) << hex(x);
    }
    if (!b_nan) {
      const double want = be == 255 ? sign * HUGE_VAL
                          : be == 0 ? sign * std::ldexp(bfr, -133)
                                    : sign * std::ldexp(128 + bfr, static_cast<int>(be) - 134);
      ASSERT_EQ(bf16_to_double(h), want) << hex(x);
      ASSERT_EQ(std::signbit(bf16_to_double(h)), (x & 0x8000) != 0) << hex(x);
    } else {
      ASSERT_TRUE(std::isnan(bf16_to_double(h))) << hex(x);
    }
    ASSERT_EQ(double_to_fp16(fp16_to_double(h)), h_nan ? kFp16CanonicalNaN : h) << hex(x);
    ASSERT_EQ(double_to_bf16(bf16_to_double(h)), b_nan ? kBf16CanonicalNaN : h) << hex(x);
  }
}

// Reference rounding by bracketing: for every pair of adjacent non-negative
// values lo < hi of the format (hi = the overflow threshold's other side, Inf,
// for the largest finite), the exact midpoint m is a double; x < m rounds to
// lo, x > m to hi, x == m to whichever has an even encoding. Checked at lo, at
// m and its double neighbours, and at random points of [lo, hi), both signs.
void check_midpoints(std::uint32_t (*encode)(double), double (*decode)(std::uint32_t),
                     std::uint32_t v, std::uint32_t max_finite, std::uint32_t sign, int randoms,
                     Rng& rng) {
  const double lo = decode(v);
  const double hi = v == max_finite ? lo + (lo - decode(v - 1)) : decode(v + 1);
  const double mid = lo + (hi - lo) / 2;  // exact: few significant bits
  const std::uint32_t even = (v & 1) ? v + 1 : v;
  auto expect = [&](double x, std::uint32_t want) {
    // Messages are only built on failure: keep the hot loop cheap.
    ASSERT_EQ(encode(x), want) << hex(encode(x)) << " for " << x << " near " << hex(v);
    ASSERT_EQ(encode(-x), want | sign) << hex(encode(-x)) << " for " << -x << " near " << hex(v);
  };
  expect(lo, v);
  expect(std::nextafter(lo, HUGE_VAL), v);
  expect(std::nextafter(mid, 0.0), v);
  expect(mid, even);
  expect(std::nextafter(mid, HUGE_VAL), v + 1);
  for (int i = 0; i < randoms; ++i) {
    const double x = lo + rng.uniform() * (hi - lo);
    expect(x, x < mid ? v : x > mid ? v + 1 : even);
  }
}

// Every v in [first, last) with the given stride, plus the largest finite.
void check_rounding_by_midpoints(std::uint32_t (*encode)(double), double (*decode)(std::uint32_t),
                                 std::uint32_t first, std::uint32_t last, std::uint32_t stride,
                                 std::uint32_t max_finite, std::uint32_t sign, int randoms) {
  Rng rng(5);
  for (std::uint32_t v = first; v < last; v += stride) {
    check_midpoints(encode, decode, v, max_finite, sign, randoms, rng);
    if (::testing::Test::HasFatalFailure()) return;
  }
  check_midpoints(encode, decode, max_finite, max_finite, sign, randoms, rng);
}

TEST(ReductionAlu, DoubleToFp16IsRoundToNearestEven) {
  check_rounding_by_midpoints(
      [](double x) -> std::uint32_t { return double_to_fp16(x); },
      [](std::uint32_t b) { return fp16_to_double(static_cast<std::uint16_t>(b)); }, 0, 0x7BFF, 1,
      0x7BFF, 0x8000, 16);
}

TEST(ReductionAlu, DoubleToBf16IsRoundToNearestEven) {
  check_rounding_by_midpoints(
      [](double x) -> std::uint32_t { return double_to_bf16(x); },
      [](std::uint32_t b) { return bf16_to_double(static_cast<std::uint16_t>(b)); }, 0, 0x7F7F, 1,
      0x7F7F, 0x8000, 16);
}

TEST(ReductionAlu, DoubleToFp32IsRoundToNearestEvenSampled) {
  // Every 4093rd value, then all of the subnormal/normal boundary and around 1.0.
  const std::uint32_t max = 0x7F7FFFFF, sign = 0x80000000;
  check_rounding_by_midpoints(double_to_fp32, fp32_to_double, 0, max, 4093, max, sign, 2);
  check_rounding_by_midpoints(double_to_fp32, fp32_to_double, 0, 0x400, 1, max, sign, 2);
  check_rounding_by_midpoints(double_to_fp32, fp32_to_double, 0x007FFC00, 0x00800400, 1, max, sign,
                              2);
  check_rounding_by_midpoints(double_to_fp32, fp32_to_double, 0x3F7FFC00, 0x3F800400, 1, max, sign,
                              2);
}

TEST(ReductionAlu, ConversionSpecials) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(double_to_fp16(nan), kFp16CanonicalNaN);
  EXPECT_EQ(double_to_fp16(-nan), kFp16CanonicalNaN);
  EXPECT_EQ(double_to_bf16(-nan), kBf16CanonicalNaN);
  EXPECT_EQ(double_to_fp32(-nan), kFp32CanonicalNaN);
  EXPECT_EQ(double_to_fp16(std::numeric_limits<double>::signaling_NaN()), kFp16CanonicalNaN);
  EXPECT_EQ(double_to_fp16(HUGE_VAL), 0x7C00);
  EXPECT_EQ(double_to_fp16(-HUGE_VAL), 0xFC00);
  EXPECT_EQ(double_to_fp16(1e300), 0x7C00);
  EXPECT_EQ(double_to_bf16(-1e300), 0xFF80);
  EXPECT_EQ(double_to_fp32(1e300), 0x7F800000u);
  EXPECT_EQ(double_to_fp16(1e-300), 0x0000);
  EXPECT_EQ(double_to_fp16(-1e-300), 0x8000);
  EXPECT_EQ(double_to_bf16(tiny), 0x0000);
  EXPECT_EQ(double_to_bf16(-tiny), 0x8000);
  EXPECT_EQ(double_to_fp32(-tiny), 0x80000000u);
  EXPECT_EQ(double_to_fp16(-0.0), 0x8000);
  EXPECT_EQ(double_to_fp16(65519.99), 0x7BFF);
  EXPECT_EQ(double_to_fp16(65520.0), 0x7C00);
  EXPECT_EQ(double_to_bf16(1.0), 0x3F80);
  EXPECT_EQ(double_to_fp16(1.0), 0x3C00);
}

// Half the smallest subnormal ties to zero (even); 3/2 of it ties to 2 (even).
TEST(ReductionAlu, SmallestSubnormalHalves) {
  struct F {
    std::uint32_t (*enc)(double);
    int min_exp;  // smallest subnormal = 2^min_exp
    std::uint32_t sign;
  };
  const F formats[] = {
      {[](double x) -> std::uint32_t { return double_to_fp16(x); }, -24, 0x8000},
      {[](double x) -> std::uint32_t { return double_to_bf16(x); }, -133, 0x8000},
      {double_to_fp32, -149, 0x80000000},
  };
  for (const F& f : formats) {
    const double h = std::ldexp(1.0, f.min_exp - 1);  // half the smallest subnormal
    EXPECT_EQ(f.enc(h), 0u) << f.min_exp;
    EXPECT_EQ(f.enc(std::nextafter(h, 0.0)), 0u);
    EXPECT_EQ(f.enc(std::nextafter(h, 1.0)), 1u);
    EXPECT_EQ(f.enc(h + std::ldexp(1.0, f.min_exp - 40)), 1u);
    EXPECT_EQ(f.enc(3 * h), 2u);
    EXPECT_EQ(f.enc(5 * h), 2u);
    EXPECT_EQ(f.enc(7 * h), 4u);
    EXPECT_EQ(f.enc(-h), f.sign);  // -0
    EXPECT_EQ(f.enc(-3 * h), f.sign | 2);
  }
}

// Why double_to_fp16 must not go through float: x is just above an fp16 tie,
// but rounds to float exactly onto the tie, which then goes to even (down).
TEST(ReductionAlu, NoDoubleRoundingThroughFloat) {
  const double x = 1.0 + 0x1p-11 + 0x1p-40;
  ASSERT_EQ(static_cast<double>(static_cast<float>(x)), 1.0 + 0x1p-11);
  EXPECT_EQ(double_to_fp16(x), 0x3C01);
  const double y = 1.0 + 0x1p-8 + 0x1p-30;
  ASSERT_EQ(static_cast<double>(static_cast<float>(y)), 1.0 + 0x1p-8);
  EXPECT_EQ(double_to_bf16(y), 0x3F81);
}

// ---------------------------------------------------------------- buffers and folds

std::vector<std::uint8_t> le(DType t, const std::vector<std::uint32_t>& v) {
  std::vector<std::uint8_t> out;
  for (std::uint32_t x : v) {
    for (std::size_t i = 0; i < element_bytes(t); ++i) {
      out.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
    }
  }
  return out;
}

TEST(ReductionAlu, BuffersAreLittleEndian) {
  std::vector<std::uint8_t> acc = {0x00, 0x3C, 0x00, 0x3C};       // fp16 1.0, 1.0
  const std::vector<std::uint8_t> in = {0x00, 0x3C, 0x00, 0xBC};  // 1.0, -1.0
  alu_accumulate(RedOp::kSum, DType::kFp16, acc.data(), in.data(), acc.size());
  EXPECT_EQ(acc, (std::vector<std::uint8_t>{0x00, 0x40, 0x00, 0x00}));
  std::vector<std::uint8_t> i32 = {0xFF, 0xFF, 0xFF, 0x7F};  // INT_MAX
  const std::vector<std::uint8_t> one = {0x01, 0x00, 0x00, 0x00};
  alu_accumulate(RedOp::kSum, DType::kInt32, i32.data(), one.data(), 4);
  EXPECT_EQ(i32, (std::vector<std::uint8_t>{0x00, 0x00, 0x00, 0x80}));
}

TEST(ReductionAlu, AccumulateMatchesScalarOnEveryElement) {
  Rng rng(3);
  for (DType t : {DType::kFp32, DType::kFp16, DType::kBf16, DType::kInt32}) {
    for (RedOp op : {RedOp::kSum, RedOp::kMin, RedOp::kMax}) {
      const std::size_t n = 256 / element_bytes(t);
      std::vector<std::uint32_t> a(n), b(n), want(n);
      const std::uint32_t mask = element_bytes(t) == 2 ? 0xFFFF : 0xFFFFFFFF;
      for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<std::uint32_t>(rng.next()) & mask;
        b[i] = static_cast<std::uint32_t>(rng.next()) & mask;
        want[i] = alu_apply(op, t, a[i], b[i]);
      }
      std::vector<std::uint8_t> acc = le(t, a);
      const std::vector<std::uint8_t> in = le(t, b);
      alu_accumulate(op, t, acc.data(), in.data(), acc.size());
      EXPECT_EQ(acc, le(t, want)) << to_string(t) << " " << to_string(op);
      // acc == in is allowed: x op x.
      std::vector<std::uint8_t> self = le(t, a);
      alu_accumulate(op, t, self.data(), self.data(), self.size());
      for (std::size_t i = 0; i < n; ++i) a[i] = alu_apply(op, t, a[i], a[i]);
      EXPECT_EQ(self, le(t, a));
    }
  }
}

TEST(ReductionAlu, RejectsPartialElements) {
  std::uint8_t acc[8] = {}, in[8] = {};
  EXPECT_THROW(alu_accumulate(RedOp::kSum, DType::kFp32, acc, in, 6), std::invalid_argument);
  EXPECT_THROW(alu_accumulate(RedOp::kMin, DType::kFp16, acc, in, 3), std::invalid_argument);
  EXPECT_NO_THROW(alu_accumulate(RedOp::kMin, DType::kFp16, acc, in, 6));
  EXPECT_NO_THROW(alu_accumulate(RedOp::kMin, DType::kFp32, acc, in, 0));
  const std::uint8_t* ins[] = {in};
  EXPECT_THROW(alu_reduce(RedOp::kSum, DType::kFp32, acc, ins, 0, 4), std::invalid_argument);
  EXPECT_THROW(alu_reduce(RedOp::kSum, DType::kInt32, acc, ins, 1, 5), std::invalid_argument);
}

std::uint32_t reduce_one(DType t, const std::vector<std::uint32_t>& order) {
  std::vector<std::vector<std::uint8_t>> bufs;
  bufs.reserve(order.size());
  for (std::uint32_t x : order) bufs.push_back(le(t, {x}));
  std::vector<const std::uint8_t*> ptrs;
  ptrs.reserve(bufs.size());
  for (const auto& b : bufs) ptrs.push_back(b.data());
  std::vector<std::uint8_t> out(element_bytes(t));
  alu_reduce(RedOp::kSum, t, out.data(), ptrs.data(), ptrs.size(), out.size());
  std::uint32_t r = 0;
  for (std::size_t i = 0; i < out.size(); ++i) r |= static_cast<std::uint32_t>(out[i]) << (8 * i);
  return r;
}

// Sums are left folds rounded at every step, so the order matters.
TEST(ReductionAlu, ReduceIntoFirstInput) {
  std::vector<std::uint8_t> a = le(DType::kFp32, {0x3F800000, 0x40000000});
  const std::vector<std::uint8_t> b = le(DType::kFp32, {0x3F800000, 0xC0000000});
  const std::vector<std::uint8_t> c = le(DType::kFp32, {0x40000000, 0x7FC12345});
  const std::uint8_t* in[] = {a.data(), b.data(), c.data()};
  alu_reduce(RedOp::kSum, DType::kFp32, a.data(), in, 3, a.size());  // out == in[0]
  EXPECT_EQ(a, le(DType::kFp32, {0x40800000, kFp32CanonicalNaN}));   // 4, NaN
}

TEST(ReductionAlu, SumDependsOnFoldOrder) {
  // fp32: 2^24 + 1 ties back to 2^24 (twice); 1 + 1 first gives 2^24 + 2.
  EXPECT_EQ(hex(reduce_one(DType::kFp32, {0x4B800000, 0x3F800000, 0x3F800000})), hex(0x4B800000));
  EXPECT_EQ(hex(reduce_one(DType::kFp32, {0x3F800000, 0x3F800000, 0x4B800000})), hex(0x4B800001));
  // fp32: (1e30 - 1e30) + 1 = 1, (1e30 + 1) - 1e30 = 0.
  const std::uint32_t big = double_to_fp32(1e30), nbig = big | 0x80000000u;
  EXPECT_EQ(hex(reduce_one(DType::kFp32, {big, nbig, 0x3F800000})), hex(0x3F800000));
  EXPECT_EQ(hex(reduce_one(DType::kFp32, {big, 0x3F800000, nbig})), hex(0));
  // fp16 and bf16, same idea.
  EXPECT_EQ(reduce_one(DType::kFp16, {0x6800, 0x3C00, 0x3C00}), 0x6800u);
  EXPECT_EQ(reduce_one(DType::kFp16, {0x3C00, 0x3C00, 0x6800}), 0x6801u);
  EXPECT_EQ(reduce_one(DType::kBf16, {0x4380, 0x3F80, 0x3F80}), 0x4380u);
  EXPECT_EQ(reduce_one(DType::kBf16, {0x3F80, 0x3F80, 0x4380}), 0x4381u);
  // Overflow is sticky: (max + max) - max = Inf, (max - max) + max = max.
  EXPECT_EQ(reduce_one(DType::kFp16, {0x7BFF, 0x7BFF, 0xFBFF}), 0x7C00u);
  EXPECT_EQ(reduce_one(DType::kFp16, {0x7BFF, 0xFBFF, 0x7BFF}), 0x7BFFu);
  // A single input is copied bit for bit (no operation, so no NaN
  // canonicalisation); int32 order never matters.
  EXPECT_EQ(reduce_one(DType::kBf16, {0x7FA5}), 0x7FA5u);
  EXPECT_EQ(reduce_one(DType::kInt32, {0x7FFFFFFF, 1, 0xFFFFFFFF}),
            reduce_one(DType::kInt32, {0xFFFFFFFF, 1, 0x7FFFFFFF}));
}

// ---------------------------------------------------------------- names

TEST(ReductionAlu, NamesRoundTrip) {
  for (DType t : {DType::kFp32, DType::kFp16, DType::kBf16, DType::kInt32}) {
    EXPECT_EQ(parse_dtype(to_string(t)), t);
  }
  for (RedOp op : {RedOp::kSum, RedOp::kMin, RedOp::kMax}) {
    EXPECT_EQ(parse_redop(to_string(op)), op);
  }
  EXPECT_EQ(to_string(DType::kBf16), "bf16");
  EXPECT_EQ(to_string(RedOp::kMax), "max");
  EXPECT_EQ(element_bytes(DType::kFp32), 4u);
  EXPECT_EQ(element_bytes(DType::kFp16), 2u);
  EXPECT_EQ(element_bytes(DType::kBf16), 2u);
  EXPECT_EQ(element_bytes(DType::kInt32), 4u);
  DType t = DType::kInt32;
  RedOp op = RedOp::kMax;
  for (const char* bad : {"", "FP32", "f32", "float", "int", "fp32 "}) {
    EXPECT_FALSE(try_parse_dtype(bad, t)) << bad;
    EXPECT_THROW(parse_dtype(bad), std::invalid_argument) << bad;
  }
  for (const char* bad : {"", "Sum", "add", "avg", "prod"}) {
    EXPECT_FALSE(try_parse_redop(bad, op)) << bad;
    EXPECT_THROW(parse_redop(bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(t, DType::kInt32);  // untouched on failure
  EXPECT_EQ(op, RedOp::kMax);
  EXPECT_TRUE(try_parse_dtype("int32", t));
  EXPECT_EQ(t, DType::kInt32);
}

}  // namespace
}  // namespace fabricsim
