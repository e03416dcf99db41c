// Validation cases (docs/validation.md, "Measured nccl-tests logs"): measured
// H100 files of traces/nccl-tests through `fabricsim compare`, end to end,
// capped small so that each takes seconds. They check the structure only —
// every measured row accounted for (simulated, not in the model, or beyond
// reach), the columns, compare.json, exit 0 — never the size of the errors:
// scripts/validate measures those, and the model is expected to change them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/core/nccl_log.hpp"
#include "testbenches/cli/cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using namespace fabricsim_test;  // sh, temp_dir, load: testbenches/cli/cli_run.hpp

fabricsim::NcclLog read_log(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return fabricsim::parse_nccl_log(s.str(), path);
}

// The lines of the table: every line that is not a '#' comment.
std::vector<std::string> table_rows(const std::string& out) {
  std::vector<std::string> rows;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("  ", 0) == 0) rows.push_back(l);
  return rows;
}

struct Counts {
  int simulated = 0, not_in_model = 0, beyond = 0;
};

// Runs compare on FILE capped at MAX_BYTES and checks that every row of the
// log is in the table and in compare.json, in order, with its fate.
// `sim_protocols` receives each simulated row's protocol, in order.
Counts check_compare(const std::string& file, std::uint64_t max_bytes,
                     const std::string& config = "dgx-h100-allreduce.yaml",
                     std::vector<std::string>* sim_protocols = nullptr) {
  const std::string path = kSrc + "/traces/nccl-tests/" + file;
  const std::string dir = temp_dir("validation_" + file.substr(0, 16));
  const Result r = sh("compare " + path + " " + kSrc + "/configs/" + config + " --max-bytes " +
                      std::to_string(max_bytes) + " --out " + dir);
  Counts c;
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* col : {"size (B)", " n ", "time us", "sim us", "error", "busbw GB/s", "sim busbw", "#wrong",
                          "measured", "simulated"})
    EXPECT_NE(r.output.find(col), std::string::npos) << col << "\n" << r.output;
  const fabricsim::NcclLog log = read_log(path);
  const auto rows = table_rows(r.output);
  EXPECT_EQ(rows.size(), log.rows.size()) << r.output;
  const auto j = load(dir + "/compare.json");
  EXPECT_EQ(j["rows"].size(), log.rows.size());
  for (std::size_t i = 0; i < log.rows.size() && i < rows.size() && i < j["rows"].size(); ++i) {
    const fabricsim::NcclRow& m = log.rows[i];
    const auto& row = j["rows"][i];
    std::istringstream words(rows[i]);
    std::uint64_t size = 0;
    words >> size;
    EXPECT_EQ(size, m.size) << rows[i];
    EXPECT_EQ(row["size_bytes"].get<std::uint64_t>(), m.size);
    EXPECT_EQ(row["line"].get<int>(), m.line);
    const std::string st = row["status"];
    if (st == "simulated") {
      ++c.simulated;
      EXPECT_LE(m.size, max_bytes) << rows[i];
      EXPECT_GT(row["sim_time_us"].get<double>(), 0) << rows[i];
      EXPECT_TRUE(row["time_error"].is_number()) << rows[i];
      EXPECT_EQ(row["busbw_error"].is_number(), m.busbw >= 1.0) << rows[i];
      EXPECT_EQ(row["wrong"].get<std::uint64_t>(), 0u) << rows[i];
      // The simulated column: the run's algorithm and protocol ('-': not modelled).
      const std::string proto = row["sim_protocol"].is_null() ? "-" : row["sim_protocol"].get<std::string>();
      if (sim_protocols) sim_protocols->push_back(proto);
      EXPECT_EQ(row["sim_protocol"].is_null(), !j["protocol_modelled"].get<bool>());
      const std::string column = "  " + row["sim_algorithm"].get<std::string>() + "/" + proto;
      EXPECT_EQ(rows[i].compare(rows[i].size() - std::min(rows[i].size(), column.size()), column.size(), column), 0)
          << rows[i];
    } else if (st == "not_in_model") {
      ++c.not_in_model;
      EXPECT_NE(rows[i].find("not in the model: " + m.algorithm), std::string::npos) << rows[i];
    } else if (st == "beyond_reach") {
      ++c.beyond;
      EXPECT_GT(m.size, max_bytes) << rows[i];
      EXPECT_NE(rows[i].find("not simulated: beyond host-time reach (issue 28)"), std::string::npos) << rows[i];
    } else {
      ADD_FAILURE() << "status " << st << ": " << rows[i];
    }
  }
  EXPECT_NE(r.output.find("# " + std::to_string(c.simulated) + " of " + std::to_string(log.rows.size()) +
                          " sizes compared"),
            std::string::npos)
      << r.output;
  fs::remove_all(dir);
  return c;
}

// The latency regime: 4 GPUs, 8 B .. 64 KiB simulated, the rest marked.
TEST(CompareValidation, SmallSizesFourGpus) {
  const Counts c = check_compare("h100x4-auto-allreduce-small-R0-G0-waynehacking.txt", 65536);
  EXPECT_EQ(c.simulated, 14);
  EXPECT_EQ(c.beyond, 8);
}

// Registered buffers (-R 2) with NCCL's GPU side: the log's -R sets
// collective.registration, so from 64 KiB each size runs NCCL's symmetric
// kernel and below it the normal LL kernel (8 B .. 256 KiB simulated).
TEST(CompareValidation, RegisteredBuffersFourGpus) {
  std::vector<std::string> protocols;
  const Counts c =
      check_compare("h100x4-auto-allreduce-small-R2-G1-waynehacking.txt", 262144, "dgx-h100-nccl.yaml", &protocols);
  EXPECT_EQ(c.simulated, 16);
  EXPECT_EQ(c.beyond, 6);
  ASSERT_EQ(protocols.size(), 16u);
  for (std::size_t i = 0; i < protocols.size(); ++i)
    EXPECT_EQ(protocols[i], i < 13 ? "ll" : "symmetric") << "size " << (8u << i);
}

// Sections of '### ALGO=... size=...' and '### PROTO=...' without a table
// header: Tree is not in the model (and so are protocols the configuration
// does not know), the rest beyond a small cap.
TEST(CompareValidation, AlgorithmProtocolSweepSections) {
  const Counts c = check_compare("h100x4-algo-proto-sweep-waynehacking.txt", 1048576);
  EXPECT_EQ(c.simulated, 0);
  EXPECT_GE(c.not_in_model, 3);
  EXPECT_EQ(c.not_in_model + c.beyond, 12);
}

// The forced algorithm and the tuner's per-size choice on 2 GPUs, one
// size simulated (the smallest the file has: 256 MiB, ring).
TEST(CompareValidation, ForcedRingTwoGpus) {
  const Counts c = check_compare("h100x2-ring-allreduce-attrib-waynehacking.txt", 268435456);
  EXPECT_EQ(c.simulated, 1);
  EXPECT_EQ(c.beyond, 5);
}

// Every file of traces/nccl-tests is accepted by compare: capped below its
// smallest size, nothing is simulated and every row says why.
TEST(CompareValidation, EveryFileAccountsForEveryRow) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(kSrc + "/traces/nccl-tests")) {
    if (e.path().extension() != ".txt") continue;
    ++files;
    const Counts c = check_compare(e.path().filename().string(), 4);
    EXPECT_EQ(c.simulated, 0) << e.path();
  }
  EXPECT_EQ(files, 18);
}

}  // namespace
