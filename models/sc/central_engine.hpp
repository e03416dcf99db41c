// The central reduction engine (reduction.organisation=central,
// docs/models/reduction_engine.md): `ports` crossbar ports of its own (after
// the switch's link ports), each `port_bytes_per_cycle` wide with an ALU of
// `alu_bytes_per_cycle`, one table of entries (one per address being
// reduced, models/core/reduction_table.hpp) and one pool of replication
// slots for multicast writes passing through, shared by every port. An
// address always maps to the same engine port (address hash), so an entry's
// contributions all meet there. The port a query names is ignored: every
// port draws on the one table and the one slot pool.
//
// Timing, per packet granted to an engine port at switch edge e:
//   - the port takes port_bytes_per_cycle per cycle and the ALU reduces
//     alu_bytes_per_cycle (contributions only): the port is busy until
//     e + max(ALU time, port time), at least one cycle;
//   - the packet is folded (or, for a multicast write, replicated) after the
//     crossbar transfer, plus the switch's pipeline_cycles, plus
//     reduction.pipeline_cycles (the switch schedules it);
//   - a result leaves through the engine port's crossbar input at once.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/sc/reduction_engine.hpp"

namespace fabricsim {

class CentralEngine final : public ReductionEngine {
 public:
  // Everything the engine is made from, resolved once from the configuration.
  using Params = EngineParams;

  CentralEngine(const Params& params, PacketPool& pool, PayloadPool* payloads,
                std::unique_ptr<AluBackend> alu, EngineHost& host, Window window);

  const char* organisation() const override { return "central"; }

  // A multiplicative hash of the stripe index over the engine ports (a plain
  // modulo aliases with the GPUs' link interleave).
  int port_for(std::uint64_t addr) const override {
    const std::uint64_t h = ((addr / p_.stripe_bytes) * 0x9E3779B97F4A7C15ull) >> 32;
    return p_.first_port + static_cast<int>(h % static_cast<std::uint64_t>(p_.ports));
  }
  using ReductionEngine::need;
  Need need(PacketKind kind, std::uint64_t key, int /*port*/) const override {
    if (kind == PacketKind::kMcStore) return kNeedSlot;
    // A read response always finds the entry of the ld_reduce that read it.
    if (kind == PacketKind::kReadResp) return kNeedNone;
    return table_.contains(key) ? kNeedNone : kNeedTable;
  }
  std::size_t free(Need n, int /*port*/) const override {
    if (n == kNeedTable) return table_.free();
    return p_.replication_slots - std::min(p_.replication_slots, slots_held_);
  }
  int pools(Need /*n*/) const override { return 1; }
  int pool(Need /*n*/, int /*port*/) const override { return 0; }
  bool can_take(const Packet& p, int port) const override {
    const Need n = need(p, port);
    return n == kNeedNone || free(n, port) > 0;
  }
  std::int64_t bytes_of(const Packet& p) const override {
    return p.payload != kNoPayload ? static_cast<std::int64_t>(p.bytes) : p_.flit_bytes;
  }
  std::int64_t port_bytes_per_cycle(int /*port*/) const override {
    return p_.port_bytes_per_cycle;
  }
  Ps port_ps(int /*port*/, std::int64_t bytes) const override {
    return std::max<Ps>(1, (bytes + p_.port_bytes_per_cycle - 1) / p_.port_bytes_per_cycle) *
           p_.cycle_ps;
  }
  Ps pipeline_ps(int /*port*/) const override { return p_.alu_pipeline_ps; }
  // ALU time of a packet (contributions only; 0 for others).
  Ps alu_ps(const Packet& p) const;

  Ps accept(Packet& p, int port, Ps e, Need n) override;
  // A contribution: folded in member order (early arrivals wait in the
  // entry), the result sent when every member is in; an ld_reduce: a
  // multicast read; a multicast write: replicated at its engine port.
  void fold(PacketId id, Ps t) override;
  void release_slot(const Packet& original, Ps t) override;

  void set_groups(const std::vector<std::vector<int>>& groups, std::size_t endpoints) override {
    table_.set_groups(groups, endpoints);
  }
  void close_window(Window w) override { window_ = w; }
  // Waveforms: <base>.engine.table (entries in use), .engine.slots, and per
  // engine port .engine.port<k>.valid / .tag (a packet entering: its port
  // time; the low 16 bits of its table key).
  void trace(WaveTrace& w, const std::string& base) override;
  // One ALU per engine port: <base>.engine.alu<k>.
  void trace_folds(FoldSink& sink, const std::string& base) override;

  const Stats& stats() const override { return stats_; }
  const AluBackend& alu() const override { return *alu_; }
  int entries_in_use() const override { return static_cast<int>(table_.size()); }
  std::size_t slots_held() const override { return slots_held_; }
  std::uint64_t inflight() const override { return inflight_; }
  std::uint64_t results_made() const override { return results_made_; }
  std::uint64_t contributions_consumed() const override { return contributions_consumed_; }

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
