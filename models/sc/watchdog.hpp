// The progress watchdog: at most once per `period` it asks whether anything
// moved (a link started a transmission) since the last look; if nothing did
// while flits sit in buffers and no link is still sending, the fabric is
// stuck. A part of it can be stuck while the rest moves (a deadlocked ring
// while local traffic flows): so it also asks whether some link has waited
// for credits for a whole period without any coming back. Either way it
// stops the run (throws InvariantError) with the caller's report of where
// every stuck packet sits and what it waits for.
//
// Cost: it has no event of its own. The scheduler calls check() after an
// activation once a period has passed (Scheduler::set_watch), so a far-future
// item never sits at the back of the time buckets, where every new time
// would have to be inserted before it. A fabric with no events left cannot
// be watched this way: when the scheduler runs out of events while flits
// are still held (every sender waits for credits that cannot come), it calls
// drained(), which reports the deadlock at once.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "models/core/time.hpp"

namespace fabricsim {

class Watchdog {
 public:
  struct Probes {
    std::function<std::uint64_t()> progress;  // grows whenever anything moves
    std::function<bool()> stuck_flits;        // flits are held somewhere
    std::function<bool(Ps now)> busy;         // a link is still sending
    std::function<bool(Ps now, Ps period)> stuck_link;  // a link starved that long
    std::function<std::string(Ps now, Ps since)> report;  // why, where (since kNever: no event left)
  };
  Watchdog(Ps period, Probes probes) : period_(period), probes_(std::move(probes)) {}
  Ps period() const { return period_; }
  // Called at `now` >= the last look + period. Throws InvariantError when stuck.
  void check(Ps now);
  // No event is left anywhere: held flits can never move. Throws if any.
  void drained(Ps now) const;

 private:
  Ps period_;
  Probes probes_;
  std::uint64_t last_progress_ = 0;
  Ps last_look_ = 0;
};

}  // namespace fabricsim
