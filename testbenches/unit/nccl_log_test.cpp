// nccl-tests output (models/core/nccl_log.hpp): the shipped example parses
// into its rows; names map to ours; every malformed input names its line.
#include "models/core/nccl_log.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "models/core/errors.hpp"

namespace fabricsim {
namespace {

std::string example() {
  std::ifstream f(FABRICSIM_SOURCE_DIR "/traces/nccl-tests/all_reduce_perf_8xH100_synthetic.txt");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string error_of(const std::string& text) {
  try {
    parse_nccl_log(text, "log");
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

// The measured H100 logs (traces/nccl-tests/README.md) with one table each
// read whole: the rank count their name gives, all_reduce_perf, sizes rising,
// times and bandwidths positive. (The two files with several tables, one per
// n or per algorithm and protocol, are not read yet: README.md says so.)
TEST(NcclLog, ParsesEveryMeasuredSingleTableLog) {
  const std::string dir = FABRICSIM_SOURCE_DIR "/traces/nccl-tests/";
  const char* files[] = {
      "h100x2-auto-allreduce-attrib-waynehacking.txt",
      "h100x2-nvls-allreduce-attrib-waynehacking.txt",
      "h100x2-ring-allreduce-attrib-waynehacking.txt",
      "h100x4-auto-allreduce-attrib-waynehacking.txt",
      "h100x4-auto-allreduce-quiet-waynehacking.txt",
      "h100x4-auto-allreduce-small-R0-G0-waynehacking.txt",
      "h100x4-auto-allreduce-small-R0-G1-waynehacking.txt",
      "h100x4-auto-allreduce-small-R2-G0-waynehacking.txt",
      "h100x4-auto-allreduce-small-R2-G1-waynehacking.txt",
      "h100x4-auto-allreduce-waynehacking.txt",
      "h100x4-nvls-allreduce-attrib-waynehacking.txt",
      "h100x4-ring-allreduce-attrib-waynehacking.txt",
      "h100x6-auto-allreduce-attrib-waynehacking.txt",
      "h100x6-nvls-allreduce-attrib-waynehacking.txt",
      "h100x6-ring-allreduce-attrib-waynehacking.txt",
  };
  for (const char* name : files) {
    std::ifstream f(dir + name);
    ASSERT_TRUE(f.good()) << name;
    std::stringstream text;
    text << f.rdbuf();
    const NcclLog log = parse_nccl_log(text.str(), name);
    EXPECT_EQ(log.test, "all_reduce_perf") << name;
    EXPECT_EQ(log.ranks, std::string(name)[5] - '0') << name;  // h100xN-...
    ASSERT_GE(log.rows.size(), 4u) << name;
    for (std::size_t i = 0; i < log.rows.size(); ++i) {
      EXPECT_GT(log.rows[i].time_us, 0) << name << " row " << i;
      if (i > 0) {
        EXPECT_GT(log.rows[i].size, log.rows[i - 1].size) << name << " row " << i;
      }
    }
    EXPECT_GT(log.rows.back().busbw, 100.0) << name;  // every file reaches large sizes
  }
}

TEST(NcclLog, ParsesTheShippedExample) {
  const NcclLog log = parse_nccl_log(example(), "x");
  EXPECT_EQ(log.test, "all_reduce_perf");
  EXPECT_EQ(log.ranks, 8);
  ASSERT_EQ(log.rows.size(), 11u);
  EXPECT_EQ(log.rows[0].size, 1024u);
  EXPECT_EQ(log.rows[0].count, 256u);
  EXPECT_EQ(log.rows[0].type, "float");
  EXPECT_EQ(log.rows[0].redop, "sum");
  EXPECT_DOUBLE_EQ(log.rows[0].time_us, 11.81);  // out-of-place, not in-place (11.63)
  EXPECT_DOUBLE_EQ(log.rows[0].busbw, 0.15);
  EXPECT_EQ(log.rows[10].size, 1048576u);
  EXPECT_EQ(log.rows[0].line, 17);
  EXPECT_EQ(nccl_test_op(log.test, "x"), CollectiveOp::kAllReduce);
  EXPECT_EQ(nccl_type("bfloat16", "x", 1), DType::kBf16);
  EXPECT_EQ(nccl_redop("max", "x", 1), RedOp::kMax);
}

TEST(NcclLog, OlderLayoutsWithoutRootOrRanks) {
  // nccl-tests before 2.13: no root column, no 'Collective test starting'.
  const NcclLog log = parse_nccl_log(
      "# nThread 2 nGpus 4 minBytes 8 maxBytes 16 step: 2(factor)\n"
      "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "           8             2     float     sum    30.10    0.00    0.00  0e+00    29.90    0.00    0.00  0e+00\n"
      "          16             4     float     sum    30.20    0.00    0.00  0e+00    30.00    0.00    0.00  0e+00\n",
      "old");
  EXPECT_EQ(log.test, "");
  EXPECT_EQ(log.ranks, 8);  // nGpus x nThread
  ASSERT_EQ(log.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(log.rows[1].time_us, 30.2);
}

TEST(NcclLog, MalformedInputNamesTheLine) {
  const std::string header = "#  size  count  type  redop  root  time  algbw  busbw  #wrong\n";
  EXPECT_NE(error_of("1024 256 float sum -1 1 1 1 0\n").find("log:1: a result row before the table header"),
            std::string::npos);
  EXPECT_NE(error_of(header + "1024 256 float sum\n").find("log:2: a result row with 4 fields"),
            std::string::npos);
  EXPECT_NE(error_of(header + "1k 256 float sum -1 1 1 1 0\n").find("log:2: size '1k'"), std::string::npos);
  EXPECT_NE(error_of(header + "1024 256 float sum -1 -3 1 1 0\n").find("time '-3'"), std::string::npos);
  EXPECT_NE(error_of(header + "1024 256 float sum -1 2 fast 1 0\n").find("algbw 'fast'"), std::string::npos);
  EXPECT_NE(error_of(header).find("no result rows"), std::string::npos);
  // Found by fuzz_nccl_log: 'time' after 'busbw' in a header. A row must
  // reach the furthest column, not only busbw (it read past the row).
  EXPECT_NE(error_of("#  size count type redop algbw busbw x time\n1024 256 float sum 1 1\n")
                .find("log:2: a result row with 6 fields; the header needs 8"),
            std::string::npos);
  EXPECT_NE(error_of("").find("no result rows"), std::string::npos);
  try {
    nccl_type("double", "log", 7);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("log:7: data type 'double' is not one fabricsim models"),
              std::string::npos);
  }
  EXPECT_THROW(nccl_redop("prod", "log", 1), ConfigError);
  EXPECT_THROW(nccl_test_op("sendrecv_perf", "log"), ConfigError);
}

}  // namespace
}  // namespace fabricsim
