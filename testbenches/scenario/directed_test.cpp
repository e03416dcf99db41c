// Directed scenarios: hand-placed packets through a bare switch, checking
// exact delivery; and a source whose one VC is starved of credits.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/rng.hpp"
#include "models/core/topology.hpp"
#include "models/sc/endpoint.hpp"
#include "models/sc/link.hpp"
#include "models/sc/link_port.hpp"
#include "models/sc/switch.hpp"

namespace fabricsim {
namespace {

// Sends scripted packets into switch inputs at given times.
class ScriptedSource : public TimedModule {
 public:
  struct Send {
    Ps t;
    int port, dst, vc, flits;
  };
  ScriptedSource(const sc_core::sc_module_name& n, Scheduler& s, PacketPool& pool)
      : TimedModule(n, s), pool_(pool) {}
  std::vector<Link*> up;
  std::vector<Send> sends;
  std::map<std::uint64_t, int> serial_of_send;  // packet serial -> index in sends
  // Strict: a send that cannot go at its time fails the test. Otherwise it
  // waits in a per-port FIFO and is retried every flit time.
  bool strict = true;

 protected:
  void start_of_simulation() override {
    for (std::size_t k = 0; k < sends.size(); ++k)
      schedule(sends[k].t, 16, static_cast<std::uint32_t>(k));
    waiting_.resize(up.size());
  }
  void handle(const Item& it) override {
    if (it.kind == 16) {
      const Send& s = sends[it.a];
      if (strict) {
        Link* l = up[static_cast<size_t>(s.port)];
        ASSERT_TRUE(l->has_credits(s.vc, s.flits, it.time) && l->free_at() <= it.time)
            << "script sends faster than its link";
        send(it.a, it.time);
        return;
      }
      waiting_[static_cast<size_t>(s.port)].push_back(static_cast<int>(it.a));
      retry(s.port, it.time);
    } else if (it.kind == 17) {
      retry(static_cast<int>(it.a), it.time);
    }
  }

 private:
  void retry(int port, Ps t) {
    auto& q = waiting_[static_cast<size_t>(port)];
    Link* l = up[static_cast<size_t>(port)];
    while (!q.empty()) {
      const Send& s = sends[static_cast<size_t>(q.front())];
      if (l->free_at() > t || !l->has_credits(s.vc, s.flits, t)) {
        schedule(std::max(l->free_at(), t + l->flit_ps()), 17, static_cast<std::uint32_t>(port));
        return;
      }
      send(static_cast<std::uint32_t>(q.front()), t);
      q.erase(q.begin());
    }
  }
  void send(std::uint32_t k, Ps t) {
    const Send& s = sends[k];
    Link* l = up[static_cast<size_t>(s.port)];
    const PacketId id = pool_.alloc();
    Packet& p = pool_.get(id);
    p.t_gen = p.t_inject = t;
    p.src = s.port;
    p.dst = s.dst;
    p.flits = static_cast<std::uint16_t>(s.flits);
    p.vc = static_cast<std::uint8_t>(s.vc);
    serial_of_send[p.serial] = static_cast<int>(k);
    l->send(id, p, t);
  }

  PacketPool& pool_;
  std::vector<std::vector<int>> waiting_;
};

// Records each packet's tail arrival; returns credits except on `starved_vc`.
class RecordingSink : public TimedModule {
 public:
  RecordingSink(const sc_core::sc_module_name& n, Scheduler& s, PacketPool& pool)
      : TimedModule(n, s), pool_(pool) {}
  Receiver rx;  // attach() to the link it drains
  int starved_vc = -1;
  std::map<std::uint64_t, Ps> tail_of_serial;
  std::vector<int> per_vc = std::vector<int>(16, 0);

 protected:
  void handle(const Item& it) override {
    rx.arrived();
    const Packet& p = pool_.get(it.a);
    tail_of_serial[p.serial] = it.time;
    ++per_vc[p.vc];
    if (p.vc != starved_vc) rx.link->return_credits(p.vc, p.flits, it.time);
    pool_.release(it.a);
  }

