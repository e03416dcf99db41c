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

// Keys set by the file at `path` itself (section.key of its maps; `base:`
// files are not read) and by `overrides` (KEY=VALUE). Both were accepted by
// load_config already.
std::vector<std::string> keys_set_by_user(const std::string& path,
                                          const std::vector<std::string>& overrides);

// One sentence per key of `keys` whose value in `c` differs from its
// default and which `c`'s modes ignore, naming the key, its value, the
// setting that makes it ignored and why. Keys appear in schema order.
std::vector<std::string> ignored_settings(const Config& c, const std::vector<std::string>& keys);

}  // namespace fabricsim
