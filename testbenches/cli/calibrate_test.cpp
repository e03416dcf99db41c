// fabricsim calibrate, run as a user would: it recovers a parameter whose
// value is known (logs made from the model's own times plus a fixed launch
// cost), reports the held-out logs, and refuses what is not a calibration.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "testbenches/cli/cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using namespace fabricsim_test;  // sh, temp_dir, load: testbenches/cli/cli_run.hpp

// The preset with no launch time and no host floor: the logs below are made
// to need 10 us.
std::string config_in(const std::string& dir) {
  std::string path = dir + "/config.yaml";
  std::ofstream(path) << "base: " << kSrc << "/configs/dgx-h100-nccl.yaml\ngpu:\n  launch_ns: 0\n  host_call_ns: 0\n";
  return path;
}

// An all_reduce_perf log in nccl-tests' format: n GPUs, float sum, one row
// per (size, time in us), busbw from the time as nccl-tests computes it.
void write_log(const std::string& path, int n, const std::vector<std::pair<std::uint64_t, double>>& rows) {
  std::ofstream f(path);
  f << "# Collective test starting: all_reduce_perf\n"
    << "# nThread 1 nGpus " << n << " minBytes " << rows.front().first << " maxBytes " << rows.back().first
    << " step: 8(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n";
  for (int r = 0; r < n; ++r)
    f << "#  Rank  " << r << " Group  0 Pid   4321 on   host device  " << r << " [0x18] NVIDIA H100 80GB HBM3\n";
  f << "#\n#                                                              out-of-place                       "
       "in-place\n"
    << "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
       "busbw #wrong\n"
    << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
       "(GB/s)\n";
  for (const auto& [size, us] : rows) {
    const double algbw = static_cast<double>(size) / us / 1e3;
    const double busbw = algbw * 2 * (n - 1) / n;
    char line[256];
    std::snprintf(line, sizeof line, "%12llu %13llu %9s %7s %7d %8.2f %7.2f %7.2f %6d %8.2f %7.2f %7.2f %6d\n",
                  static_cast<unsigned long long>(size), static_cast<unsigned long long>(size / 4), "float",
                  "sum", -1, us, algbw, busbw, 0, us, algbw, busbw, 0);
    f << line;
  }
  f << "# Out of bounds values : 0 OK\n";
}

// The model's own time for each size (compare with gpu.launch_ns=0) plus `plus_us`.
std::vector<std::pair<std::uint64_t, double>> model_times(const std::string& dir, const std::vector<std::uint64_t>& sizes,
                                                          double plus_us) {
  const std::string probe = dir + "/probe.txt";
  std::vector<std::pair<std::uint64_t, double>> rows;
  rows.reserve(sizes.size());
  for (std::uint64_t s : sizes) rows.emplace_back(s, 1.0);
  write_log(probe, 2, rows);
  const Result r = sh("compare " + probe + " " + config_in(dir) + " --out " + dir + "/probe");
  EXPECT_EQ(r.status, 0) << r.output;
  const nlohmann::json j = load(dir + "/probe/compare.json");
  rows.clear();
  for (const auto& row : j["rows"]) rows.emplace_back(row["size_bytes"].get<std::uint64_t>(),
                                                      row["sim_time_us"].get<double>() + plus_us);
  return rows;
}

TEST(Calibrate, RecoversAKnownLaunchTimeAndReportsTheHeldOutLogs) {
  const std::string dir = temp_dir("calibrate");
  fs::create_directories(dir);
  // Fitted and held-out logs: the model's times plus a 10 us launch.
  write_log(dir + "/fit.txt", 2, model_times(dir, {8, 64, 512, 4096}, 10.0));
  write_log(dir + "/held.txt", 2, model_times(dir, {16, 128, 1024}, 10.0));
  const Result r = sh("calibrate " + dir + "/fit.txt --config " + config_in(dir) +
                      " --fit gpu.launch_ns=0:20000:10 --hold-out " + dir + "/held.txt --out " + dir + "/out");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("# fitted: gpu.launch_ns="), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("held out"), std::string::npos) << r.output;
  const nlohmann::json j = load(dir + "/out/calibrate.json");
  ASSERT_EQ(j["fit"].size(), 1u);
  EXPECT_EQ(j["fit"][0]["key"], "gpu.launch_ns");
  // The logs print times to 10 ns: the fit finds the launch to a step or two.
  EXPECT_NEAR(j["fit"][0]["fitted"].get<double>(), 10000, 20) << r.output;
  EXPECT_EQ(j["fit"][0]["configured"].get<double>(), 0);
  // Every evaluation is a grid or golden-section point: no point twice.
  std::vector<double> seen;
  for (const auto& e : j["evaluations"]) {
    const double v = e["values"]["gpu.launch_ns"].get<double>();
    EXPECT_EQ(std::count(seen.begin(), seen.end(), v), 0) << v;
    seen.push_back(v);
    EXPECT_EQ(e["sizes"], 4);
  }
  EXPECT_LT(seen.size(), 40u);
  // Both logs reported, at the configured value and at the fit.
  ASSERT_EQ(j["logs_report"].size(), 2u);
  EXPECT_EQ(j["logs_report"][0]["role"], "fitted");
  EXPECT_EQ(j["logs_report"][1]["role"], "held_out");
  const nlohmann::json& held = j["logs_report"][1];
  EXPECT_EQ(held["fitted"]["sizes"], 3);
  EXPECT_LT(held["fitted"]["time_max_abs"].get<double>(), 0.005) << r.output;
  EXPECT_GT(held["configured"]["time_mean_abs"].get<double>(), 0.5) << r.output;
  EXPECT_TRUE(fs::exists(dir + "/out/fitted/held/compare.json"));
  fs::remove_all(dir);
}

