// An N-port input-queued switch with virtual cut-through, a separable
// allocator, a crossbar with speedup, and output buffers feeding the links.
//
// How a packet moves (timing; see docs/models/switch.md):
//  1. Its head flit is complete at the input at t_head (link model). It is
//     queued in the input buffer of its VC: one FIFO per VC (queueing=fifo,
//     only heads may request: head-of-line blocking) or one queue per VC and
//     output (queueing=voq).
//  2. Allocation runs on switch clock edges, only while some input holds a
//     packet. A packet may request at the first edge e >= t_head if its input
//     and output crossbar ports are free and the output buffer of its VC has
//     room for the whole packet (cut-through). The allocator matches inputs to
//     outputs; a matched pair is held for the whole packet (packet-mode).
//  3. The crossbar moves the packet at speedup x link rate: both ports are
//     busy until b = max(e + L*flit/speedup, tail arrival). The input buffer
//     frees the packet's flits at b; its credits leave upstream then.
//  4. The head reaches the output buffer at e + pipeline_cycles * cycle. The
//     output link sends it when free and when the downstream VC has credits
//     for all L flits (round-robin among VCs); the output buffer space is
//     released when the tail has left. When the output is idle and credits
//     are there at grant time, the send is booked then for the ready time
//     (same timing, one event less).
// queueing=output is the ideal output-queued switch: each packet goes to its
// output queue (unbounded) at the first edge after its head arrives, plus the
// pipeline; its input flits are freed as its tail arrives.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/core/allocator.hpp"
#include "models/core/alu_backend.hpp"
#include "models/core/config.hpp"
#include "models/core/fold_trace.hpp"
#include "models/core/packet.hpp"
#include "models/core/port_set.hpp"
#include "models/core/ring.hpp"
#include "models/core/wave_trace.hpp"
#include "models/sc/link.hpp"
#include "models/sc/link_port.hpp"
#include "models/sc/reduction_engine.hpp"
#include "models/sc/switch_alloc.hpp"
#include "models/sc/switch_engine_access.hpp"
#include "models/sc/switch_input.hpp"
#include "models/sc/switch_multicast.hpp"
#include "models/sc/switch_output.hpp"
#include "models/sc/switch_params.hpp"
#include "models/sc/timed_module.hpp"

namespace fabricsim {

class Switch : public TimedModule, private EngineHost {
 public:
  // `params`: its own parameters (SwitchParams::from); `engine`: its
  // reduction engine's (EngineParams::from), null exactly when params say it
  // has none. `routes[d]`: output ports toward endpoint d (see
  // models/core/topology.hpp).
  Switch(const sc_core::sc_module_name& name, Scheduler& scheduler, const SwitchParams& params,
         const EngineParams* engine, PacketPool& pool, Window window,
         std::vector<std::vector<int>> routes, PayloadPool* payloads = nullptr,
         std::unique_ptr<AluBackend> alu = nullptr);
  // The engine's arithmetic (switches with an engine only).
  const AluBackend& alu() const;

  // Multicast group table: group id -> member endpoints. A kMcStore packet
  // is replicated into one copy per member (sharing the data), each queued
  // and allocated like a unicast packet; whoever holds the original (its
  // input buffer, or the engine) keeps it until the last copy has crossed.
  // With switch.multicast=engine and an engine, a write from a link first
  // crosses to an engine port (like a contribution, using a table entry)
  // and is replicated there; otherwise at its input.
  void set_multicast_groups(std::vector<std::vector<int>> groups);
  std::uint64_t copies_made() const { return mc_.copies_made; }
  // Reduction engine (models/sc/reduction_engine.hpp), when the workload
  // reduces in the switches: crossbar ports of its own (indices ports() on).
  // Contributions are allocated to them like to an output; results leave
  // through their crossbar inputs.
  bool has_engine() const { return params_.has_engine(); }
  bool is_engine_port(int x) const { return params_.is_engine_port(x); }
  using EngineStats = ReductionEngine::Stats;
  const EngineStats& engine_stats() const { return engine_->stats(); }
  // reduction.organisation of its engine ("" without one).
  std::string engine_organisation() const { return engine_ ? engine_->organisation() : ""; }
  int engine_entries_in_use() const { return engine_ ? engine_->entries_in_use() : 0; }
  std::uint64_t originals_retired() const { return mc_.originals_retired; }

