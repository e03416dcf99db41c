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
#include "models/sc/ported_engine.hpp"
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
        engine(make_reduction_engine(EngineParams::from(cfg, kFirstPort), pool, &payloads, nullptr,
                                     host, Window{0, 1'000'000})) {
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
    // As the switch does on arrival (on link port 0): the engine port it goes to.
    p.out_port = static_cast<std::int16_t>(engine->port_for(p, 0));
    return id;
  }
  int ports() const { return static_cast<int>(cfg.reduction.ports); }
  // The engine port a packet of `kind` and address `addr` goes to, arrived on link port `in`.
  int port_of(std::uint64_t addr, PacketKind kind = PacketKind::kReduceContrib, int in = 0) const {
    Packet p;
    p.kind = kind;
    p.addr = addr;
    return engine->port_for(p, in);
  }

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
    const int k = b.port_of(a);
    ASSERT_GE(k, kFirstPort);
    ASSERT_LT(k, kFirstPort + b.ports());
    EXPECT_EQ(b.port_of(a, PacketKind::kLdReduceReq, 3), k);  // any kind, any input
    EXPECT_EQ(b.port_of(a + 64), k);                          // same stripe
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
  const int port = b.port_of(0x1000);
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
  const int port = b.port_of(0x3000);
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

// sliced: each engine port is a slice with its own part of the table and
// of the slots, one pool each; an address always goes to the same slice,
// whatever its kind or input, and a full slice holds back only its own.
TEST(ReductionEngine, SlicedAnswersEachPortFromItsSlice) {
  Bench b({"reduction.organisation=sliced", "reduction.table_entries=9",
           "reduction.replication_slots=8", "reduction.ports=4"});
  ReductionEngine& e = *b.engine;
  EXPECT_STREQ(e.organisation(), "sliced");
  for (Need n : {ReductionEngine::kNeedTable, ReductionEngine::kNeedSlot}) {
    EXPECT_EQ(e.pools(n), 4);
    for (int k = kFirstPort; k < kFirstPort + 4; ++k) EXPECT_EQ(e.pool(n, k), k - kFirstPort);
  }
  for (int k = kFirstPort; k < kFirstPort + 4; ++k) {
    EXPECT_EQ(e.free(ReductionEngine::kNeedTable, k), 2u);  // 9 / 4, the remainder unused
    EXPECT_EQ(e.free(ReductionEngine::kNeedSlot, k), 2u);
    EXPECT_EQ(e.port_bytes_per_cycle(k), b.cfg.reduction.port_bytes_per_cycle);
  }
  // Addresses spread over every slice, each always to the same one.
  std::vector<std::uint64_t> first(4, ~std::uint64_t{0});  // an address of each slice
  for (std::uint64_t a = 0; a < std::uint64_t{64} * 128; a += 128) {
    const int k = b.port_of(a);
    ASSERT_GE(k, kFirstPort);
    ASSERT_LT(k, kFirstPort + 4);
    EXPECT_EQ(b.port_of(a, PacketKind::kReadResp, 5), k);
    EXPECT_EQ(b.port_of(a, PacketKind::kLdReduceReq, 2), k);
    auto& f = first[static_cast<std::size_t>(k - kFirstPort)];
    if (f == ~std::uint64_t{0}) f = a;
  }
  for (std::uint64_t f : first) ASSERT_NE(f, ~std::uint64_t{0});
  // Fill slice 0's two entries: slice 0 refuses a third address, slice 1 still takes one.
  const int p0 = kFirstPort;
  std::uint64_t a = first[0];
  for (int taken = 0; taken < 2; a += 128) {
    if (b.port_of(a) != p0) continue;
    Packet& c = b.pool.get(b.packet(PacketKind::kReduceContrib, 0, a));
    ASSERT_TRUE(e.can_take(c, p0));
    e.accept(c, p0, 1000, ReductionEngine::kNeedTable);
    ++taken;
  }
  while (b.port_of(a) != p0) a += 128;
  EXPECT_FALSE(e.can_take(b.pool.get(b.packet(PacketKind::kReduceContrib, 0, a)), p0));
  EXPECT_EQ(e.free(ReductionEngine::kNeedTable, p0), 0u);
  EXPECT_EQ(e.free(ReductionEngine::kNeedTable, p0 + 1), 2u);
  EXPECT_TRUE(e.can_take(b.pool.get(b.packet(PacketKind::kReduceContrib, 0, first[1])), p0 + 1));
  EXPECT_EQ(e.entries_in_use(), 2);
}

