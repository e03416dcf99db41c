// Waveforms: the VCD file is written, reads back, holds the expected
// signals under the module hierarchy, and agrees with the statistics (one
// `packet` change per packet a link sent; credits within their pool; the
// engine table never above its size); scope and window filters hold.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/fst_writer.hpp"
#include "models/sc/fabric.hpp"
#include "rtl/rtl_alu.hpp"
#include "rtl/rtl_wave.hpp"

namespace fabricsim {
namespace {

// A minimal VCD reader: full signal names, and every (time, value) change
// after the initial dump.
struct Vcd {
  std::map<std::string, std::string> id_of;                           // name -> id
  std::map<std::string, std::vector<std::pair<long long, long long>>> changes;  // id -> (t, v)
  std::map<std::string, long long> initial;
  std::vector<long long> times;
};

Vcd read_vcd(const std::string& path) {
  Vcd v;
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::vector<std::string> scope;
  std::string line;
  long long t = -1;
  bool in_dump = false, defs = true;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string w;
    in >> w;
    if (defs) {
      if (w == "$scope") {
        std::string kind, name;
        in >> kind >> name;
        scope.push_back(name);
      } else if (w == "$upscope") {
        scope.pop_back();
      } else if (w == "$var") {
        std::string type, width, id, name;
        in >> type >> width >> id >> name;
        std::string full;
        for (const auto& s : scope) full += s + ".";
        v.id_of[full + name] = id;
      } else if (w == "$enddefinitions") {
        defs = false;
      }
      continue;
    }
    if (w.empty()) continue;
    if (w[0] == '#') {
      t = std::stoll(w.substr(1));
      v.times.push_back(t);
    } else if (w == "$dumpvars") {
      in_dump = true;
    } else if (w == "$end") {
      in_dump = false;
    } else {
      std::string id;
      long long value = 0;
      if (w[0] == 'b') {
        in >> id;
        value = std::stoll(w.substr(1), nullptr, 2);
      } else {
        value = w[0] - '0';
        id = w.substr(1);
      }
      if (in_dump)
        v.initial[id] = value;
      else
        v.changes[id].push_back({t, value});
    }
  }
  return v;
}

std::string temp_path(const char* name) { return std::string("/tmp/fabricsim_") + name + "_" + std::to_string(::getpid()) + ".vcd"; }

TEST(Wave, LinksAgreeWithTheStatistics) {
  const Config c = load_config("", {"switch.ports=4", "switch.vcs=2", "traffic.load=0.6",
                                    "sim.warmup_ns=0", "sim.duration_ns=3000"});
  Fabric f("fabric", c);
  const std::string path = temp_path("links");
  // The statistics count packets that started in [0, 3000 ns); sends booked
  // for later start after the window and are cut by the same bound.
  f.enable_wave({path, "*", 0, f.window().end - 1, ""});
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const Vcd v = read_vcd(path);
  int links = 0;
  for (const auto& [name, l] : s["links"].items()) {
    ASSERT_TRUE(v.id_of.count(name + ".packet")) << name;
    const std::string id = v.id_of.at(name + ".packet");
    const auto it = v.changes.find(id);
    const std::size_t n = it == v.changes.end() ? 0 : it->second.size();
    EXPECT_EQ(n, l["packets"].get<std::size_t>()) << name;
    // Credits stay within the pool (256 flits per VC here).
    for (int vc = 0; vc < 2; ++vc) {
      const std::string cid = v.id_of.at(name + ".credits_vc" + std::to_string(vc));
      EXPECT_EQ(v.initial.at(cid), 256) << name;
      if (!v.changes.count(cid)) continue;
      for (const auto& [t, value] : v.changes.at(cid)) {
        EXPECT_GE(value, 0) << name << " at " << t;
        EXPECT_LE(value, 256) << name << " at " << t;
      }
    }
    ++links;
  }
  EXPECT_EQ(links, 8);
  EXPECT_TRUE(v.id_of.count("fabric.sw0.in2.occupancy"));
  std::remove(path.c_str());
}

// The same run written as FST (GTKWave's compressed format) reads back with
// GTKWave's own reader: one change per packet plus the initial value.
TEST(Wave, FstAgreesWithTheStatistics) {
  const Config c = load_config("", {"switch.ports=4", "switch.vcs=2", "traffic.load=0.6",
                                    "sim.warmup_ns=0", "sim.duration_ns=3000"});
  Fabric f("fabric", c);
  std::string path = temp_path("links");
  path.replace(path.size() - 4, 4, ".fst");
  f.enable_wave({path, "*", 0, f.window().end - 1, ""});
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const auto counts = fst_count_changes(path);
  ASSERT_FALSE(counts.empty()) << path;
  int links = 0;
  for (const auto& [name, l] : s["links"].items()) {
    const auto it = counts.find(name + ".packet");
    ASSERT_NE(it, counts.end()) << name;
    EXPECT_EQ(it->second, l["packets"].get<std::size_t>() + 1) << name;
    ++links;
  }
  EXPECT_EQ(links, 8);
  EXPECT_TRUE(counts.count("fabric.sw0.in2.occupancy"));
  std::remove(path.c_str());
}

TEST(Wave, ScopeAndWindowLimitTheDump) {
  const Config c = load_config("", {"switch.ports=4", "traffic.load=0.6", "sim.warmup_ns=0",
                                    "sim.duration_ns=3000"});
  Fabric f("fabric", c);
  const std::string path = temp_path("scope");
  f.enable_wave({path, "fabric.sw0.*", ns_to_ps(1000), ns_to_ps(2000), ""});
  ASSERT_TRUE(f.run()) << f.error();
  const Vcd v = read_vcd(path);
  ASSERT_FALSE(v.id_of.empty());
  for (const auto& [name, id] : v.id_of) EXPECT_EQ(name.rfind("fabric.sw0.", 0), 0u) << name;
  ASSERT_GE(v.times.size(), 2u);
  EXPECT_EQ(v.times.front(), ns_to_ps(1000));
  for (std::size_t i = 0; i + 1 < v.times.size(); ++i) EXPECT_LE(v.times[i], ns_to_ps(2000));
  // Occupancies folded from before the window start at their true value.
  for (const auto& [name, id] : v.id_of) {
    long long value = v.initial.at(id);
    EXPECT_GE(value, 0) << name;
    if (v.changes.count(id)) {
      for (const auto& [t, x] : v.changes.at(id)) {
        EXPECT_GE(x, 0) << name << " at " << t;
      }
    }
  }
  std::remove(path.c_str());
}

// The dump ends where the run ends: changes the models booked for later (a
// packet still on its link, a credit on its way back) are not in it, and
// the last time stamp is the run's end. The header's $date is a date
// (SOURCE_DATE_EPOCH's when set, for byte-reproducible files).
TEST(Wave, EndsWhereTheRunEndsAndIsDated) {
  const Config c = load_config("", {"switch.ports=4", "traffic.load=0.6", "sim.warmup_ns=0",
                                    "sim.duration_ns=2500"});
  ASSERT_EQ(::setenv("SOURCE_DATE_EPOCH", "86400", 1), 0);
  Fabric f("fabric", c);
  const std::string path = temp_path("end");
  f.enable_wave({path, "*", 0, kNever, ""});
  ASSERT_TRUE(f.run()) << f.error();
  const Vcd v = read_vcd(path);
  ASSERT_GE(v.times.size(), 2u);
  const Ps end = f.window().end;
  EXPECT_EQ(end, ns_to_ps(2500));
  for (long long t : v.times) EXPECT_LE(t, end);
  EXPECT_EQ(v.times.back(), end);
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "$date 1970-01-02 00:00:00 UTC $end");
  std::remove(path.c_str());
}