  void connect_input(int port, Link* in);    // upstream -> this input port
  void connect_output(int port, Link* out);  // this output port -> downstream

  int ports() const { return params_.ports; }
  // Packets inside the switch (input buffers and output buffers).
  std::uint64_t packets_in_inputs() const {
    return inputs_.pending_total + mc_.originals + (engine_ ? engine_->inflight() : 0);
  }
  // Packets the engine created (results) and consumed (contributions), whole run.
  std::uint64_t results_made() const { return engine_ ? engine_->results_made() : 0; }
  std::uint64_t contributions_consumed() const {
    return engine_ ? engine_->contributions_consumed() : 0;
  }
  std::uint64_t packets_in_outputs() const { return outputs_.queued_total; }
  // Multicast copies waiting as references to their originals (counted in
  // packets_in_inputs(), not yet packets of the pool).
  std::uint64_t copies_unmade() const { return inputs_.copies_unmade(); }
  // Flits of packets at input `port` that have not been granted yet.
  std::int64_t queued_input_flits(int port) const {
    return inputs_[static_cast<size_t>(port)].queued_flits(pool_);
  }
  // Flits of `vc` held in input `port`'s buffer at time t (>= last event).
  int input_occupancy(int port, int vc, Ps t);

  // A run that stopped early: statistics cover `w` (nothing happened after it).
  void close_window(Window w) {
    window_ = w;
    if (engine_) engine_->close_window(w);
  }
  // Waveforms: <name>.in<p>.occupancy (flits held, all VCs), and with an
  // engine <name>.engine.table (entries in use), .engine.slots, and per
  // engine port .engine.port<k>.valid / .tag (a packet entering: its port
  // and ALU time; the low 16 bits of its table key).
  void trace(WaveTrace& w);

  // A stuck fabric (the watchdog fired): one line per queue holding
  // packets, and the wait-for edges between links it implies (the link into
  // a buffer waits for the links its packets must leave by).
  struct Stuck {
    std::vector<std::string> lines;
    std::vector<std::pair<const Link*, const Link*>> waits;
  };
  void diagnose(Stuck& out) const;
  // switch.egress=aligned: for each endpoint, the global index of its first
  // link into this switch and its number of links (see route()).
  void set_egress_alignment(std::vector<std::pair<int, int>> first_and_total) {
    mc_.align = std::move(first_and_total);
  }
  // Fault: output `o`'s link is down (already marked): route around it.
  void output_down(int o);
  // A working link toward endpoint dst remains.
  bool can_reach(int dst) const;
  // Reports every engine fold to `sink` (--wave-rtl): one ALU per engine port.
  void trace_folds(FoldSink& sink);
  // Adds the share of packets still queued at `end` to the occupancy mean.
  void finish(Ps end);
  // Throws InvariantError if output-buffer space is not conserved, or if a
  // packet waits with nothing scheduled that could ever move it.
  void check_end_of_run(Ps end);

  // Window statistics.
  double mean_input_occupancy(int port) const;  // flits, time-averaged
  int max_input_occupancy(int port) const { return inputs_[static_cast<size_t>(port)].max_occ; }
  std::uint64_t allocation_cycles() const { return alloc_.cycles; }  // in the window
  std::uint64_t grants() const { return alloc_.grants; }             // in the window

 protected:
  void handle(const Item& item) override;
  void after_items() override;

 private:
  enum : std::uint16_t { kItemTick = 16, kItemOutTry = 17, kItemEngine = 18 };
  using Need = ReductionEngine::Need;
  static constexpr Need kNeedTable = ReductionEngine::kNeedTable;
  static constexpr Need kNeedSlot = ReductionEngine::kNeedSlot;
  static constexpr Need kNeedNone = ReductionEngine::kNeedNone;
  static std::uint64_t entry_key(const Packet& p) { return ReductionEngine::key(p); }

