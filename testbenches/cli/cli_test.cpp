// The command line as a user runs it: exit codes, messages, determinism of
// stats.json, and the generated parameter page.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "testbenches/cli/cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using namespace fabricsim_test;  // sh, temp_dir, load: testbenches/cli/cli_run.hpp

// Everything that depends on the host rather than the model.
nlohmann::json without_host(nlohmann::json j) {
  j.erase("host");
  j["sim"].erase("host_seconds");
  return j;
}

const std::string kSmall =
    kSrc + "/configs/switch64.yaml --set switch.ports=16 sim.warmup_ns=500 "
           "sim.duration_ns=3000 traffic.load=0.8 --quiet";

TEST(Cli, RunWritesStatsWithTheDocumentedKeys) {
  const std::string out = temp_dir("keys");
  const Result r = sh("run " + kSmall + " --out " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto s = load(out + "/stats.json");
  for (const char* k : {"simulated_ns", "host_seconds", "events"})
    EXPECT_TRUE(s["sim"].contains(k)) << k;
  for (const char* k : {"offered", "accepted", "accepted_payload_GBps_per_endpoint"})
    EXPECT_TRUE(s["throughput"].contains(k)) << k;
  for (const char* k : {"mean", "p50", "p99", "p999", "max"})
    EXPECT_TRUE(s["latency_ns"].contains(k)) << k;
  for (const char* k : {"injected", "delivered", "in_flight", "lost"})
    EXPECT_TRUE(s["conservation"].contains(k)) << k;
  EXPECT_EQ(s["conservation"]["lost"].get<int>(), 0);
  EXPECT_TRUE(s["links"]["fabric.ep0.tx0"].contains("utilization"));
  EXPECT_TRUE(s["links"]["fabric.ep0.tx0"].contains("credit_stall_ns"));
  EXPECT_TRUE(s["switches"]["fabric.sw0"]["input_buffer_occupancy_flits"].contains("mean"));
  EXPECT_EQ(s["config"]["switch.ports"].get<int>(), 16);
  EXPECT_GT(s["sim"]["events"].get<std::uint64_t>(), 0u);
  fs::remove_all(out);
}

TEST(Cli, SameSeedSameStatsBitForBit) {
  const std::string a = temp_dir("det_a"), b = temp_dir("det_b"), c = temp_dir("det_c");
  ASSERT_EQ(sh("run " + kSmall + " --seed 7 --out " + a).status, 0);
  ASSERT_EQ(sh("run " + kSmall + " --seed 7 --out " + b).status, 0);
  ASSERT_EQ(sh("run " + kSmall + " --seed 8 --out " + c).status, 0);
  const auto ja = without_host(load(a + "/stats.json"));
  const auto jb = without_host(load(b + "/stats.json"));
  const auto jc = without_host(load(c + "/stats.json"));
  EXPECT_EQ(ja.dump(), jb.dump());
  EXPECT_NE(ja["latency_ns"].dump(), jc["latency_ns"].dump());
  for (const auto& d : {a, b, c}) fs::remove_all(d);
}

// sim.run_ahead runs the fabric's instants without the kernel in between
// when nothing else is scheduled: the same simulation, to the bit. Cases: a
// lightly loaded switch (instants far apart), a collective that ends with
// sc_stop after a jittered start, a scale-out hierarchical all-reduce, NVLS
// with faults applied at set times (the fault injector is a module too).
TEST(Cli, RunAheadIsTheSameSimulation) {
  const std::vector<std::string> cases = {
      kSrc + "/configs/dgx-h100-allreduce.yaml --set collective.algorithm=nvls "
             "collective.min_bytes=262144 collective.max_bytes=262144 "
             "faults=lane_down@1000:fabric.gpu0.tx*=1,link_down@1500:fabric.sw1.out3,"
             "port_stall@800:fabric.sw2.out7=300",
      kSrc + "/configs/switch64.yaml --set switch.ports=16 sim.warmup_ns=500 sim.duration_ns=20000 "
             "traffic.load=0.02 traffic.packet_flits=1",
      kSrc + "/configs/dgx-h100-allreduce.yaml --set collective.algorithm=ring "
             "collective.min_bytes=65536 collective.max_bytes=262144 straggler.jitter_ns=40",
      kSrc + "/configs/dgx-h100-x4-ib.yaml --set collective.algorithm=hierarchical "
             "collective.min_bytes=262144 collective.max_bytes=262144 scaleout.sharp=true"};
  int k = 0;
  for (const std::string& c : cases) {
    const std::string a = temp_dir("ahead_on" + std::to_string(k));
    const std::string b = temp_dir("ahead_off" + std::to_string(k++));
    ASSERT_EQ(sh("run " + c + " --quiet --out " + a).status, 0) << c;
    ASSERT_EQ(sh("run " + c + " sim.run_ahead=false --quiet --out " + b).status, 0) << c;
    auto ja = without_host(load(a + "/stats.json"));
    auto jb = without_host(load(b + "/stats.json"));
    EXPECT_EQ(jb["config"]["sim.run_ahead"], false);
    // Without run-ahead every instant is a kernel activation; with it, far
    // fewer (nothing else is in the kernel).
    const auto instants = ja["sim"]["instants"].get<std::uint64_t>();
    EXPECT_EQ(jb["sim"]["instants"].get<std::uint64_t>(), instants) << c;
    EXPECT_EQ(jb["sim"]["kernel_activations"].get<std::uint64_t>(), instants) << c;
    EXPECT_LT(ja["sim"]["kernel_activations"].get<std::uint64_t>(), instants / 10) << c;
    for (auto* j : {&ja, &jb}) {
      j->erase("config");
      (*j)["sim"].erase("kernel_activations");
    }
    EXPECT_EQ(ja.dump(), jb.dump()) << c;
    EXPECT_GT(ja["sim"]["events"].get<std::uint64_t>(), 1000u) << c;
    fs::remove_all(a);
    fs::remove_all(b);
  }
}

// run takes its configuration as compare does: positional or --config.
TEST(Cli, RunTakesTheConfigPositionalOrByOption) {
  const std::string a = temp_dir("cfg-pos"), b = temp_dir("cfg-opt");
  Result r = sh("run " + kSmall + " --out " + a);
  ASSERT_EQ(r.status, 0) << r.output;
  r = sh("run --config " + kSmall + " --out " + b);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(without_host(load(a + "/stats.json")).dump(),
            without_host(load(b + "/stats.json")).dump());
  fs::remove_all(a);
  fs::remove_all(b);
}

// A setting the chosen mode ignores is run, with a warning naming the key,
// its value and the mode (stderr, --quiet too, and stats.json); the warning
// is right: the results are those of the default.
TEST(Cli, IgnoredSettingsAreNamedAndChangeNothing) {
  const std::string a = temp_dir("ign-a"), b = temp_dir("ign-b"), c = temp_dir("ign-c");
  const std::string fifo = kSmall + " --set switch.queueing=fifo switch.vcs=1";
  Result r = sh("run " + fifo + " --set switch.iterations=4 --out " + a);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: switch.iterations=4 has no effect: with switch.queueing=fifo "
                          "and switch.vcs=1"),
            std::string::npos)
      << r.output;
  ASSERT_EQ(sh("run " + fifo + " --out " + b).status, 0);
  nlohmann::json ja = without_host(load(a + "/stats.json"));
  nlohmann::json jb = without_host(load(b + "/stats.json"));
  ASSERT_EQ(ja["sim"]["ignored_settings"].size(), 1u);
  EXPECT_FALSE(jb["sim"].contains("ignored_settings"));
  for (auto* j : {&ja, &jb}) {
    (*j)["sim"].erase("ignored_settings");
    (*j).erase("config");
  }
  EXPECT_EQ(ja.dump(), jb.dump());
  // Two VCs give an input two heads: iterations matter, no warning.
  r = sh("run " + kSmall + " --set switch.queueing=fifo switch.vcs=2 switch.iterations=4 --out " + c);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  // Keys of the base files a preset builds on are not the user's: none.
  r = sh("run " + kSrc + "/configs/dgx-h100-allreduce.yaml --set collective.max_bytes=1024 --out " + c);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  r = sh("run " + kSrc + "/configs/dgx-h100-allreduce.yaml --set collective.max_bytes=1024 " +
         "traffic.load=0.9 straggler.delay_ns=500 --out " + c);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("traffic.load=0.9 has no effect: traffic.* describes synthetic traffic "
                          "and workload.kind=collective sends none"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("straggler.delay_ns=500 has no effect: straggler.gpu=-1"),
            std::string::npos)
      << r.output;
  for (const auto& d : {a, b, c}) fs::remove_all(d);
}

