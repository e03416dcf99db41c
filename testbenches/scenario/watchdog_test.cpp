// The progress watchdog (models/sc/watchdog.hpp): a deadlocked ring is
// stopped with a report naming the cycle of links and where each stuck
// packet sits; a slow but live fabric is left alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/sc/fabric.hpp"

namespace fabricsim {
namespace {

// n switches in a ring (s -> s+1), endpoint s on switch s only, one VC,
// one-packet buffers, 1 ns links; tornado traffic (to s + (n-1)/2) makes
// every packet cross several ring links: a cyclic channel dependency.
Config ring(int n, std::vector<std::string> extra) {
  std::string links, ring_links;
  for (int e = 0; e < n; ++e)
    for (int s = 0; s < n; ++s) links += std::string(links.empty() ? "" : ",") + (e == s ? "1" : "0");
  for (int s = 0; s < n; ++s)
    ring_links += (ring_links.empty() ? "" : ",") + std::to_string(s) + "," + std::to_string((s + 1) % n) + ",1";
  std::vector<std::string> sets = {
      "topology.kind=scaleup", "topology.switches=" + std::to_string(n),
      "topology.endpoints=" + std::to_string(n), "topology.links=" + links,
      "topology.switch_links=" + ring_links, "switch.ports=8", "traffic.load=1",
      "switch.input_buffer_flits=9", "switch.output_buffer_flits=9", "link.latency_ns=1",
      "sim.warmup_ns=0", "sim.duration_ns=50000"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return load_config("", sets);
}

TEST(Watchdog, CatchesARingDeadlockAndNamesTheCycle) {
  Fabric f("fabric", ring(7, {"traffic.pattern=tornado"}));
  EXPECT_FALSE(f.run());
  const std::string& e = f.error();
  // Every sender ends up waiting for credits: the events run out, and the
  // watchdog reports at that moment (68.2 ns), not a period later.
  EXPECT_NE(e.find("fabric.watchdog at 68.200 ns: no event is left anywhere while"), std::string::npos) << e;
  EXPECT_NE(e.find("the fabric is deadlocked"), std::string::npos) << e;
  // The cycle: every ring link, each waiting for the next.
  EXPECT_NE(e.find("Deadlock: a cycle of links"), std::string::npos) << e;
  for (int s = 1; s < 7; ++s)
    EXPECT_NE(e.find("fabric.sw" + std::to_string(s) + ".out2 -> "), std::string::npos) << s << e;
  EXPECT_NE(e.find("fabric.sw0.out1 -> "), std::string::npos) << e;
  // Where the packets are and what they wait for.
  EXPECT_NE(e.find("fabric.sw3.in1 (fed by fabric.sw2.out2): 1 packets, 9 flits"), std::string::npos) << e;
  EXPECT_NE(e.find("fabric.sw3.out2 vc0: 1 packets waiting for the link"), std::string::npos) << e;
  EXPECT_NE(e.find("needs 9 credits, has 0"), std::string::npos) << e;
  EXPECT_NE(e.find("packets wait at their sources"), std::string::npos) << e;
}

// A 5-switch ring with credit-starved links (each link can keep
// only two packets in flight over a 200-ns round trip) crawls at ~5% of
// the link rate for 50 us: slow, not stuck. The watchdog stays quiet.
TEST(Watchdog, QuietOnASlowButLiveFabric) {
  Fabric f("fabric", ring(5, {"traffic.pattern=uniform", "switch.input_buffer_flits=18",
                              "switch.output_buffer_flits=64", "endpoint.rx_buffer_flits=18",
                              "link.latency_ns=100"}));
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  EXPECT_LT(s["throughput"]["accepted"].get<double>(), 0.1);
  EXPECT_GT(s["conservation"]["delivered"].get<std::uint64_t>(), 1000u);
}

// sim.watchdog_ns=0 turns it off: the same deadlock then runs to the end
// (and is left in flight) — why the watchdog is on by default.
TEST(Watchdog, OffMeansTheDeadlockRunsSilently) {
  Fabric f("fabric", ring(7, {"traffic.pattern=tornado", "sim.watchdog_ns=0"}));
  ASSERT_TRUE(f.run()) << f.error();
  EXPECT_LT(f.stats()["throughput"]["accepted"].get<double>(), 0.01);
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// Links that retry for longer than a watchdog period (BER 2e-3 without FEC:
// a 272-B packet needs ~77 tries of ~211 ns) are slow, not stuck: go-back-N
// books a packet's retries when it sends it, so nothing new starts for
// 16 us at a time. The watchdog must count a link still sending (or
// replaying) as progress; a watchdog that did not would stop this run at
// 250 us.
TEST(Watchdog, QuietWhileLinksRetry) {
  const Config c = load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100-allreduce.yaml",
                               {"collective.algorithm=nvls", "collective.min_bytes=16384",
                                "collective.max_bytes=16384", "link.ber=2e-3", "link.retry=go_back_n"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  EXPECT_EQ(s["collectives"]["rows"][0]["wrong"].get<int>(), 0);
  EXPECT_GT(s["reliability"]["added_latency_ns"]["max"].get<double>(), 10000.0);  // > one period
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// The watchdog's decisions on their own, with scripted probes: each way of
// being stuck is reported with the right 'since', and each sign of life
// (progress, a busy link, nothing held) keeps it quiet.
TEST(WatchdogDecisions, EachProbe) {
  std::uint64_t progress = 0;
  bool held = true, busy = false, starved = false;
  Ps reported_since = 0;
  Watchdog::Probes p;
  p.progress = [&] { return progress; };
  p.stuck_flits = [&] { return held; };
  p.busy = [&](Ps) { return busy; };
  p.stuck_link = [&](Ps, Ps) { return starved; };
  p.report = [&](Ps, Ps since) {
    reported_since = since;
    return std::string("stuck");
  };
  Watchdog w(1000, p);
  progress = 5;
  EXPECT_NO_THROW(w.check(1000));  // moved since the start
  busy = true;
  EXPECT_NO_THROW(w.check(2000));  // nothing new started, but a link is still sending
  busy = false;
  held = false;
  EXPECT_NO_THROW(w.check(3000));  // nothing moved, nothing held: idle, not stuck
  held = true;
  EXPECT_THROW(w.check(4000), InvariantError);  // nothing moved with flits held
  EXPECT_EQ(reported_since, 3000u);             // the last look
  progress = 6;
  starved = true;
  EXPECT_THROW(w.check(5000), InvariantError);  // moving, but a link starved a period
  EXPECT_EQ(reported_since, 4000u);
  starved = false;
  EXPECT_THROW(w.drained(5500), InvariantError);  // no event left with flits held
  EXPECT_EQ(reported_since, kNever);
  held = false;
  EXPECT_NO_THROW(w.drained(6000));  // drained and empty: the run simply ended
}

}  // namespace
}  // namespace fabricsim