  // Input side (switch_input.cpp).
  void arrive(PacketId id, int port);
  // Checks the buffer has room for p (credits honoured), then holds it.
  inline void take_into_buffer(SwitchInput& in, const Packet& p, Ps t);
  // Queues a routed packet (out_port set) for allocation at input `port`.
  void enqueue_input(int port, PacketId id);
  // A packet of `flits` joined input i's VOQ (vc, o) / the VOQ emptied:
  // its `nonempty` set, the column view and the column's heads follow.
  void voq_filled(int i, int vc, int o, int flits);
  void voq_emptied(int i, int vc, int o);
  // The fewest flits of any head waiting for o on vc, from the heads (0: none).
  int least_head_flits(int vc, int o);
  // The same, kept in SwitchAlloc::col_min_flits (computed when not known).
  int col_min_flits(int vc, int o);
  void leave_input(SwitchInput& in, int vc, int flits, Ps t_in, Ps t_out);
  void sample_window_start();

  // Routing (switch.cpp): the output toward `dst` for `addr` (the address
  // spreads over parallel routes), avoiding links that are down; throws
  // when none is left.
  int route(int dst, std::uint64_t addr) const;
  int route_around(int dst, std::uint64_t addr) const;
  // Packets of input i waiting for output o (now down) take another route.
  void reroute_input(int i, int o);

  // The steps of the per-packet and per-edge functions below are declared
  // inline and defined in the file of their only caller: the hot path costs
  // no more calls than it would written in one piece.

  // Allocation (switch_alloc.cpp): on switch clock edges while some input
  // holds a packet.
  void request_tick(Ps t) {
    Ps e = edge_at_or_after(t, params_.cycle_ps);
    if (alloc_.last_alloc != kNever && e <= alloc_.last_alloc)
      e = alloc_.last_alloc + params_.cycle_ps;
    if (alloc_.tick_at != kNever && alloc_.tick_at <= e) return;
    alloc_.tick_at = e;
    schedule(e, kItemTick);
  }
  void allocate(Ps edge);
  // With several VCs: each VC's allocator in turn (SwitchAlloc::allocators).
  void allocate_per_vc();
  // Outputs whose crossbar port is free at edge e into out_free; returns
  // the first time a busy one frees.
  inline Ps free_outputs(Ps e);
  // The request matrix of edge e; lowers `wake` to the earliest time a
  // blocked request could change.
  inline void build_requests(Ps e, Ps first_release, Ps& wake);
  // Grants every match in port order; returns the first time a matched
  // output frees.
  inline Ps grant_matches(Ps e, Ps& wake);
  // Schedules the next allocation after edge e.
  inline void schedule_next(Ps e, Ps first_free, Ps wake);
  // The requests of one allocation into requests (free inputs, in free_in,
  // toward outputs free this edge, in out_free); lowers `wake` to the
  // earliest time a blocked one could change (`first_release`: the first busy
  // output to free). VOQs are visited by output (the column view), FIFOs by input.
  void request_voq(Ps first_release, Ps& wake);
  inline void request_voq_column(int v, int o);
  void request_fifo(Ps& wake);
  // An allocation is blocked on output o's buffer space: wake when the next tail leaves.
  inline void wait_for_space(int o);

  // Grants (switch_grant.cpp): `out` to `in` (on VC `only_vc` if >= 0).
  // Returns the multicast original whose other copies may fan out in the
  // same traversal, or kNoPacket.
  PacketId grant(int in, int out, Ps edge, int only_vc = -1);
  // The VC of input i the grant serves (round-robin among eligible ones).
  inline int granted_vc(SwitchInput& in, int i, int o, int only_vc);
  // Takes the granted packet off its queue; the VOQ's view follows.
  inline PacketId take_granted(SwitchInput& in, int i, int vc, int o);
  // When the crossbar input is free again after moving p from edge e.
  inline Ps input_busy_until(SwitchInput& in, int i, const Packet& p, Ps e);
  inline void grant_to_engine(SwitchInput& in, int i, int o, int vc, PacketId id, Ps e, Ps b);
  inline PacketId grant_to_output(SwitchInput& in, int i, int o, int vc, PacketId id, Ps e, Ps b);
  // A packet left input i's allocation queue.
  inline void granted_one(SwitchInput& in, int i, Ps e);
  // After the allocator: an input granted a multicast copy also sends it to
  // every other free output its sibling copies wait for (one crossbar
  // traversal fans out), and those outputs are taken for this edge.
  void fan_out(int in, PacketId parent, Ps edge, Ps busy_until);