TEST(Cli, UnknownKeyExitsWithStatus2AndSimulatesNothing) {
  const std::string out = temp_dir("bad");
  const Result r = sh("run " + kSmall + " --set switch.port=8 --out " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("unknown config key 'switch.port'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean 'switch.ports'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out + "/stats.json"));
}

TEST(Cli, BadValuesExitWithStatus2AndNameKeyValueAllowed) {
  Result r = sh("run " + kSmall + " --set traffic.load=2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("'traffic.load': value '2' is out of range; allowed: number in [0, 1]"),
            std::string::npos)
      << r.output;
  r = sh("run " + kSmall + " --set switch.allocator=wavefront");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("allowed: islip | pim | rr"), std::string::npos) << r.output;
  r = sh("run /nonexistent.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("cannot read config file '/nonexistent.yaml': no such file"),
            std::string::npos)
      << r.output;
  // A typo in a preset's name: the nearest file of its folder is suggested.
  r = sh("run " + kSrc + "/configs/dgx_h100.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("no such file (did you mean '" + kSrc + "/configs/dgx-h100.yaml'?)"),
            std::string::npos)
      << r.output;
  // Nothing near: the folder's YAML files are listed.
  r = sh("run " + kSrc + "/configs/quantum-fabric.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("the YAML files in " + kSrc + "/configs/: "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("switch64.yaml"), std::string::npos) << r.output;
  r = sh("run");
  EXPECT_EQ(r.status, 2);
  r = sh("frobnicate");
  EXPECT_EQ(r.status, 2);
}

// Waveform options: a .vcd is written; other names and bad windows exit 2
// naming the option and the value.
TEST(Cli, WaveOptions) {
  const std::string dir = temp_dir("wave");
  Result r = sh("run " + kSmall + " --quiet --out " + dir + " --wave " + dir +
                "/w.vcd --wave-scope 'fabric.sw0.*' --wave-window 100:400");
  EXPECT_EQ(r.status, 0) << r.output;
  std::ifstream f(dir + "/w.vcd");
  std::string vcd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(vcd.find("$scope module sw0 $end"), std::string::npos);
  EXPECT_NE(vcd.find("occupancy"), std::string::npos);
  r = sh("run " + kSmall + " --out " + dir + " --wave " + dir + "/w.fsdb");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--wave=" + dir + "/w.fsdb: the waveform file must end in .vcd or .fst"),
            std::string::npos)
      << r.output;
  r = sh("run " + kSmall + " --out " + dir + " --wave " + dir + "/w.vcd --wave-window 5:3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--wave-window=5:3: expected START_NS:END_NS"), std::string::npos)
      << r.output;
  fs::remove_all(dir);
}

