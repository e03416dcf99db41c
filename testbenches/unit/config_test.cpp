// Configuration: typed parsing, errors that name key/value/allowed, YAML
// flattening, cross-parameter validation, and the generated docs.
#include "models/core/config.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace fabricsim {
namespace {

// Runs f and returns the ConfigError message (fails the test if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

std::string write_temp(const std::string& text) {
  char name[] = "/tmp/fabricsim_cfg_XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  std::FILE* f = fdopen(fd, "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return name;
}

TEST(Config, DefaultsAreValidAndMatchTheStruct) {
  const Config c = load_config("", {});
  EXPECT_EQ(c.link.lanes, 2);
  EXPECT_EQ(c.sw.ports, 64);
  EXPECT_EQ(c.sw.queueing, Queueing::kVoq);
  EXPECT_EQ(flit_time_ps(c.link), 640u);  // 16 B at 2 x 100 Gb/s
  EXPECT_EQ(switch_cycle_ps(c.sw), 640u);
}

TEST(Config, OverridesAreTypedAndApplyInOrder) {
  const Config c = load_config("", {"link.lanes=4", "switch.queueing=fifo", "traffic.load=0.25",
                                    "traffic.allow_self=false", "link.lanes=8"});
  EXPECT_EQ(c.link.lanes, 8);
  EXPECT_EQ(c.sw.queueing, Queueing::kFifo);
  EXPECT_DOUBLE_EQ(c.traffic.load, 0.25);
  EXPECT_FALSE(c.traffic.allow_self);
}

TEST(Config, UnknownKeyNamesTheKeyAndSuggestsTheClosest) {
  const std::string m = error_of([] { load_config("", {"link.lane=4"}); });
  EXPECT_NE(m.find("unknown config key 'link.lane'"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'link.lanes'"), std::string::npos) << m;
}

TEST(Config, WrongTypeNamesKeyValueAndAllowed) {
  std::string m = error_of([] { load_config("", {"link.lanes=two"}); });
  EXPECT_NE(m.find("'link.lanes'"), std::string::npos) << m;
  EXPECT_NE(m.find("'two'"), std::string::npos) << m;
  EXPECT_NE(m.find("not an integer"), std::string::npos) << m;
  EXPECT_NE(m.find("integer in [1, 64]"), std::string::npos) << m;

  m = error_of([] { load_config("", {"link.lanes=2.5"}); });
  EXPECT_NE(m.find("not an integer"), std::string::npos) << m;
  m = error_of([] { load_config("", {"traffic.load=high"}); });
  EXPECT_NE(m.find("not a finite number"), std::string::npos) << m;
  m = error_of([] { load_config("", {"traffic.allow_self=maybe"}); });
  EXPECT_NE(m.find("true or false"), std::string::npos) << m;
  m = error_of([] { load_config("", {"switch.queueing=voqs"}); });
  EXPECT_NE(m.find("fifo | voq | output"), std::string::npos) << m;
}

TEST(Config, OutOfRangeNamesTheRange) {
  std::string m = error_of([] { load_config("", {"traffic.load=1.5"}); });
  EXPECT_NE(m.find("'traffic.load': value '1.5' is out of range"), std::string::npos) << m;
  EXPECT_NE(m.find("[0, 1]"), std::string::npos) << m;
  m = error_of([] { load_config("", {"traffic.packet_flits=19"}); });
  EXPECT_NE(m.find("integer in [1, 18]"), std::string::npos) << m;
  m = error_of([] { load_config("", {"link.latency_ns=0"}); });
  EXPECT_NE(m.find("(0, 1000000]"), std::string::npos) << m;  // exclusive lower bound
  m = error_of([] { load_config("", {"link.lane_gbps=nan"}); });
  EXPECT_NE(m.find("not a finite number"), std::string::npos) << m;
}

TEST(Config, MalformedOverride) {
  const std::string m = error_of([] { load_config("", {"link.lanes"}); });
  EXPECT_NE(m.find("key=value"), std::string::npos) << m;
}

TEST(Config, YamlNestedAndDottedKeys) {
  const std::string path = write_temp(
      "link:\n  lanes: 4\n  latency_ns: 20\nswitch.ports: 16\ntraffic:\n  pattern: hotspot\n");
  const Config c = load_config(path, {"switch.ports=8"});
  EXPECT_EQ(c.link.lanes, 4);
  EXPECT_DOUBLE_EQ(c.link.latency_ns, 20);
  EXPECT_EQ(c.sw.ports, 8);  // --set wins over the file
  EXPECT_EQ(c.traffic.pattern, Pattern::kHotspot);
  std::remove(path.c_str());
}

TEST(Config, YamlErrorsNameTheFileAndKey) {
  std::string path = write_temp("link:\n  lanes: [1, 2]\n");
  std::string m = error_of([&] { load_config(path, {}); });
  EXPECT_NE(m.find(path), std::string::npos) << m;
  EXPECT_NE(m.find("'link.lanes' is a list"), std::string::npos) << m;
  std::remove(path.c_str());

  path = write_temp("link:\n  lanes: 2\n  lanse: 3\n");
  m = error_of([&] { load_config(path, {}); });
  EXPECT_NE(m.find("unknown config key 'link.lanse'"), std::string::npos) << m;
  std::remove(path.c_str());

  path = write_temp("link: {lanes: 2\n");
  m = error_of([&] { load_config(path, {}); });
  EXPECT_NE(m.find("YAML syntax error at line"), std::string::npos) << m;
  std::remove(path.c_str());

  m = error_of([] { load_config("/nonexistent/x.yaml", {}); });
  EXPECT_NE(m.find("cannot read config file '/nonexistent/x.yaml'"), std::string::npos) << m;
}

TEST(Config, CrossParameterChecksNameEveryKey) {
  std::string m = error_of(
      [] { load_config("", {"switch.input_buffer_flits=16", "switch.vcs=2", "traffic.packet_flits=9"}); });
  EXPECT_NE(m.find("switch.input_buffer_flits=16"), std::string::npos) << m;
  EXPECT_NE(m.find("switch.vcs=2"), std::string::npos) << m;
  EXPECT_NE(m.find("traffic.packet_flits=9"), std::string::npos) << m;

  m = error_of([] { load_config("", {"switch.output_buffer_flits=4"}); });
  EXPECT_NE(m.find("switch.output_buffer_flits=4"), std::string::npos) << m;
  // An ideal output-queued switch has no finite output buffer to check.
  EXPECT_NO_THROW(load_config("", {"switch.output_buffer_flits=4", "switch.queueing=output"}));

  m = error_of([] { load_config("", {"traffic.hotspot_endpoint=64"}); });
  EXPECT_NE(m.find("traffic.hotspot_endpoint=64"), std::string::npos) << m;
  EXPECT_NE(m.find("switch.ports=64"), std::string::npos) << m;

  m = error_of([] { load_config("", {"traffic.pattern=transpose", "switch.ports=32"}); });
  EXPECT_NE(m.find("perfect square"), std::string::npos) << m;
  m = error_of([] { load_config("", {"traffic.pattern=bitreverse", "switch.ports=48"}); });
  EXPECT_NE(m.find("power of two"), std::string::npos) << m;
  m = error_of([] { load_config("", {"endpoint.rx_buffer_flits=8"}); });
  EXPECT_NE(m.find("endpoint.rx_buffer_flits=8"), std::string::npos) << m;
  m = error_of([] { load_config("", {"traffic.read_fraction=0.5"}); });
  EXPECT_NE(m.find("traffic.read_fraction=0.5"), std::string::npos) << m;
  EXPECT_NE(m.find("switch.vcs"), std::string::npos) << m;
}

// Collectives: each algorithm names the collectives it implements, and a
// root must exist.
TEST(Config, CollectiveChecksNameAlgorithmOpAndRoot) {
  std::string m = error_of([] {
    load_config("", {"workload.kind=collective", "collective.algorithm=direct",
                     "collective.op=broadcast"});
  });
  EXPECT_NE(m.find("collective.algorithm=direct supports collective.op=all_reduce, all_to_all"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("not broadcast"), std::string::npos) << m;
  m = error_of([] {
    load_config("", {"workload.kind=collective", "collective.op=reduce", "collective.root=64"});
  });
  EXPECT_NE(m.find("collective.root=64"), std::string::npos) << m;
  EXPECT_NE(m.find("0 .. 63"), std::string::npos) << m;
  EXPECT_NO_THROW(load_config("", {"workload.kind=collective", "collective.op=all_to_all",
                                   "collective.algorithm=direct"}));
}

TEST(Config, EveryParameterHasUnitOrIsDimensionlessAndADescription) {
  const auto schema = config_schema();
  const Config defaults;
  for (const auto& e : schema.entries()) {
    EXPECT_FALSE(e.info.description.empty()) << e.info.key;
    // The default must itself be accepted by the parser.
    Config c;
    EXPECT_NO_THROW(schema.set(c, e.info.key, e.get(defaults))) << e.info.key;
  }
}

TEST(Config, ValuesRoundTripThroughTheSchema) {
  const Config c = load_config("", {"link.latency_ns=12.345", "switch.allocator=pim"});
  Config d;
  const auto schema = config_schema();
  for (auto& kv : config_values(c)) schema.set(d, kv.first, kv.second);
  EXPECT_EQ(config_values(c), config_values(d));
}

TEST(Config, MarkdownListsEveryKey) {
  const std::string md = params_markdown();
  const auto schema = config_schema();
  for (const auto& e : schema.entries())
    EXPECT_NE(md.find("`" + e.info.key + "`"), std::string::npos) << e.info.key;
}

// Every choice reads back as the name it was set by: the schema and
// to_string take their names from one table per enum.
TEST(Config, EveryChoiceReadsBackByItsName) {
  const auto schema = config_schema();
  for (const auto& e : schema.entries()) {
    if (e.info.type != ParamType::kChoice) continue;
    for (const std::string& name : e.info.choices) {
      Config c;
      schema.set(c, e.info.key, name);
      EXPECT_EQ(e.get(c), name) << e.info.key;
    }
  }
  EXPECT_EQ(to_string(InterAlgo::kDoubleTree), "double_tree");
  EXPECT_EQ(to_string(CollectiveAlgo::kHierarchical), "hierarchical");
}

// validate() runs its checks in a fixed order (config_validate.cpp): with
// several problems, the first check's is the one reported.
TEST(Config, ValidationReportsTheFirstCheckThatFails) {
  // A packet larger than the input buffer, and a hotspot that does not exist.
  const std::string m = error_of(
      [] { load_config("", {"switch.input_buffer_flits=4", "traffic.hotspot_endpoint=64"}); });
  EXPECT_NE(m.find("switch.input_buffer_flits=4"), std::string::npos) << m;
  EXPECT_EQ(m.find("traffic.hotspot_endpoint"), std::string::npos) << m;
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// Link reliability: a replay buffer that cannot cover the ack round trip,
// an unknown FEC, a BER out of range: each names the key and what is allowed.
TEST(Config, ReliabilityParametersAreChecked) {
  // Defaults: 9-flit packets of 16 B at 200 Gb/s (0.64 ns), 100 ns latency,
  // 5 ns ack delay: 9 x 0.64 + 2 x 100 + 5 = 210.76 ns = 330 flits (rounded up).
  std::string m = error_of([] {
    load_config("", {"link.retry=go_back_n", "link.replay_buffer_flits=300"});
  });
  EXPECT_NE(m.find("link.replay_buffer_flits=300 is smaller than the link's ack round trip of 330 flits"),
            std::string::npos)
      << m;
  EXPECT_NO_THROW(load_config("", {"link.retry=go_back_n", "link.replay_buffer_flits=330"}));
  // FEC latency counts twice in the round trip (94.4 ns each way).
  m = error_of([] {
    load_config("", {"link.retry=go_back_n", "link.fec=rs544", "link.replay_buffer_flits=330"});
  });
  EXPECT_NE(m.find("round trip of 625 flits"), std::string::npos) << m;
  m = error_of([] { load_config("", {"link.fec=rs528"}); });
  EXPECT_NE(m.find("link.fec"), std::string::npos) << m;
  EXPECT_NE(m.find("rs544"), std::string::npos) << m;
  m = error_of([] { load_config("", {"link.ber=0.5"}); });
  EXPECT_NE(m.find("link.ber"), std::string::npos) << m;
  m = error_of([] { load_config("", {"link.retry=selective"}); });
  EXPECT_NE(m.find("go_back_n"), std::string::npos) << m;
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// The watchdog must outlast what a healthy fabric may legitimately wait for.
TEST(Config, WatchdogLongerThanLinkLatenciesAndStragglers) {
  std::string m = error_of([] { load_config("", {"link.latency_ns=2000", "sim.watchdog_ns=10000"}); });
  EXPECT_NE(m.find("sim.watchdog_ns=10000 is shorter than 10 link latencies (link.latency_ns=2000"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("use at least 20000"), std::string::npos) << m;
  EXPECT_NO_THROW(load_config("", {"link.latency_ns=2000", "sim.watchdog_ns=0"}));
  m = error_of([] {
    load_config("", {"workload.kind=collective", "straggler.gpu=1", "straggler.delay_ns=20000"});
  });
  EXPECT_NE(m.find("sim.watchdog_ns=10000 is not longer than the straggler's start delay"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// From fuzz_config's corpus: YAML allows a list or a map as a key ('? ...');
// the loader reports a ConfigError, not yaml-cpp's own exception past the
// caller.
TEST(Config, AKeyThatIsNotANameIsAConfigError) {
  const std::string path = "/tmp/fabricsim_complex_key_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << "link:\n  lanes: 2\n? [a, b]\n: 1\n";
  const std::string m = error_of([&] { load_config(path, {}); });
  EXPECT_NE(m.find(path + ": line 3: a key that is not a plain name"), std::string::npos) << m;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// From fuzz_config's corpus: `base:` with an empty value (here a bare YAML
// tag) would name the including file's directory, which opens like a file
// and then throws std::ios_base::failure on the first read, past the
// caller. Both an empty base and a directory are ConfigErrors that say so.
TEST(Config, AnEmptyBaseOrADirectoryIsAConfigError) {
  const std::string path = write_temp("base: !gx-h099.yaml\nlink:\n  lanes: 2\n");
  const std::string m = error_of([&] { load_config(path, {}); });
  EXPECT_NE(m.find("'base' must name one YAML file (got an empty value)"), std::string::npos) << m;
  std::remove(path.c_str());
  const std::string d = error_of([&] { load_config("/tmp", {}); });
  EXPECT_NE(d.find("cannot read config file '/tmp': it is a directory"), std::string::npos) << d;
}

}  // namespace
}  // namespace fabricsim
