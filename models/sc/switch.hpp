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
#include "models/sc/timed_module.hpp"

namespace fabricsim {

class Switch : public TimedModule, private EngineHost {
 public:
  // `routes[d]`: output ports toward endpoint d (see models/core/topology.hpp).
  Switch(const sc_core::sc_module_name& name, Scheduler& scheduler, const Config& cfg,
         PacketPool& pool, Window window, int ports, std::vector<std::vector<int>> routes,
         PayloadPool* payloads = nullptr, std::unique_ptr<AluBackend> alu = nullptr);
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
  std::uint64_t copies_made() const { return copies_made_; }
  // Reduction engine (models/sc/reduction_engine.hpp), when the workload
  // reduces in the switches: crossbar ports of its own (indices ports() on).
  // Contributions are allocated to them like to an output; results leave
  // through their crossbar inputs.
  bool has_engine() const { return engine_port_ >= 0; }
  bool is_engine_port(int x) const { return engine_port_ >= 0 && x >= engine_port_; }
  using EngineStats = ReductionEngine::Stats;
  const EngineStats& engine_stats() const { return engine_->stats(); }
  int engine_entries_in_use() const { return engine_ ? engine_->entries_in_use() : 0; }
  std::uint64_t originals_retired() const { return originals_retired_; }

  void connect_input(int port, Link* in);    // upstream -> this input port
  void connect_output(int port, Link* out);  // this output port -> downstream

  int ports() const { return ports_; }
  // Packets inside the switch (input buffers and output buffers).
  std::uint64_t packets_in_inputs() const {
    return pending_total_ + mc_originals_ + (engine_ ? engine_->inflight() : 0);
  }
  // Packets the engine created (results) and consumed (contributions), whole run.
  std::uint64_t results_made() const { return engine_ ? engine_->results_made() : 0; }
  std::uint64_t contributions_consumed() const {
    return engine_ ? engine_->contributions_consumed() : 0;
  }
  std::uint64_t packets_in_outputs() const { return out_queued_total_; }
  // Multicast copies waiting as references to their originals (counted in
  // packets_in_inputs(), not yet packets of the pool).
  std::uint64_t copies_unmade() const;
  // Flits of packets at input `port` that have not been granted yet.
  std::int64_t queued_input_flits(int port) const;
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
    align_ = std::move(first_and_total);
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
  std::uint64_t allocation_cycles() const { return alloc_cycles_; }  // in the window
  std::uint64_t grants() const { return grants_; }                   // in the window

 protected:
  void handle(const Item& item) override;
  void after_items() override;

 private:
  enum : std::uint16_t { kItemTick = 16, kItemOutTry = 17, kItemEngine = 18 };
  static std::uint64_t entry_key(const Packet& p) { return ReductionEngine::key(p); }
  // What a head needs of the engine before it may be granted an engine port.
  using Need = ReductionEngine::Need;
  static constexpr Need kNeedTable = ReductionEngine::kNeedTable;
  static constexpr Need kNeedSlot = ReductionEngine::kNeedSlot;
  static constexpr Need kNeedNone = ReductionEngine::kNeedNone;
  Need engine_need(PacketKind kind, std::uint64_t key) const { return engine_->need(kind, key); }
  Need engine_need(const Packet& p) const { return engine_->need(p); }
  std::size_t engine_free(Need n) const { return engine_->free(n); }
  // Shares pool n's free resources among the heads that asked this edge.
  void share_engine(Need n, Ps e, Ps& wake);
  struct Share;
  // EngineHost: what the engine asks of the switch.
  void engine_send(PacketId id, int port, bool multicast, Ps t) override;
  void engine_entry_closed(std::uint64_t key) override { table_changed(key, false); }
  void engine_resource_freed(Ps t) override;
  // Queues a unicast packet made by the engine at engine port `port`'s input.
  void inject_from_engine(PacketId id, int port, Ps t);
  int engine_port_for(std::uint64_t addr) const { return engine_->port_for(addr); }

