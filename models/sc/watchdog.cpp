#include "models/sc/watchdog.hpp"

#include "models/core/errors.hpp"

namespace fabricsim {

void Watchdog::check(Ps now) {
  const std::uint64_t p = probes_.progress();
  if (p == last_progress_ && probes_.stuck_flits() && !probes_.busy(now))
    throw InvariantError(probes_.report(now, last_look_));
  if (probes_.stuck_link(now, period_)) throw InvariantError(probes_.report(now, now - period_));
  last_progress_ = p;
  last_look_ = now;
}

void Watchdog::drained(Ps now) const {
  if (probes_.stuck_flits()) throw InvariantError(probes_.report(now, kNever));  // kNever: drained
}

}  // namespace fabricsim
