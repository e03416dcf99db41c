// nccl-tests *_perf output (the input of `fabricsim compare`), and the name
// mappings applied to what it read.
#include <cstdint>
#include <string>

#include "models/core/errors.hpp"
#include "models/core/nccl_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto log = fabricsim::parse_nccl_log(std::string(reinterpret_cast<const char*>(data), size), "f");
    for (const auto& r : log.rows) {
      try {
        fabricsim::nccl_type(r.type, "f", r.line);
        fabricsim::nccl_redop(r.redop, "f", r.line);
      } catch (const fabricsim::ConfigError&) {
      }
    }
    if (!log.test.empty()) fabricsim::nccl_test_op(log.test, "f");
  } catch (const fabricsim::ConfigError&) {
  }
  return 0;
}
