// 'fabricsim run': one simulation from a config file and overrides.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

struct RunOptions {
  std::string config_path;
  std::vector<std::string> overrides;  // "key=value", applied in order
  std::string out_dir = "out";
  bool quiet = false;
  std::string wave;         // --wave FILE.vcd
  std::string timeline;     // --timeline FILE.json
  std::string wave_rtl;     // --wave-rtl FILE.fst
  std::string wave_scope = "*";
  std::string wave_window;  // START_NS:END_NS
  std::vector<std::string> log;  // --log GLOB=LEVEL,...
  std::int64_t watch = -1;       // --watch SERIAL
  bool progress = false;         // --progress: the progress line even when stderr is not a terminal
};

// Exit status: 0 success, 1 the simulation failed a check, 2 bad input,
// 128 + the signal when SIGINT or SIGTERM stopped it (cli/interrupt.hpp).
int run_command(const RunOptions& opts);

}  // namespace fabricsim