// distributed: a slice per slice_ports link ports, sized as its share of a
// chip_ports-port chip; an ld_reduce goes to the slice of the port it came
// in by, its read and every response to that slice, and the result leaves
// from there to the requester.
TEST(ReductionEngine, DistributedFoldsAtTheRequestersSlice) {
  Bench b({"reduction.organisation=distributed", "reduction.slice_ports=2",
           "reduction.chip_ports=64", "reduction.ports=4", "reduction.table_entries=1024",
           "reduction.replication_slots=256", "reduction.alu_bytes_per_cycle=256",
           "reduction.port_bytes_per_cycle=1024"});
  ReductionEngine& e = *b.engine;
  EXPECT_STREQ(e.organisation(), "distributed");
  EXPECT_EQ(engine_port_count(b.cfg, kFirstPort), 4);  // 8 link ports / 2
  EXPECT_EQ(engine_port_count(b.cfg, 9), 5);           // a last slice of one port
  EXPECT_EQ(e.pools(ReductionEngine::kNeedTable), 4);
  for (int k = kFirstPort; k < kFirstPort + 4; ++k) {
    EXPECT_EQ(e.pool(ReductionEngine::kNeedSlot, k), k - kFirstPort);
    EXPECT_EQ(e.free(ReductionEngine::kNeedTable, k), 32u);  // 1024 x 2 / 64
    EXPECT_EQ(e.free(ReductionEngine::kNeedSlot, k), 8u);    // 256 x 2 / 64
    EXPECT_EQ(e.port_bytes_per_cycle(k), 128);               // 4 x 1024 x 2 / 64
  }
  // The ALU: 4 x 256 x 2 / 64 = 32 B per cycle, so 256 B take 8 cycles.
  const Ps cycle = switch_cycle_ps(b.cfg.sw);
  Packet probe;
  probe.kind = PacketKind::kReadResp;
  probe.bytes = 256;
  EXPECT_EQ(dynamic_cast<const PortedEngine&>(e).alu_ps(probe), 8 * cycle);

  // GPU 1's ld_reduce arrives on link port 5 (slice 2, engine port 10).
  const std::uint64_t addr = 0x4000;
  const PacketId ld = b.packet(PacketKind::kLdReduceReq, 1, addr);
  b.pool.get(ld).payload = kNoPayload;
  const int port = b.port_of(addr, PacketKind::kLdReduceReq, 5);
  EXPECT_EQ(port, kFirstPort + 2);
  EXPECT_EQ(b.port_of(addr, PacketKind::kLdReduceReq, 4), port);  // same slice
  EXPECT_EQ(b.port_of(addr, PacketKind::kLdReduceReq, 6), port + 1);
  Packet& req = b.pool.get(ld);
  req.out_port = static_cast<std::int16_t>(port);
  ASSERT_EQ(e.need(req, port), ReductionEngine::kNeedTable);
  e.accept(req, port, 0, ReductionEngine::kNeedTable);
  EXPECT_EQ(e.free(ReductionEngine::kNeedTable, port), 31u);
  EXPECT_EQ(e.free(ReductionEngine::kNeedTable, port + 1), 32u);
  e.fold(ld, 100);
  ASSERT_EQ(b.host.sent.size(), 1u);  // the read of every member, from the slice's port
  EXPECT_EQ(b.host.sent[0].port, port);
  EXPECT_TRUE(b.host.sent[0].multicast);
  EXPECT_EQ(b.pool.get(b.host.sent[0].id).kind, PacketKind::kReadReq);

  // Both members' responses, arriving on any link port, go to that slice.
  for (int member = 0; member < 2; ++member) {
    const PacketId r = b.packet(PacketKind::kReadResp, member, addr);
    Packet& rp = b.pool.get(r);
    rp.out_port = static_cast<std::int16_t>(e.port_for(rp, member == 0 ? 0 : 7));
    EXPECT_EQ(rp.out_port, port);
    EXPECT_EQ(e.need(rp, port), ReductionEngine::kNeedNone);
    e.accept(rp, port, 200, ReductionEngine::kNeedNone);
    e.fold(r, 300 + member);
  }
  ASSERT_EQ(b.host.sent.size(), 2u);
  const Packet& res = b.pool.get(b.host.sent[1].id);
  EXPECT_EQ(res.kind, PacketKind::kLdReduceResp);
  EXPECT_EQ(res.dst, 1);  // to the requester
  EXPECT_EQ(b.host.sent[1].port, port);
  EXPECT_FALSE(b.host.sent[1].multicast);
  EXPECT_EQ(e.entries_in_use(), 0);
  EXPECT_EQ(e.free(ReductionEngine::kNeedTable, port), 32u);
  EXPECT_EQ(e.contributions_consumed(), 3u);  // the ld_reduce and two responses
  // A response to an address no slice is reducing is an error, not a guess.
  Packet stray;
  stray.kind = PacketKind::kReadResp;
  stray.addr = addr;
  EXPECT_THROW(e.port_for(stray, 0), InvariantError);
}