// The reduction engine's table: entries in use never exceed its size, and
// the waveform's maximum is the statistics' occupancy maximum.
TEST(Wave, EngineTableMatchesItsStatistics) {
  const Config c = load_config("", {"workload.kind=collective", "switch.ports=4",
                                    "collective.algorithm=push", "reduction.table_entries=8",
                                    "collective.min_bytes=65536", "collective.max_bytes=65536",
                                    "sim.warmup_ns=0", "sim.duration_ns=1e9"});
  Fabric f("fabric", c);
  const std::string path = temp_path("engine");
  f.enable_wave({path, "fabric.sw0.engine.*", 0, kNever, ""});
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const Vcd v = read_vcd(path);
  const std::string id = v.id_of.at("fabric.sw0.engine.table");
  long long max = 0, last = -1;
  for (const auto& [t, x] : v.changes.at(id)) {
    max = std::max(max, x);
    last = x;
  }
  EXPECT_EQ(max, s["switches"]["fabric.sw0"]["reduction_engine"]["occupancy_max"].get<long long>());
  EXPECT_LE(max, 8);
  EXPECT_EQ(last, 0);  // every reduction completed
  // Each contribution entered an engine port: rising edges of the ports'
  // valid add up to the contributions folded.
  std::size_t entered = 0;
  for (int k = 0; k < 4; ++k) {
    const std::string vid = v.id_of.at("fabric.sw0.engine.port" + std::to_string(k) + ".valid");
    if (!v.changes.count(vid)) continue;
    for (const auto& [t, x] : v.changes.at(vid)) entered += x == 1;
  }
  EXPECT_EQ(entered, s["switches"]["fabric.sw0"]["reduction_engine"]["contributions"].get<std::size_t>());
  std::remove(path.c_str());
}

