// Integer rounding shared by the plain-logic plans (NCCL's ring and NVLS
// chunking round sizes up to whole cells, chunks and alignments).
#pragma once
#include <cstdint>

namespace fabricsim {

// a / b rounded up (b > 0).
inline std::uint64_t div_up(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
// a rounded up to a multiple of g (g > 0).
inline std::uint64_t align_up(std::uint64_t a, std::uint64_t g) { return div_up(a, g) * g; }

}  // namespace fabricsim
