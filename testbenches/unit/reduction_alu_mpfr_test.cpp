// Independent check of the reduction ALU's floating point sums and conversions
// against GNU MPFR. MPFR computes the exact sum (320 bits hold any fp32 sum:
// 2^128 .. 2^-149 is 278 bits), then rounds it once to the target format with
// mpfr_set (precision), mpfr_check_range (overflow, exponent range) and
// mpfr_subnormalize (subnormal precision loss without double rounding).
// Operands and results cross to and from bit patterns through ldexp/ilogb here,
// not through the model's own conversions.
#include <gmp.h>
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "models/core/reduction_alu.hpp"
#include "models/core/rng.hpp"

namespace fabricsim {
namespace {

struct Format {
  DType t;
  int exp_bits, frac_bits;
  std::uint32_t canonical_nan;

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  int emin() const { return 1 - bias(); }  // smallest normal exponent
  std::uint32_t max_exp_field() const { return (1u << exp_bits) - 1; }
  std::uint32_t sign() const { return 1u << (exp_bits + frac_bits); }
  std::uint32_t mask() const { return (sign() << 1) - 1; }
  std::uint32_t inf() const { return max_exp_field() << frac_bits; }
  // MPFR writes x = 0.1b... * 2^e, one more than the IEEE exponent: the
  // smallest subnormal 2^(emin - frac_bits) has MPFR exponent emin - frac_bits + 1,
  // and the largest finite (< 2^(bias+1)) has bias + 1.
  mpfr_exp_t mpfr_emin() const { return emin() - frac_bits + 1; }
  mpfr_exp_t mpfr_emax() const { return bias() + 1; }
};

const Format kFp32{DType::kFp32, 8, 23, kFp32CanonicalNaN};
const Format kFp16{DType::kFp16, 5, 10, kFp16CanonicalNaN};
const Format kBf16{DType::kBf16, 8, 7, kBf16CanonicalNaN};

std::string hex(std::uint32_t x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", x);
  return buf;
}

bool is_nan(const Format& f, std::uint32_t x) {
  return (x & (f.sign() - 1)) > f.inf();
}

// Bit pattern -> double (exact), by the textbook formula.
double ref_decode(const Format& f, std::uint32_t x) {
  const double s = (x & f.sign()) ? -1.0 : 1.0;
  const std::uint32_t e = (x >> f.frac_bits) & f.max_exp_field();
  const std::uint32_t m = x & ((1u << f.frac_bits) - 1);
  if (e == f.max_exp_field()) return m ? std::numeric_limits<double>::quiet_NaN() : s * HUGE_VAL;
  if (e == 0) return s * std::ldexp(m, f.emin() - f.frac_bits);
  return s * std::ldexp((1u << f.frac_bits) + m, static_cast<int>(e) - f.bias() - f.frac_bits);
}

// Double holding a value of the format (or +-Inf / signed zero) -> bit pattern.
std::uint32_t ref_encode(const Format& f, double v) {
  const std::uint32_t s = std::signbit(v) ? f.sign() : 0;
  const double a = std::fabs(v);
  if (std::isinf(a)) return s | f.inf();
  if (a == 0) return s;
  const int e = std::ilogb(a);
  double field = 0;
  std::uint32_t bits = 0;
  if (e >= f.emin()) {
    field = std::ldexp(a, f.frac_bits - e) - std::ldexp(1.0, f.frac_bits);
    bits = static_cast<std::uint32_t>(e + f.bias()) << f.frac_bits;
  } else {
    field = std::ldexp(a, f.frac_bits - f.emin());
    bits = 0;
  }
  EXPECT_EQ(field, std::floor(field)) << v << " is not a value of the format";
  EXPECT_LE(e, f.bias()) << v;
  return s | bits | static_cast<std::uint32_t>(field);
}

// MPFR state for one format: exact sums, and rounding to the format.
class Reference {
 public:
  explicit Reference(const Format& f) : f_(f) {
    mpfr_inits2(53, a_, b_, static_cast<mpfr_ptr>(nullptr));
    mpfr_init2(exact_, 320);
    mpfr_init2(y_, f.frac_bits + 1);
    mpfr_init2(tie_, f.frac_bits + 2);
  }
  ~Reference() { mpfr_clears(a_, b_, exact_, y_, tie_, static_cast<mpfr_ptr>(nullptr)); }
  Reference(const Reference&) = delete;
  Reference& operator=(const Reference&) = delete;

