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
  // Work-bound runs (collectives) close their statistics at now in finish().
  // A synthetic run's window closes here: [warm-up end, now), or empty at
  // now if the warm-up was not over. simulated_ns is then the time reached.
  if (!ends_with_work()) {
    const Ps t = scheduler_.now();
    window_ = Window{std::min(window_.begin, t), t};
    for (auto& l : links_) l->close_window(window_);
    for (auto& sw : switches_) sw->close_window(window_);
  }
  return finish();
}

}  // namespace fabricsim
