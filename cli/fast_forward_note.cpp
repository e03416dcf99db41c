#include "cli/fast_forward_note.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace fabricsim {

std::string fast_forward_note(const nlohmann::json& row) {
  if (!row.contains("fast_forward")) return "";
  const auto& f = row["fast_forward"];
  if (!f["used"].get<bool>()) return "simulated whole: " + f["why_not"].get<std::string>();
  std::string probes;
  for (const auto& p : f["probes"]) probes += fmt::format(" {}", p["bytes"].get<std::uint64_t>());
  const int whole = f["run_whole"].get<int>(), calls = f["calls"].get<int>();
  const double rejected = f["rejected_error"].get<double>();
  const std::string why = rejected >= 1 ? std::string("no steady output progress to extrapolate from")
                                        : fmt::format("their extrapolation's estimated error, {:.3f}%, "
                                                      "was above collective.fast_forward_tolerance",
                                                      100 * rejected);
  if (whole == calls) return fmt::format("simulated whole after probes{} ({})", probes, why);
  if (whole > 0)
    return fmt::format("{} of its {} calls fast-forwarded (estimated error up to {:.3f}%), {} simulated whole "
                       "after probes ({})",
                       calls - whole, calls, 100 * f["estimated_error"].get<double>(), whole, why);
  return fmt::format("fast-forwarded: probes of{} B simulated ({:.1f}% of the call), {:.0f} of {} periods of {} B "
                     "skipped, estimated error {:.3f}%",
                     probes, 100 * f["simulated_fraction"].get<double>(), f["skipped_periods_mean"].get<double>(),
                     f["periods"].get<std::uint64_t>(), f["period_bytes"].get<std::uint64_t>(),
                     100 * f["estimated_error"].get<double>());
}

}  // namespace fabricsim
