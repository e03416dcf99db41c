// SIGINT and SIGTERM while fabricsim simulates: the first stops the run at
// the current simulated instant and keeps its work (stats.json of the part
// simulated, marked interrupted; the command then exits 128 + the signal:
// 130 for SIGINT, 143 for SIGTERM); the second ends the process at once.
#pragma once
#include <functional>
#include <string>

namespace fabricsim {

class Fabric;

// Installs the handlers for its lifetime (and restores the previous ones):
// one at a time per process, around a command's run and its output.
class Interrupts {
 public:
  Interrupts();
  ~Interrupts();
  Interrupts(const Interrupts&) = delete;
  Interrupts& operator=(const Interrupts&) = delete;

  // A signal has arrived (at any time since construction).
  static bool requested();
  // The first signal received: SIGINT or SIGTERM, 0 if none.
  static int signal();
  static std::string signal_name();  // "SIGINT", "SIGTERM"
  // The command's exit status after a signal: 128 + its number.
  static int exit_status() { return 128 + signal(); }

  // Polls for a signal during f.run(): the fabric's scheduler calls its
  // progress hook every 16384 instants (Scheduler::set_progress), and a
  // signal seen there stops the run at that instant (Fabric::interrupt).
  // `progress` (a progress line) runs at the same points. Host latency of a
  // stop: 16384 instants, milliseconds on small fabrics, about a second on
  // the largest.
  void watch(Fabric& f, std::function<void()> progress = {}) const;
};

}  // namespace fabricsim
