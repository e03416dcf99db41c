// The progress line of a running simulation on stderr: simulated time, share
// of the work, host rate and ETA, redrawn at most twice a second (host-side
// only; it never touches the results).
#pragma once
#include <chrono>
#include <string>

namespace fabricsim {

class Fabric;

class ProgressLine {
 public:
  // `prefix` goes before the figures ("fabricsim: " for a run; a compare's
  // child names its simulation). Host time counts from `t0` (before the
  // fabric was built, so that elaboration is in it).
  ProgressLine(Fabric& fabric, std::string prefix, std::chrono::steady_clock::time_point t0);

  // From the scheduler's progress hook: redraw if half a second has passed.
  void tick();
  // The last line, ended by a newline (the figures at the end of the run, or
  // where an interrupted run stopped).
  void finish();

 private:
  void draw(bool final_line);

  Fabric& fabric_;
  std::string prefix_;
  std::chrono::steady_clock::time_point t0_, last_;
  double done_at_ = 0;  // at the last tick: where an interrupted run stopped
};

}  // namespace fabricsim
