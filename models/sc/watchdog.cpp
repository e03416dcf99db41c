#include "models/sc/watchdog.hpp"

#include "models/core/errors.hpp"

namespace fabricsim {

namespace {
constexpr std::uint16_t kItemWatch = 16;
}

Watchdog::Watchdog(const sc_core::sc_module_name& name, Scheduler& scheduler, Ps period,
                   Probes probes)
    : TimedModule(name, scheduler), period_(period), probes_(std::move(probes)) {
  schedule(period_, kItemWatch);
}

void Watchdog::handle(const Item& item) {
  const std::uint64_t p = probes_.progress();
  if (p == last_progress_ && probes_.stuck_flits() && !probes_.busy(item.time))
    throw InvariantError(probes_.report(item.time, last_move_));
  if (probes_.stuck_link(item.time, period_))
    throw InvariantError(probes_.report(item.time, item.time - period_));
  last_progress_ = p;
  last_move_ = item.time;
  schedule(item.time + period_, kItemWatch);
}

}  // namespace fabricsim
