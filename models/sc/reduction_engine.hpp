// The interface a switch holds to its in-switch reduction engine
// (docs/models/reduction_engine.md), and EngineHost, what the engine asks of
// the switch in return. An organisation of the engine (reduction.organisation)
// is a class implementing ReductionEngine, made by make_reduction_engine();
// the switch never names one. There are three: CentralEngine
// (central_engine.hpp, k engine ports with one table), SlicedEngine
// (sliced_engine.hpp, k engine ports each with its own table slice, chosen
// by address hash) and DistributedEngine (distributed_engine.hpp, a slice
// per group of link ports, each address reduced at the slice of the port
// that asked for it).
//
// The interface keeps the name ReductionEngine because that is what the
// switch, the docs and the statistics (stats.json "reduction_engine") call
// the thing the switch talks to; the organisation is the implementation's
// name. The engine's ports are crossbar ports numbered after the switch's
// link ports (SwitchParams::engine_port on, engine_port_count() of them): an
// organisation decides what stands behind each port (one shared table, a
// slice per port, a slice per address hash).
//
// Resource queries are keyed by the engine port (or address) they concern,
// so an organisation whose table entries or replication slots sit per port
// or per slice answers per port; one with a single pool (central) ignores
// it. Asks that draw on the same free count share one pool (pool()), which
// is how the switch shares entries among heads at an edge.
//
// Timing assumptions the switch relies on, per packet granted to engine
// port k at switch edge e (each organisation documents its own numbers):
//   - accept() returns when port k can take its next packet (> e);
//   - the switch folds the packet (fold()) once its tail has crossed, the
//     port is done with it, and switch.pipeline_cycles + pipeline_ps(k)
//     have passed;
//   - what the engine makes leaves at once through an engine port's
//     crossbar input (EngineHost::engine_send), which moves
//     port_bytes_per_cycle(k) per switch cycle (port_ps).
// Queries (port_for, need, free, pool, can_take, bytes_of, port_ps) are
// asked per head and per allocation edge: they must be cheap and must not
// change state.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/core/alu_backend.hpp"
#include "models/core/config.hpp"
#include "models/core/fold_trace.hpp"
#include "models/core/packet.hpp"
#include "models/core/reduction_table.hpp"
#include "models/core/wave_trace.hpp"
#include "models/sc/link.hpp"

namespace fabricsim {

// What an engine asks of the switch it sits in.
// What an engine is made from, resolved once from its switch's configuration
// by whoever builds the fabric (Fabric::Builder): the organisation and the
// sizes and rates every organisation shares (an organisation that splits
// them over its ports or slices divides these).
struct EngineParams {
  EngineOrganisation organisation = EngineOrganisation::kCentral;
  int first_port = 0;  // crossbar index of engine port 0 (the switch's link ports come first)
  int ports = 1;       // engine ports (engine_port_count)
  int alu_ports = 1;   // reduction.ports (distributed: the chip's ALUs and widths are this many)
  std::uint64_t stripe_bytes = 128;  // address granule of the port hash
  std::size_t table_entries = 1024;
  std::size_t replication_slots = 256;
  std::int64_t alu_bytes_per_cycle = 256;
  std::int64_t port_bytes_per_cycle = 1024;
  std::int64_t flit_bytes = 16;  // what a header-only packet takes of a port's width
  Ps cycle_ps = 640;
  Ps alu_pipeline_ps = 0;
  bool arrival_order = false;  // reduction.order=arrival
  bool data = true;            // collective.data: fold the values (else timing only)
  // distributed: the chip's port count the totals above are divided over,
  // and the link ports each slice serves.
  int chip_ports = 64;
  int slice_ports = 1;
  // Checks the organisation's sizes (ConfigError naming key, value and
  // what is allowed).
  static EngineParams from(const Config& cfg, int first_port);
};

// Engine ports of a switch with `link_ports` link ports: reduction.ports
// (central, sliced) or one per reduction.slice_ports link ports (distributed).
int engine_port_count(const Config& cfg, int link_ports);

class EngineHost {
 public:
  // Packet `id`, made or passed on by the engine, enters the crossbar at
  // engine port `port`'s input at t: replicated to its group (multicast) or
  // routed toward its destination.
  virtual void engine_send(PacketId id, int port, bool multicast, Ps t) = 0;
  // The entry of `key` was freed: heads waiting with that key need a new one.
  virtual void engine_entry_closed(std::uint64_t key) = 0;
  // An entry or a replication slot freed at t (allocation may be waiting).
  virtual void engine_resource_freed(Ps t) = 0;

 protected:
  ~EngineHost() = default;
};

class ReductionEngine {
 public:
  // Window statistics (every organisation reports these, summed over its parts).
  struct Stats {
    std::uint64_t completed = 0;      // reductions finished
    std::uint64_t contributions = 0;  // contributions folded
    double occupancy_integral = 0;    // entries x ps
    int max_occupancy = 0;
    int max_slots = 0;       // replication slots held at once
    double wait_sum_ns = 0;  // first to last contribution, per completed entry
    double wait_max_ns = 0;
    Ps alu_busy = 0;  // ps
  };
  // What a head must get before it may be granted an engine port: a table
  // entry (the first contribution or ld_reduce of an address), a
  // replication slot (a multicast write passing through), or nothing.
  enum Need { kNeedTable = 0, kNeedSlot = 1, kNeedNone = 2 };

