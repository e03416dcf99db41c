// Link reliability through whole fabrics (docs/reliability.md): bit errors
// with link-level retry lose nothing and keep collectives bit-exact while
// goodput falls; without retry, corruption stops the run with the evidence;
// FEC adds its latency to every hop; same seed, same run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/sc/fabric.hpp"
#include "testbenches/common/run_fabrics.hpp"

namespace fabricsim {
namespace {

Config dgx_nvls(std::vector<std::string> sets) {
  sets.insert(sets.begin(), {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9",
                             "collective.algorithm=nvls", "collective.min_bytes=262144",
                             "collective.max_bytes=262144"});
  return load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml", sets);
}

void expect_exact_and_conserved(const nlohmann::json& s) {
  for (const auto& r : s["collectives"]["rows"]) {
    EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u) << r.dump();
    EXPECT_EQ(r["checked_elements"].get<std::uint64_t>(), 8u * r["count"].get<std::uint64_t>());
  }
  EXPECT_EQ(s["conservation"]["lost"].get<std::int64_t>(), 0);
}

// BER 1e-6 .. 1e-4 without FEC, go-back-N: every packet arrives once and
// intact, the all-reduce stays bit-exact, and the more replays, the lower
// the bandwidth and the higher the added latency.
TEST(Reliability, ReplayKeepsCollectivesExactWhileGoodputFalls) {
  std::vector<Config> cfgs;
  for (const char* ber : {"0", "1e-6", "1e-5", "1e-4"})
    cfgs.push_back(dgx_nvls({std::string("link.ber=") + ber, "link.retry=go_back_n"}));
  const auto s = run_fabrics(cfgs);
  double last_busbw = 1e300;
  std::uint64_t last_replays = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    expect_exact_and_conserved(s[i]);
    const auto& rel = s[i]["reliability"];
    const auto replays = rel["replays"].get<std::uint64_t>();
    const double busbw = s[i]["collectives"]["rows"][0]["busbw_GBps"].get<double>();
    EXPECT_EQ(rel["crc_errors"].get<std::uint64_t>(), replays);
    if (i == 0) {
      EXPECT_EQ(replays, 0u);
    } else {
      EXPECT_GT(replays, last_replays) << i;
      EXPECT_LT(busbw, last_busbw) << i;
      EXPECT_GT(rel["added_latency_ns"]["max"].get<double>(), 0.0);
    }
    last_replays = replays;
    last_busbw = busbw;
  }
}

// RS(544,514) FEC corrects everything up to 1e-4 (no replay needed); at
// 2e-3 codewords fail and go-back-N recovers them, still bit-exact.
TEST(Reliability, FecCorrectsLowBerAndReplayCoversTheRest) {
  const auto s = run_fabrics({dgx_nvls({"link.ber=1e-4", "link.fec=rs544", "link.retry=go_back_n"}),
                          dgx_nvls({"link.ber=2e-3", "link.fec=rs544", "link.retry=go_back_n"})});
  for (const auto& x : s) expect_exact_and_conserved(x);
  const auto& low = s[0]["reliability"];
  EXPECT_GT(low["corrected_codewords"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(low["uncorrectable_codewords"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(low["replays"].get<std::uint64_t>(), 0u);
  const auto& high = s[1]["reliability"];
  EXPECT_GT(high["uncorrectable_codewords"].get<std::uint64_t>(), 0u);
  EXPECT_GT(high["replays"].get<std::uint64_t>(), 0u);
  EXPECT_GT(high["retransmitted_bytes"].get<std::uint64_t>(), 0u);
}

// FEC without retry at a BER it cannot correct: the first corrupted packet
// stops the run, named with its link, time and the way out.
TEST(Reliability, CorruptionWithoutRetryIsReportedNotAccepted) {
  Fabric f("fabric", dgx_nvls({"link.ber=3e-3", "link.fec=rs544"}));
  EXPECT_FALSE(f.run());
  const std::string& e = f.error();
  EXPECT_NE(e.find("arrived corrupted"), std::string::npos) << e;
  EXPECT_NE(e.find("an uncorrectable FEC codeword"), std::string::npos) << e;
  EXPECT_NE(e.find("link.retry=none"), std::string::npos) << e;
  EXPECT_NE(e.find("fabric."), std::string::npos) << e;  // the link's name
}

// Same seed: the same errors, bit-identical statistics; another seed: other errors.
TEST(Reliability, SameSeedSameRun) {
  const auto s = run_fabrics({dgx_nvls({"link.ber=1e-5", "link.retry=go_back_n", "sim.seed=7"}),
                          dgx_nvls({"link.ber=1e-5", "link.retry=go_back_n", "sim.seed=7"}),
                          dgx_nvls({"link.ber=1e-5", "link.retry=go_back_n", "sim.seed=8"})});
  auto strip = [](nlohmann::json j) {
    // Fabric names differ (f0, f1): compare the values in order.
    nlohmann::json links = nlohmann::json::array();
    for (const auto& [k, v] : j["links"].items()) links.push_back(v);
    j["links"] = links;
    nlohmann::json sw = nlohmann::json::array();
    for (const auto& [k, v] : j["switches"].items()) sw.push_back(v);
    j["switches"] = sw;
    return j;
  };
  EXPECT_EQ(strip(s[0]).dump(), strip(s[1]).dump());
  EXPECT_NE(s[0]["reliability"]["crc_errors"], s[2]["reliability"]["crc_errors"]);
}

// FEC latency is in every hop: a zero-load packet crosses two links, each
// adding one codeword at the lane rate (5440 bits / 100 Gb/s = 54.4 ns)
// plus the decoder (40.32 ns here, a multiple of the 0.64 ns clock).
TEST(Reliability, FecAddsItsLatencyToEveryHop) {
  const Config c = load_config("", {"switch.ports=8", "traffic.pattern=permutation",
                                    "traffic.load=0.002", "traffic.packet_flits=9",
                                    "link.latency_ns=50", "switch.pipeline_cycles=16",
                                    "switch.clock_ghz=1.5625", "link.fec=rs544",
                                    "link.fec_decode_ns=40.32", "sim.warmup_ns=0",
                                    "sim.duration_ns=200000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto& h = f.sink().network_latency_ps;
  ASSERT_GT(h.count(), 100u);
  EXPECT_EQ(h.min(), 117200u + 2 * 94720u);  // SwitchScenario.ZeroLoadLatency... + 2 x FEC
  EXPECT_EQ(h.max(), 117200u + 2 * 94720u);
  EXPECT_EQ(f.stats()["reliability"]["fec_latency_ns"].get<double>(), 94.72);
}

}  // namespace
}  // namespace fabricsim
