// A run stopped early on request (fabricsim's Ctrl-C: cli/interrupt.hpp).
//
// Where it stops: interrupt() is called at the start of an instant (the
// scheduler's progress hook); Scheduler::stop() lets every module due at that
// instant run and then ends the kernel (sc_stop), before the next instant.
// The fabric is then in the state every other run end leaves it in: each
// instant up to and including scheduler().now() fully done, nothing later
// begun. So the ordinary end-of-run checks apply unchanged; packets still on
// links, in switch queues or held by GPUs are counted as in flight, as at
// the end of a synthetic run's window or a collective cut short by
// sim.duration_ns.
#include <algorithm>

#include "models/sc/fabric.hpp"

namespace fabricsim {

void Fabric::interrupt() {
  interrupted_ = true;
  scheduler_.stop();
}

bool Fabric::finish_interrupted() {
  // The work may have ended at the very instant that was interrupted: then
  // the run is complete, and finishes as any other.
  if (collective() && sweep_->done()) {
    interrupted_ = false;
    return finish();
  }
  // Work-bound runs (collectives) close their statistics at now in finish(),
  // as when their work ends. A synthetic run's window closes here, 1 ps
  // after the instant reached: a run ends before its window's end (sc_start
  // stops short of it), so this one's statistics are those of the same run
  // with a window ending there, bit for bit. The window is empty if the
  // warm-up was not over.
  if (!ends_with_work()) {
    const Ps t = scheduler_.now() + 1;
    window_ = Window{std::min(window_.begin, t), t};
    for (auto& l : links_) l->close_window(window_);
    for (auto& sw : switches_) sw->close_window(window_);
  }
  return finish();
}

}  // namespace fabricsim
