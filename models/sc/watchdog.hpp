// The progress watchdog: every `period` it asks whether anything moved
// (a link started a transmission) since the last look; if nothing did while
// flits sit in buffers, the fabric is stuck. A part of it can be stuck while
// the rest moves (a deadlocked ring while local traffic flows): so it also
// asks whether some link has waited for credits for a whole period without
// any coming back. Either way it stops the run with the caller's report of
// where every stuck packet sits and what it waits for.
//
// Cost: one event per period, whatever the traffic (about 1e-4 of a busy
// fabric's events at the default 10 us); the fabric is not changed by it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "models/sc/timed_module.hpp"

namespace fabricsim {

class Watchdog : public TimedModule {
 public:
  struct Probes {
    std::function<std::uint64_t()> progress;  // grows whenever anything moves
    std::function<bool()> stuck_flits;        // flits are held somewhere
    std::function<bool(Ps now)> busy;         // a link is still sending
    std::function<bool(Ps now, Ps period)> stuck_link;  // a link starved that long
    std::function<std::string(Ps now, Ps since)> report;  // why, where
  };
  Watchdog(const sc_core::sc_module_name& name, Scheduler& scheduler, Ps period, Probes probes);
  Ps period() const { return period_; }

 protected:
  void handle(const Item& item) override;

 private:
  Ps period_;
  Probes probes_;
  std::uint64_t last_progress_ = 0;
  Ps last_move_ = 0;
};

}  // namespace fabricsim