 private:
  PacketPool& pool_;
};

struct BareSwitch {
  explicit BareSwitch(const std::vector<std::string>& sets, const std::string& prefix = "")
      : cfg(load_config("", sets)), sched((prefix + "kernel").c_str()) {
    const int n = static_cast<int>(cfg.sw.ports), vcs = static_cast<int>(cfg.sw.vcs);
    window = Window{0, ns_to_ps(cfg.sim.warmup_ns + cfg.sim.duration_ns)};
    const Topology topo = build_topology(cfg);
    const SwitchParams sp =
        SwitchParams::from(cfg, topo.ports_of_switch(0), uses_reduction_engine(cfg));
    const EngineParams ep = EngineParams::from(cfg, sp.engine_port);
    sw = std::make_unique<Switch>((prefix + "sw").c_str(), sched, sp,
                                  sp.has_engine() ? &ep : nullptr, pool, window, topo.routes[0]);
    src = std::make_unique<ScriptedSource>((prefix + "src").c_str(), sched, pool);
    const Ps flit = flit_time_ps(cfg.link), lat = ns_to_ps(cfg.link.latency_ns);
    for (int i = 0; i < n; ++i) {
      auto up = std::make_unique<Link>("up" + std::to_string(i), flit, lat, vcs,
                                       static_cast<int>(cfg.sw.input_buffer_flits / vcs), window);
      auto dn = std::make_unique<Link>("dn" + std::to_string(i), flit, lat, vcs,
                                       static_cast<int>(cfg.endpoint.rx_buffer_flits / vcs), window);
      sinks.push_back(std::make_unique<RecordingSink>((prefix + "sink" + std::to_string(i)).c_str(),
                                                      sched, pool));
      up->bind_tx(src.get(), static_cast<std::uint32_t>(i));
      up->bind_rx(sw.get(), static_cast<std::uint32_t>(i), false);
      dn->bind_tx(sw.get(), static_cast<std::uint32_t>(i));
      dn->bind_rx(sinks.back().get(), 0, true);
      sinks.back()->rx.attach(dn.get());
      sw->connect_input(i, up.get());
      sw->connect_output(i, dn.get());
      src->up.push_back(up.get());
      links.push_back(std::move(up));
      links.push_back(std::move(dn));
    }
  }
  // Tail arrival of the k-th scripted packet, or kNever if never delivered.
  Ps tail(int k) const {
    for (auto& [serial, idx] : src->serial_of_send)
      if (idx == k) {
        const auto& m = sinks[static_cast<size_t>(src->sends[static_cast<size_t>(k)].dst)]->tail_of_serial;
        auto it = m.find(serial);
        return it == m.end() ? kNever : it->second;
      }
    return kNever;
  }

