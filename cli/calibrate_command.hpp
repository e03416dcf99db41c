// 'fabricsim calibrate': fits named numeric parameters to measured
// nccl-tests logs and reports the fit's error on logs it was not fitted on.
//
// A value chosen to match a measurement is a calibration, and a calibration
// is only as good as its error on measurements it did not see: the command
// refuses to run without held-out logs, or with a log in both lists.
//
// The objective is the mean |time error| over every size simulated in the
// fitted logs (each size of each log counts once), as `fabricsim compare`
// computes it with the same configuration and --set. The search
// (models/core/fit_search.hpp) is a grid then golden-section search per
// parameter, coordinate descent over several; every evaluation is one
// compare of each fitted log.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

struct CalibrateOptions {
  std::string config_path;
  std::vector<std::string> overrides;  // --set, as compare takes them
  std::vector<std::string> fit;        // KEY=LO:HI[:STEP], one per parameter
  std::vector<std::string> logs;       // fitted on
  std::vector<std::string> hold_out;   // reported on, never fitted on
  std::string op;                      // --op, as compare's
  std::uint64_t max_bytes = 0;         // --max-bytes, as compare's
  std::string only_protocol;           // --only-protocol: the fitted logs' sizes of one protocol
  int grid = 9;                        // grid points per parameter and round
  std::string out_dir = "out/calibrate";
};

// Exit status: 0 fitted and reported, 1 a simulation failed a check, 2 bad
// input, 128 + the signal when interrupted (what was evaluated is printed).
int calibrate_command(const CalibrateOptions& opts);

}  // namespace fabricsim
