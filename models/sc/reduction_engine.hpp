// A switch's reduction engine (docs/models/reduction_engine.md): `ports`
// crossbar ports of its own (after the switch's link ports), each
// `port_bytes_per_cycle` wide, an ALU of `alu_bytes_per_cycle`, a table of
// entries (one per address being reduced, models/core/reduction_table.hpp)
// and replication slots for multicast writes passing through. An address
// always maps to the same engine port (address hash), so an entry's
// contributions all meet there.
//
// Timing, per packet granted to an engine port at switch edge e:
//   - the port takes port_bytes_per_cycle per cycle and the ALU reduces
//     alu_bytes_per_cycle (contributions only): the port is busy until
//     e + max(ALU time, port time), at least one cycle;
//   - the packet is folded (or, for a multicast write, replicated) after the
//     crossbar transfer, plus the switch's pipeline_cycles, plus
//     reduction.pipeline_cycles (the switch schedules it);
//   - a result leaves through the engine port's crossbar input at once.
// The switch asks the engine what a head needs (an entry, a slot, nothing)
// before granting it; the engine asks the switch (EngineHost) to send what
// it makes and tells it when an entry or slot frees.
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
  // Everything the engine is made from, resolved once from the configuration.
  struct Params {
    int first_port = 0;  // crossbar index of engine port 0 (the switch's link ports come first)
    int ports = 1;
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
    static Params from(const Config& cfg, int first_port);
  };
  // Window statistics.
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

  ReductionEngine(const Params& params, PacketPool& pool, PayloadPool* payloads,
                  std::unique_ptr<AluBackend> alu, EngineHost& host, Window window);

  static std::uint64_t key(const Packet& p) { return ReductionTable::key(p.group, p.addr); }
  // The engine port (crossbar index) an address maps to.
  int port_for(std::uint64_t addr) const {
    const std::uint64_t h = ((addr / p_.stripe_bytes) * 0x9E3779B97F4A7C15ull) >> 32;
    return p_.first_port + static_cast<int>(h % static_cast<std::uint64_t>(p_.ports));
  }
  Need need(PacketKind kind, std::uint64_t key) const {
    if (kind == PacketKind::kMcStore) return kNeedSlot;
    // A read response always finds the entry of the ld_reduce that read it.
    if (kind == PacketKind::kReadResp) return kNeedNone;
    return table_.contains(key) ? kNeedNone : kNeedTable;
  }
  Need need(const Packet& p) const { return need(p.kind, key(p)); }
  // Whether a head's need depends on the table (it changes as entries open and close).
  static bool need_follows_table(PacketKind k) {
    return k != PacketKind::kMcStore && k != PacketKind::kReadResp;
  }
  std::size_t free(Need n) const {
    if (n == kNeedTable) return table_.free();
    return p_.replication_slots - std::min(p_.replication_slots, slots_held_);
  }
  bool can_take(const Packet& p) const {
    const Need n = need(p);
    return n == kNeedNone || free(n) > 0;
  }

  // Time of `bytes` through an engine port, at least one cycle.
  Ps port_ps(std::int64_t bytes) const;
  // ALU time of a packet (contributions only; 0 for others).
  Ps alu_ps(const Packet& p) const;
  // Bytes of a port's width a packet uses (a header-only packet: one flit).
  std::int64_t bytes_of(const Packet& p) const {
    return p.payload != kNoPayload ? static_cast<std::int64_t>(p.bytes) : p_.flit_bytes;
  }
  std::int64_t port_bytes_per_cycle() const { return p_.port_bytes_per_cycle; }
  Ps pipeline_ps() const { return p_.alu_pipeline_ps; }

  // Packet p is granted engine port `port` at edge e, needing n (asked
  // before the grant): reserves its entry or slot; returns when the port
  // can take the next packet. The switch schedules fold() for it.
  Ps accept(Packet& p, int port, Ps e, Need n);
  // Packet `id` has been through the port, the ALU and the pipeline: fold it
  // into its entry (sending the result when complete), or replicate it.
  void fold(PacketId id, Ps t);
  // A multicast write's copies have all left: its slot frees.
  void release_slot(Ps t);

  void set_groups(const std::vector<std::vector<int>>& groups, std::size_t endpoints) {
    table_.set_groups(groups, endpoints);
  }
  void close_window(Window w) { window_ = w; }
  // Waveforms: <base>.engine.table (entries in use), .engine.slots, and per
  // engine port .engine.port<k>.valid / .tag (a packet entering: its port
  // time; the low 16 bits of its table key).
  void trace(WaveTrace& w, const std::string& base);
  // Reports every fold to `sink` (--wave-rtl): one ALU per engine port.
  void trace_folds(FoldSink& sink, const std::string& base);

  const Stats& stats() const { return stats_; }
  const AluBackend& alu() const { return *alu_; }
  int entries_in_use() const { return static_cast<int>(table_.size()); }
  std::size_t slots_held() const { return slots_held_; }
  std::uint64_t inflight() const { return inflight_; }  // granted, not yet folded
  // Packets made (results, read requests) and consumed (contributions), whole run.
  std::uint64_t results_made() const { return results_made_; }
  std::uint64_t contributions_consumed() const { return contributions_consumed_; }

 private:
  void track(Ps t);  // entries in use over time
  void pull(const Packet& c, ReductionTable::Entry& e, Ps t);
  void complete(const Packet& c, ReductionTable::Entry& e, Ps t);
  // acc = acc op in through the backend (and the fold sink, if any).
  void fold_data(const ReductionTable::Entry& e, const Packet& c, std::uint8_t* acc,
                 const std::uint8_t* in, Ps t);

  const Params p_;
  PacketPool& pool_;
  PayloadPool* payloads_;
  std::unique_ptr<AluBackend> alu_;  // the arithmetic (model or RTL)
  EngineHost& host_;
  Window window_;
  ReductionTable table_;
  std::size_t slots_held_ = 0;  // multicast writes held
  std::uint64_t inflight_ = 0;
  std::uint64_t results_made_ = 0;
  std::uint64_t contributions_consumed_ = 0;
  Stats stats_;
  Ps table_changed_at_ = 0;
  WaveTrace* wave_ = nullptr;
  int w_table_ = -1, w_slots_ = -1;
  std::vector<int> w_valid_, w_tag_;  // [engine port]
  FoldSink* fold_sink_ = nullptr;
  std::vector<int> fold_alu_;              // [engine port] -> sink id, -1
  std::vector<std::uint8_t> fold_before_;  // the accumulator before a traced fold
};

}  // namespace fabricsim
