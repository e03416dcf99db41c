// What fast-forward did to one size of a collective sweep, in words, from its
// stats row's "fast_forward" object (models/core/fast_forward.hpp): printed
// under run's and compare's tables.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace fabricsim {

// "simulated whole: <why>", "fast-forwarded: probes of ... B simulated (x% of
// the call), ... estimated error y%", ...; empty when the row has no
// "fast_forward" (the size is below collective.fast_forward_min_bytes).
std::string fast_forward_note(const nlohmann::json& row);

}  // namespace fabricsim