  // A multicast copy waiting at an input as a reference to its original: a
  // reduction engine's multicast (72 read requests or stored results per
  // entry on nvl72) would otherwise hold a whole packet per member until its
  // output takes it, most of the packets alive in a large run. The packet
  // is made when the copy reaches the head of its queue and is granted,
  // with the serial number it would have had: same timing, same traces.
  struct LazyCopy {
    PacketId original;
    std::int32_t member;  // destination endpoint
    std::uint64_t serial;
    int flits;  // the original's (allocation tests it without the packet)
  };
  struct Departure {
    Ps t;
    std::uint16_t vc;
    std::uint16_t flits;
  };
  struct Input {
    Link* link = nullptr;
    std::uint32_t pending = 0;        // packets waiting for allocation
    // fifo: [vc]; voq: [vc * ports + out]: the packets queued and (voq) the
    // multicast copies not made yet, queued behind them (a packet joining
    // the queue first makes them). Side by side in one array: allocation
    // tests both for every VOQ it looks at.
    struct Queue {
      PacketQueue q;
      Ring<LazyCopy> lazy;
    };
    std::vector<Queue> queues;
    std::vector<PortSet> nonempty;  // voq: [vc] outputs with a packet queued
    std::vector<int> occupancy;     // [vc] flits held, departures applied
    Ring<Departure> departures;     // future frees, in time order
    int total_occ = 0;
    int mc_held_flits = 0;  // flits of multicast originals not yet fully sent
    int max_occ = 0;
    double occ_integral = 0;  // flit*ps inside the window
    int vc_ptr = 0;
    // An engine port's input: data it started sending at edge `edge_at`.
    Ps edge_at = kNever;
    std::int64_t edge_bytes = 0;
    PacketId edge_parent = kNoPacket;  // multicast original whose data it sent then
    int out_ptr = 0;                   // engine input: where wide grants look first
    int w_occupancy = -1;              // waveform signal id
    // voq: [vc * engine ports + k] kind and table key of the head of the VOQ
    // to engine port k: what engine_class_ and heads_by_key_ were filed by.
    std::vector<std::pair<PacketKind, std::uint64_t>> engine_heads;
  };
  struct Sending {
    Ps tail_gone;  // the tail has left: the output-buffer space is free again
    int vc;
    int flits;
  };
  struct Output {
    Transmitter tx;            // its link and the VC served next
    std::uint32_t queued = 0;  // packets in `queues`: an idle output is told without them
    Ps try_at = kNever;
    Ring<Sending> sending;            // on the link, space not yet released
    std::vector<PacketQueue> queues;  // [vc] waiting for the link
  };

