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
  // --only-protocol: only the sizes the log says NCCL ran with this protocol
  // (simple, ll, ll128) are simulated; the others are rows left out.
  std::string only_protocol;
  std::vector<std::string> log;  // --log rules for every simulation, as run's
  bool progress = false;         // --progress: each simulation's progress line
};

// Exit status: 0 compared, 1 the simulation failed a check, 2 bad input,
// 128 + the signal when SIGINT or SIGTERM stopped it (cli/interrupt.hpp).
int compare_command(const CompareOptions& opts);

// The value of --only-protocol in lower case: empty or one of NCCL's
// (simple, ll, ll128, any case given); ConfigError otherwise.
std::string only_protocol_of(const std::string& protocol);

class Interrupts;

// One simulated size of a log: its errors, simulated against measured.
struct ComparedSize {
  std::uint64_t size = 0;
  double time_error = 0;        // (simulated - measured) / measured
  bool busbw_resolved = false;  // measured busbw has enough digits to compare
  double busbw_error = 0;       // when resolved
};

// A log compared without printing the table (fabricsim calibrate; the
// whole table is in compare.json).
struct CompareResult {
  int status = 0;     // as compare_command's exit status
  std::string error;  // status 2: what was refused (status 1: on stderr)
  std::vector<ComparedSize> sizes;  // those simulated, in the log's order
};

// compare_command's work without its output, except compare.json (in
// OUT or --json) and a failed simulation's message on stderr. `interrupts`
// is the caller's (one per process).
CompareResult compare_log(const CompareOptions& opts, const Interrupts& interrupts);

}  // namespace fabricsim
