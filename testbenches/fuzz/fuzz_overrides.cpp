// `--set key=value` overrides, one per line, on top of the defaults.
#include <cstdint>
#include <string>
#include <vector>

#include "testbenches/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> sets;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    sets.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  try {
    fabricsim::exercise(fabricsim::load_config("", sets));
  } catch (const fabricsim::ConfigError&) {
  }
  return 0;
}