  ReductionEngine() = default;
  virtual ~ReductionEngine() = default;
  ReductionEngine(const ReductionEngine&) = delete;
  ReductionEngine& operator=(const ReductionEngine&) = delete;
  ReductionEngine(ReductionEngine&&) = delete;
  ReductionEngine& operator=(ReductionEngine&&) = delete;

  // The table key of a packet: (group, address), whatever the organisation.
  static std::uint64_t key(const Packet& p) { return ReductionTable::key(p.group, p.addr); }
  // Whether a head's need depends on the table (it changes as entries open
  // and close): a multicast write needs a slot and a read response finds the
  // entry of its ld_reduce, in every organisation.
  static bool need_follows_table(PacketKind k) {
    return k != PacketKind::kMcStore && k != PacketKind::kReadResp;
  }

  // reduction.organisation's value for this engine (stats, messages).
  virtual const char* organisation() const = 0;

  // --- Queries (per head, per allocation edge; no state changes) ---
  // The engine port (crossbar index) packet p, arrived on link port
  // `in_port`, goes to (asked once per packet on arrival). Every
  // contribution of an address must reach the part that holds its entry.
  virtual int port_for(const Packet& p, int in_port) const = 0;
  // What a head of `kind` and table key `key` waiting for engine port
  // `port` needs now. It changes only through accept() (an entry opens:
  // the switch calls its table_changed) and engine_entry_closed().
  virtual Need need(PacketKind kind, std::uint64_t key, int port) const = 0;
  Need need(const Packet& p, int port) const { return need(p.kind, key(p), port); }
  // Free resources of kind n (kNeedTable, kNeedSlot) that a head asking for
  // engine port `port` can draw on.
  virtual std::size_t free(Need n, int port) const = 0;
  // Pools of resource n (constant): asks whose ports share a pool compete
  // for one free count (central: one pool for all ports).
  virtual int pools(Need n) const = 0;
  // The pool of resource n that engine port `port` draws on, 0 .. pools(n)-1.
  virtual int pool(Need n, int port) const = 0;
  // Whether engine port `port` can take packet p now (its need is met).
  virtual bool can_take(const Packet& p, int port) const = 0;
  // Bytes of an engine port's width a packet uses (a header-only packet: one flit).
  virtual std::int64_t bytes_of(const Packet& p) const = 0;
  // Width of engine port `port`, each way, in bytes per switch cycle.
  virtual std::int64_t port_bytes_per_cycle(int port) const = 0;
  // Time of `bytes` through engine port `port`, at least one cycle.
  virtual Ps port_ps(int port, std::int64_t bytes) const = 0;
  // The engine's own pipeline after a packet has crossed port `port` (ps).
  virtual Ps pipeline_ps(int port) const = 0;

  // --- Events ---
  // Packet p is granted engine port `port` at edge e, needing n (asked
  // before the grant, and free): reserves its entry or slot; returns when
  // the port can take the next packet. The switch schedules fold() for it.
  virtual Ps accept(Packet& p, int port, Ps e, Need n) = 0;
  // Packet `id` has been through the port and the pipelines: fold it into
  // its entry (sending the result through EngineHost when complete), or
  // pass on a multicast write or a read request.
  virtual void fold(PacketId id, Ps t) = 0;
  // A multicast write that held a slot (`original`, engine_slot set) has
  // had all its copies leave at t: its slot frees.
  virtual void release_slot(const Packet& original, Ps t) = 0;

  // --- Set-up, tracing, statistics ---
  virtual void set_groups(const std::vector<std::vector<int>>& groups, std::size_t endpoints) = 0;
  virtual void close_window(Window w) = 0;
  // Waveforms under <base>.engine (docs/waveforms.md).
  virtual void trace(WaveTrace& w, const std::string& base) = 0;
  // Reports every fold to `sink` (--wave-rtl).
  virtual void trace_folds(FoldSink& sink, const std::string& base) = 0;
  virtual const Stats& stats() const = 0;
  virtual const AluBackend& alu() const = 0;
  virtual int entries_in_use() const = 0;
  virtual std::size_t slots_held() const = 0;
  virtual std::uint64_t inflight() const = 0;  // granted, not yet folded
  // Packets made (results, read requests) and consumed (contributions), whole run.
  virtual std::uint64_t results_made() const = 0;
  virtual std::uint64_t contributions_consumed() const = 0;
};

// The engine `params` describe, of the organisation they name. A new
// organisation is a class implementing ReductionEngine, a value of
// EngineOrganisation with its name in the config schema, and a case here.
std::unique_ptr<ReductionEngine> make_reduction_engine(const EngineParams& params, PacketPool& pool,
                                                       PayloadPool* payloads,
                                                       std::unique_ptr<AluBackend> alu,
                                                       EngineHost& host, Window window);

}  // namespace fabricsim
