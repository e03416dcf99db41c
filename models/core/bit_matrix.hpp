// Transpose of a bit matrix stored as rows of PortSets, 64 x 64 bits at a
// time with the recursive block-swap method (6 rounds of word operations per
// block instead of one operation per set bit). The allocators use it to turn
// request rows (input -> outputs) into columns (output -> inputs) when the
// matrix is dense.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "models/core/port_set.hpp"

namespace fabricsim {

// In place: afterwards bit r of a[c] is what bit c of a[r] was.
inline void transpose64(std::array<std::uint64_t, 64>& a) {
  std::uint64_t m = 0x00000000FFFFFFFFULL;
  for (int j = 32; j != 0; j >>= 1, m ^= (m << j)) {
    for (int k = 0; k < 64; k = ((k | j) + 1) & ~j) {
      const std::uint64_t t = ((a[static_cast<std::size_t>(k)] >> j) ^
                               a[static_cast<std::size_t>(k | j)]) & m;
      a[static_cast<std::size_t>(k)] ^= (t << j);
      a[static_cast<std::size_t>(k | j)] ^= t;
    }
  }
}

// cols[c].test(r) == rows[r].test(c) for every r < rows.size(), c < cols.size().
// rows[r] has cols.size() bits; cols[c] has rows.size() bits.
inline void transpose(const std::vector<PortSet>& rows, std::vector<PortSet>& cols) {
  const std::size_t nr = rows.size(), nc = cols.size();
  std::array<std::uint64_t, 64> block{};
  for (std::size_t br = 0; br * 64 < nr; ++br) {
    for (std::size_t bc = 0; bc * 64 < nc; ++bc) {
      for (std::size_t r = 0; r < 64; ++r) {
        const std::size_t row = br * 64 + r;
        block[r] = row < nr ? rows[row].word(bc) : 0;
      }
      transpose64(block);
      for (std::size_t c = 0; c < 64; ++c) {
        const std::size_t col = bc * 64 + c;
        if (col < nc) cols[col].set_word(br, block[c]);
      }
    }
  }
}

}  // namespace fabricsim
