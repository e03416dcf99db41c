// Reads the output of nccl-tests' *_perf binaries (all_reduce_perf,
// all_gather_perf, ...): the table of size, count, type, redop, [root],
// time, algbw, busbw, #wrong for out-of-place (then in-place) runs, and what
// the header says about the test. Plain C++: `fabricsim compare` runs the
// same sizes on a configuration and prints both.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/config.hpp"

namespace fabricsim {

struct NcclRow {
  std::uint64_t size = 0;   // bytes, as nccl-tests reports it (per GPU)
  std::uint64_t count = 0;  // elements
  std::string type, redop;
  double time_us = 0, algbw = 0, busbw = 0;  // out-of-place
  int line = 0;
};

struct NcclLog {
  std::string origin;
  std::string test;       // "all_reduce_perf" if the log says, else ""
  int ranks = 0;          // '#  Rank' lines, else nGpus x nThreads, else 0
  std::vector<NcclRow> rows;
};

// Throws ConfigError naming the origin, the line and what was expected.
NcclLog parse_nccl_log(const std::string& text, const std::string& origin);

// nccl-tests' names mapped to ours; each throws ConfigError naming the
// name and the ones fabricsim models.
CollectiveOp nccl_test_op(const std::string& test, const std::string& origin);
DType nccl_type(const std::string& type, const std::string& origin, int line);
// "none" (collectives that do not reduce) gives kSum, which they ignore.
RedOp nccl_redop(const std::string& redop, const std::string& origin, int line);

}  // namespace fabricsim
