// One simulation of `fabricsim compare`, in a child process: SystemC
// elaborates once per process, and a log whose sizes need different settings
// (GPU count, algorithm) takes several simulations.
#pragma once
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "models/core/config.hpp"

namespace fabricsim {

class Interrupts;

struct RunOutcome {
  // 0 done, 1 a check failed (or the process died: `error` says how),
  // 2 the configuration was refused, 128 + the signal when interrupted.
  int status = 0;
  std::string error;    // why it failed
  std::string stopped;  // interrupted: where ("stopped at 12.000 us simulated during call 3 of 9 (4096 B)")
  // The run's stats.json (also written to out_dir); null if none. Shared,
  // so that moving an outcome cannot throw.
  std::shared_ptr<const nlohmann::json> stats;
  double host_seconds = 0;  // wall-clock time of the child
};

// What the child shows while it runs (stderr): the --log rules (already
// checked) and the progress line, led by `label`.
struct ChildView {
  std::vector<std::string> log;
  bool progress = false;
  std::string label;
};

// Forks a child that builds the fabric of `cfg`, runs it and writes
// `out_dir`/stats.json. The child is in a process group of its own (a
// terminal's Ctrl-C reaches only this process); a signal `interrupts` sees
// while it runs is passed on to it, so it stops where it is and keeps its
// work, as a run in this process would. The child ends if this process dies.
RunOutcome simulate_in_child(const Config& cfg, const std::string& out_dir, const Interrupts& interrupts,
                             const ChildView& view = {});

}  // namespace fabricsim
