#pragma once
// Settings the chosen modes ignore: a parameter the user set (in the config
// file named on the command line or with --set, not in the `base:` files it
// builds on) to a value other than its default, in a mode where the model
// never reads it. The run goes on (the setting is harmless) but says so, so
// that a sweep over a parameter that cannot matter is not read as a finding.
#include <string>
#include <vector>

#include "models/core/config.hpp"

namespace fabricsim {

// The keys the user set: in the file at `path` itself (section.key of its
// maps, or dotted keys; `base:` files are not read) and in `overrides`
// (KEY=VALUE). Both were accepted by load_config already.
struct UserKeys {
  std::vector<std::string> in_file;
  std::vector<std::string> overridden;
};
UserKeys keys_set_by_user(const std::string& path, const std::vector<std::string>& overrides);

// One sentence per key the user set whose value in `c` differs from its
// default and which `c`'s modes ignore, naming the key, its value, the
// setting that makes it ignored and why; in schema order. A knob its own
// section's mode ignores (switch.iterations with output queueing) is named
// wherever it was set; a whole section the workload or topology does not
// use (traffic.* in a collective run) only when set with --set: a system
// preset describes its synthetic traffic and its scale-out tier whichever
// workload a run picks.
std::vector<std::string> ignored_settings(const Config& c, const UserKeys& keys);

}  // namespace fabricsim
