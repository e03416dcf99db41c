#include "models/core/reduction_alu.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>

namespace fabricsim {

// fp32 sums and double_to_fp32 use the hardware double -> float conversion.
// That is IEEE round-to-nearest-even with subnormals in the default floating
// point environment (SSE on x86-64; the simulator never changes the rounding
// mode or sets flush-to-zero / denormals-are-zero).
static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "the reduction ALU model needs IEEE binary32 / binary64");

namespace {

std::uint64_t bits_of(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

double double_of(std::uint64_t u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// An IEEE 754 style binary format: sign, kExp exponent bits, kFrac stored
// fraction bits, implicit leading 1 for normal numbers.
template <int kExp, int kFrac>
struct Format {
  static constexpr int kBias = (1 << (kExp - 1)) - 1;
  static constexpr std::uint32_t kSign = 1u << (kExp + kFrac);
  static constexpr std::uint32_t kInf = ((1u << kExp) - 1) << kFrac;
  static constexpr std::uint32_t kNaN = kInf | (1u << (kFrac - 1));  // quiet bit only
  static constexpr std::uint32_t kMask = (kSign << 1) - 1;

  static bool is_nan(std::uint32_t x) { return (x & (kSign - 1)) > kInf; }

  // Exact: every value of the format is a double (at most 24 significant bits,
  // exponents within double's normal range).
  static double decode(std::uint32_t x) {
    const std::uint64_t sign = static_cast<std::uint64_t>((x & kSign) != 0) << 63;
    const std::uint32_t e = (x >> kFrac) & ((1u << kExp) - 1);
    const std::uint64_t frac = x & ((1u << kFrac) - 1);
    if (e == (1u << kExp) - 1) {  // Inf, or NaN (returned quiet; only "is NaN" matters)
      return double_of(sign | (0x7FFull << 52) | (frac ? 1ull << 51 : 0));
    }
    if (e == 0) {
      if (frac == 0) return double_of(sign);  // signed zero
      // frac * 2^(1 - bias - kFrac): convert the integer exactly, then scale by
      // adding to the (normal) double's exponent field.
      // (Unsigned wrap-around adds the negative scale; the field stays > 0.)
      const auto scale = static_cast<std::uint64_t>(static_cast<std::int64_t>(1 - kBias - kFrac));
      return double_of(sign | (bits_of(static_cast<double>(frac)) + (scale << 52)));
    }
    const auto de = static_cast<std::uint64_t>(static_cast<int>(e) - kBias + 1023);
    return double_of(sign | (de << 52) | (frac << (52 - kFrac)));
  }

  // Round a double to this format, nearest with ties to even, in one step.
  static std::uint32_t encode(double x) {
    const std::uint64_t d = bits_of(x);
    const std::uint32_t sign = (d >> 63) ? kSign : 0;
    const int dexp = static_cast<int>((d >> 52) & 0x7FF);
    std::uint64_t mant = d & ((1ull << 52) - 1);
    if (dexp == 0x7FF) return mant ? kNaN : (sign | kInf);
    // Zero or a double subnormal (< 2^-1022): far below half the smallest
    // subnormal of any target (>= 2^-150), so it rounds to a signed zero.
    if (dexp == 0) return sign;
    const int e = dexp - 1023;          // |x| = 1.mant * 2^e
    if (e > kBias) return sign | kInf;  // |x| >= 2^(emax+1): beyond the overflow threshold
    mant |= 1ull << 52;                 // 53-bit significand
    int biased = e + kBias;             // target exponent field if normal
    int drop = 52 - kFrac;              // low significand bits rounded away
    std::uint32_t base = 0;
    if (biased >= 1) {
      // Normal: q below has the implicit bit, so the field is biased-1 plus q;
      // a rounding carry out of q (q = 2^(kFrac+1)) steps the exponent, and
      // from the largest binade lands exactly on the Inf encoding.
      base = static_cast<std::uint32_t>(biased - 1) << kFrac;
    } else {
      // Subnormal: the grid is fixed at 2^(1-bias-kFrac), drop 1-biased more
      // bits. A carry to 2^kFrac gives the smallest normal's encoding.
      drop += 1 - biased;
      if (drop > 63) drop = 63;  // mant < 2^53 < half of 2^63: rounds to 0 either way
    }
    std::uint64_t q = mant >> drop;
    const std::uint64_t rem = mant & ((1ull << drop) - 1);
    const std::uint64_t half = 1ull << (drop - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return sign | (base + static_cast<std::uint32_t>(q));
  }
};

using Fp16 = Format<5, 10>;
using Bf16 = Format<8, 7>;

// fp32 shares the generic bit layout helpers but converts with the hardware
// (same results, see the static_assert above; the MPFR test checks both).
struct Fp32 : Format<8, 23> {
  static double decode(std::uint32_t x) {
    float f;
    std::memcpy(&f, &x, sizeof f);
    return static_cast<double>(f);  // exact; a signalling NaN comes back quiet
  }
  static std::uint32_t encode(double x) {
    if (x != x) return kNaN;
    const auto f = static_cast<float>(x);  // one IEEE RNE rounding, overflow to Inf
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
  }
};

// Floating point sum of two values of format F.
//
// Why one double addition followed by one rounding is exact IEEE:
//  * fp16: values are multiples of 2^-24 below 2^16, so a sum is a multiple of
//    2^-24 below 2^17: at most 41 significant bits, exact in double. Only the
//    final encode rounds.
//  * bf16, fp32 (p = 8, 24 bits): the exact sum may need up to ~280 bits, so
//    the double addition can round. Double rounding is innocuous for + when the
//    intermediate precision p' >= 2p + 2 (Figueroa 1995); 53 >= 18 and 53 >= 50.
//    The theorem is for unbounded exponents, which covers our bounded ones:
//    - a result below 2^-126 (the subnormal range) is exact: inputs are
//      multiples of the smallest subnormal, so is the sum, and it fits both in
//      double and in the target; no rounding happens at all;
//    - IEEE overflow is decided on the unbounded-exponent rounded value, which
//      the theorem says is the same after the double step; and double's range
//      (2^1024) holds any sum (< 2^129) without overflow.
//  * Signed zeros and NaNs come from the double addition, which follows IEEE:
//    x + (-x) = +0 under RNE, (-0) + (-0) = -0, Inf + -Inf = NaN, NaN in ->
//    NaN out. A non-zero exact sum is at least the smallest subnormal, so it
//    never rounds to zero. encode() canonicalises every NaN.
template <class F>
std::uint32_t fp_sum(std::uint32_t a, std::uint32_t b) {
  return F::encode(F::decode(a) + F::decode(b));
}

// Total order on non-NaN bit patterns: negative values reversed below the
// positive ones, so -0 (key 0x7F..) < +0 (key 0x80..). Min/max return one of
// the inputs unchanged.
template <class F>
std::uint32_t order_key(std::uint32_t x) {
  return (x & F::kSign) ? (~x & F::kMask) : (x | F::kSign);
}

template <class F>
std::uint32_t fp_min(std::uint32_t a, std::uint32_t b) {
  if (F::is_nan(a) || F::is_nan(b)) return F::kNaN;
  return order_key<F>(b) < order_key<F>(a) ? b : a;
}

template <class F>
std::uint32_t fp_max(std::uint32_t a, std::uint32_t b) {
  if (F::is_nan(a) || F::is_nan(b)) return F::kNaN;
  return order_key<F>(b) > order_key<F>(a) ? b : a;
}

// int32: the sum wraps modulo 2^32 like a two's-complement adder.
std::uint32_t int_sum(std::uint32_t a, std::uint32_t b) {
  return a + b;
}
std::uint32_t int_min(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(b) < static_cast<std::int32_t>(a) ? b : a;
}
std::uint32_t int_max(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(b) > static_cast<std::int32_t>(a) ? b : a;
}

// Little-endian element access, independent of the host byte order.
template <std::size_t W>
std::uint32_t load_le(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < W; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

template <std::size_t W>
void store_le(std::uint8_t* p, std::uint32_t v) {
  for (std::size_t i = 0; i < W; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// One loop per (op, dtype): the dispatch happens once per buffer, not per element.
template <std::size_t W, std::uint32_t (*Fn)(std::uint32_t, std::uint32_t)>
void accumulate(std::uint8_t* acc, const std::uint8_t* in, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += W) {
    store_le<W>(acc + i, Fn(load_le<W>(acc + i), load_le<W>(in + i)));
  }
}

using Kernel = void (*)(std::uint8_t*, const std::uint8_t*, std::size_t);
using Scalar = std::uint32_t (*)(std::uint32_t, std::uint32_t);

// Tables indexed [dtype][op], in enum order.
constexpr Scalar kScalar[4][3] = {
    {fp_sum<Fp32>, fp_min<Fp32>, fp_max<Fp32>},
    {fp_sum<Fp16>, fp_min<Fp16>, fp_max<Fp16>},
    {fp_sum<Bf16>, fp_min<Bf16>, fp_max<Bf16>},
    {int_sum, int_min, int_max},
};

constexpr Kernel kKernel[4][3] = {
    {accumulate<4, fp_sum<Fp32>>, accumulate<4, fp_min<Fp32>>, accumulate<4, fp_max<Fp32>>},
    {accumulate<2, fp_sum<Fp16>>, accumulate<2, fp_min<Fp16>>, accumulate<2, fp_max<Fp16>>},
    {accumulate<2, fp_sum<Bf16>>, accumulate<2, fp_min<Bf16>>, accumulate<2, fp_max<Bf16>>},
    {accumulate<4, int_sum>, accumulate<4, int_min>, accumulate<4, int_max>},
};

std::size_t index_of(DType t) {
  const auto i = static_cast<std::size_t>(t);
  if (i > 3) throw std::invalid_argument("reduction ALU: bad dtype " + std::to_string(i));
  return i;
}

std::size_t index_of(RedOp op) {
  const auto i = static_cast<std::size_t>(op);
  if (i > 2) throw std::invalid_argument("reduction ALU: bad op " + std::to_string(i));
  return i;
}

constexpr const char* kDTypeNames[4] = {"fp32", "fp16", "bf16", "int32"};
constexpr const char* kOpNames[3] = {"sum", "min", "max"};

}  // namespace

std::string to_string(DType t) {
  return kDTypeNames[index_of(t)];
}
std::string to_string(RedOp op) {
  return kOpNames[index_of(op)];
}

bool try_parse_dtype(std::string_view name, DType& out) {
  for (std::size_t i = 0; i < 4; ++i) {
    if (name == kDTypeNames[i]) {
      out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

bool try_parse_redop(std::string_view name, RedOp& out) {
  for (std::size_t i = 0; i < 3; ++i) {
    if (name == kOpNames[i]) {
      out = static_cast<RedOp>(i);
      return true;
    }
  }
  return false;
}

DType parse_dtype(std::string_view name) {
  DType t{};
  if (!try_parse_dtype(name, t)) {
    throw std::invalid_argument("unknown reduction data type '" + std::string(name) +
                                "' (allowed: fp32, fp16, bf16, int32)");
  }
  return t;
}

RedOp parse_redop(std::string_view name) {
  RedOp op{};
  if (!try_parse_redop(name, op)) {
    throw std::invalid_argument("unknown reduction op '" + std::string(name) +
                                "' (allowed: sum, min, max)");
  }
  return op;
}

std::uint32_t alu_apply(RedOp op, DType t, std::uint32_t a, std::uint32_t b) {
  if (element_bytes(t) == 2) {
    a &= 0xFFFFu;
    b &= 0xFFFFu;
  }
  return kScalar[index_of(t)][index_of(op)](a, b);
}

void alu_accumulate(RedOp op, DType t, std::uint8_t* acc, const std::uint8_t* in,
                    std::size_t bytes) {
  if (bytes % element_bytes(t) != 0) {
    throw std::invalid_argument("reduction ALU: " + std::to_string(bytes) +
                                " bytes is not a whole number of " + to_string(t) + " elements");
  }
  kKernel[index_of(t)][index_of(op)](acc, in, bytes);
}

void alu_reduce(RedOp op, DType t, std::uint8_t* out, const std::uint8_t* const* in, std::size_t n,
                std::size_t bytes) {
  if (n == 0) throw std::invalid_argument("reduction ALU: reduce of no inputs");
  if (bytes % element_bytes(t) != 0) {
    throw std::invalid_argument("reduction ALU: " + std::to_string(bytes) +
                                " bytes is not a whole number of " + to_string(t) + " elements");
  }
  if (out != in[0]) std::memcpy(out, in[0], bytes);
  const Kernel k = kKernel[index_of(t)][index_of(op)];
  for (std::size_t i = 1; i < n; ++i) k(out, in[i], bytes);
}

std::uint32_t double_to_fp32(double x) {
  return Fp32::encode(x);
}
std::uint16_t double_to_fp16(double x) {
  return static_cast<std::uint16_t>(Fp16::encode(x));
}
std::uint16_t double_to_bf16(double x) {
  return static_cast<std::uint16_t>(Bf16::encode(x));
}
double fp32_to_double(std::uint32_t bits) {
  return Fp32::decode(bits);
}
double fp16_to_double(std::uint16_t bits) {
  return Fp16::decode(bits);
}
double bf16_to_double(std::uint16_t bits) {
  return Bf16::decode(bits);
}

}  // namespace fabricsim
