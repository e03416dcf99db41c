// JSON rendering helpers for statistics.
#pragma once
#include <nlohmann/json.hpp>

#include "models/core/config.hpp"
#include "models/core/histogram.hpp"

namespace fabricsim {

// {count, mean, min, p50, p99, p999, max} of a ps histogram, in ns.
nlohmann::json latency_json(const Histogram& h_ps);
// Every config key with its value, typed (numbers, booleans, names).
nlohmann::json config_json(const Config& c);

class CollectiveSweep;
// The nccl-tests-like table of a collective sweep: a row per size.
nlohmann::json collective_json(const CollectiveSweep& sweep);

}  // namespace fabricsim
