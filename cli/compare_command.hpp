// 'fabricsim compare': measured nccl-tests output next to the same sizes
// simulated on a configuration, with the relative error per size.
//
// Each size is simulated as the log says it ran: its GPU count sets
// topology.endpoints, its algorithm (forced, its section's, or NCCL's tuner
// choice) collective.algorithm, and its protocol collective.protocol when
// the configuration schema has that key; --set overrides all of them. Sizes
// that need different settings are separate simulations (one process each).
// A size whose algorithm the model lacks, or above --max-bytes, is a row
// that says so, never a silent substitute.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

struct CompareOptions {
  std::string log_path;                // nccl-tests *_perf output
  std::string config_path;             // the fabric to compare with
  std::vector<std::string> overrides;  // --set, applied after what the log sets
  std::string op;                      // --op, when the log does not name its test
  std::string out_dir = "out/compare";
  std::uint64_t max_bytes = 0;  // --max-bytes: larger sizes are not simulated (0: no limit)
  std::string json_path;        // --json; empty: OUT/compare.json
};

// Exit status: 0 compared, 1 the simulation failed a check, 2 bad input,
// 128 + the signal when SIGINT or SIGTERM stopped it (cli/interrupt.hpp).
int compare_command(const CompareOptions& opts);

}  // namespace fabricsim
