// The reduction engine's interface (models/sc/reduction_engine.hpp): its
// contract, asked of the engine make_reduction_engine builds, without a
// kernel (a recording EngineHost stands in for the switch); and
// reduction.organisation, from the configuration to the switch's engine.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/errors.hpp"
#include "models/core/packet.hpp"
#include "models/sc/fabric.hpp"
#include "models/sc/reduction_engine.hpp"

namespace fabricsim {
namespace {

// What the engine asked of its switch.
struct Host final : EngineHost {
  Host() = default;
  virtual ~Host() = default;
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;
  Host(Host&&) = delete;
  Host& operator=(Host&&) = delete;

  struct Sent {
    PacketId id;
    int port;
    bool multicast;
    Ps t;
  };
  std::vector<Sent> sent;
  std::vector<std::uint64_t> closed;
  int freed = 0;
  void engine_send(PacketId id, int port, bool multicast, Ps t) override {
    sent.push_back({id, port, multicast, t});
  }
  void engine_entry_closed(std::uint64_t key) override { closed.push_back(key); }
  void engine_resource_freed(Ps /*t*/) override { ++freed; }
};

constexpr int kFirstPort = 8;  // engine ports after 8 link ports

struct Bench {
  explicit Bench(const std::vector<std::string>& sets)
      : cfg(load_config("", sets)),
        engine(make_reduction_engine(EngineParams::from(cfg, kFirstPort), pool, &payloads, nullptr, host,
                                     Window{0, 1'000'000})) {
    payloads.set_timing_only();
    engine->set_groups({{0, 1}}, 2);  // group 0: endpoints 0 and 1
  }
  PacketId packet(PacketKind kind, int src, std::uint64_t addr) {
    const PacketId id = pool.alloc();
    Packet& p = pool.get(id);
    p.kind = kind;
    p.src = src;
    p.dst = -1;  // push all-reduce: the result goes to the group
    p.addr = addr;
    p.bytes = 256;
    p.flits = 16;
    p.payload = payloads.alloc();
    return id;
  }
  int ports() const { return static_cast<int>(cfg.reduction.ports); }