// --wave-rtl: an NVLS all-reduce writes the RTL ALUs' FST next to the
// fabric's; a .vcd name, or a run without a reduction engine, exit 2 saying why.
TEST(Cli, WaveRtlOptions) {
  const std::string dir = temp_dir("wave_rtl");
  const std::string nvls = kSrc + "/configs/dgx-h100-allreduce.yaml --set collective.algorithm=nvls "
                           "--set collective.max_bytes=4096 --set reduction.alu=rtl";
  Result r = sh("run " + nvls + " --quiet --out " + dir + " --wave-rtl " + dir +
                "/alu.fst --wave " + dir + "/fabric.fst --wave-scope 'fabric.sw0.*'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_GT(fs::file_size(dir + "/alu.fst"), 0u);
  EXPECT_GT(fs::file_size(dir + "/fabric.fst"), 0u);
  r = sh("run " + nvls + " --out " + dir + " --wave-rtl " + dir + "/alu.vcd");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--wave-rtl=" + dir + "/alu.vcd: the RTL waveform file must end in .fst"),
            std::string::npos)
      << r.output;
  r = sh("run " + kSmall + " --out " + dir + " --wave-rtl " + dir + "/alu.fst");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("this configuration uses no reduction engine"), std::string::npos)
      << r.output;
  fs::remove_all(dir);
}

// fabricsim compare: the shipped nccl-tests log against dgx-h100 (ring):
// every size side by side with its error; bad logs and mismatches exit 2.
// --timeline: Chrome trace events whose spans, instants and counters agree
// with stats.json (a ring all-reduce of two sizes on dgx-h100 with a late
// GPU and a link that goes down).
TEST(Cli, TimelineAgreesWithStats) {
  const std::string out = temp_dir("timeline");
  const std::string tl = out + "/t.json";
  const Result r = sh("run " + kSrc + "/configs/dgx-h100-allreduce.yaml --quiet --out " + out +
                      " --timeline " + tl +
                      " --set collective.min_bytes=65536 collective.max_bytes=131072"
                      " straggler.gpu=3 straggler.delay_ns=1500"
                      " faults=link_down@2000:fabric.gpu0.tx1");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto s = load(out + "/stats.json");
  std::ifstream f(tl);
  const auto t = nlohmann::json::parse(f);
  std::map<int, std::string> process;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") process[e["pid"]] = e["args"]["name"];
  const double window_us = s["sim"]["window_ns"].get<double>() / 1000.0;
  const auto& rows = s["collectives"]["rows"];
  std::map<std::string, int> calls, late, faults;
  std::map<std::string, double> wait;
  // Busy time of every link from its `valid` counter: a step function.
  std::map<std::string, std::pair<double, double>> busy;  // link -> (since, total)
  std::map<std::string, double> level;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M") continue;
    const std::string p = process.at(e["pid"]);
    const std::string name = e["name"];
    const double ts = e["ts"];
    if (e["ph"] == "X") {
      if (name.rfind("all_reduce ", 0) == 0) ++calls[p];
      if (name == "wait for the slowest GPU") wait[p] += e["dur"].get<double>();
    } else if (e["ph"] == "i") {
      if (name.rfind("late start", 0) == 0) ++late[p];
      if (name.rfind("fault: ", 0) == 0) {
        ++faults[p];
        EXPECT_DOUBLE_EQ(ts, 2.0);
      }
    } else if (e["ph"] == "C" && name.size() > 6 && name.compare(name.size() - 6, 6, ".valid") == 0) {
      const std::string link = p + "." + name.substr(0, name.size() - 6);
      const double v = e["args"]["value"];
      auto& b = busy[link];
      if (level[link] > 0) b.second += ts - b.first;
      b.first = ts;
      level[link] = v;
    }
  }
  for (int g = 0; g < 8; ++g) {
    const std::string gpu = "fabric.gpu" + std::to_string(g);
    EXPECT_EQ(calls[gpu], 2) << gpu;
    double w = 0;  // one iteration per size: the row's mean is the call's wait
    for (const auto& row : rows) w += row["gpu_wait_us_mean"][static_cast<size_t>(g)].get<double>();
    EXPECT_NEAR(wait[gpu], w, 1e-6) << gpu;
    EXPECT_EQ(late[gpu], g == 3 ? 2 : 0) << gpu;
  }
  EXPECT_EQ(faults["fabric.gpu0"], 1);
  ASSERT_FALSE(busy.empty());
  for (const auto& [link, b] : busy) {
    const double expect = s["links"][link]["utilization"].get<double>() * window_us;
    EXPECT_NEAR(b.second, expect, 1e-6 * window_us) << link;
  }
  // A timeline file must end in .json.
  EXPECT_EQ(sh("run " + kSrc + "/configs/switch64.yaml --timeline " + out + "/t.vcd").status, 2);
}

