// Validation against switching theory (docs/validation.md): quick versions,
// seconds each; scripts/validate runs the long ones (more N, more loads,
// longer windows) and writes the report. Every reference is a formula or a
// published table, cited in the docs; tolerances are justified there (the
// statistical error of the window, not fitted slack).
//
// Common set-up: one switch, 1-flit packets (one cell per slot, as the
// theory assumes), uniform Bernoulli traffic, 1-ns links and no switch
// pipeline (so latencies are queueing plus a constant), buffers far larger
// than the credit loop (so flow control does not limit), unless a case
// studies exactly that.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/sc/fabric.hpp"
#include "testbenches/common/run_fabrics.hpp"

namespace fabricsim {
namespace {

std::vector<std::string> cells(int ports, std::vector<std::string> extra) {
  std::vector<std::string> s = {"switch.ports=" + std::to_string(ports), "traffic.packet_flits=1",
                                "link.latency_ns=1", "switch.pipeline_cycles=0",
                                "switch.input_buffer_flits=4096", "endpoint.rx_buffer_flits=4096",
                                "sim.warmup_ns=5000", "sim.duration_ns=50000"};
  s.insert(s.end(), extra.begin(), extra.end());
  return s;
}

std::vector<nlohmann::json> run_all(const std::vector<std::vector<std::string>>& sets) {
  std::vector<Config> cfgs;
  for (const auto& s : sets) cfgs.push_back(load_config("", s));
  return run_fabrics(cfgs);
}

double accepted(const nlohmann::json& s) { return s["throughput"]["accepted"].get<double>(); }

// Karol, Hluchyj & Morgan (1987), Table I: saturation throughput of an
// N x N switch with FIFO input queues (head-of-line blocking).
TEST(Validation, FifoHeadOfLineSaturationKarolTableI) {
  const std::vector<std::pair<int, double>> table = {{2, 0.7500}, {4, 0.6553}, {8, 0.6184}};
  std::vector<std::vector<std::string>> sets;
  for (const auto& [n, v] : table) sets.push_back(cells(n, {"switch.queueing=fifo", "traffic.load=1"}));
  const auto s = run_all(sets);
  for (std::size_t i = 0; i < table.size(); ++i)
    EXPECT_NEAR(accepted(s[i]), table[i].second, 0.01 * table[i].second) << "N=" << table[i].first;
}

// Parallel iterative matching with one iteration (Anderson et al. 1993):
// with every VOQ backlogged, an input is matched unless none of the N
// outputs grants it: throughput 1 - (1 - 1/N)^N (-> 1 - 1/e).
TEST(Validation, PimOneIterationSaturation) {
  const auto s = run_all({cells(16, {"switch.queueing=voq", "switch.allocator=pim", "traffic.load=1"}),
                          cells(32, {"switch.queueing=voq", "switch.allocator=pim", "traffic.load=1"})});
  EXPECT_NEAR(accepted(s[0]), 1 - std::pow(1 - 1.0 / 16, 16), 0.005);
  EXPECT_NEAR(accepted(s[1]), 1 - std::pow(1 - 1.0 / 32, 32), 0.005);
}

// iSLIP with one iteration under uniform Bernoulli traffic approaches 100%
// throughput (McKeown 1999): its pointers desynchronise at high load.
TEST(Validation, IslipOneIterationSustainsFullLoad) {
  const auto s = run_all({cells(16, {"switch.queueing=voq", "switch.allocator=islip", "traffic.load=1"})});
  EXPECT_GT(accepted(s[0]), 0.98);
}

// Output-queued switch, Bernoulli arrivals (Karol et al. 1987): mean wait
// W = (N-1)/N * p / (2(1-p)) slots. Measured: mean latency minus the
// zero-load latency (the constant part), in flit times.
TEST(Validation, OutputQueueMeanDelayKarol) {
  const std::vector<double> loads = {0.3, 0.6, 0.8};
  std::vector<std::vector<std::string>> sets;
  for (double p : loads)
    sets.push_back(cells(16, {"switch.queueing=output", "traffic.load=" + std::to_string(p),
                              "sim.duration_ns=100000"}));
  const auto s = run_all(sets);
  for (std::size_t i = 0; i < loads.size(); ++i) {
    const double p = loads[i], f = s[i]["sim"]["flit_time_ns"].get<double>();
    const auto& l = s[i]["network_latency_ns"];
    const double w = (l["mean"].get<double>() - l["min"].get<double>()) / f;
    const double ref = 15.0 / 16.0 * p / (2 * (1 - p));
    EXPECT_NEAR(w, ref, 0.03 * ref) << "p=" << p;
  }
}

// The credit loop: a sender with B flits of credit on a link whose credit
// round trip is RTT can send at most B flits per RTT. The model's loop, from
// its documented parts: latency + head flit + the wait for the switch clock
// (half a cycle on average: a credit-clocked sender is off the clock grid)
// + the flit crossing the crossbar + latency back: RTT = 2L + 2.5 f.
TEST(Validation, CreditLoopUtilisationIsBufferOverRoundTrip) {
  const std::vector<int> buffers = {8, 16, 32, 128};
  std::vector<std::vector<std::string>> sets;
  for (int b : buffers)
    sets.push_back({"switch.ports=4", "traffic.pattern=permutation", "traffic.load=1",
                    "traffic.packet_flits=1", "link.latency_ns=20", "switch.pipeline_cycles=0",
                    "switch.input_buffer_flits=" + std::to_string(b), "endpoint.rx_buffer_flits=4096",
                    "sim.warmup_ns=2000", "sim.duration_ns=50000"});
  const auto s = run_all(sets);
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const double f = s[i]["sim"]["flit_time_ns"].get<double>();
    const double ref = std::min(1.0, buffers[i] * f / (2 * 20.0 + 2.5 * f));
    EXPECT_NEAR(accepted(s[i]), ref, 0.01 * ref) << "B=" << buffers[i];
  }
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// Ring all-reduce on dgx-h100's 5,4,4,5 wiring: with switch.egress=hash a
// switch spreads each destination's traffic over its links to it by an
// address hash that does not line up with the GPUs' own link choice (mod 18
// against mod 5 or 4), so egress links collide; aligned egress removes the
// loss (docs/validation.md, "Collectives: first findings").
TEST(Validation, RingEgressAlignmentOnUnevenWiring) {
  auto cfg = [](const char* egress) {
    return load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml",
                       {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9",
                        "collective.min_bytes=4194304", "collective.max_bytes=4194304",
                        std::string("switch.egress=") + egress});
  };
  const auto s = run_fabrics({cfg("hash"), cfg("aligned")});
  const auto rh = s[0]["collectives"]["rows"][0], ra = s[1]["collectives"]["rows"][0];
  EXPECT_EQ(rh["wrong"].get<int>(), 0);
  EXPECT_EQ(ra["wrong"].get<int>(), 0);
  const double bound = 18 * 25.0 * 256 / 272;  // GB/s per GPU and direction
  EXPECT_GT(ra["busbw_GBps"].get<double>(), rh["busbw_GBps"].get<double>() * 1.05);
  EXPECT_GT(ra["busbw_GBps"].get<double>(), 0.88 * bound);
  EXPECT_LT(rh["busbw_GBps"].get<double>(), 0.86 * bound);
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// Ring all-reduce against Hockney's alpha-beta model, T = 2(n-1) alpha +
// 2(n-1)/n S / B (docs/validation.md, "Collectives"). alpha is the fabric's
// own zero-load latency of one chunk packet (from the documented parts, not
// fitted): head flit L + f, the next switch clock edge, the 16-cycle
// pipeline, L, the packet's 17 flits (256-B slices; a 4-KiB call moves
// 512-B chunks, two slices per step, on different links). B is the link
// payload bound: 8 links x 25 GB/s x 256/272. Wiring 2,2,2,2 with aligned
// egress, so the links, not the switch, limit (the 5,4,4,5 case is above).
TEST(Validation, RingAllReduceAlphaBeta) {
  const Config c = load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml",
                               {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9",
                                "topology.links=2,2,2,2", "switch.egress=aligned",
                                "collective.min_bytes=4096", "collective.max_bytes=4194304",
                                "collective.step_factor=1024"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto rows = f.stats()["collectives"]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  const int n = 8;
  const double fl = 0.64, cycle = 0.64, lat = 100.0;
  const double edge = std::ceil((lat + fl) / cycle - 1e-9) * cycle;
  const double alpha_ns = edge + 16 * cycle + lat + 17 * fl;  // 222.24 ns
  const double bound = 8 * 25.0 * 256 / 272;                 // GB/s = bytes/ns
  for (const auto& r : rows) {
    const double s = r["size_bytes"].get<double>(), t_ns = 1000 * r["time_us"].get<double>();
    EXPECT_EQ(r["wrong"].get<int>(), 0);
    if (s <= 4096) {
      // Latency only: each step moves one packet per link; its serialization
      // is in alpha (a slice is not split finer), the chain is the time.
      EXPECT_NEAR(t_ns, 2 * (n - 1) * alpha_ns, 0.01 * 2 * (n - 1) * alpha_ns) << s;
    } else {
      const double hockney = 2 * (n - 1) * alpha_ns + 2.0 * (n - 1) / n * s / bound;
      EXPECT_NEAR(t_ns, hockney, 0.03 * hockney) << s;
    }
  }
}

}  // namespace
}  // namespace fabricsim
