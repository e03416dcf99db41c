// nccl-tests output (models/core/nccl_log.hpp): every file in traces/nccl-tests parses
// into its rows; names map to ours; every malformed input names its line.
#include "models/core/nccl_log.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
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

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Every file in traces/nccl-tests (the measured H100 logs of README.md and
// the synthetic example) read whole: all_reduce_perf, a GPU count for every
// row, sizes rising within each section, times positive, and the large
// sizes reached. A new file there is a new case of this test.
TEST(NcclLog, ParsesEveryFileInTracesNcclTests) {
  const std::filesystem::path dir = FABRICSIM_SOURCE_DIR "/traces/nccl-tests";
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".txt") continue;
    ++files;
    const std::string name = e.path().filename().string();
    NcclLog log;
    ASSERT_NO_THROW(log = parse_nccl_log(read(e.path().string()), name)) << name;
    EXPECT_EQ(log.test, "all_reduce_perf") << name;
    ASSERT_GE(log.rows.size(), 4u) << name;
    ASSERT_FALSE(log.sections.empty()) << name;
    std::size_t rows = 0;
    for (const NcclSection& s : log.sections) {
      EXPECT_GT(s.ranks, 0) << name << " section at line " << s.line;
      rows += s.count;
      for (std::size_t i = s.first; i < s.first + s.count; ++i) {
        const NcclRow& r = log.rows[i];
        EXPECT_EQ(r.section, static_cast<std::size_t>(&s - log.sections.data())) << name;
        EXPECT_EQ(r.ranks, s.ranks) << name;
        EXPECT_GT(r.time_us, 0) << name << ":" << r.line;
        if (i > s.first) {
          EXPECT_GT(r.size, log.rows[i - 1].size) << name << ":" << r.line;
        }
      }
    }
    EXPECT_EQ(rows, log.rows.size()) << name;
    EXPECT_GT(log.rows.back().busbw, 100.0) << name;  // every file reaches large sizes
    // h100xN-...: one GPU count, N (h100x2-4-6-...: one per section).
    if (name.rfind("h100x", 0) == 0 && !std::isdigit(static_cast<unsigned char>(name[7]))) {
      EXPECT_EQ(log.ranks, name[5] - '0') << name;
    }
  }
  EXPECT_EQ(files, 18);
}

// What each measured file says it ran: the algorithm forced or chosen by
// NCCL's tuner, per size; nothing where the log does not say.
TEST(NcclLog, ReadsTheAlgorithmAndProtocolEachFileRan) {
  const std::string dir = FABRICSIM_SOURCE_DIR "/traces/nccl-tests/";
  const NcclLog ring = parse_nccl_log(read(dir + "h100x6-ring-allreduce-attrib-waynehacking.txt"), "r");
  EXPECT_EQ(ring.ranks, 6);
  EXPECT_EQ(ring.forced_algorithm, "Ring");
  EXPECT_EQ(ring.forced_protocol, "");
  ASSERT_EQ(ring.tuner.size(), 6u);
  for (const NcclRow& r : ring.rows) {
    EXPECT_EQ(r.algorithm, "Ring");
    EXPECT_EQ(r.algorithm_from, "NCCL_ALGO");
    EXPECT_EQ(r.protocol, "Simple");  // the tuner's choice
    EXPECT_EQ(r.protocol_from, "tuner");
  }
  const NcclLog autox6 = parse_nccl_log(read(dir + "h100x6-auto-allreduce-attrib-waynehacking.txt"), "a");
  EXPECT_EQ(autox6.forced_algorithm, "");
  for (const NcclRow& r : autox6.rows) {
    EXPECT_EQ(r.algorithm, "NVLS");
    EXPECT_EQ(r.algorithm_from, "tuner");
  }
  // The small-size runs say nothing per size: the algorithm is not known.
  const NcclLog small = parse_nccl_log(read(dir + "h100x4-auto-allreduce-small-R0-G0-waynehacking.txt"), "s");
  EXPECT_EQ(small.ranks, 4);
  ASSERT_EQ(small.sections.size(), 1u);
  EXPECT_EQ(small.sections[0].title, "");
  for (const NcclRow& r : small.rows) {
    EXPECT_EQ(r.algorithm, "");
    EXPECT_EQ(r.protocol, "");
  }
  // How the calls were launched: nccl-tests' banner 'graph: 0' / 'graph: 1' (-G 1).
  EXPECT_EQ(small.graph, 0);
  EXPECT_EQ(parse_nccl_log(read(dir + "h100x4-auto-allreduce-small-R0-G1-waynehacking.txt"), "g").graph, 1);
  EXPECT_EQ(ring.graph, 0);
  // The buffers' registration: -R on the command the header gives.
  EXPECT_EQ(small.registration, 0);
  EXPECT_EQ(parse_nccl_log(read(dir + "h100x4-auto-allreduce-small-R2-G1-waynehacking.txt"), "r").registration, 2);
  EXPECT_EQ(ring.registration, -1);  // its command has no -R
}