// --watch logs one packet at every hop, in an order and at times that
// agree with each other; --log levels per module; --progress.
TEST(Cli, WatchLogAndProgress) {
  const std::string out = temp_dir("watch");
  const Result w = sh("run " + kSrc + "/configs/switch64.yaml -q --out " + out +
                      " --set sim.warmup_ns=10 sim.duration_ns=1000 --watch 5");
  ASSERT_EQ(w.status, 0) << w.output;
  std::vector<std::string> lines;
  std::istringstream in(w.output);
  for (std::string l; std::getline(in, l);)
    if (l.find("#5 ") != std::string::npos) lines.push_back(l);
  ASSERT_EQ(lines.size(), 5u) << w.output;  // source link, switch in, grant, output link, sink
  const char* steps[] = {"tx0: sends #5", "sw0: in", "sw0: grants #5", "sw0.out", "receives #5"};
  for (std::size_t k = 0; k < 5; ++k) EXPECT_NE(lines[k].find(steps[k]), std::string::npos) << lines[k];
  // The switch takes the packet when the source link said its head arrives.
  const auto at = [](const std::string& l) { return std::stod(l.substr(1, l.find(" ns]") - 1)); };
  const auto head = [](const std::string& l) {
    return std::stod(l.substr(l.find("head in at ") + 11));
  };
  EXPECT_DOUBLE_EQ(at(lines[1]), head(lines[0]));
  EXPECT_LE(at(lines[1]), at(lines[2]));
  EXPECT_DOUBLE_EQ(at(lines[4]), std::stod(lines[3].substr(lines[3].find("tail at ") + 8)));
  // Info on the fabric: one line per finished call; debug on one switch only.
  const Result c = sh("run " + kSrc + "/configs/dgx-h100-allreduce.yaml -q --out " + out +
                      " --set collective.min_bytes=4096 collective.max_bytes=16384"
                      " --log 'fabric=info' --log 'fabric.sw1=debug' --progress");
  ASSERT_EQ(c.status, 0) << c.output;
  int calls = 0, sw1 = 0, others = 0;
  std::istringstream cin(c.output);
  for (std::string l; std::getline(cin, l);) {
    if (l.find("] fabric: call ") != std::string::npos) ++calls;
    if (l.find("] fabric.sw1: ") != std::string::npos) ++sw1;
    if (l.find("] fabric.sw0: ") != std::string::npos) ++others;
  }
  EXPECT_EQ(calls, 3);
  EXPECT_GT(sw1, 0);
  EXPECT_EQ(others, 0);
  EXPECT_NE(c.output.find("100%, call 3/3"), std::string::npos) << c.output;
  // A level that does not exist: exit 2, naming it and the allowed ones.
  const Result bad = sh("run " + kSrc + "/configs/switch64.yaml --log 'fabric.sw0=loud'");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("level 'loud' is not one of off, error, warn, info, debug"),
            std::string::npos)
      << bad.output;
}