  // Round `x` (a value in the default, huge exponent range) to the format.
  std::uint32_t round(mpfr_srcptr x) {
    if (mpfr_nan_p(x)) return f_.canonical_nan;
    int t = mpfr_set(y_, x, MPFR_RNDN);  // to the format's precision, unbounded exponent
    const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
    mpfr_set_emin(f_.mpfr_emin());
    mpfr_set_emax(f_.mpfr_emax());
    t = mpfr_check_range(y_, t, MPFR_RNDN);      // overflow to Inf per RNE
    mpfr_subnormalize(y_, t, MPFR_RNDN);         // subnormal grid, using t for ties
    const double d = mpfr_get_d(y_, MPFR_RNDN);  // exact: <= 24 bits, in range
    mpfr_set_emin(old_emin);
    mpfr_set_emax(old_emax);
    return ref_encode(f_, d);
  }

  std::uint32_t sum(std::uint32_t a, std::uint32_t b) {
    if (is_nan(f_, a) || is_nan(f_, b)) return f_.canonical_nan;
    mpfr_set_d(a_, ref_decode(f_, a), MPFR_RNDN);
    mpfr_set_d(b_, ref_decode(f_, b), MPFR_RNDN);
    EXPECT_EQ(mpfr_add(exact_, a_, b_, MPFR_RNDN), 0) << "sum not exact at 320 bits";
    // Coverage: a tie needs exactly one more bit than the format has.
    if (mpfr_number_p(exact_) && mpfr_set(y_, exact_, MPFR_RNDN) != 0 &&
        mpfr_set(tie_, exact_, MPFR_RNDN) == 0) {
      ++ties;
    }
    return round(exact_);  // Inf + -Inf is an MPFR NaN -> canonical
  }

  long ties = 0;  // sums exactly halfway between two neighbours (unbounded exponent)

  // IEEE minimum/maximum: NaN propagates (MPFR's min/max would ignore it).
  std::uint32_t minmax(bool is_max, std::uint32_t a, std::uint32_t b) {
    if (is_nan(f_, a) || is_nan(f_, b)) return f_.canonical_nan;
    mpfr_set_d(a_, ref_decode(f_, a), MPFR_RNDN);
    mpfr_set_d(b_, ref_decode(f_, b), MPFR_RNDN);
    if (is_max) {
      mpfr_max(exact_, a_, b_, MPFR_RNDN);  // max(-0, +0) = +0
    } else {
      mpfr_min(exact_, a_, b_, MPFR_RNDN);  // min(-0, +0) = -0
    }
    return ref_encode(f_, mpfr_get_d(exact_, MPFR_RNDN));
  }

  std::uint32_t from_double(double x) {
    mpfr_set_d(a_, x, MPFR_RNDN);
    return round(a_);
  }