// The scaling run: one '### GPUS=2' marker, then the sizes start again twice
// without one; '# GPUS (n): 2, 4, 6' gives each sweep its count, and
// nccl-tests' busbw = algbw x 2(n-1)/n agrees with it.
TEST(NcclLog, ScalingFileIsThreeSectionsOfTwoFourSixGpus) {
  const NcclLog log = parse_nccl_log(
      read(FABRICSIM_SOURCE_DIR "/traces/nccl-tests/h100x2-4-6-auto-allreduce-scaling-waynehacking.txt"), "x");
  ASSERT_EQ(log.sections.size(), 3u);
  EXPECT_EQ(log.ranks, 0);  // not one count
  const int gpus[] = {2, 4, 6};
  for (std::size_t k = 0; k < 3; ++k) {
    const NcclSection& s = log.sections[k];
    EXPECT_EQ(s.ranks, gpus[k]);
    EXPECT_EQ(s.count, 6u);
    EXPECT_EQ(log.rows[s.first].size, 268435456u);
    EXPECT_EQ(log.rows[s.first + s.count - 1].size, 8589934592u);
    const double n = s.ranks;
    for (std::size_t i = s.first; i < s.first + s.count; ++i)
      EXPECT_NEAR(log.rows[i].busbw / log.rows[i].algbw, 2 * (n - 1) / n, 0.01) << log.rows[i].line;
  }
  EXPECT_EQ(log.sections[0].title, "GPUS=2");
  EXPECT_EQ(log.sections[1].title, "");
}

// The sweep: '### ALGO=... size=...' and '### PROTO=...' sections with no
// table header; CollnetChain's section has no rows, only its note; the
// heading between them starts nothing.
TEST(NcclLog, AlgorithmProtocolSweepSections) {
  const NcclLog log = parse_nccl_log(
      read(FABRICSIM_SOURCE_DIR "/traces/nccl-tests/h100x4-algo-proto-sweep-waynehacking.txt"), "x");
  EXPECT_EQ(log.ranks, 4);
  EXPECT_EQ(log.forced_algorithm, "");  // 'sections: NCCL_ALGO=Ring / Tree / ...' forces nothing
  ASSERT_EQ(log.sections.size(), 13u);
  ASSERT_EQ(log.rows.size(), 12u);
  EXPECT_EQ(log.sections[0].algorithm, "Ring");
  EXPECT_EQ(log.sections[3].algorithm, "Tree");
  EXPECT_EQ(log.sections[6].algorithm, "NVLS");
  EXPECT_EQ(log.sections[9].algorithm, "CollNetChain");
  EXPECT_EQ(log.sections[9].count, 0u);
  EXPECT_EQ(log.sections[9].note, "no output at any size");
  EXPECT_EQ(log.sections[11].protocol, "LL");
  EXPECT_EQ(log.sections[11].algorithm, "");
  EXPECT_EQ(log.rows[3].algorithm, "Tree");
  EXPECT_EQ(log.rows[3].algorithm_from, "section");
  EXPECT_EQ(log.rows[3].size, 268435456u);
  EXPECT_DOUBLE_EQ(log.rows[3].time_us, 1706.78);
  EXPECT_EQ(log.rows[10].protocol, "LL");
  EXPECT_EQ(log.rows[10].protocol_from, "section");
  EXPECT_EQ(log.rows[10].algorithm, "");
  EXPECT_DOUBLE_EQ(log.rows[10].busbw, 146.90);
}

