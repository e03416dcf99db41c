// One link between two endpoints: throughput follows the credit round trip,
// and credit misuse by either side is detected, not silent.
#include <gtest/gtest.h>

#include <memory>

#include "models/core/config.hpp"
#include "models/sc/endpoint.hpp"
#include "models/sc/link.hpp"
#include "models/sc/link_port.hpp"

namespace fabricsim {
namespace {

// tx --fwd--> rx over one link whose receive buffer (credit pool) is B flits.
// rx drains each packet as its tail arrives and returns the credits then.
struct LinkBench {
  LinkBench(int buffer_flits, int packet_flits, double latency_ns, bool back_to_back) {
    cfg_tx = load_config("", {"switch.ports=2", "traffic.pattern=permutation",
                              "traffic.allow_self=false", "traffic.load=1",
                              "traffic.packet_flits=" + std::to_string(packet_flits),
                              "switch.input_buffer_flits=1024", "endpoint.rx_buffer_flits=1024",
                              "sim.warmup_ns=2000", "sim.duration_ns=20000"});
    if (back_to_back) {  // one endless burst: a packet every L flit times
      cfg_tx.traffic.process = Process::kBursty;
      cfg_tx.traffic.burst_packets = 1e9;
    }
    cfg_rx = cfg_tx;
    cfg_rx.traffic.load = 0;
    window = Window{ns_to_ps(cfg_tx.sim.warmup_ns),
                    ns_to_ps(cfg_tx.sim.warmup_ns + cfg_tx.sim.duration_ns)};
    pattern = std::make_unique<TrafficPattern>(cfg_tx.traffic, 2, 1);
    tx = std::make_unique<Endpoint>("tx", sched, 0, cfg_tx, *pattern, pool, sink, window);
    rx = std::make_unique<Endpoint>("rx", sched, 1, cfg_rx, *pattern, pool, sink, window);
    const Ps flit = flit_time_ps(cfg_tx.link);
    fwd = std::make_unique<Link>("fwd", flit, ns_to_ps(latency_ns), 1, buffer_flits, window);
    back = std::make_unique<Link>("back", flit, ns_to_ps(latency_ns), 1, buffer_flits, window);
    fwd->bind_tx(tx.get(), 0);
    fwd->bind_rx(rx.get(), 0, true);
    back->bind_tx(rx.get(), 0);
    back->bind_rx(tx.get(), 0, true);
    tx->connect(0, fwd.get(), back.get());
    rx->connect(0, back.get(), fwd.get());
  }
  double run() {
    sc_core::sc_start(sc_core::sc_time::from_value(window.end));
    EXPECT_FALSE(sched.errors().failed()) << sched.errors().message();
    const double cycles = static_cast<double>(window.length()) /
                          static_cast<double>(flit_time_ps(cfg_tx.link));
    return static_cast<double>(rx->accepted_flits_in_window()) / cycles;
  }

  Scheduler sched{"kernel"};
  PacketPool pool;
  SinkStats sink;
  Config cfg_tx, cfg_rx;
  Window window;
  std::unique_ptr<TrafficPattern> pattern;
  std::unique_ptr<Endpoint> tx, rx;
  std::unique_ptr<Link> fwd, back;
};

// Flit time 0.64 ns; latency 31.68 ns: a credit returns 2 * 31.68 + 0.64 =
// 64 ns = 100 flit times after its flit left, so B flits of buffer sustain
// B / 100 of the line rate, capped at 1.
constexpr double kLatencyNs = 31.68;

TEST(LinkCredits, BufferOfOneRoundTripGivesLineRate) {
  LinkBench b(100, 1, kLatencyNs, false);
  EXPECT_NEAR(b.run(), 1.0, 0.002);
  EXPECT_EQ(b.fwd->credit_stall_ps(), 0u);
  // At the end, the packets of the last 31.68 + 0.64 ns (a flit each 0.64
  // ns) are on the wire: the link's sends less its receiver's arrivals.
  const std::uint64_t on_wire = b.fwd->in_flight();
  EXPECT_EQ(on_wire, b.fwd->transmissions() - b.rx->delivered());
  EXPECT_GE(on_wire, 49u);
  EXPECT_LE(on_wire, 51u);
}

TEST(LinkCredits, HalfTheRoundTripGivesHalfTheRate) {
  LinkBench b(50, 1, kLatencyNs, false);
  EXPECT_NEAR(b.run(), 0.5, 0.002);
  // Stalled (ready, no credits) the other half of the time.
  EXPECT_NEAR(static_cast<double>(b.fwd->credit_stall_ps()) /
                  static_cast<double>(b.window.length()),
              0.5, 0.002);
}

TEST(LinkCredits, QuarterRoundTrip) {
  LinkBench b(25, 1, kLatencyNs, false);
  EXPECT_NEAR(b.run(), 0.25, 0.002);
}

TEST(LinkCredits, MoreBufferThanTheRoundTripDoesNotExceedLineRate) {
  LinkBench b(400, 1, kLatencyNs, false);
  EXPECT_NEAR(b.run(), 1.0, 0.002);
}

TEST(LinkCredits, MultiFlitPacketsWaitForWholePacketCredits) {
  // 8-flit packets, back to back: a packet's credits return
  // 2 * 31.68 + 8 * 0.64 = 68.48 ns after it starts. 48 flits = 6 packets
  // per round trip: 6 * 8 * 0.64 / 68.48 = 0.4486 of the line rate.
  LinkBench b(48, 8, kLatencyNs, true);
  EXPECT_NEAR(b.run(), 6 * 8 * 0.64 / 68.48, 0.003);
}

// A receiver that returns every packet's credits twice.
class DoubleCreditSink : public TimedModule {
 public:
  DoubleCreditSink(const sc_core::sc_module_name& n, Scheduler& s, PacketPool& pool)
      : TimedModule(n, s), pool_(pool) {}
  Receiver rx;  // attach() to the link it drains

