// Golden model of the in-switch reduction ALU (NVLink-SHARP-like): element-wise
// sum / min / max of fp32, fp16, bf16 and int32 payloads. The SystemVerilog RTL
// must match it bit for bit; every rule is in docs/models/reduction_alu.md.
//
// Values travel as raw bit patterns: std::uint32_t for every type, 16-bit types
// in the low half. Byte buffers hold little-endian elements. Floating point sums
// are correctly rounded (round to nearest, ties to even) with full subnormal
// support; every NaN result is the canonical quiet NaN of the format.
//
// Plain C++, no globals, no allocation: this runs for every reduced payload.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace fabricsim {

enum class DType : std::uint8_t { kFp32, kFp16, kBf16, kInt32 };
enum class RedOp : std::uint8_t { kSum, kMin, kMax };

// 4 for fp32 and int32, 2 for fp16 and bf16.
constexpr std::size_t element_bytes(DType t) {
  return (t == DType::kFp16 || t == DType::kBf16) ? 2 : 4;
}

// The only NaN the ALU ever produces, per format.
constexpr std::uint32_t kFp32CanonicalNaN = 0x7FC00000u;
constexpr std::uint16_t kFp16CanonicalNaN = 0x7E00u;
constexpr std::uint16_t kBf16CanonicalNaN = 0x7FC0u;

// Names: "fp32" "fp16" "bf16" "int32" and "sum" "min" "max" (lower case, exact).
std::string to_string(DType t);
std::string to_string(RedOp op);
bool try_parse_dtype(std::string_view name, DType& out);  // false on an unknown name
bool try_parse_redop(std::string_view name, RedOp& out);  // false on an unknown name
DType parse_dtype(std::string_view name);                 // throws std::invalid_argument
RedOp parse_redop(std::string_view name);                 // throws std::invalid_argument

// a op b on raw bit patterns. For fp16/bf16 the upper 16 bits of a and b are
// ignored and the upper 16 bits of the result are zero.
std::uint32_t alu_apply(RedOp op, DType t, std::uint32_t a, std::uint32_t b);

// acc[i] = acc[i] op in[i] for every element of two little-endian buffers of
// `bytes` bytes. Throws std::invalid_argument unless bytes is a multiple of
// element_bytes(t). acc == in is allowed; other overlaps are not.
void alu_accumulate(RedOp op, DType t, std::uint8_t* acc, const std::uint8_t* in,
                    std::size_t bytes);

// Left fold in the given order: out = ((in[0] op in[1]) op in[2]) ... op in[n-1].
// Floating point sums depend on the order (each step rounds). n >= 1, else
// std::invalid_argument; out may be in[0] but no other input.
void alu_reduce(RedOp op, DType t, std::uint8_t* out, const std::uint8_t* const* in, std::size_t n,
                std::size_t bytes);

// Correctly rounded conversions (round to nearest, ties to even, subnormals,
// overflow to +-Inf, canonical NaN). The reverse directions are exact.
std::uint32_t double_to_fp32(double x);
std::uint16_t double_to_fp16(double x);
std::uint16_t double_to_bf16(double x);
double fp32_to_double(std::uint32_t bits);
double fp16_to_double(std::uint16_t bits);
double bf16_to_double(std::uint16_t bits);

}  // namespace fabricsim