TEST(NcclLog, NamesInAnyCase) {
  EXPECT_EQ(nccl_algorithm_name("RING", "x", 1), "Ring");
  EXPECT_EQ(nccl_algorithm_name("nvls", "x", 1), "NVLS");
  EXPECT_EQ(nccl_algorithm_name("CollnetChain", "x", 1), "CollNetChain");
  EXPECT_EQ(nccl_algorithm_name("collnet_direct", "x", 1), "CollNetDirect");
  EXPECT_EQ(nccl_protocol_name("SIMPLE", "x", 1), "Simple");
  EXPECT_EQ(nccl_protocol_name("ll128", "x", 1), "LL128");
  try {
    nccl_algorithm_name("Star", "log", 3);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("log:3: algorithm 'Star' is not one NCCL has (Ring, Tree, NVLS"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(nccl_protocol_name("LL64", "log", 1), ConfigError);
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
  EXPECT_DOUBLE_EQ(log.rows[1].in_place_time_us, 30.0);  // the header's second 'time'
}

// The in-place run's time: read from the second 'time' column (a header's,
// or nccl-tests' own order without one); absent, or N/A, it is 0; anything
// else that is not a positive time names the line.
TEST(NcclLog, InPlaceTimeWhenTheRowHasOne) {
  const std::string header =
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n";
  const NcclLog both = parse_nccl_log(header + "1048576 262144 float sum -1 32.61 32.15 48.23 0 22.34 46.93 70.40 0\n"
                                               "2097152 524288 float sum -1 22.94 91.43 137.14 0 N/A N/A N/A 0\n",
                                      "l");
  ASSERT_EQ(both.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(both.rows[0].time_us, 32.61);
  EXPECT_DOUBLE_EQ(both.rows[0].in_place_time_us, 22.34);
  EXPECT_DOUBLE_EQ(both.rows[1].in_place_time_us, 0);
  const NcclLog one = parse_nccl_log("#  size  count  type  redop  root  time  algbw  busbw  #wrong\n"
                                     "1024 256 float sum -1 5 1 1 0\n",
                                     "l");
  EXPECT_DOUBLE_EQ(one.rows[0].in_place_time_us, 0);
  // Rows without a table header (after a '###' section): nccl-tests' 13
  // fields (in-place time the 10th) or the 12 of versions without root (the 9th).
  const NcclLog bare13 = parse_nccl_log("### GPUS=4\n1024 256 float sum -1 5 1 1 0 6 1 1 0\n", "l");
  EXPECT_DOUBLE_EQ(bare13.rows.back().time_us, 5);
  EXPECT_DOUBLE_EQ(bare13.rows.back().in_place_time_us, 6);
  const NcclLog bare12 = parse_nccl_log("### GPUS=4\n1024 256 float sum 5 1 1 0 7 1 1 0\n", "l");
  EXPECT_DOUBLE_EQ(bare12.rows.back().time_us, 5);
  EXPECT_DOUBLE_EQ(bare12.rows.back().in_place_time_us, 7);
  EXPECT_NE(error_of(header + "1024 256 float sum -1 5 1 1 0 -2 1 1 0\n").find("log:2: in-place time '-2'"),
            std::string::npos);
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
  // nccl-tests' -R takes 0, 1 or 2, once per log.
  EXPECT_NE(error_of("# NOTE: command: ./all_reduce_perf -b 8 -R 3\n" + header + "1024 256 float sum -1 1 1 1 0\n")
                .find("log:1: nccl-tests' -R flag with '3': it takes 0, 1 or 2"),
            std::string::npos);
  EXPECT_NE(error_of("# NOTE: ./all_reduce_perf -R 2\n# ALGO/ENV: nccl-tests flags -R 0\n" + header +
                     "1024 256 float sum -1 1 1 1 0\n")
                .find("log:2: -R 0 after -R 2 on line 1"),
            std::string::npos);
  EXPECT_NE(error_of("# NOTE: command: ./all_reduce_perf -b 8 -R\n" + header + "1024 256 float sum -1 1 1 1 0\n")
                .find("log:1: nccl-tests' -R flag without its value (0, 1 or 2)"),
            std::string::npos);
  EXPECT_NE(error_of("# NOTE: command: ./all_reduce_perf --local_register=3\n" + header + "1024 256 float sum -1 1 1 1 0\n")
                .find("nccl-tests' --local_register flag with '3'"),
            std::string::npos);
  EXPECT_EQ(parse_nccl_log("# NOTE: ./all_reduce_perf -g 4 -R2\n" + header + "1024 256 float sum -1 1 1 1 0\n", "l")
                .registration,
            2);
  // Prose on a line naming a test is not a command: a bare -R there is no flag.
  EXPECT_EQ(parse_nccl_log("# NOTE: all_reduce_perf ran without -R\n# NOTE: ./all_reduce_perf (-R 2)\n" + header +
                               "1024 256 float sum -1 1 1 1 0\n",
                           "l")
                .registration,
            2);
  EXPECT_THROW(nccl_redop("prod", "log", 1), ConfigError);
  EXPECT_THROW(nccl_test_op("sendrecv_perf", "log"), ConfigError);
}

// The header lines and sections: every error names the line and what was expected.
TEST(NcclLog, MalformedSectionsAndHeadersNameTheLine) {
  const std::string row13 = "1024 256 float sum -1 20 0.05 0.08 0 20 0.05 0.08 0\n";
  const std::string row12 = "1024 256 float sum 20 0.05 0.08 0 20 0.05 0.08 0\n";
  // Rows without a table header are read only inside '###' sections.
  EXPECT_EQ(parse_nccl_log("### GPUS=4\n" + row13, "x").rows[0].ranks, 4);
  EXPECT_DOUBLE_EQ(parse_nccl_log("### GPUS=4\n" + row12, "x").rows[0].time_us, 20);
  EXPECT_NE(error_of("### GPUS=4\n1024 256 float sum -1 20 0.05\n")
                .find("log:2: a result row with 7 fields; rows without a table header need nccl-tests' 13"),
            std::string::npos);
  EXPECT_NE(error_of("### GPUS=four\n" + row13).find("log:1: GPUS=four is not a GPU count"), std::string::npos);
  EXPECT_NE(error_of("### ALGO=Star\n" + row13).find("log:1: algorithm 'Star' is not one NCCL has"),
            std::string::npos);
  EXPECT_NE(error_of("### PROTO=LL64\n" + row13).find("log:1: protocol 'LL64'"), std::string::npos);
  EXPECT_NE(error_of("### COLOR=red\n" + row13).find("log:1: section key 'COLOR' is not one of GPUS, ALGO"),
            std::string::npos);
  EXPECT_NE(error_of("### ALGO=Ring size=2048\n" + row13).find("log:2: size 1024 in a section of size=2048 (line 1)"),
            std::string::npos);
  // A heading ('###' without KEY=VALUE) starts no section.
  EXPECT_NE(error_of("### a heading\n" + row13).find("log:2: a result row before the table header"),
            std::string::npos);
  // GPU counts: the header's list, one per section, must fit the sections.
  EXPECT_NE(error_of("# GPUS (n): many\n### ALGO=Ring\n" + row13).find("log:1: '# GPUS (n):' without a GPU count"),
            std::string::npos);
  EXPECT_NE(error_of("# GPUS (n): 2, 4\n### ALGO=Ring\n" + row13)
                .find("log:1: '# GPUS (n)' lists 2 GPU counts for 1 sections"),
            std::string::npos);
  EXPECT_NE(error_of("# GPUS (n): 2\n### GPUS=4\n" + row13).find("log:2: GPUS=4, but '# GPUS (n)' (line 1) gives 2"),
            std::string::npos);
  const std::string header = "#  size  count  type  redop  root  time  algbw  busbw  #wrong\n";
  EXPECT_NE(error_of("# GPUS (n): 2\n# nThread 1 nGpus 4\n" + header + "1024 256 float sum -1 1 1 1 0\n")
                .find("log:4: the section ran on 2 GPUs by the header, but nccl-tests' banner says 4"),
            std::string::npos);
  // Found by fuzz_nccl_log: banner numbers past an int overflowed nGpus x nThread.
  EXPECT_NE(error_of("# nThread 8 nGpus 1000000\n" + header).find("log:1: nGpus 1000000 x nThread 8 is more than"),
            std::string::npos);
  EXPECT_NE(error_of("# nThread 1 nGpus 99999999999\n" + header)
                .find("log:1: banner 'nGpus 99999999999': expected a whole number from 0 to 1000000"),
            std::string::npos);
  EXPECT_NE(error_of("# nThread x nGpus 2\n" + header).find("log:1: banner 'nThread x'"), std::string::npos);
  // Forced settings and the tuner's choice.
  EXPECT_NE(error_of("# ALGO/ENV: NCCL_ALGO=Star\n" + header).find("log:1: algorithm 'Star'"), std::string::npos);
  EXPECT_NE(error_of("# NCCL tuner choice per size (x): 1024-RING\n" + header)
                .find("log:1: tuner choice '1024-RING' is not SIZE:ALGORITHM/PROTOCOL"),
            std::string::npos);
  EXPECT_NE(error_of("# NCCL tuner choice per size (x): 1024:RING/SIMPLE, 1024:NVLS/SIMPLE\n" + header)
                .find("log:1: tuner choice for size 1024 given twice, differently"),
            std::string::npos);
  EXPECT_NE(error_of("# ALGO/ENV: NCCL_ALGO=Ring\n" + header + "1024 256 float sum -1 1 1 1 0\n" +
                     "# NCCL tuner choice per size (x): 1024:NVLS/SIMPLE\n")
                .find("log:3: the tuner chose NVLS for size 1024 (line 4), but NCCL_ALGO (line 1) says Ring"),
            std::string::npos);
}

}  // namespace
}  // namespace fabricsim