 protected:
  void handle(const Item& it) override {
    rx.arrived();
    const Packet& p = pool_.get(it.a);
    rx.link->return_credits(p.vc, p.flits, it.time);
    rx.link->return_credits(p.vc, p.flits, it.time);  // the bug under test
  }

 private:
  PacketPool& pool_;
};

TEST(LinkCredits, ReceiverReturningTooManyCreditsIsDetected) {
  Scheduler sched("kernel");
  PacketPool pool;
  SinkStats sink;
  const Config cfg = load_config("", {"switch.ports=2", "traffic.pattern=permutation",
                                      "traffic.allow_self=false", "traffic.load=0.5",
                                      "traffic.packet_flits=1"});
  const Window w{0, ns_to_ps(1000)};
  TrafficPattern pattern(cfg.traffic, 2, 1);
  Endpoint tx("tx", sched, 0, cfg, pattern, pool, sink, w);
  DoubleCreditSink bad("bad", sched, pool);
  Link fwd("fwd", 640, 10000, 1, 16, w);
  fwd.bind_tx(&tx, 0);
  fwd.bind_rx(&bad, 0, true);
  bad.rx.attach(&fwd);
  tx.connect(0, &fwd, &fwd);
  sc_core::sc_start(sc_core::sc_time::from_value(w.end));
  ASSERT_TRUE(sched.errors().failed());
  EXPECT_NE(sched.errors().message().find("fwd: receiver returned credits for flits that never crossed"),
            std::string::npos)
      << sched.errors().message();
}

// A sender that ignores credits: sends a 1-flit packet every flit time into
// a 4-flit buffer whose credits come back only after 10 ns.
class GreedySender : public TimedModule {
 public:
  GreedySender(const sc_core::sc_module_name& n, Scheduler& s, PacketPool& pool)
      : TimedModule(n, s), pool_(pool) {}
  Link* out = nullptr;

 protected:
  void start_of_simulation() override { schedule(0, 16); }
  void handle(const Item& it) override {
    if (it.kind == kItemCreditWake || it.kind == kItemCredit) return;
    const PacketId id = pool_.alloc();
    out->send(id, pool_.get(id), it.time);  // no has_credits() check: the bug
    schedule(it.time + out->flit_ps(), 16);
  }

 private:
  PacketPool& pool_;
};

class PassiveSink : public TimedModule {
 public:
  using TimedModule::TimedModule;
  Receiver rx;  // attach() to the link it drains

 protected:
  void handle(const Item& it) override {
    rx.arrived();
    rx.link->return_credits(0, 1, it.time);
  }
};

TEST(LinkCredits, SenderIgnoringCreditsIsDetected) {
  Scheduler sched("kernel");
  PacketPool pool;
  const Window w{0, ns_to_ps(1000)};
  GreedySender tx("tx", sched, pool);
  PassiveSink rx("rx", sched);
  Link fwd("fwd", 640, 10000, 1, 4, w);
  fwd.bind_tx(&tx, 0);
  fwd.bind_rx(&rx, 0, true);
  tx.out = &fwd;
  rx.rx.attach(&fwd);
  sc_core::sc_start(sc_core::sc_time::from_value(w.end));
  ASSERT_TRUE(sched.errors().failed());
  EXPECT_NE(sched.errors().message().find("fwd.vc0: credit underflow"), std::string::npos)
      << sched.errors().message();
  // The fifth flit was the one without a credit: caught at 4 flit times.
  EXPECT_NE(sched.errors().message().find("at 2.56"), std::string::npos)
      << sched.errors().message();
}

}  // namespace
}  // namespace fabricsim
