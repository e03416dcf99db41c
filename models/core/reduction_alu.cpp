#include "models/core/reduction_alu.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace fabricsim {

// fp32 and bf16 sums use the hardware binary32 adder and double_to_fp32 the
// hardware double -> float conversion. Both are IEEE round-to-nearest-even
// with subnormals in the default floating point environment (SSE on x86-64,
// where float arithmetic is not widened). The simulator never changes the
// rounding mode or sets flush-to-zero / denormals-are-zero.
static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "the reduction ALU model needs IEEE binary32 / binary64");

namespace {

std::uint64_t bits_of(double x) {
  std::uint64_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

double double_of(std::uint64_t u) {
  double x = 0;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

std::uint32_t bits_of(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float float_of(std::uint32_t u) {
  float x = 0;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// An IEEE 754 style binary format: sign, kExp exponent bits, kFrac stored
// fraction bits, implicit leading 1 for normal numbers.
template <int kExp, int kFrac>
struct Format {
  static constexpr int kBias = (1 << (kExp - 1)) - 1;
  static constexpr int kBits = 1 + kExp + kFrac;
  static constexpr std::uint32_t kSign = 1u << (kExp + kFrac);
  static constexpr std::uint32_t kInf = ((1u << kExp) - 1) << kFrac;
  static constexpr std::uint32_t kNaN = kInf | (1u << (kFrac - 1));  // quiet bit only

  static bool is_nan(std::uint32_t x) { return (x & (kSign - 1)) > kInf; }

  // Double exponent field minus ours: rebiases a normal number.
  static constexpr std::uint64_t kRebias = static_cast<std::uint64_t>(1023 - kBias) << 52;
  static constexpr int kDrop = 52 - kFrac;  // double fraction bits we do not have

  // Exact: every value of the format is a double (at most 24 significant bits,
  // exponents within double's normal range).
  static double decode(std::uint32_t x) {
    const std::uint64_t sign = static_cast<std::uint64_t>(x & kSign) << (63 - kExp - kFrac);
    const std::uint64_t mag = x & (kSign - 1);
    const auto e = static_cast<std::uint32_t>(mag >> kFrac);
    if (e - 1 < (1u << kExp) - 2) {  // normal (e != 0 and e != all ones)
      return double_of(sign | ((mag << kDrop) + kRebias));
    }
    if (e != 0) {  // Inf, or NaN (returned quiet; only "is NaN" matters)
      return double_of(sign | (0x7FFull << 52) | (mag > kInf ? 1ull << 51 : 0));
    }
    if (mag == 0) return double_of(sign);  // signed zero
    // Subnormal: mag * 2^(1 - bias - kFrac). Convert the integer exactly, then
    // scale by adding to the (normal) double's exponent field (unsigned
    // wrap-around adds the negative scale; the field stays > 0).
    const auto scale = static_cast<std::uint64_t>(static_cast<std::int64_t>(1 - kBias - kFrac));
    return double_of(sign | (bits_of(static_cast<double>(mag)) + (scale << 52)));
  }

  // Round a double to this format, nearest with ties to even, in one step.
  static std::uint32_t encode(double x) {
    const std::uint64_t d = bits_of(x);
    const std::uint32_t sign = (d >> 63) ? kSign : 0;
    const std::uint64_t u = d & ~(1ull << 63);  // |x|, ordered like the value
    // Common case: |x| from our smallest normal up to (not including) the
    // overflow threshold, max finite + half an ulp. Rebias the exponent in
    // place and round the fraction: a carry out of the fraction steps the
    // exponent, and the threshold bound keeps the result finite.
    constexpr std::uint64_t kMinNormal = static_cast<std::uint64_t>(1023 + 1 - kBias) << 52;
    constexpr std::uint64_t kOverflow = (static_cast<std::uint64_t>(1023 + kBias) << 52) |
                                        (((1ull << (kFrac + 1)) - 1) << (kDrop - 1));
    if (u - kMinNormal < kOverflow - kMinNormal) {
      return sign | static_cast<std::uint32_t>(round_shift(u - kRebias, kDrop));
    }
    if (u >= kOverflow) return u > (0x7FFull << 52) ? kNaN : (sign | kInf);
    // Below our smallest normal. Zero or a double subnormal (< 2^-1022) is far
    // below half the smallest subnormal of any target (>= 2^-150): signed zero.
    const int dexp = static_cast<int>(u >> 52);
    if (dexp == 0) return sign;
    // Subnormal grid 2^(1-bias-kFrac): keep the 53-bit significand shifted by
    // kDrop plus the distance to the smallest normal exponent. A carry to
    // 2^kFrac gives the smallest normal's encoding, as it should.
    const std::uint64_t mant = (u & ((1ull << 52) - 1)) | (1ull << 52);
    const int drop = kDrop + (1 - kBias) - (dexp - 1023);  // > kDrop
    if (drop > 63) return sign;  // mant < 2^53 <= half of 2^drop: rounds to 0
    return sign | static_cast<std::uint32_t>(round_shift(mant, drop));
  }

  // v / 2^n rounded to nearest, ties to even, without branches: add just
  // under half a unit plus the kept lsb, then truncate. The discarded part
  // carries into the kept part iff it is above half, or exactly half with an
  // odd lsb. n in [1, 63], v < 2^63.
  static std::uint64_t round_shift(std::uint64_t v, int n) {
    return (v + ((1ull << (n - 1)) - 1) + ((v >> n) & 1)) >> n;
  }
};

using Fp16 = Format<5, 10>;
using Bf16 = Format<8, 7>;

// fp32 conversions go through the hardware (the MPFR test checks them too).
struct Fp32 : Format<8, 23> {
  static double decode(std::uint32_t x) {
    return static_cast<double>(float_of(x));  // exact; a signalling NaN comes back quiet
  }
  static std::uint32_t encode(double x) {
    if (x != x) return kNaN;
    return bits_of(static_cast<float>(x));  // one IEEE RNE rounding, overflow to Inf
  }
};

// Floating point sums: the exact sum of a and b, rounded once to the format
// (nearest, ties to even). Zeros, infinities and NaNs follow IEEE 754 in every
// path below: x + (-x) = +0 under RNE, (-0) + (-0) = -0, Inf + -Inf = NaN,
// NaN in -> NaN out; the NaN is then replaced by the canonical one. A non-zero
// exact sum is at least the smallest subnormal (both inputs are multiples of
// it), so it never rounds to zero. And a result below the smallest normal is
// always exact: it is a multiple of the smallest subnormal with fewer bits
// than the format has, so subnormal results never round at all.

// fp32: one IEEE binary32 addition is, by definition, the correctly rounded sum.
std::uint32_t fp32_sum(std::uint32_t a, std::uint32_t b) {
  const float s = float_of(a) + float_of(b);
  return s != s ? Fp32::kNaN : bits_of(s);
}

// fp16: inputs are multiples of 2^-24 below 2^16, so the sum is a multiple of
// 2^-24 below 2^17: at most 41 significant bits, exact in double. The only
// rounding is Fp16::encode.
std::uint32_t fp16_sum(std::uint32_t a, std::uint32_t b) {
  return Fp16::encode(Fp16::decode(a) + Fp16::decode(b));
}

// bf16: a bf16 value is the binary32 value with the same top 16 bits. The
// binary32 adder rounds the exact sum to 24 bits, then we round that to 8 bits
// (RNE on the low 16 bits). Rounding twice equals rounding once when the first
// precision p' >= 2p + 2 (Figueroa, "When is double rounding innocuous?",
// 1995): 24 >= 2*8 + 2. The theorem assumes unbounded exponents; ours are
// bounded but the same for both formats: subnormal results are exact (above),
// and when the binary32 sum overflows the exact sum is beyond binary32's
// threshold, which is above bf16's, so bf16 overflows too. (Computing in
// double, p' = 53, would be equally correct but slower.)
std::uint32_t bf16_sum(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t u = bits_of(float_of(a << 16) + float_of(b << 16));
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return Bf16::kNaN;
  // Sign and Inf pass through; a carry out of the fraction steps the exponent,
  // from the largest finite into the Inf encoding.
  return (u + 0x7FFFu + ((u >> 16) & 1)) >> 16;
}

// Total order on non-NaN bit patterns: flip the magnitude bits of negative
// values and set the sign bit of positive ones, so -0 (key 0x7F..) < +0 (key
// 0x80..). Min/max return one of the inputs unchanged.
template <class F>
std::uint32_t order_key(std::uint32_t x) {
  const std::uint32_t negative = 0u - (x >> (F::kBits - 1));  // all ones if the sign is set
  return x ^ ((negative & (F::kSign - 1)) | F::kSign);
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

// Little-endian element access. On a little-endian host that is a plain
// (unaligned-safe) load / store; elsewhere the bytes are assembled.
template <std::size_t W>
std::uint32_t load_le(const std::uint8_t* p) {
  using U = std::conditional_t<W == 2, std::uint16_t, std::uint32_t>;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  U v;
  std::memcpy(&v, p, W);
  return v;
#else
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < W; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return static_cast<U>(v);
#endif
}

template <std::size_t W>
void store_le(std::uint8_t* p, std::uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const auto u = static_cast<std::conditional_t<W == 2, std::uint16_t, std::uint32_t>>(v);
  std::memcpy(p, &u, W);
#else
  for (std::size_t i = 0; i < W; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
#endif
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
    {fp32_sum, fp_min<Fp32>, fp_max<Fp32>},
    {fp16_sum, fp_min<Fp16>, fp_max<Fp16>},
    {bf16_sum, fp_min<Bf16>, fp_max<Bf16>},
    {int_sum, int_min, int_max},
};

constexpr Kernel kKernel[4][3] = {
    {accumulate<4, fp32_sum>, accumulate<4, fp_min<Fp32>>, accumulate<4, fp_max<Fp32>>},
    {accumulate<2, fp16_sum>, accumulate<2, fp_min<Fp16>>, accumulate<2, fp_max<Fp16>>},
    {accumulate<2, bf16_sum>, accumulate<2, fp_min<Bf16>>, accumulate<2, fp_max<Bf16>>},
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
