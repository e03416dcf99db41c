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
  cfgs.reserve(sets.size());
  for (const auto& s : sets) cfgs.push_back(load_config("", s));
  return run_fabrics(cfgs);
}

double accepted(const nlohmann::json& s) { return s["throughput"]["accepted"].get<double>(); }

// Karol, Hluchyj & Morgan (1987), Table I: saturation throughput of an
// N x N switch with FIFO input queues (head-of-line blocking).
TEST(Validation, FifoHeadOfLineSaturationKarolTableI) {
  const std::vector<std::pair<int, double>> table = {{2, 0.7500}, {4, 0.6553}, {8, 0.6184}};
  std::vector<std::vector<std::string>> sets;
  sets.reserve(table.size());
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
  sets.reserve(loads.size());
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

// Latency against load for schedulers with several iterations: no closed
// form. Output queueing's wait (above) is a lower bound for any
// input-queued switch; iterations add matches, so the wait falls from 1 to
// 2 to 4; by 4 both PIM and iSLIP reach a maximal match (Anderson et al.
// 1993; McKeown 1999) and their waits meet (long runs: 3.71 and 3.75 slots
// at p = 0.8 against output queueing's 1.88; docs/validation.md).
TEST(Validation, IterationsBringVoqWaitTowardOutputQueueing) {
  const auto wait = [](const nlohmann::json& s) {
    const auto& l = s["network_latency_ns"];
    return (l["mean"].get<double>() - l["min"].get<double>()) / s["sim"]["flit_time_ns"].get<double>();
  };
  const std::vector<std::vector<std::string>> designs = {
      {"switch.queueing=output"},
      {"switch.queueing=voq", "switch.allocator=islip", "switch.iterations=1"},
      {"switch.queueing=voq", "switch.allocator=islip", "switch.iterations=2"},
      {"switch.queueing=voq", "switch.allocator=islip", "switch.iterations=4"},
      {"switch.queueing=voq", "switch.allocator=pim", "switch.iterations=4"}};
  std::vector<std::vector<std::string>> sets;
  sets.reserve(designs.size());
  for (auto d : designs) {
    d.emplace_back("traffic.load=0.8");
    sets.push_back(cells(16, d));
  }
  const auto s = run_all(sets);
  std::vector<double> w;
  for (const auto& x : s) {
    EXPECT_NEAR(accepted(x), 0.8, 0.01);
    w.push_back(wait(x));
  }
  EXPECT_NEAR(w[0], 15.0 / 16.0 * 0.8 / (2 * 0.2), 0.05 * 1.875);
  EXPECT_GT(w[3], w[0]);        // an input-queued switch waits longer than output queueing
  EXPECT_LT(w[3], w[2]);        // each iteration helps
  EXPECT_LT(w[2], 0.5 * w[1]);  // iSLIP-1 climbs steeply at this load (44.7 slots)
  EXPECT_NEAR(w[4], w[3], 0.1 * w[3]);  // PIM-4 and iSLIP-4 both near a maximal match
}

// The credit loop: a sender with B flits of credit on a link whose credit
// round trip is RTT can send at most B flits per RTT. The model's loop, from
// its documented parts: latency + head flit + the wait for the switch clock
// (half a cycle on average: a credit-clocked sender is off the clock grid)
// + the flit crossing the crossbar + latency back: RTT = 2L + 2.5 f.
TEST(Validation, CreditLoopUtilisationIsBufferOverRoundTrip) {
  const std::vector<int> buffers = {8, 16, 32, 128};
  std::vector<std::vector<std::string>> sets;
  sets.reserve(buffers.size());
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
