// Whole-switch scenarios through the Fabric: zero-load latency as the sum of
// its parts, known saturation points, conservation under overload, and
// independence of two fabrics in one process.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/sc/fabric.hpp"

namespace fabricsim {
namespace {

Config cfg(const std::vector<std::string>& sets) { return load_config("", sets); }

// Permutation traffic at very low load: no two packets ever meet, so every
// latency is exactly the configured parts (docs/models/switch.md):
//   source link: latency + 1 flit (head complete at the switch input)
//   wait for the next switch clock edge
//   pipeline_cycles x cycle
//   output link: latency + L flits (tail complete at the sink)
TEST(SwitchScenario, ZeroLoadLatencyIsTheSumOfItsParts) {
  const Config c = cfg({"switch.ports=8", "traffic.pattern=permutation", "traffic.load=0.002",
                        "traffic.packet_flits=9", "link.latency_ns=50",
                        "switch.pipeline_cycles=16", "switch.clock_ghz=1.5625",
                        "sim.warmup_ns=0", "sim.duration_ns=200000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  // Packets start on the 0.64 ns flit grid, which is also the clock grid:
  // head at +50.64 ns, next edge at +51.2 ns, +16 x 0.64 ns pipeline,
  // +50 ns + 9 x 0.64 ns to the tail: 117.2 ns.
  // Network latency (from injection) excludes the rare wait in the source
  // queue when two packets of one source come within a packet time.
  const auto& h = f.sink().network_latency_ps;
  ASSERT_GT(h.count(), 100u);
  EXPECT_EQ(h.min(), 117200u);
  EXPECT_EQ(h.max(), 117200u);
  EXPECT_EQ(f.sink().latency_ps.min(), 117200u);
}

TEST(SwitchScenario, ZeroLoadLatencyWithAnUnrelatedClock) {
  // 1 GHz clock: the head waits 0..1 ns for an edge.
  const Config c = cfg({"switch.ports=8", "traffic.pattern=permutation", "traffic.load=0.002",
                        "traffic.packet_flits=9", "link.latency_ns=50",
                        "switch.pipeline_cycles=10", "switch.clock_ghz=1",
                        "sim.warmup_ns=0", "sim.duration_ns=200000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const Ps base = 50000 + 640 + 10 * 1000 + 50000 + 9 * 640;
  const auto& h = f.sink().network_latency_ps;
  ASSERT_GT(h.count(), 100u);
  EXPECT_GE(h.min(), base);
  EXPECT_LT(h.max(), base + 1000);
  EXPECT_GT(h.max() - h.min(), 800u);  // the alignment really varies
}

// Karol, Hluchyj & Morgan (1987): FIFO input queues under uniform Bernoulli
// traffic saturate at 0.5934 for N = 32 (0.586 as N grows).
TEST(SwitchScenario, FifoHeadOfLineBlockingSaturation) {
  const Config c = cfg({"switch.ports=32", "switch.queueing=fifo", "traffic.load=1",
                        "traffic.packet_flits=1", "link.latency_ns=1",
                        "switch.pipeline_cycles=0", "switch.input_buffer_flits=4096",
                        "endpoint.rx_buffer_flits=4096", "sim.warmup_ns=2000",
                        "sim.duration_ns=12000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const double acc = f.stats()["throughput"]["accepted"].get<double>();
  EXPECT_NEAR(acc, 0.5934, 0.015);
}

TEST(SwitchScenario, VoqWithIslip4SustainsHighLoad) {
  const Config c = cfg({"switch.ports=32", "switch.queueing=voq", "switch.iterations=4",
                        "traffic.load=0.9", "traffic.packet_flits=1", "link.latency_ns=1",
                        "switch.pipeline_cycles=0", "switch.input_buffer_flits=4096",
                        "endpoint.rx_buffer_flits=4096", "sim.warmup_ns=2000",
                        "sim.duration_ns=12000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  EXPECT_NEAR(s["throughput"]["accepted"].get<double>(), 0.9, 0.01);
  // Queues stay short: mean queueing well under 100 cycles.
  EXPECT_LT(s["latency_ns"]["mean"].get<double>(), 100 * 0.64);
}

TEST(SwitchScenario, OutputQueuedSwitchCarriesTheOfferedLoad) {
  const Config c = cfg({"switch.ports=16", "switch.queueing=output", "traffic.load=0.95",
                        "traffic.packet_flits=1", "link.latency_ns=1",
                        "switch.pipeline_cycles=0", "sim.warmup_ns=2000",
                        "sim.duration_ns=12000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  EXPECT_NEAR(s["throughput"]["accepted"].get<double>(), s["throughput"]["offered"].get<double>(),
              0.01);
}

// Overload every design: a hotspot oversubscribes one output, buffers are
// small, two VCs. Nothing may be lost; the backlog must be accounted for.
void overload(const std::string& queueing) {
  const Config c = cfg({"switch.ports=16", "switch.queueing=" + queueing, "switch.vcs=2",
                        "traffic.pattern=hotspot", "traffic.hotspot_fraction=0.5",
                        "traffic.load=1", "traffic.packet_flits=5",
                        "switch.input_buffer_flits=40", "switch.output_buffer_flits=10",
                        "endpoint.rx_buffer_flits=20", "switch.speedup=1.5",
                        "link.latency_ns=2",
                        "sim.warmup_ns=1000", "sim.duration_ns=20000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const auto& k = s["conservation"];
  EXPECT_EQ(k["lost"].get<std::int64_t>(), 0);
  EXPECT_GT(k["in_flight"].get<std::uint64_t>(), 0u);
  EXPECT_GT(k["source_queued"].get<std::uint64_t>(), 0u);  // sources back up
  EXPECT_EQ(k["injected"].get<std::uint64_t>(),
            k["delivered"].get<std::uint64_t>() + k["in_flight"].get<std::uint64_t>());
  EXPECT_EQ(k["generated"].get<std::uint64_t>(),
            k["injected"].get<std::uint64_t>() + k["source_queued"].get<std::uint64_t>());
  // The hot output's link is saturated.
  EXPECT_GT(s["links"]["fabric.sw0.out0"]["utilization"].get<double>(), 0.95);
  double stall = 0;
  for (const auto& [name, l] : s["links"].items())
    if (name.find(".tx") != std::string::npos) stall += l["credit_stall_ns"].get<double>();
  if (queueing == "output") {
    // The ideal output-queued switch frees inputs at once: the backlog piles
    // up in the hot output's unbounded queue instead of the sources.
    EXPECT_EQ(stall, 0.0);
    EXPECT_GT(k["in_flight_switch_outputs"].get<std::uint64_t>(), 100u);
  } else {
    EXPECT_GT(stall, 0.0);  // back-pressure reached the sources
  }
  EXPECT_LE(s["switches"]["fabric.sw0"]["input_buffer_occupancy_flits"]["max"].get<int>(), 40);
}

TEST(SwitchScenario, ConservationUnderOverloadFifo) { overload("fifo"); }
TEST(SwitchScenario, ConservationUnderOverloadVoq) { overload("voq"); }
TEST(SwitchScenario, ConservationUnderOverloadOutputQueued) { overload("output"); }

TEST(SwitchScenario, BurstyProcessOffersTheConfiguredLoad) {
  const Config c = cfg({"switch.ports=16", "traffic.process=bursty", "traffic.burst_packets=6",
                        "traffic.load=0.4", "traffic.packet_flits=4", "sim.warmup_ns=1000",
                        "sim.duration_ns=100000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  EXPECT_NEAR(f.stats()["throughput"]["offered"].get<double>(), 0.4, 0.012);
}

// No global state: two identical fabrics elaborated side by side in one
// process produce identical statistics.
TEST(SwitchScenario, TwoFabricsInOneProcessAreIndependent) {
  const Config c = cfg({"switch.ports=8", "traffic.load=0.7", "switch.allocator=pim",
                        "sim.warmup_ns=500", "sim.duration_ns=5000"});
  Fabric a("a", c);
  Fabric b("b", c);
  sc_core::sc_start(sc_core::sc_time::from_value(a.window().end));
  ASSERT_TRUE(a.finish()) << a.error();
  ASSERT_TRUE(b.finish()) << b.error();
  auto sa = a.stats(), sb = b.stats();
  EXPECT_GT(sa["throughput"]["accepted_packets"].get<std::uint64_t>(), 1000u);
  for (auto* s : {&sa, &sb}) {  // names differ by the fabric's name only
    (*s).erase("links");
    (*s).erase("switches");
  }
  EXPECT_EQ(sa.dump(), sb.dump());
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// DGX H100 wiring (8 GPUs x 4 chips, 5/4/4/5 links): address striping spreads
// each GPU's traffic evenly over its 18 links, so every chip carries a share
// proportional to its links, and nothing is lost.
TEST(ScaleUp, DgxH100StripingSpreadsEvenly) {
  const Config c = load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml",
                               {"traffic.load=0.6", "sim.warmup_ns=1000", "sim.duration_ns=20000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  EXPECT_NEAR(s["throughput"]["accepted"].get<double>(), 0.6, 0.01);
  double lo = 1, hi = 0;
  for (const auto& [name, l] : s["links"].items()) {
    if (name.find(".tx") == std::string::npos) continue;
    lo = std::min(lo, l["utilization"].get<double>());
    hi = std::max(hi, l["utilization"].get<double>());
  }
  EXPECT_GT(lo, 0.6 * 0.93);
  EXPECT_LT(hi, 0.6 * 1.07);
  EXPECT_EQ(s["switches"]["fabric.sw0"]["ports"].get<int>(), 40);
  EXPECT_EQ(s["switches"]["fabric.sw1"]["ports"].get<int>(), 32);
  EXPECT_EQ(s["conservation"]["lost"].get<std::int64_t>(), 0);
}

// Two leaf switches joined by two trunk links: half the uniform traffic
// crosses; the trunks share it evenly and the run conserves packets.
TEST(ScaleUp, TwoLeavesWithTrunks) {
  const Config c = load_config(
      "", {"topology.kind=scaleup", "topology.endpoints=8", "topology.switches=2",
           "topology.links=2,0,2,0,2,0,2,0,0,2,0,2,0,2,0,2", "topology.switch_links=0,1,4",
           "traffic.pattern=uniform", "traffic.allow_self=false", "traffic.load=0.5",
           "sim.warmup_ns=1000", "sim.duration_ns=20000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  EXPECT_NEAR(s["throughput"]["accepted"].get<double>(), 0.5, 0.01);
  // Trunk ports are 8..11 on each leaf (after the 8 endpoint links).
  double lo = 1, hi = 0;
  for (int p = 8; p < 12; ++p) {
    const double u = s["links"]["fabric.sw0.out" + std::to_string(p)]["utilization"].get<double>();
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  // 4 endpoints x 2 links x 0.5 load x 4/7 of destinations remote, over 4 trunks.
  const double expect = 4 * 2 * 0.5 * (4.0 / 7.0) / 4;
  EXPECT_NEAR(lo, expect, 0.05);
  EXPECT_NEAR(hi, expect, 0.05);
  EXPECT_EQ(s["conservation"]["lost"].get<std::int64_t>(), 0);
}

}  // namespace
}  // namespace fabricsim