TEST(Cli, CompareNcclTestsOutput) {
  const std::string dir = temp_dir("compare");
  const std::string log = kSrc + "/traces/nccl-tests/all_reduce_perf_8xH100_synthetic.txt";
  Result r = sh("compare " + log + " --config " + kSrc +
                "/configs/dgx-h100.yaml --set collective.algorithm=ring --out " + dir);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(all_reduce_perf, 8 GPUs, float sum)"), std::string::npos) << r.output;
  for (const char* size : {"1024", "524288", "1048576"})
    EXPECT_NE(r.output.find(std::string("\n  ") + std::string(12 - std::strlen(size), ' ') + size + " "),
              std::string::npos)
        << size << r.output;
  EXPECT_NE(r.output.find("# 11 of 11 sizes compared: time mean |error|"), std::string::npos) << r.output;
  // The log names no algorithm: '?', simulated as --set says.
  EXPECT_NE(r.output.find("?/?            ring/"), std::string::npos) << r.output;
  // The error column of time for every size; busbw's only where the log's
  // two decimals resolve it (>= 1 GB/s), and what the model leaves out.
  EXPECT_NE(r.output.find("busbw '-': measured below 1 GB/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# Not in the model: the GPU side of a collective"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("no measured call took less"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  // A setting the mode ignores is named, as run names it.
  const Result w = sh("compare " + log + " " + kSrc +
                      "/configs/dgx-h100.yaml --set collective.algorithm=ring traffic.load=0.9 --out " +
                      dir);
  EXPECT_EQ(w.status, 0) << w.output;
  EXPECT_NE(w.output.find("warning: traffic.load=0.9 has no effect"), std::string::npos) << w.output;
  EXPECT_TRUE(fs::exists(dir + "/stats.json"));
  // The configuration in the same form as run's: positional, after the log.
  const Result p = sh("compare " + log + " " + kSrc +
                      "/configs/dgx-h100.yaml --set collective.algorithm=ring --out " + dir);
  EXPECT_EQ(p.status, 0) << p.output;
  EXPECT_EQ(p.output, r.output);
  // The log's GPU count sets topology.endpoints; the user's --set wins, said.
  r = sh("compare " + log + " --config " + kSrc +
         "/configs/dgx-h100.yaml --set topology.endpoints=4 collective.algorithm=ring --out " + dir);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: " + log + " ran on 8 GPUs; simulating 4 as --set topology.endpoints says"),
            std::string::npos)
      << r.output;
  // A configuration whose GPU count the log cannot set (one switch: its ports).
  r = sh("compare " + log + " --config " + kSrc + "/configs/switch64.yaml --out " + dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("ran on 8 GPUs; the configuration has 64 (topology.endpoints)"), std::string::npos)
      << r.output;
  // A log that is not nccl-tests output.
  std::ofstream(dir + "/bad.txt") << "hello\n";
  r = sh("compare " + dir + "/bad.txt --config " + kSrc + "/configs/dgx-h100.yaml --out " + dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("bad.txt:1: a result row before the table header"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

// A 2-GPU all_reduce_perf log of its first `rows` sizes of 1 .. 16 KiB
// (about 20 us each), ending with NCCL's tuner choice per size.
void write_two_gpu_log(const std::string& path, std::size_t rows, const std::string& choices) {
  static const char* const kRows[] = {
      "  1024   256  float  sum  -1  20.1  0.05  0.05  0  20.0  0.05  0.05  0\n",
      "  2048   512  float  sum  -1  20.2  0.10  0.10  0  20.0  0.10  0.10  0\n",
      "  4096  1024  float  sum  -1  20.3  0.20  0.20  0  20.0  0.20  0.20  0\n",
      "  8192  2048  float  sum  -1  20.4  0.40  0.40  0  20.0  0.40  0.40  0\n",
      " 16384  4096  float  sum  -1  20.5  0.80  0.80  0  20.0  0.80  0.80  0\n"};
  std::ofstream f(path);
  f << "# GPUS (n): 2\n# COLLECTIVE: all_reduce_perf\n"
       "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n";
  for (std::size_t i = 0; i < rows && i < std::size(kRows); ++i) f << kRows[i];
  f << "# NCCL tuner choice per size (test): " << choices << "\n";
}

// A size whose out-of-place and in-place runs are more than 15% apart is
// compared as any other (against the out-of-place time) and flagged
// unsteady: a note with both times, the summary over the other sizes too,
// and the flag in compare.json.
TEST(Cli, CompareFlagsUnsteadyMeasurements) {
  const std::string dir = temp_dir("compare-unsteady");
  fs::create_directories(dir);
  const std::string log = dir + "/unsteady.txt";
  std::ofstream(log) << "# GPUS (n): 2\n# COLLECTIVE: all_reduce_perf\n"
                        "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
                        "  1024   256  float  sum  -1  20.1  0.05  0.05  0  20.0  0.05  0.05  0\n"
                        "  2048   512  float  sum  -1  30.0  0.07  0.07  0  20.0  0.10  0.10  0\n"
                        "  4096  1024  float  sum  -1  20.3  0.20  0.20  0  19.0  0.20  0.20  0\n";
  const Result r = sh("compare " + log + " " + kSrc + "/configs/dgx-h100.yaml --set collective.algorithm=ring --out " +
                      dir + "/out");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("2048 B (line 5): unsteady measurement: out of place 30.00 us, in place 20.00 us, "
                          "50.0% apart (more than 15%); the simulated time is"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("1024 B (line 4): unsteady"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("4096 B (line 6): unsteady"), std::string::npos) << r.output;  // 6.8% apart
  EXPECT_NE(r.output.find("# 3 of 3 sizes compared"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# without the 1 unsteady size (the machine's two runs more than 15% apart): time mean "
                          "|error|"),
            std::string::npos)
      << r.output;
  std::ifstream f(dir + "/out/compare.json");
  const auto j = nlohmann::json::parse(f);
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_FALSE(j["rows"][0]["unsteady"].get<bool>());
  EXPECT_TRUE(j["rows"][1]["unsteady"].get<bool>());
  EXPECT_DOUBLE_EQ(j["rows"][1]["measured_in_place_time_us"].get<double>(), 20.0);
  EXPECT_NEAR(j["rows"][1]["measured_spread"].get<double>(), 0.5, 1e-12);
  EXPECT_EQ(j["summary"]["unsteady_sizes"].get<int>(), 1);
  EXPECT_EQ(j["summary"]["time"]["sizes"].get<int>(), 3);
  EXPECT_EQ(j["summary"]["steady_time"]["sizes"].get<int>(), 2);
  // The note's error is against the in-place time.
  const double sim_us = j["rows"][1]["sim_time_us"].get<double>();
  std::array<char, 96> want{};
  std::snprintf(want.data(), want.size(), "the simulated time is %+.1f%% off the in-place run",
                100.0 * (sim_us - 20.0) / 20.0);
  EXPECT_NE(r.output.find(want.data()), std::string::npos) << want.data() << "\n" << r.output;
  fs::remove_all(dir);
}

// --only-protocol: only the sizes the log says ran with that protocol are
// simulated; the rest are rows left out, saying why; a protocol NCCL does
// not have is refused, naming the ones it has.
TEST(Cli, CompareOnlyProtocol) {
  const std::string dir = temp_dir("compare_only_protocol");
  fs::create_directories(dir);
  write_two_gpu_log(dir + "/log.txt", 3, "1024:RING/LL, 2048:RING/LL128, 4096:RING/SIMPLE");
  const std::string cfg = kSrc + "/configs/dgx-h100-nccl.yaml";
  Result r = sh("compare " + dir + "/log.txt " + cfg + " --only-protocol LL --out " + dir + "/a");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("left out: measured with protocol LL128 (--only-protocol ll)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("# 1 of 3 sizes compared"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# Left out: 2 sizes the log does not say were run with protocol ll"),
            std::string::npos)
      << r.output;
  const auto j = load(dir + "/a/compare.json");
  EXPECT_EQ(j["only_protocol"], "ll");
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][0]["status"], "simulated");
  EXPECT_EQ(j["rows"][0]["sim_protocol"], "ll");
  EXPECT_EQ(j["rows"][1]["status"], "left_out");
  EXPECT_EQ(j["rows"][2]["status"], "left_out");
  EXPECT_TRUE(j["rows"][2]["sim_time_us"].is_null());
  r = sh("compare " + dir + "/log.txt " + cfg + " --only-protocol LL64 --out " + dir + "/b");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--only-protocol 'LL64': one of simple, ll, ll128"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

// --log and --progress reach every simulation of a compare (they run in child
// processes); a bad rule is refused before any simulation starts.
TEST(Cli, CompareLogsProgressAndFastForward) {
  const std::string dir = temp_dir("compare_log");
  fs::create_directories(dir);
  write_two_gpu_log(dir + "/log.txt", 2, "1024:RING/LL, 2048:RING/LL");
  const std::string cfg = kSrc + "/configs/dgx-h100-nccl.yaml";
  Result r = sh("compare " + dir + "/log.txt " + cfg + " --log fabric=info --progress --out " + dir + "/a");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("fabric: call 1/2 all_reduce 1024 B done in"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fabric: call 2/2 all_reduce 2048 B done in"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fabricsim: simulation 1 of 1: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("100%, call 2/2"), std::string::npos) << r.output;
  r = sh("compare " + dir + "/log.txt " + cfg + " --log fabric=loud --out " + dir + "/b");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--log fabric=loud: level 'loud' is not one of off, error, warn, info, debug"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("simulation"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/b/compare.json"));
  // Sizes from collective.fast_forward_min_bytes say whether they were
  // fast-forwarded, under the table and in compare.json, as run's table does.
  r = sh("compare " + dir + "/log.txt " + cfg +
         " --set collective.fast_forward_min_bytes=2048 collective.fast_forward_probe_bytes=256 --out " + dir + "/c");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("#         2048 B (line 5): simulated whole: collective.data=true"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("1024 B (line 4)"), std::string::npos) << r.output;
  const auto j = load(dir + "/c/compare.json");
  EXPECT_TRUE(j["rows"][0]["fast_forward"].is_null());
  EXPECT_FALSE(j["rows"][1]["fast_forward"]["used"].get<bool>());
  fs::remove_all(dir);
}

// The log's -R sets collective.registration: -R 2 runs NCCL's symmetric
// kernel where its model picks it (64 KiB on 4 GPUs), -R 0 the normal
// kernels, -R 1 is not in the model; with the fabric alone (protocol ideal)
// there are no kernels to pick.
TEST(Cli, CompareReadsTheLogsRegistration) {
  const std::string dir = temp_dir("compare_registration");
  fs::create_directories(dir);
  const std::string cfg = kSrc + "/configs/dgx-h100-nccl.yaml";
  const auto log_with = [&](const std::string& r) {
    std::string path = dir + "/R" + r + ".txt";
    std::ofstream f(path);
    f << "# GPUS (n): 4\n# NOTE: command: ./all_reduce_perf -b 32K -e 64K -g 4 -R " << r
      << "\n# COLLECTIVE: all_reduce_perf\n"
         "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
         " 32768  8192  float  sum  -1  25.9  1.26  1.89  0  25.3  1.29  1.94  0\n"
         " 65536 16384  float  sum  -1  24.2  2.71  4.07  0  23.0  2.85  4.27  0\n";
    return path;
  };
  Result r = sh("compare " + log_with("2") + " " + cfg + " --out " + dir + "/a");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("# Buffers: the log's calls ran on symmetric-registered buffers (nccl-tests -R 2): "
                          "collective.registration=symmetric"),
            std::string::npos)
      << r.output;
  auto j = load(dir + "/a/compare.json");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["sim_protocol"], "ll");  // NCCL's LL pick falls back
  EXPECT_EQ(j["rows"][1]["sim_protocol"], "symmetric");
  EXPECT_EQ(j["rows"][1]["sim_algorithm"], "nvls");
  r = sh("compare " + log_with("0") + " " + cfg + " --out " + dir + "/b");
  ASSERT_EQ(r.status, 0) << r.output;
  j = load(dir + "/b/compare.json");
  EXPECT_EQ(j["rows"][1]["sim_protocol"], "ll");
  r = sh("compare " + log_with("1") + " " + cfg + " --out " + dir + "/c");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("not in the model: -R 1 buffers"), std::string::npos) << r.output;
  r = sh("compare " + log_with("2") + " " + kSrc + "/configs/dgx-h100-allreduce.yaml --max-bytes 32768 --out " +
         dir + "/d");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("collective.registration=none (the fabric alone: no kernels)"), std::string::npos)
      << r.output;
  fs::remove_all(dir);
}