// --wave-rtl on a fabric: every fold of the scoped switch's engine is
// replayed through the traced RTL (and checked bit for bit against the
// co-simulated ALU's result), one ALU per engine port, and nothing of the
// other switches is traced. Each fold lands at or after the moment the
// fabric's waveform shows its contribution entering the engine port.
TEST(Wave, RtlWaveReplaysEveryFoldOfTheScopedSwitch) {
  const Config c = load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml",
                               {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9",
                                "collective.algorithm=nvls", "collective.dtype=bf16",
                                "collective.min_bytes=1024", "collective.max_bytes=65536",
                                "collective.step_factor=8", "reduction.alu=rtl",
                                // four engine ports, one ALU each, all busy
                                "reduction.organisation=central"});
  Fabric f("fabric", c, RtlAlu::factory());
  const std::string path = temp_path("rtl") + ".fst";
  const std::string fabric_path = temp_path("rtl_fabric");
  RtlWave rtl({path, "fabric.sw1.*", 0, kNever});
  f.enable_wave({fabric_path, "fabric.sw1.engine.*", 0, kNever, ""});
  f.enable_fold_trace(rtl);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const auto& e = s["switches"]["fabric.sw1"]["reduction_engine"];
  // A reduction of n contributions folds n - 1 times (the first starts it).
  const auto folds = e["contributions"].get<std::uint64_t>() - e["completed"].get<std::uint64_t>();
  ASSERT_GT(folds, 0u);
  EXPECT_EQ(rtl.folds(), folds);
  EXPECT_EQ(rtl.beats_checked(), folds);  // 256-B payloads: one beat each
  EXPECT_EQ(rtl.alus_traced(), 4u);       // the preset's 4 engine ports
  std::size_t in_valid_rises = 0;
  for (int k = 0; k < 4; ++k) {
    const auto ch = fst_changes(path, "fabric.sw1.engine.alu" + std::to_string(k) + ".in_valid");
    ASSERT_FALSE(ch.empty()) << k;
    for (const auto& [t, v] : ch) in_valid_rises += v == "1";
  }
  EXPECT_GT(in_valid_rises, 0u);
  EXPECT_LE(in_valid_rises, folds);  // back-to-back folds keep in_valid up
  for (const auto& [name, n] : fst_count_changes(path))
    EXPECT_EQ(name.rfind("fabric.sw1.engine.alu", 0), 0u) << name;
  // The first fold cannot precede the first contribution entering a port.
  const Vcd v = read_vcd(fabric_path);
  long long first_entry = -1;
  for (int k = 0; k < 4; ++k) {
    const std::string vid = v.id_of.at("fabric.sw1.engine.port" + std::to_string(k) + ".valid");
    if (!v.changes.count(vid)) continue;
    for (const auto& [t, x] : v.changes.at(vid))
      if (x == 1 && (first_entry < 0 || t < first_entry)) first_entry = t;
  }
  std::uint64_t first_fold = kNever;
  for (int k = 0; k < 4; ++k)
    for (const auto& [t, x] : fst_changes(path, "fabric.sw1.engine.alu" + std::to_string(k) + ".in_valid"))
      if (x == "1") first_fold = std::min<std::uint64_t>(first_fold, t);
  ASSERT_GE(first_entry, 0);
  EXPECT_GE(first_fold, static_cast<std::uint64_t>(first_entry));
  std::remove(path.c_str());
  std::remove(fabric_path.c_str());
}

}  // namespace
}  // namespace fabricsim