// --only-protocol fits on the fitted logs' sizes of that protocol only and
// compares the held-out logs whole. The fitted log's LL sizes are the
// model's times plus 10 us; its two sizes the log says ran Simple are 30 us
// off, and would pull the fit away if they counted.
TEST(Calibrate, OnlyProtocolFitsThoseSizesAndHoldsOutWholeLogs) {
  const std::string dir = temp_dir("calibrate_only_protocol");
  fs::create_directories(dir);
  std::vector<std::pair<std::uint64_t, double>> rows = model_times(dir, {8, 64, 512, 4096}, 10.0);
  rows[2].second += 30;
  rows[3].second += 30;
  write_log(dir + "/fit.txt", 2, rows);
  std::ofstream(dir + "/fit.txt", std::ios::app)
      << "# NCCL tuner choice per size (test): 8:RING/LL, 64:RING/LL, 512:RING/SIMPLE, 4096:RING/SIMPLE\n";
  write_log(dir + "/held.txt", 2, model_times(dir, {16, 128, 1024}, 10.0));
  const Result r = sh("calibrate " + dir + "/fit.txt --config " + config_in(dir) +
                      " --fit gpu.launch_ns=0:20000:10 --only-protocol LL --hold-out " + dir + "/held.txt --out " +
                      dir + "/out");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json j = load(dir + "/out/calibrate.json");
  EXPECT_EQ(j["only_protocol"], "ll");
  EXPECT_NEAR(j["fit"][0]["fitted"].get<double>(), 10000, 20) << r.output;
  for (const auto& e : j["evaluations"]) EXPECT_EQ(e["sizes"], 2);
  ASSERT_EQ(j["logs_report"].size(), 2u);
  EXPECT_EQ(j["logs_report"][0]["fitted"]["sizes"], 2);
  EXPECT_EQ(j["logs_report"][1]["fitted"]["sizes"], 3);  // held out: whole
  fs::remove_all(dir);
}

TEST(Calibrate, RefusesWhatIsNotACalibration) {
  const std::string dir = temp_dir("calibrate_refusals");
  fs::create_directories(dir);
  write_log(dir + "/a.txt", 2, {{8, 20.0}, {64, 20.0}});
  write_log(dir + "/b.txt", 2, {{8, 20.0}, {64, 20.0}});
  const std::string logs = dir + "/a.txt --config " + config_in(dir) + " --out " + dir + "/out ";
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases = {
      {"--fit gpu.launch_ns=0:1000", "--hold-out"},  // no held-out log (CLI11: required)
      {"--fit gpu.launch_ns=0:1000 --hold-out " + dir + "/a.txt", "given twice"},
      {"--fit gpu.launch_nz=0:1000 --hold-out " + dir + "/b.txt", "unknown parameter 'gpu.launch_nz'"},
      {"--fit gpu.launch_ns --hold-out " + dir + "/b.txt", "give the range to search, gpu.launch_ns=LO:HI"},
      {"--fit gpu.launch_ns=0:2e9 --hold-out " + dir + "/b.txt", "inside what gpu.launch_ns allows"},
      {"--fit gpu.launch_ns=5:1 --hold-out " + dir + "/b.txt", "LO must be below HI"},
      {"--fit gpu.launch_ns=0:x --hold-out " + dir + "/b.txt", "HI 'x' is not a number"},
      {"--fit gpu.slots=6.5:10 --hold-out " + dir + "/b.txt", "integer; LO and HI must be whole"},
      {"--fit collective.protocol=0:1 --hold-out " + dir + "/b.txt", "calibrate fits numbers"},
      {"--fit gpu.launch_ns=0:1000 --set gpu.launch_ns=5 --hold-out " + dir + "/b.txt", "fitted or set, not both"},
      {"--fit gpu.launch_ns=0:1000,gpu.launch_ns=0:10 --hold-out " + dir + "/b.txt", "given twice"},
      {"--fit gpu.launch_ns=0:1000 --hold-out " + dir + "/missing.txt", "cannot read nccl-tests output"},
      {"--fit gpu.launch_ns=0:1000 --only-protocol tree --hold-out " + dir + "/b.txt",
       "--only-protocol 'tree': one of simple, ll, ll128"},
  };
  for (const Case& c : cases) {
    const Result r = sh("calibrate " + logs + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(dir + "/out/calibrate.json")) << c.args;
  }
  fs::remove_all(dir);
}

}  // namespace
