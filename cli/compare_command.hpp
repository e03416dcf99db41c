// 'fabricsim compare': measured nccl-tests output next to the same sizes
// simulated on a configuration, with the relative error per size.
#pragma once
#include <string>
#include <vector>

namespace fabricsim {

struct CompareOptions {
  std::string log_path;                // nccl-tests *_perf output
  std::string config_path;             // the fabric to compare with
  std::vector<std::string> overrides;  // --set, applied after what the log sets
  std::string op;                      // --op, when the log does not name its test
  std::string out_dir = "out/compare";
};

// Exit status: 0 compared, 1 the simulation failed a check, 2 bad input,
// 128 + the signal when SIGINT or SIGTERM stopped it (cli/interrupt.hpp).
int compare_command(const CompareOptions& opts);

}  // namespace fabricsim