// compare simulates each size as the log says it ran: the tuner's choice
// per size (NVLS for the small sizes here, Ring for the larger) gives
// collective.algorithm, each setting its own simulation; an algorithm the
// model lacks and sizes above --max-bytes are rows that say so; --set wins.
// The protocol column shows what each simulation ran ('-' while the
// configuration has no collective.protocol).
TEST(Cli, CompareSimulatesWhatTheLogRan) {
  const std::string dir = temp_dir("compare_choice");
  fs::create_directories(dir);
  write_two_gpu_log(dir + "/log.txt", 5,
                    "1024:NVLS/SIMPLE, 2048:NVLS/SIMPLE, 4096:RING/SIMPLE, 8192:TREE/SIMPLE, 16384:RING/SIMPLE");
  const std::string cfg = kSrc + "/configs/dgx-h100-allreduce.yaml";
  Result r = sh("compare " + dir + "/log.txt " + cfg + " --max-bytes 8192 --out " + dir + "/a");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(all_reduce_perf, 2 GPUs, float sum)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NVLS/Simple    nvls/"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Ring/Simple    ring/"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Tree/Simple    not in the model: Tree\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Ring/Simple    not simulated: beyond host-time reach (issue 28)\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("# 3 of 5 sizes compared"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# simulation 1: topology.endpoints=2 collective.algorithm=nvls"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("# Not in the model, not simulated: algorithm Tree (1 sizes)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("# Not simulated: 1 sizes above --max-bytes 8192"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir + "/a/run-1/stats.json"));
  EXPECT_TRUE(fs::exists(dir + "/a/run-2/stats.json"));
  const auto j = load(dir + "/a/compare.json");
  const bool modelled = j["protocol_modelled"].get<bool>();
  EXPECT_EQ(r.output.find("# Protocol: not modelled yet") != std::string::npos, !modelled) << r.output;
  ASSERT_EQ(j["rows"].size(), 5u);
  const char* statuses[] = {"simulated", "simulated", "simulated", "not_in_model", "beyond_reach"};
  const char* sims[] = {"nvls", "nvls", "ring", "", ""};
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& row = j["rows"][i];
    EXPECT_EQ(row["status"], statuses[i]) << i;
    EXPECT_EQ(row["measured_algorithm_from"], "tuner") << i;
    EXPECT_EQ(row["measured_protocol"], "Simple") << i;
    EXPECT_EQ(row["n"], 2) << i;
    if (*sims[i]) {
      EXPECT_EQ(row["sim_algorithm"], sims[i]) << i;
      EXPECT_EQ(row["sim_protocol"].is_string(), modelled) << i;
      EXPECT_GT(row["sim_time_us"].get<double>(), 0) << i;
      EXPECT_TRUE(row["time_error"].is_number()) << i;
      EXPECT_TRUE(row["busbw_error"].is_null()) << i;  // below 1 GB/s measured
    } else {
      EXPECT_TRUE(row["sim_time_us"].is_null()) << i;
    }
  }
  EXPECT_EQ(j["simulations"].size(), 2u);
  EXPECT_EQ(j["summary"]["time"]["sizes"], 3);
  // --set wins over the log: every size as ring, the Tree size too; --json
  // puts the table where it is told.
  r = sh("compare " + dir + "/log.txt " + cfg + " --set collective.algorithm=ring --max-bytes 8192 --json " + dir +
         "/b.json --out " + dir + "/b");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("NVLS/Simple    ring/"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Tree/Simple    ring/"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# 4 of 5 sizes compared"), std::string::npos) << r.output;
  EXPECT_EQ(load(dir + "/b.json")["simulations"].size(), 1u);
  EXPECT_TRUE(fs::exists(dir + "/b/stats.json"));
  // A log that contradicts itself is refused, naming the line.
  std::ofstream(dir + "/bad.txt") << "# ALGO/ENV: NCCL_ALGO=Ring\n# COLLECTIVE: all_reduce_perf\n"
                                     "#  size  count  type  redop  root  time  algbw  busbw  #wrong\n"
                                     "  1024   256  float  sum  -1  20.1  0.05  0.05  0\n"
                                     "# NCCL tuner choice per size (test): 1024:NVLS/SIMPLE\n";
  r = sh("compare " + dir + "/bad.txt " + cfg + " --out " + dir + "/c");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("bad.txt:4: the tuner chose NVLS for size 1024 (line 5), but NCCL_ALGO (line 1) says Ring"),
            std::string::npos)
      << r.output;
  fs::remove_all(dir);
}

