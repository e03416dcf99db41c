// What every organisation of the reduction engine built so far shares
// (docs/models/reduction_engine.md): engine ports that are crossbar ports
// after the switch's link ports, each with its own ALU, and tables of
// entries (one per address being reduced, models/core/reduction_table.hpp)
// with pools of replication slots for multicast writes passing through.
// Either one table and one slot pool serve every port (central), or each
// engine port is a slice with its own (sliced, distributed): a port's
// queries answer from its slice, and the switch shares each slice's free
// ones among the heads asking for that port. The organisations differ in
// how big the parts are (Shape) and in which port a packet goes to
// (port_for): an entry's contributions must all reach the port whose slice
// holds it.
//
// Timing, per packet granted to an engine port at switch edge e:
//   - the port takes port_bytes_per_cycle per cycle and its ALU reduces
//     alu_bytes_per_cycle (contributions only): the port is busy until
//     e + max(ALU time, port time), at least one cycle;
//   - the packet is folded (or, for a multicast write, replicated) after the
//     crossbar transfer, plus the switch's pipeline_cycles, plus
//     reduction.pipeline_cycles (the switch schedules it);
//   - what it makes (a result, a read request, the copies of a write)
//     leaves at once through the crossbar input of the port it came in by.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/sc/reduction_engine.hpp"

namespace fabricsim {

class PortedEngine : public ReductionEngine {
 public:
  // The sizes of the parts, resolved by the organisation from EngineParams.
  struct Shape {
    bool slice_per_port = false;  // a table and slot pool per engine port (else one for all)
    std::size_t entries = 1;      // per table
    std::size_t slots = 1;        // per slot pool
    std::int64_t alu_bytes_per_cycle = 1;   // per engine port
    std::int64_t port_bytes_per_cycle = 1;  // per engine port, each way
  };

  PortedEngine(const EngineParams& params, const Shape& shape, PacketPool& pool,
               PayloadPool* payloads, std::unique_ptr<AluBackend> alu, EngineHost& host,
               Window window);

  using ReductionEngine::need;
  Need need(PacketKind kind, std::uint64_t key, int port) const override {
    if (kind == PacketKind::kMcStore) return kNeedSlot;
    // A read response always finds the entry of the ld_reduce that read it.
    if (kind == PacketKind::kReadResp) return kNeedNone;
    return slice(port).table.contains(key) ? kNeedNone : kNeedTable;
  }
  std::size_t free(Need n, int port) const override {
    const Slice& s = slice(port);
    if (n == kNeedTable) return s.table.free();
    return shape_.slots - std::min(shape_.slots, s.slots_held);
  }
  int pools(Need /*n*/) const override { return static_cast<int>(slices_.size()); }
  int pool(Need /*n*/, int port) const override { return slice_index(port); }
  bool can_take(const Packet& p, int port) const override {
    const Need n = need(p, port);
    return n == kNeedNone || free(n, port) > 0;
  }
  std::int64_t bytes_of(const Packet& p) const override {
    return p.payload != kNoPayload ? static_cast<std::int64_t>(p.bytes) : p_.flit_bytes;
  }
  std::int64_t port_bytes_per_cycle(int /*port*/) const override {
    return shape_.port_bytes_per_cycle;
  }
  Ps port_ps(int /*port*/, std::int64_t bytes) const override {
    return std::max<Ps>(1,
                        (bytes + shape_.port_bytes_per_cycle - 1) / shape_.port_bytes_per_cycle) *
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
    for (Slice& s : slices_) s.table.set_groups(groups, endpoints);
  }
  void close_window(Window w) override { window_ = w; }
  // Waveforms: <base>.engine.table (entries in use, all slices), .engine.slots,
  // and per engine port .engine.port<k>.valid / .tag (a packet entering: its
  // port time; the low 16 bits of its table key).
  void trace(WaveTrace& w, const std::string& base) override;
  // One ALU per engine port: <base>.engine.alu<k>.
  void trace_folds(FoldSink& sink, const std::string& base) override;

  const Stats& stats() const override { return stats_; }
  const AluBackend& alu() const override { return *alu_; }
  int entries_in_use() const override { return static_cast<int>(entries_); }
  std::size_t slots_held() const override { return slots_held_; }
  std::uint64_t inflight() const override { return inflight_; }
  std::uint64_t results_made() const override { return results_made_; }
  std::uint64_t contributions_consumed() const override { return contributions_consumed_; }

  int slices() const { return static_cast<int>(slices_.size()); }
  // Entries and slots held by engine port `port`'s slice.
  std::size_t slice_entries(int port) const { return slice(port).table.size(); }
  std::size_t slice_slots(int port) const { return slice(port).slots_held; }
  const Shape& shape() const { return shape_; }

 protected:
  // A multiplicative hash of the stripe index over the engine ports (a plain
  // modulo aliases with the GPUs' link interleave).
  int hashed_port(std::uint64_t addr) const {
    const std::uint64_t h = ((addr / p_.stripe_bytes) * 0x9E3779B97F4A7C15ull) >> 32;
    return p_.first_port + static_cast<int>(h % static_cast<std::uint64_t>(p_.ports));
  }
  // An entry of `key` opened in (closed from) engine port `port`'s slice.
  virtual void entry_opened(std::uint64_t /*key*/, int /*port*/) {}
  virtual void entry_closed(std::uint64_t /*key*/) {}

  const EngineParams p_;

 private:
  struct Slice {
    Slice(std::size_t entries, bool arrival_order) : table(entries, arrival_order) {}
    ReductionTable table;
    std::size_t slots_held = 0;
  };
  int slice_index(int port) const { return shape_.slice_per_port ? port - p_.first_port : 0; }
  Slice& slice(int port) { return slices_[static_cast<std::size_t>(slice_index(port))]; }
  const Slice& slice(int port) const {
    return slices_[static_cast<std::size_t>(slice_index(port))];
  }
  void track(Ps t);  // entries in use over time
  void pull(const Packet& c, ReductionTable::Entry& e, Ps t);
  void complete(const Packet& c, ReductionTable::Entry& e, Ps t);
  // acc = acc op in through the backend (and the fold sink, if any).
  void fold_data(const ReductionTable::Entry& e, const Packet& c, std::uint8_t* acc,
                 const std::uint8_t* in, Ps t);

  const Shape shape_;
  PacketPool& pool_;
  PayloadPool* payloads_;
  std::unique_ptr<AluBackend> alu_;  // the arithmetic (model or RTL)
  EngineHost& host_;
  Window window_;
  std::vector<Slice> slices_;
  std::size_t entries_ = 0;     // entries in use, all slices
  std::size_t slots_held_ = 0;  // multicast writes held, all slices
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