 private:
  const Format& f_;
  mpfr_t a_{}, b_{}, exact_{}, y_{}, tie_{};  // set up by mpfr_init*
};

// ------------------------------------------------------------ operand mixes

std::uint32_t make(const Format& f, std::uint32_t sign, std::uint32_t exp_field,
                   std::uint32_t frac) {
  return (sign ? f.sign() : 0) | (exp_field << f.frac_bits) | (frac & ((1u << f.frac_bits) - 1));
}

std::uint32_t exp_of(const Format& f, std::uint32_t x) {
  return (x >> f.frac_bits) & f.max_exp_field();
}

enum Mix { kRandomBits, kSpecials, kCloseExp, kFarExp, kCancel, kTies, kSubnormal, kOverflow };
constexpr int kMixes = 8;
const char* const kMixNames[kMixes] = {"random bits",   "specials",          "close exponents",
                                       "far exponents", "near cancellation", "ties",
                                       "subnormal",     "near overflow"};

struct Operands {
  std::uint32_t a, b;
};

Operands draw(const Format& f, Mix mix, Rng& rng) {
  const std::uint32_t top = f.max_exp_field() - 1;  // largest finite exponent field
  auto bits = [&] { return static_cast<std::uint32_t>(rng.next()) & f.mask(); };
  auto finite = [&] {  // random finite value
    return make(f, rng.below(2), static_cast<std::uint32_t>(rng.below(top + 1)), bits());
  };
  auto clamp_exp = [&](long e) {
    return static_cast<std::uint32_t>(e < 0 ? 0 : e > static_cast<long>(top) ? top : e);
  };
  const std::uint32_t specials[] = {
      0,
      f.sign(),
      f.inf(),
      f.sign() | f.inf(),
      f.canonical_nan,
      f.inf() | 1,               // signalling NaN
      f.inf() | f.sign() | 0x5,  // negative signalling NaN with payload
      1,                         // smallest subnormal
      f.sign() | 1,              //
      (1u << f.frac_bits) - 1,   // largest subnormal
      1u << f.frac_bits,         // smallest normal
      f.inf() - 1,               // largest finite
      f.sign() | (f.inf() - 1),  //
      make(f, 0, f.bias(), 0),   // 1.0
      make(f, 1, f.bias(), 0),   // -1.0
      make(f, 0, f.bias(), 1),   // 1 + ulp
  };
  const std::uint32_t a = finite();
  const long ea = exp_of(f, a);
  switch (mix) {
    case kRandomBits:
      return {bits(), bits()};
    case kSpecials: {
      const std::size_t n = sizeof specials / sizeof specials[0];
      const std::uint32_t s = specials[rng.below(n)];
      return {s, rng.below(2) ? specials[rng.below(n)] : bits()};
    }
    case kCloseExp:
      return {a,
              make(f, rng.below(2), clamp_exp(ea + static_cast<long>(rng.below(7)) - 3), bits())};
    case kFarExp: {
      // b's leading bit from just inside a's significand to far below it.
      const long d = f.frac_bits - 2 + static_cast<long>(rng.below(3 * f.frac_bits + 60));
      return {a, make(f, rng.below(2), clamp_exp(ea - d), bits())};
    }
    case kCancel: {
      // -a nudged by a few units in the last place: massive cancellation.
      const long mag = static_cast<long>(a & (f.sign() - 1)) + static_cast<long>(rng.below(17)) - 8;
      const auto m = static_cast<std::uint32_t>(mag < 0                                ? 0
                                                : mag > static_cast<long>(f.inf() - 1) ? f.inf() - 1
                                                                                       : mag);
      return {a, (~a & f.sign()) | m};
    }
    case kTies: {
      // b's leading bit at or near a's rounding position, with many trailing
      // zeros, so the exact sum is often exactly halfway.
      const long d = f.frac_bits + 1 + static_cast<long>(rng.below(3)) - 1;
      const auto zeros = static_cast<std::uint32_t>(rng.below(f.frac_bits + 1));
      const std::uint32_t frac = (bits() >> zeros) << zeros;
      return {a, make(f, rng.below(2), clamp_exp(ea - d), frac)};
    }
    case kSubnormal:
      return {make(f, rng.below(2), static_cast<std::uint32_t>(rng.below(3)), bits()),
              make(f, rng.below(2), static_cast<std::uint32_t>(rng.below(3)), bits())};
    case kOverflow: {
      const std::uint32_t s = rng.below(8) == 0;  // mostly the same sign
      return {make(f, 0, top - static_cast<std::uint32_t>(rng.below(3)), bits()),
              make(f, s, top - static_cast<std::uint32_t>(rng.below(f.frac_bits + 4) / 4), bits())};
    }
  }
  return {0, 0};
}

void check_ops(const Format& f, int pairs_per_mix) {
  Reference ref(f);
  Rng rng(2024, static_cast<std::uint64_t>(f.t));
  int failures = 0;
  long nan = 0, overflow = 0, subnormal = 0, zero = 0;  // sum outcomes, for coverage
  for (int m = 0; m < kMixes; ++m) {
    for (int i = 0; i < pairs_per_mix; ++i) {
      const Operands o = draw(f, static_cast<Mix>(m), rng);
      const std::uint32_t want[3] = {ref.sum(o.a, o.b), ref.minmax(false, o.a, o.b),
                                     ref.minmax(true, o.a, o.b)};
      const std::uint32_t mag = want[0] & (f.sign() - 1);
      nan += mag > f.inf();
      overflow +=
          mag == f.inf() && (o.a & (f.sign() - 1)) < f.inf() && (o.b & (f.sign() - 1)) < f.inf();
      subnormal += mag != 0 && mag < (1u << f.frac_bits);
      zero += mag == 0;
      for (int op = 0; op < 3; ++op) {
        const std::uint32_t got = alu_apply(static_cast<RedOp>(op), f.t, o.a, o.b);
        if (got != want[op] && ++failures <= 10) {
          ADD_FAILURE() << to_string(f.t) << " " << to_string(static_cast<RedOp>(op)) << "("
                        << hex(o.a) << ", " << hex(o.b) << ") = " << hex(got) << ", MPFR says "
                        << hex(want[op]) << " [" << kMixNames[m] << "]";
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
  std::printf("%s: %d pairs; sums: %ld ties, %ld overflows, %ld subnormal, %ld zero, %ld NaN\n",
              to_string(f.t).c_str(), kMixes * pairs_per_mix, ref.ties, overflow, subnormal, zero,
              nan);
  // The mixes must keep reaching the interesting cases.
  EXPECT_GE(ref.ties, pairs_per_mix / 8);
  EXPECT_GE(overflow, pairs_per_mix / 8);
  EXPECT_GE(subnormal, pairs_per_mix / 8);
  EXPECT_GE(zero, pairs_per_mix / 32);
  EXPECT_GE(nan, pairs_per_mix / 8);
}

// Doubles spread over the format's range and beyond, plus exact midpoints
// between neighbours and their double neighbours.
void check_from_double(const Format& f, std::uint32_t (*convert)(double), int count) {
  Reference ref(f);
  Rng rng(77, static_cast<std::uint64_t>(f.t));
  int failures = 0;
  const int lo = f.emin() - f.frac_bits - 3, hi = f.bias() + 2;
  for (int i = 0; i < count; ++i) {
    double x = 0;
    switch (i % 4) {
      case 0: {  // any double, including NaN, Inf, subnormal doubles
        const std::uint64_t u = rng.next();
        std::memcpy(&x, &u, sizeof x);
        break;
      }
      case 1:  // random significand, exponent in and around the range
        x = std::ldexp(1.0 + rng.uniform(), lo + static_cast<int>(rng.below(hi - lo + 1)));
        break;
      default: {  // midpoint between a finite value and its successor, +- 1 double ulp
        const auto v = static_cast<std::uint32_t>(rng.below(f.inf()));
        const double lo_v = ref_decode(f, v);
        const double hi_v =
            v + 1 == f.inf() ? 2 * lo_v - ref_decode(f, v - 1) : ref_decode(f, v + 1);
        x = lo_v + (hi_v - lo_v) / 2;
        const int k = static_cast<int>(rng.below(3));
        if (k == 0) x = std::nextafter(x, 0.0);
        if (k == 2) x = std::nextafter(x, HUGE_VAL);
        break;
      }
    }
    if (rng.below(2)) x = -x;
    const std::uint32_t got = convert(x), want = ref.from_double(x);
    if (got != want && ++failures <= 10) {
      ADD_FAILURE() << "double_to_" << to_string(f.t) << "(" << x << ") = " << hex(got)
                    << ", MPFR says " << hex(want);
    }
  }
  EXPECT_EQ(failures, 0);
}

constexpr int kPairsPerMix = 32000;  // x 8 mixes = 256k pairs per format
constexpr int kDoubles = 200000;

TEST(ReductionAluMpfr, Fp32OpsMatchMpfr) {
  check_ops(kFp32, kPairsPerMix);
}
TEST(ReductionAluMpfr, Fp16OpsMatchMpfr) {
  check_ops(kFp16, kPairsPerMix);
}
TEST(ReductionAluMpfr, Bf16OpsMatchMpfr) {
  check_ops(kBf16, kPairsPerMix);
}

TEST(ReductionAluMpfr, DoubleToFp32MatchesMpfr) {
  check_from_double(kFp32, double_to_fp32, kDoubles);
}
TEST(ReductionAluMpfr, DoubleToFp16MatchesMpfr) {
  check_from_double(
      kFp16, [](double x) -> std::uint32_t { return double_to_fp16(x); }, kDoubles);
}
TEST(ReductionAluMpfr, DoubleToBf16MatchesMpfr) {
  check_from_double(
      kBf16, [](double x) -> std::uint32_t { return double_to_bf16(x); }, kDoubles);
}

}  // namespace
}  // namespace fabricsim