// A protocol the configuration refuses with a size's other settings is
// simulated with the configuration's own and said so; one it does not know
// at all is not in the model. (Only where the schema has collective.protocol.)
TEST(Cli, CompareProtocolTheConfigurationRefuses) {
  if (sh("params").output.find("collective.protocol") == std::string::npos) GTEST_SKIP() << "no collective.protocol";
  const std::string dir = temp_dir("compare_protocol");
  fs::create_directories(dir);
  std::ofstream(dir + "/log.txt")
      << "# GPUS (n): 2\n# COLLECTIVE: all_reduce_perf\n# ALGO/ENV: NCCL_ALGO=NVLS; NCCL_PROTO=Simple\n"
         "#  size  count  type  redop  root  time  algbw  busbw  #wrong\n"
         "  1024   256  float  sum  -1  20.1  0.05  0.05  0\n";
  Result r = sh("compare " + dir + "/log.txt " + kSrc + "/configs/dgx-h100-allreduce.yaml --out " + dir +
                " --set collective.op=all_gather");
  // all_gather with the simple protocol is refused by the configuration
  // (the GPU side runs the ring all_reduce): the configuration's protocol.
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = load(dir + "/compare.json");
  ASSERT_EQ(j["rows"].size(), 1u);
  const std::string own = j["rows"][0]["sim_protocol"];
  EXPECT_NE(own, "simple");
  EXPECT_NE(r.output.find("# Protocol: NVLS/Simple on 2 GPUs simulated with collective.protocol=" + own +
                          ": the configuration refuses collective.protocol=simple there ("),
            std::string::npos)
      << r.output;
  EXPECT_EQ(j["protocol_fallbacks"].size(), 1u);
  fs::remove_all(dir);
}

