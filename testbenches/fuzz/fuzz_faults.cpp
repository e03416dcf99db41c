// The fault grammar: parse, print back, parse again to the same faults.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "models/core/errors.hpp"
#include "models/core/faults.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto f = fabricsim::parse_faults("faults", text);
    const auto g = fabricsim::parse_faults("faults", fabricsim::format_faults(f));
    if (g.size() != f.size()) std::abort();  // printing must round-trip
    for (std::size_t i = 0; i < f.size(); ++i)
      if (g[i].kind != f[i].kind || g[i].target != f[i].target || g[i].at_ns != f[i].at_ns)
        std::abort();
  } catch (const fabricsim::ConfigError&) {
  }
  return 0;
}
