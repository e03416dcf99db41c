// Host-side measurements (never part of the deterministic results).
#pragma once
#include <cstdint>

namespace fabricsim {

std::uint64_t peak_rss_bytes();

// How this binary was built ("Release", "Release, profile-guided", ...):
// host figures of different builds are not comparable.
const char* build_flavour();

}  // namespace fabricsim
