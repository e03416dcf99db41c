// Host-side measurements (never part of the deterministic results).
#pragma once
#include <cstdint>

namespace fabricsim {

std::uint64_t peak_rss_bytes();

}  // namespace fabricsim