  // Output side (switch_output.cpp).
  void enqueue_output(int out, PacketId id, Ps ready);
  void transmit(int out, PacketId id, Ps start);
  void release_space(int o, Ps t);
  void update_fits(int o, int vc);
  void schedule_out_try(int out, Ps t);
  void out_try(int out);

  // Multicast (switch_multicast.cpp).
  void replicate(PacketId id, int port, Ps t);
  void retire_original(int port, PacketId id, Ps t_out);
  PacketId make_copy(PacketId original_id, int member, int out, std::uint64_t serial);
  // The head of a VOQ, its copy made if it is a lazy one.
  PacketId voq_head(SwitchInput& in, int vc, int out);
  // The multicast original of a VOQ's head, without making it.
  PacketId head_parent(SwitchInput& in, int vc, int out);
  // Makes the first copy not made yet for (vc, out) and queues it.
  void make_lazy_copy(SwitchInput& in, int vc, int out);
  // Makes that copy and hands it over, not queued (a grant takes it now).
  PacketId take_lazy_copy(SwitchInput& in, int vc, int out);
  // Takes a VOQ's head off it: its first packet, else its first lazy copy, made.
  PacketId take_head(SwitchInput& in, int vc, int out);

  // The engine (switch_engine.cpp).
  // EngineHost: what the engine asks of the switch.
  void engine_send(PacketId id, int port, bool multicast, Ps t) override;
  void engine_entry_closed(std::uint64_t key) override { table_changed(key, false); }
  void engine_resource_freed(Ps t) override;
  // Queues a unicast packet made by the engine at engine port `port`'s input.
  void inject_from_engine(PacketId id, int port, Ps t);
  void set_engine_head(SwitchInput& in, int vc, int out, PacketId head);
  // Input i's head for engine port `out` on `vc` left (its queue emptied or
  // a new head replaced it): it leaves need_class and heads_by_key.
  void engine_head_gone(int i, int vc, int out);
  // A table entry for `key` was made (or freed): the heads waiting with
  // that key need nothing now (or a new entry).
  void table_changed(std::uint64_t key, bool made);
  // Requests of the free inputs toward engine port o on vc (voq).
  void request_engine_port(int v, int o);
  // Shares pool n's free resources among the heads that asked this edge.
  void share_engine(Need n, Ps e, Ps& wake);
  void share_by_bits(EngineShare& sh, std::size_t& free, bool& left_out);
  void share_by_list(Need n, EngineShare& sh, bool& left_out, bool& promised);
  void give(EngineShare& sh, std::size_t& free, int i, int v, int o);
  // After the allocator: an engine port's input is port_bytes_per_cycle wide,
  // many links' worth, so in one edge it may start packets toward several
  // free outputs (each then streams at link rate) while their data fits.
  void wide_grants(int i, Ps e, Ps& wake);
  bool wide_grant_fits(SwitchInput& in, int i, int v, int o);
  // Output o can take head `id` on vc: its buffer has room for the whole
  // packet (cut-through), or for an engine port, the engine can take it.
  bool head_fits(int o, int vc, PacketId id) const {
    if (params_.is_engine_port(o)) return engine_->can_take(pool_.get(id), o);
    return outputs_.space(o, vc) >= pool_.get(id).flits;
  }
  // The same for a link output and a head of `flits` (a VOQ head that may be a lazy copy).
  bool flits_fit(int o, int vc, int flits) const { return outputs_.space(o, vc) >= flits; }

  // End-of-run checks (switch_check.cpp).
  void check_output_counts() const;
  void check_output_space() const;
  void check_column_view();
  void check_input_credits();
  void check_liveness(Ps end) const;

  const SwitchParams params_;
  const std::vector<std::vector<int>> routes_;
  PayloadPool* payloads_;
  PacketPool& pool_;
  Window window_;
  SwitchInputs inputs_;
  SwitchOutputs outputs_;
  SwitchAlloc alloc_;
  SwitchMulticast mc_;
  std::unique_ptr<ReductionEngine> engine_;  // null without an engine
  EngineAccess eng_;
  WaveTrace* wave_ = nullptr;
  bool window_sampled_ = false;
  bool any_down_ = false;  // some output link is down (faults)
};

}  // namespace fabricsim