  void set_engine_head(Input& in, int vc, int out, PacketId head);
  // Input i's head for engine port `out` on `vc` left (its queue emptied or
  // a new head replaced it): it leaves engine_class_ and heads_by_key_.
  void engine_head_gone(int i, int vc, int out);
  // A table entry for `key` was made (or freed): table_keys_ follows, and
  // heads waiting with that key need nothing now (or a new entry).
  void table_changed(std::uint64_t key, bool made);
  static bool need_follows_table(PacketKind k) { return ReductionEngine::need_follows_table(k); }
  // The output toward `dst` for `addr` (the address spreads over parallel
  // routes), avoiding links that are down; throws when none is left.
  int route(int dst, std::uint64_t addr) const;
  void arrive(PacketId id, int port);
  // Queues a routed packet (out_port set) for allocation at input `port`.
  void enqueue_input(int port, PacketId id);
  void replicate(PacketId id, int port, Ps t);
  void retire_original(int port, PacketId id, Ps t_out);
  void sample_window_start();
  void apply_departures(Input& in, Ps t);
  void leave_input(Input& in, int vc, int flits, Ps t_in, Ps t_out);
  void enqueue_output(int out, PacketId id, Ps ready);
  void transmit(int out, PacketId id, Ps start);
  void release_space(int o, Ps t);
  void update_fits(int o, int vc);
  bool queues_empty(const Output& out) const;
  void schedule_out_try(int out, Ps t);
  void out_try(int out);
  void request_tick(Ps t);
  void allocate(Ps edge);
  // The requests of one allocation into requests_ (free inputs, in free_in_,
  // toward outputs free this edge, in out_free_); lowers `wake` to the
  // earliest time a blocked one could change (`first_release`: the first busy
  // output to free). VOQs are visited by output (col_), FIFOs by input.
  void request_voq(Ps first_release, Ps& wake);
  void request_fifo(Ps& wake);
  // Notes that input i's head on VC v asks engine port o for resource n
  // (share_engine() serves the notes).
  void ask(Need n, int i, int v, int o) {
    Share& sh = share_[n];
    if (!sh.by_bits) {
      sh.wanted.push_back({i, v, o});
      return;
    }
    sh.ask_bits[static_cast<size_t>(i)] |= std::uint64_t{1}
                                           << (v * engine_ports_ + o - engine_port_);
    sh.askers.set(i);
  }
  // A packet of `flits` joined input i's VOQ (vc, o) / the VOQ emptied:
  // its `nonempty` set, col_, requested_ and the column's heads follow.
  void voq_filled(int i, int vc, int o, int flits);
  void voq_emptied(int i, int vc, int o);
  // The fewest flits of any head waiting for o on vc, from the heads (0: none).
  int least_head_flits(int vc, int o);
  // The same, kept in col_min_flits_ (computed when not known).
  int col_min_flits(int vc, int o);
  // A head of `flits` joined / left the column (vc, o): the known minimum
  // follows, or is forgotten when the smallest may have left.
  void head_joined(int vc, int o, int flits) {
    int& m = col_min_flits_[static_cast<size_t>(vc * xports_ + o)];
    if (m != 0 && flits >= m) return;
    if (m != 0) m = flits;
    stalled_[static_cast<size_t>(vc)].reset(o);  // it may fit where the others did not
  }
  void head_left(int vc, int o, int flits) {
    int& m = col_min_flits_[static_cast<size_t>(vc * xports_ + o)];
    if (flits == m) m = 0;
  }
  // Grants `out` to `in` (on VC `only_vc` if >= 0). Returns the multicast
  // original whose other copies may fan out in the same traversal, or kNoPacket.
  PacketId grant(int in, int out, Ps edge, int only_vc = -1);
  // After the allocator: an input granted a multicast copy also sends it to
  // every other free output its sibling copies wait for (one crossbar
  // traversal fans out), and those outputs are taken for this edge.
  void fan_out(int in, PacketId parent, Ps edge, Ps busy_until);
  Ps engine_port_ps(std::int64_t bytes) const { return engine_->port_ps(bytes); }
  std::int64_t engine_bytes(const Packet& p) const { return engine_->bytes_of(p); }
  // After the allocator: an engine port's input is port_bytes_per_cycle wide,
  // many links' worth, so in one edge it may start packets toward several
  // free outputs (each then streams at link rate) while their data fits.
  void wide_grants(int i, Ps e, Ps& wake);
  PacketQueue& voq(Input& in, int vc, int out) {
    return in.queues[static_cast<size_t>(vc * xports_ + out)].q;
  }
  Ring<LazyCopy>& lazy(Input& in, int vc, int out) {
    return in.queues[static_cast<size_t>(vc * xports_ + out)].lazy;
  }
  bool voq_empty(Input& in, int vc, int out) {
    return voq(in, vc, out).empty() && lazy(in, vc, out).empty();
  }
  // The head of a VOQ, its copy made if it is a lazy one.
  PacketId voq_head(Input& in, int vc, int out);
  // Flits and multicast original of a VOQ's head, without making it.
  int head_flits(Input& in, int vc, int out);
  PacketId head_parent(Input& in, int vc, int out);
  // Makes the first copy not made yet for (vc, out) and queues it.
  void make_lazy_copy(Input& in, int vc, int out);
  // Makes that copy and hands it over, not queued (a grant takes it now).
  PacketId take_lazy_copy(Input& in, int vc, int out);
  // Takes a VOQ's head off it: its first packet, else its first lazy copy, made.
  PacketId take_head(Input& in, int vc, int out);
  PacketId make_copy(PacketId original_id, int member, int out, std::uint64_t serial);
  bool head_fits(int o, int vc, PacketId id) const {
    if (is_engine_port(o)) return engine_->can_take(pool_.get(id));
    return space(o, vc) >= pool_.get(id).flits;
  }
  // The same for a link output and a head of `flits` (a VOQ head that may be a lazy copy).
  bool flits_fit(int o, int vc, int flits) const { return space(o, vc) >= flits; }
  // Free output-buffer flits of output o's VC.
  int& space(int o, int vc) { return out_space_[static_cast<size_t>(o * vcs_ + vc)]; }
  int space(int o, int vc) const { return out_space_[static_cast<size_t>(o * vcs_ + vc)]; }

  const int ports_;
  const int engine_port_;  // first engine port (== ports_) with a reduction engine, else -1
  const int engine_ports_;
  const int xports_;  // crossbar ports: link ports (+ the engine's)
  const std::vector<std::vector<int>> routes_;
  PayloadPool* payloads_;
  std::vector<std::vector<int>> groups_;
  const std::uint64_t stripe_bytes_;
  const int vcs_;
  const Queueing queueing_;
  const int in_capacity_per_vc_;
  const Ps flit_ps_;
  const Ps cycle_ps_;
  const Ps pipeline_ps_;
  const double speedup_;
  PacketPool& pool_;
  Window window_;