TEST(Cli, ParamsListsEveryKeyWithTypeUnitDefaultRange) {
  const Result r = sh("params");
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("link.lane_gbps\n    type real, unit Gb/s, default 100, allowed number in (0, 10000]"),
            std::string::npos)
      << r.output;
}

TEST(Cli, DocsConfigPageIsGeneratedFromTheCode) {
  const Result r = sh("params --markdown");
  ASSERT_EQ(r.status, 0);
  std::ifstream f(kSrc + "/docs/config.md");
  std::stringstream doc;
  doc << f.rdbuf();
  EXPECT_EQ(r.output, doc.str())
      << "docs/config.md is stale: regenerate it with 'build/fabricsim params --markdown > "
         "docs/config.md'";
}

// docs/tlm.md shows the code of testbenches/tlm_example/attach_initiator.cpp
// (which CTest builds and runs), from its first include line on.
TEST(Cli, DocsTlmExampleIsTheBuiltExample) {
  auto read = [](const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };
  const std::string doc = read(kSrc + "/docs/tlm.md");
  const std::string code = read(kSrc + "/testbenches/tlm_example/attach_initiator.cpp");
  const std::string fence = "## Attaching an initiator\n\n```cpp\n";
  const auto b = doc.find(fence);
  ASSERT_NE(b, std::string::npos);
  const auto start = b + fence.size();
  const auto end = doc.find("```", start);
  ASSERT_NE(end, std::string::npos);
  const auto first = code.find("\n#include");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(doc.substr(start, end - start), code.substr(first + 1))
      << "docs/tlm.md's example and testbenches/tlm_example/attach_initiator.cpp differ";
}

TEST(Cli, ShippedConfigsAreValid) {
  for (const auto& e : fs::directory_iterator(kSrc + "/configs")) {
    if (e.path().extension() != ".yaml") continue;
    std::ifstream f(e.path());
    std::stringstream text;
    text << f.rdbuf();
    // Shortened runs: a few flit times of synthetic traffic, or one small
    // call (a training step replaced by one 4-KiB all-reduce on every GPU).
    const bool step = text.str().find(".json") != std::string::npos;
    const bool collective = step || text.str().find("kind: collective") != std::string::npos;
    std::string sets = collective ? " --set collective.max_bytes=4096 collective.min_bytes=4096"
                                  : " --set sim.warmup_ns=10 sim.duration_ns=50";
    if (step) {
      const std::string dir = temp_dir("step");
      fs::create_directories(dir);
      const std::string tiny = dir + "/tiny_step.json";
      std::ofstream(tiny) << R"({"calls": [{"op": "all_reduce", "bytes": 4096, "group": "all"}]})";
      sets += " collective.workload=" + tiny;
    }
    const Result r = sh("run " + e.path().string() + sets + " --quiet --out " + temp_dir("cfgs"));
    EXPECT_EQ(r.status, 0) << e.path() << "\n" << r.output;
  }
}

}  // namespace

// The printed table says, under it, how each long size was run: the probes,
// the share simulated, the periods skipped and the estimated error; or why
// it ran whole (collective.fast_forward; docs/models/fast_forward.md).
TEST(Cli, RunSaysWhatWasFastForwarded) {
  const std::string out = temp_dir("ff");
  const std::string base = "run " + kSrc + "/configs/dgx-h100-allreduce.yaml --out " + out +
                           " --set collective.algorithm=direct collective.min_bytes=1048576 collective.max_bytes=33554432 "
                           "collective.step_factor=32 collective.fast_forward_min_bytes=33554432 "
                           "collective.fast_forward_probe_bytes=2097152";
  const Result ff = sh(base + " collective.data=false");
  ASSERT_EQ(ff.status, 0) << ff.output;
  EXPECT_NE(ff.output.find("    33554432 B: fast-forwarded: probes of 2099200 4196352 8390656 B simulated (43.8% of the "
                           "call), 12287 of 16383 periods of 2048 B skipped, estimated error 0.034%"),
            std::string::npos)
      << ff.output;
  EXPECT_EQ(ff.output.find("     1048576 B:"), std::string::npos) << ff.output;  // below the minimum
  const Result data = sh(base + " collective.data=true");
  ASSERT_EQ(data.status, 0) << data.output;
  EXPECT_NE(data.output.find("    33554432 B: simulated whole: collective.data=true: the skipped "
                             "elements would go unchecked"),
            std::string::npos)
      << data.output;
  fs::remove_all(out);
}
