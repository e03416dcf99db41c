#include "cli/host_stats.hpp"

#include <sys/resource.h>

namespace fabricsim {

std::uint64_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024u;  // Linux reports KiB
}

const char* build_flavour() { return FABRICSIM_BUILD_FLAVOUR; }

}  // namespace fabricsim