// Sizes an organisation cannot divide are refused, naming key, value and
// what is allowed.
void expect_refused(const std::vector<std::string>& sets, const std::string& key,
                    const std::string& value, const std::string& allowed) {
  const Config c = load_config("", sets);
  try {
    EngineParams::from(c, kFirstPort);
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& err) {
    const std::string m = err.what();
    EXPECT_NE(m.find("config key '" + key + "': value '" + value + "'"), std::string::npos) << m;
    EXPECT_NE(m.find("allowed: " + allowed), std::string::npos) << m;
  }
}
TEST(ReductionEngine, SlicedRefusesFewerEntriesThanSlices) {
  expect_refused(
      {"reduction.organisation=sliced", "reduction.ports=4", "reduction.table_entries=3"},
      "reduction.table_entries", "3", ">= 4");
  expect_refused(
      {"reduction.organisation=sliced", "reduction.ports=8", "reduction.replication_slots=5"},
      "reduction.replication_slots", "5", ">= 8");
}
TEST(ReductionEngine, DistributedRefusesSlicesWithoutEntries) {
  expect_refused({"reduction.organisation=distributed", "reduction.chip_ports=64",
                  "reduction.table_entries=63"},
                 "reduction.table_entries", "63", ">= 64");
  expect_refused({"reduction.organisation=distributed", "reduction.chip_ports=64",
                  "reduction.slice_ports=4", "reduction.replication_slots=15"},
                 "reduction.replication_slots", "15", ">= 16");
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
    EXPECT_NE(m.find("allowed: central | sliced | distributed"), std::string::npos) << m;
  }
}

// reduction.organisation reaches every switch's engine: stats.json names it.
TEST(ReductionEngine, OrganisationReachesTheSwitch) {
  const Config c =
      load_config("", {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=100000000",
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

// Every organisation, end to end on DGX H100's wiring (8 GPUs, 4 chips,
// links 5/4/4/5): NVLS all-reduce (ld_reduce, then multicast stores
// replicated at the engine) and push all-reduce, every output element
// checked against the golden fold, nothing left in flight at the end.
void all_reduce_exact_on_dgx_h100(const std::string& organisation, const std::string& algorithm) {
  const Config c =
      load_config("", {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=100000000",
                       "topology.kind=scaleup", "topology.endpoints=8", "topology.switches=4",
                       "topology.links=5,4,4,5", "switch.vcs=2", "switch.multicast=engine",
                       "collective.algorithm=" + algorithm, "collective.min_bytes=4096",
                       "collective.max_bytes=262144", "collective.step_factor=8",
                       "reduction.organisation=" + organisation});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const auto& rows = s["collectives"]["rows"];
  ASSERT_EQ(rows.size(), 3u);  // 4 KiB, 32 KiB, 256 KiB
  for (const auto& r : rows) {
    EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u) << r.dump();
    EXPECT_EQ(r["checked_elements"].get<std::uint64_t>(), 8 * r["count"].get<std::uint64_t>())
        << r.dump();
  }
  std::uint64_t completed = 0;
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(f.sw(k).engine_organisation(), organisation);
    EXPECT_EQ(f.sw(k).engine_entries_in_use(), 0);  // every entry closed
    const auto& e = s["switches"]["fabric.sw" + std::to_string(k)]["reduction_engine"];
    EXPECT_EQ(e["organisation"].get<std::string>(), organisation);
    completed += e["completed"].get<std::uint64_t>();
  }
  EXPECT_GT(completed, 0u);
  const auto& k = s["conservation"];
  EXPECT_EQ(k["multicast_copies"].get<std::uint64_t>(),
            8 * k["multicast_originals_retired"].get<std::uint64_t>());
}
TEST(ReductionEngine, SlicedNvlsAllReduceExactOnDgxH100) {
  all_reduce_exact_on_dgx_h100("sliced", "nvls");
}
TEST(ReductionEngine, DistributedNvlsAllReduceExactOnDgxH100) {
  all_reduce_exact_on_dgx_h100("distributed", "nvls");
}
TEST(ReductionEngine, SlicedPushAllReduceExactOnDgxH100) {
  all_reduce_exact_on_dgx_h100("sliced", "push");
}
TEST(ReductionEngine, DistributedPushAllReduceExactOnDgxH100) {
  all_reduce_exact_on_dgx_h100("distributed", "push");
}

}  // namespace
}  // namespace fabricsim