  Config cfg;
  Window window;
  Scheduler sched;
  PacketPool pool;
  std::unique_ptr<Switch> sw;
  std::unique_ptr<ScriptedSource> src;
  std::vector<std::unique_ptr<RecordingSink>> sinks;
  std::vector<std::unique_ptr<Link>> links;
};

// Two packets reach one input while it is busy (the clock is half the flit
// rate), both for free outputs. The allocator grants one; the other must be
// granted when the input frees, not when some unrelated event happens.
TEST(Directed, SecondPacketAtAMatchedInputIsNotForgotten) {
  BareSwitch b({"switch.ports=3", "traffic.packet_flits=1", "link.latency_ns=1",
                "switch.pipeline_cycles=0", "switch.clock_ghz=0.78125", "sim.warmup_ns=0",
                "sim.duration_ns=500"});
  // Flit time 0.64 ns, clock 1.28 ns. in0: W->out0, A->out1, B->out2, back to back.
  b.src->sends = {{0, 0, 0, 0, 1}, {640, 0, 1, 0, 1}, {1280, 0, 2, 0, 1}};
  sc_core::sc_start(sc_core::sc_time::from_value(b.window.end));
  ASSERT_FALSE(b.sched.errors().failed()) << b.sched.errors().message();
  // Each is granted at the first edge its input is free: W at 2.56 ns
  // (head 1.64), A at 3.84, B at 5.12; tail at grant + 1 ns + 0.64 ns.
  EXPECT_EQ(b.tail(0), 2560u + 1640u);
  EXPECT_EQ(b.tail(1), 3840u + 1640u);
  EXPECT_EQ(b.tail(2), 5120u + 1640u);
  EXPECT_EQ(b.sw->packets_in_inputs(), 0u);
}

// Packets queued behind a busy output move as soon as it frees.
TEST(Directed, ContendersForOneOutputAreServedBackToBack) {
  BareSwitch b({"switch.ports=4", "traffic.packet_flits=4", "link.latency_ns=1",
                "switch.pipeline_cycles=2", "sim.warmup_ns=0", "sim.duration_ns=500"});
  b.src->sends = {{0, 0, 3, 0, 4}, {0, 1, 3, 0, 4}, {0, 2, 3, 0, 4}};
  sc_core::sc_start(sc_core::sc_time::from_value(b.window.end));
  ASSERT_FALSE(b.sched.errors().failed()) << b.sched.errors().message();
  std::vector<Ps> tails = {b.tail(0), b.tail(1), b.tail(2)};
  std::sort(tails.begin(), tails.end());
  // The output link is the bottleneck: tails exactly one packet time apart.
  EXPECT_EQ(tails[1] - tails[0], 4u * 640u);
  EXPECT_EQ(tails[2] - tails[1], 4u * 640u);
  // First: head 1.64 ns -> edge 1.92, +2 cycles, +1 ns + 4 flits.
  EXPECT_EQ(tails[0], 1920u + 2u * 640u + 1000u + 4u * 640u);
}

// Many small random switches (ports, VCs, packet length, queueing, allocator,
// clock, speedup, pipeline, latency, buffers from one packet up), each fed a
// random burst of packets and then left alone: every packet must come out,
// and nothing may be left waiting with no event to move it.
TEST(Directed, RandomBurstsAlwaysDrain) {
  Rng rng(2024);
  std::vector<std::unique_ptr<BareSwitch>> cases;
  auto pick = [&](std::vector<std::string> v) { return v[rng.below(v.size())]; };
  for (int c = 0; c < 40; ++c) {
    const int ports = 2 + static_cast<int>(rng.below(5));
    const int vcs = 1 + static_cast<int>(rng.below(3));
    const int flits = 1 + static_cast<int>(rng.below(9));
    auto buf = [&](int per_vc_packets) { return std::to_string(vcs * flits * per_vc_packets); };
    cases.push_back(std::make_unique<BareSwitch>(
        std::vector<std::string>{
            "switch.ports=" + std::to_string(ports), "switch.vcs=" + std::to_string(vcs),
            "traffic.packet_flits=" + std::to_string(flits),
            "switch.queueing=" + pick({"fifo", "voq", "output"}),
            "switch.allocator=" + pick({"islip", "pim", "rr"}),
            "switch.iterations=" + std::to_string(1 + rng.below(3)),
            "switch.clock_ghz=" + pick({"0.37", "1.1", "1.5625", "3"}),
            "switch.speedup=" + pick({"1", "1.3", "2"}),
            "switch.pipeline_cycles=" + std::to_string(rng.below(6)),
            "link.latency_ns=" + pick({"0.001", "1", "19"}),
            "switch.input_buffer_flits=" + buf(1 + static_cast<int>(rng.below(3))),
            "switch.output_buffer_flits=" + std::to_string(flits * (1 + static_cast<int>(rng.below(3)))),
            "endpoint.rx_buffer_flits=" + buf(1 + static_cast<int>(rng.below(3))),
            "sim.warmup_ns=0", "sim.duration_ns=100000"},
        "c" + std::to_string(c) + "_"));
    BareSwitch& b = *cases.back();
    b.src->strict = false;
    for (int k = 0; k < 60; ++k)
      b.src->sends.push_back({rng.below(2000) * 100, static_cast<int>(rng.below(ports)),
                              static_cast<int>(rng.below(ports)),
                              static_cast<int>(rng.below(vcs)), flits});
    std::sort(b.src->sends.begin(), b.src->sends.end(),
              [](const ScriptedSource::Send& x, const ScriptedSource::Send& y) { return x.t < y.t; });
  }
  sc_core::sc_start(sc_core::sc_time::from_value(ns_to_ps(100000)));
  for (std::size_t c = 0; c < cases.size(); ++c) {
    BareSwitch& b = *cases[c];
    ASSERT_FALSE(b.sched.errors().failed()) << "case " << c << ": " << b.sched.errors().message();
    std::size_t delivered = 0;
    for (auto& s : b.sinks) delivered += s->tail_of_serial.size();
    EXPECT_EQ(delivered, b.src->sends.size()) << "case " << c;
    EXPECT_EQ(b.sw->packets_in_inputs() + b.sw->packets_in_outputs(), 0u) << "case " << c;
    EXPECT_NO_THROW(b.sw->check_end_of_run(ns_to_ps(100000))) << "case " << c;
  }
}

// A source with two VCs whose receiver never returns VC0 credits: VC1 must
// keep flowing at its share of the offered load.
TEST(Directed, StarvedVcDoesNotBlockTheOtherVc) {
  const Config cfg = load_config("", {"switch.ports=2", "switch.vcs=2", "traffic.pattern=permutation",
                                      "traffic.allow_self=false", "traffic.load=0.4",
                                      "traffic.packet_flits=2", "endpoint.rx_buffer_flits=64",
                                      "sim.warmup_ns=0", "sim.duration_ns=20000"});
  const Window w{0, ns_to_ps(20000)};
  Scheduler sched("kernel");
  PacketPool pool;
  SinkStats stats;
  TrafficPattern pattern(cfg.traffic, 2, 1);
  Endpoint tx("tx", sched, 0, cfg, pattern, pool, stats, w);
  RecordingSink rx("rx", sched, pool);
  rx.starved_vc = 0;
  Link fwd("fwd", 640, 5000, 2, 32, w);
  fwd.bind_tx(&tx, 0);
  fwd.bind_rx(&rx, 0, true);
  rx.rx.attach(&fwd);
  tx.connect(0, &fwd, &fwd);
  sc_core::sc_start(sc_core::sc_time::from_value(w.end));
  ASSERT_FALSE(sched.errors().failed()) << sched.errors().message();
  EXPECT_EQ(rx.per_vc[0], 16);  // 32 credits of 2-flit packets, never returned
  // VC1 carries half the packets: 0.4 / 2 flits x 31250 slots / 2 = 3125.
  EXPECT_NEAR(rx.per_vc[1], 3125, 200);
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// A module queuing work in the past is a model bug: caught, not reordered.
class TimeTraveller : public TimedModule {
 public:
  using TimedModule::TimedModule;

 protected:
  void start_of_simulation() override { schedule(1000, 16); }
  void handle(const Item& it) override {
    if (it.time == 1000) schedule(500, 16);
  }
};

TEST(Directed, WorkQueuedInThePastIsAnError) {
  Scheduler sched("kernel");
  TimeTraveller m("traveller", sched);
  sc_core::sc_start(sc_core::sc_time::from_value(5000));
  ASSERT_TRUE(sched.errors().failed());
  EXPECT_NE(sched.errors().message().find("traveller at 1.000 ns: traveller: work queued for 0.5"),
            std::string::npos)
      << sched.errors().message();
}

}  // namespace
}  // namespace fabricsim
