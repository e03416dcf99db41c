// What every fuzz target checks: a reader of user input either accepts it or
// throws ConfigError (a message naming the key and the value); any other
// exception, a crash, a sanitizer report, a hang or a blow-up in memory is a
// bug. An accepted configuration is also built into a topology and printed
// back, as a run would.
#pragma once
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/errors.hpp"
#include "models/core/topology.hpp"

namespace fabricsim {

inline void exercise(const Config& c) {
  // A topology bigger than a fuzz run can afford is still checked by
  // validate(); building it is what a run would do next.
  if (c.topology.endpoints * c.topology.switches <= 1 << 16 && c.sw.ports <= 1024) build_topology(c);
  for (const auto& kv : config_values(c)) (void)kv;
}

}  // namespace fabricsim
