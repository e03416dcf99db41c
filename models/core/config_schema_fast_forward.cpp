// The schema's fast-forward keys: whether and how long collective calls are
// carried through their steady state by probes (models/core/fast_forward.hpp,
// docs/models/fast_forward.md).
#include <string>
#include <utility>
#include <vector>

#include "models/core/config.hpp"

namespace fabricsim {

namespace {
const std::vector<std::pair<std::string, FastForwardMode>> kModes = {
    {"auto", FastForwardMode::kAuto}, {"off", FastForwardMode::kOff}};
}  // namespace

std::string to_string(FastForwardMode m) {
  return name_of(kModes, m);
}

void add_fast_forward_keys(Schema<Config>& s) {
  using C = Config;
  s.add_choice(
      "collective.fast_forward", &C::collective, &CollectiveConfig::fast_forward, kModes,
      "auto: a call of at least collective.fast_forward_min_bytes is simulated as "
      "shorter probes of its own plan (whole periods of it taken out: an ideal ring's n "
      "slices, a loop of every NCCL channel), each simulated per packet from launch to drain; "
      "its period's time is read on their output progress, per GPU, and the call's times "
      "extrapolated from the slowest GPU's "
      "(docs/models/fast_forward.md); the row says how many periods were skipped and the "
      "estimated error. Calls it cannot extrapolate exactly run whole, the row saying why: "
      "collective.data=true (the skipped elements would go unchecked), a training workload, "
      "faults scheduled, too few periods. off: every call whole");
  s.add_int("collective.fast_forward_min_bytes", &C::collective,
            &CollectiveConfig::fast_forward_min_bytes, "B", 1, std::int64_t{1} << 40,
            "collective.fast_forward=auto: the smallest call fast-forwarded, per GPU. 256 MiB: "
            "the two rounds of probes from 16 MiB (16, 32, 64 MiB) keep 112 MiB, under half of "
            "it; in smaller calls the start and the tail are most of the time and the saving is "
            "small");
  s.add_int("collective.fast_forward_probe_bytes", &C::collective,
            &CollectiveConfig::fast_forward_probe_bytes, "B", 1, std::int64_t{1} << 40,
            "collective.fast_forward=auto: what the first probe keeps of the call, per GPU "
            "(whole periods, at least 2; NCCL's NVLS with timed copies 2 x gpu.slots); the second "
            "keeps twice it, and a second round's probe four times it (no round is accepted "
            "before a second is compared with it). They must be past the "
            "fabric's fill: where the first is not, the period moves from round to round and "
            "the probes double; a fill that ends after the last probe goes unseen "
            "(docs/models/fast_forward.md)");
  s.add_real("collective.fast_forward_tolerance", &C::collective,
             &CollectiveConfig::fast_forward_tolerance, "", 0, 1,
             "collective.fast_forward=auto: the largest estimated error (a fraction of the "
             "call's time) an extrapolation is accepted with; above it the probes double while "
             "all rounds keep under half the call, and the call runs whole when they would not");
}

}  // namespace fabricsim
