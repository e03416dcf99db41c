// A YAML configuration file as the fuzzer writes it ('base' may name other files).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "testbenches/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/fabricsim_fuzz_config_" + std::to_string(::getpid()) + ".yaml";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    fabricsim::exercise(fabricsim::load_config(path, {}));
  } catch (const fabricsim::ConfigError&) {
  }
  return 0;
}