  Config cfg;
  PacketPool pool;
  PayloadPool payloads;
  Host host;
  std::unique_ptr<ReductionEngine> engine;
};

using Need = ReductionEngine::Need;

// Queries are keyed by the engine port they concern; the central engine
// has one pool of each resource, so every port answers alike.
TEST(ReductionEngine, CentralAnswersEveryPortFromOnePool) {
  Bench b({"reduction.table_entries=3", "reduction.replication_slots=2", "reduction.ports=4"});
  ReductionEngine& e = *b.engine;
  EXPECT_STREQ(e.organisation(), "central");
  for (Need n : {ReductionEngine::kNeedTable, ReductionEngine::kNeedSlot}) {
    EXPECT_EQ(e.pools(n), 1);
    for (int k = kFirstPort; k < kFirstPort + b.ports(); ++k) EXPECT_EQ(e.pool(n, k), 0);
  }
  for (int k = kFirstPort; k < kFirstPort + b.ports(); ++k) {
    EXPECT_EQ(e.free(ReductionEngine::kNeedTable, k), 3u);
    EXPECT_EQ(e.free(ReductionEngine::kNeedSlot, k), 2u);
    EXPECT_EQ(e.port_bytes_per_cycle(k), b.cfg.reduction.port_bytes_per_cycle);
  }
  // An address always maps to the same engine port, one of the engine's.
  std::vector<int> used(static_cast<std::size_t>(b.ports()), 0);
  for (std::uint64_t a = 0; a < std::uint64_t{64} * 128; a += 128) {
    const int k = e.port_for(a);
    ASSERT_GE(k, kFirstPort);
    ASSERT_LT(k, kFirstPort + b.ports());
    EXPECT_EQ(e.port_for(a), k);
    EXPECT_EQ(e.port_for(a + 64), k);  // same stripe
    ++used[static_cast<std::size_t>(k - kFirstPort)];
  }
  for (int u : used) EXPECT_GT(u, 0);
}

// What a head needs, by kind, and how it follows the table: the first
// contribution of an address needs an entry, the others none once it is
// open; a multicast write needs a slot; a read response nothing.
TEST(ReductionEngine, NeedFollowsTheTableAndAcceptReservesIt) {
  Bench b({"reduction.table_entries=1", "reduction.replication_slots=1"});
  ReductionEngine& e = *b.engine;
  const PacketId c0 = b.packet(PacketKind::kReduceContrib, 0, 0x1000);
  const PacketId c1 = b.packet(PacketKind::kReduceContrib, 1, 0x1000);
  const PacketId other = b.packet(PacketKind::kReduceContrib, 0, 0x2000);
  const PacketId wr = b.packet(PacketKind::kMcStore, 0, 0x3000);
  const int port = e.port_for(0x1000);
  EXPECT_EQ(e.need(b.pool.get(c0), port), ReductionEngine::kNeedTable);
  EXPECT_EQ(e.need(b.pool.get(wr), port), ReductionEngine::kNeedSlot);
  EXPECT_EQ(e.need(PacketKind::kReadResp, ReductionEngine::key(b.pool.get(c0)), port),
            ReductionEngine::kNeedNone);
  EXPECT_TRUE(ReductionEngine::need_follows_table(PacketKind::kReduceContrib));
  EXPECT_FALSE(ReductionEngine::need_follows_table(PacketKind::kMcStore));
  EXPECT_FALSE(ReductionEngine::need_follows_table(PacketKind::kReadResp));
  EXPECT_TRUE(e.can_take(b.pool.get(c0), port));

  // Granted at edge 1000: the entry is reserved, the port busy a while.
  const Ps e0 = 1000;
  const Ps busy = e.accept(b.pool.get(c0), port, e0, ReductionEngine::kNeedTable);
  EXPECT_GE(busy, e0 + e.port_ps(port, e.bytes_of(b.pool.get(c0))));
  EXPECT_EQ(e.inflight(), 1u);
  EXPECT_EQ(e.entries_in_use(), 1);
  EXPECT_EQ(e.free(ReductionEngine::kNeedTable, port), 0u);
  EXPECT_EQ(e.need(b.pool.get(c1), port), ReductionEngine::kNeedNone);
  EXPECT_TRUE(e.can_take(b.pool.get(c1), port));
  // A full table: another address's first contribution cannot be taken, at any port.
  for (int k = kFirstPort; k < kFirstPort + b.ports(); ++k)
    EXPECT_FALSE(e.can_take(b.pool.get(other), k));

  // Both contributions folded: the entry closes, the result goes to the group.
  e.accept(b.pool.get(c1), port, busy, ReductionEngine::kNeedNone);
  e.fold(c0, busy);
  EXPECT_TRUE(b.host.sent.empty());
  e.fold(c1, busy + 10);
  ASSERT_EQ(b.host.sent.size(), 1u);
  EXPECT_EQ(b.host.sent[0].port, port);
  EXPECT_TRUE(b.host.sent[0].multicast);
  EXPECT_EQ(b.host.sent[0].t, busy + 10);
  ASSERT_EQ(b.host.closed.size(), 1u);
  EXPECT_EQ(b.host.closed[0], ReductionEngine::key(b.pool.get(b.host.sent[0].id)));
  EXPECT_EQ(b.host.freed, 1);
  EXPECT_EQ(e.free(ReductionEngine::kNeedTable, port), 1u);
  EXPECT_EQ(e.inflight(), 0u);
  EXPECT_EQ(e.contributions_consumed(), 2u);
  EXPECT_EQ(e.results_made(), 1u);
}

// A multicast write holds a slot from its grant until release_slot.
TEST(ReductionEngine, SlotHeldUntilReleased) {
  Bench b({"reduction.replication_slots=1"});
  ReductionEngine& e = *b.engine;
  const PacketId wr = b.packet(PacketKind::kMcStore, 0, 0x3000);
  const int port = e.port_for(0x3000);
  e.accept(b.pool.get(wr), port, 0, ReductionEngine::kNeedSlot);
  EXPECT_TRUE(b.pool.get(wr).engine_slot);
  EXPECT_EQ(e.slots_held(), 1u);
  EXPECT_EQ(e.free(ReductionEngine::kNeedSlot, port), 0u);
  e.fold(wr, 500);  // passed on to be replicated at its engine port
  ASSERT_EQ(b.host.sent.size(), 1u);
  EXPECT_EQ(b.host.sent[0].id, wr);
  EXPECT_EQ(b.host.sent[0].port, port);
  EXPECT_TRUE(b.host.sent[0].multicast);
  EXPECT_EQ(e.slots_held(), 1u);  // until its copies have left
  e.release_slot(b.pool.get(wr), 900);
  EXPECT_EQ(e.slots_held(), 0u);
  EXPECT_EQ(e.free(ReductionEngine::kNeedSlot, port), 1u);
  EXPECT_EQ(b.host.freed, 1);
}

// The organisation is checked when the configuration is read: a value that
// does not exist names the key, the value and the allowed ones.
TEST(ReductionEngine, UnknownOrganisationIsRefused) {
  try {
    load_config("", {"reduction.organisation=per_port"});
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& err) {
    const std::string m = err.what();
    EXPECT_NE(m.find("config key 'reduction.organisation': value 'per_port'"), std::string::npos)
        << m;
    EXPECT_NE(m.find("allowed: central"), std::string::npos) << m;
  }
}

// reduction.organisation reaches every switch's engine: stats.json names it.
TEST(ReductionEngine, OrganisationReachesTheSwitch) {
  const Config c = load_config(
      "", {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=100000000",
           "switch.ports=4", "collective.algorithm=push", "collective.min_bytes=4096",
           "collective.max_bytes=4096", "reduction.organisation=central"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  EXPECT_EQ(f.sw(0).engine_organisation(), "central");
  const auto s = f.stats();
  EXPECT_EQ(s["config"]["reduction.organisation"].get<std::string>(), "central");
  const auto& e = s["switches"]["fabric.sw0"]["reduction_engine"];
  EXPECT_EQ(e["organisation"].get<std::string>(), "central");
  EXPECT_GT(e["completed"].get<int>(), 0);
}

}  // namespace
}  // namespace fabricsim