  std::vector<Input> inputs_;
  std::vector<Output> outputs_;
  // Read for every active input and busy output at each allocation: kept
  // dense, apart from the large Input and Output records (a cache line per
  // port otherwise, the largest source of cache misses on nvl72).
  std::vector<Ps> in_busy_;     // [input] crossbar input busy until
  std::vector<Ps> out_busy_;    // [output] crossbar output port busy until
  std::vector<Ps> out_gone_;    // [output] tail_gone of sending.front(), kNever if none
  std::vector<int> out_space_;  // [output * vcs + vc] free output-buffer flits
  // [output] an allocation is blocked on its buffer space (out_try wakes it)
  std::vector<std::uint8_t> space_waiter_;
  std::unique_ptr<Allocator> allocator_;
  RequestMatrix requests_;
  Matching match_;
  PortSet active_;    // inputs with pending packets
  PortSet out_free_;  // scratch: outputs whose crossbar port is free this edge
  PortSet scratch_;
  PortSet matched_out_;  // scratch: outputs matched this edge
  // Kept up to date as ports change, so an allocation costs what changed, not
  // the switch's width (at low load most outputs are idle and full of space):
  std::vector<PortSet> fits_any_;  // [vc] link outputs whose buffer takes a largest packet
  PortSet busy_out_;               // outputs whose crossbar port may be busy (out_busy_ set)
  PortSet sending_out_;            // outputs with packets leaving (space to give back)
  // voq: the column view of the inputs' `nonempty` sets. col_[vc * xports_ + o]:
  // inputs with a packet queued for o on vc; requested_[vc]: outputs some
  // input has a packet for. On a loaded wide switch most waiting inputs wait
  // for a few busy outputs: allocation then visits those outputs, not every
  // waiting input and VC (nvl72 NVLS: 60 free inputs, 2 grants an edge).
  std::vector<PortSet> col_;
  std::vector<PortSet> requested_;
  // voq: [vc * xports_ + o] the fewest flits of any head in col_'s column,
  // 0 when not known. An output with less free space than every head
  // waiting for it is passed over without visiting each head (nvl72 NVLS
  // with full engine tables: about 50 heads an allocation, none fitting).
  // Kept as heads join and leave; recomputed only after the smallest left.
  std::vector<int> col_min_flits_;
  // voq: [vc] outputs found with less free space than every head waiting
  // for them, their space waiter set: allocation passes them over (nothing
  // it could do there) until space frees at the output or a smaller head
  // joins the column. Most of the outputs nvl72 NVLS visits, at 16 MiB.
  std::vector<PortSet> stalled_;
  PortSet free_in_;                 // scratch: waiting inputs free at this edge
  PortSet free_requested_;          // scratch: free outputs some input has a packet for
  PortSet busy_requested_;          // scratch: busy ones
  std::vector<int> granted_order_;  // scratch: matched inputs in port order
  int max_flits_;
  int output_buffer_flits_;
  std::vector<Ps> xfer_ps_;  // crossbar transfer time by packet length

  std::uint64_t pending_total_ = 0;
  std::uint64_t out_queued_total_ = 0;
  Ps tick_at_ = kNever;
  Ps last_alloc_ = kNever;
  bool alloc_due_ = false;
  bool window_sampled_ = false;
  std::uint64_t alloc_cycles_ = 0;
  std::uint64_t grants_ = 0;
  std::uint64_t copies_made_ = 0;
  std::uint64_t originals_retired_ = 0;
  std::uint64_t mc_originals_ = 0;  // multicast originals held in input buffers
  std::unique_ptr<ReductionEngine> engine_;  // null without an engine
  // Allocation toward the engine ports.
  // voq: [Need][vc * engine ports + k] the inputs whose head for engine port
  // k on vc needs nothing, a table entry or a replication slot, kept as heads
  // and the table change: allocation asks the engine ports with word
  // operations instead of looking at each waiting head (on nvl72 with full
  // tables, 72 inputs x 4 engine ports x 2 VCs of them at every edge).
  std::vector<PortSet> engine_class_[3];
  // Heads whose need depends on the table, by key: (vc * engine ports + k) * xports + input.
  std::unordered_map<std::uint64_t, std::vector<int>> heads_by_key_;
  PortSet engine_scratch_;
  bool engine_waiter_ = false;  // an allocation is blocked on a full table
  WaveTrace* wave_ = nullptr;
  bool any_down_ = false;  // some output link is down (faults)
  std::vector<std::pair<int, int>>
      align_;                  // [endpoint] (first link here, links in all); empty: hash
  const bool mc_via_engine_;  // switch.multicast=engine and an engine
  struct Share {              // per pool (kNeedTable, kNeedSlot)
    struct Ask {
      int in, vc, port;  // input, its VC, the engine port it asks for
      bool operator<(const Ask& o) const {
        return in != o.in ? in < o.in : vc != o.vc ? vc < o.vc : port < o.port;
      }
    };
    std::vector<Ask> wanted;  // scratch: heads asking (sorted before serving)
    // When VCs x engine ports <= 64, asks are bits instead: bit v * engine
    // ports + k of ask_bits[i] for input i's head on VC v asking for engine
    // port k, served in (input, VC, port) order without a list or a sort.
    bool by_bits = false;
    std::vector<std::uint64_t> ask_bits;
    PortSet askers;
    std::vector<int> given;       // [input] engine port given this edge, or -1
    std::vector<int> given_list;  // inputs with given[] set
    int rr = 0;                   // first input served next time
  };
  Share share_[2];
};

}  // namespace fabricsim
