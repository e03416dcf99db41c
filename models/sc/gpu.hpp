// A GPU taking part in collectives: it runs the calls of a CollectiveSweep
// with real data, sending posted writes over its links (striped by address)
// and checking every output element against the golden result.
//
// Ring algorithm (NCCL's ring, pipelined per packet): the message is cut into
// n chunks and each chunk into packet-sized slices. Reduce-scatter step s: GPU
// g sends chunk (g-s-1) mod n to GPU g+1; the receiver adds its own input to
// each arriving slice and forwards it at step s+1, so after n-1 steps GPU g
// holds chunk g fully reduced. All-gather step s: GPU g sends chunk (g-s) mod
// n; receivers keep and forward. A slice moves on as soon as it arrives (no
// wait for the whole chunk); a GPU's local add is instantaneous (the model's
// assumption: GPU arithmetic is not the bottleneck). Step-0 slices are made
// only when a link can take them, so memory follows what is in flight.
// The other algorithms (NVLS, push, direct; broadcast and reduce chains)
// are described in docs/models/collectives.md; gpu_collectives.cpp holds
// what each sends and does on receipt, this file the transport.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "models/core/collective.hpp"
#include "models/core/config.hpp"
#include "models/core/packet.hpp"
#include "models/core/ring.hpp"
#include "models/sc/link.hpp"
#include "models/sc/timed_module.hpp"

namespace fabricsim {

class Gpu : public TimedModule {
 public:
  Gpu(const sc_core::sc_module_name& name, Scheduler& scheduler, int id, const Config& cfg,
      PacketPool& pool, PayloadPool& payloads, CollectiveSweep& sweep, int links);

  // `peer_switch`: the switch the port's links go to (faults move traffic
  // to another link of the same switch first).
  void connect(int port, Link* tx, Link* rx, int peer_switch);
  // Scale-out: the ports into our domain's chips and our NIC ports, the GPUs
  // per domain, and each port's flit size. Without this call every port is
  // a chip port and every GPU is in our domain.
  void set_port_groups(std::vector<int> up, std::vector<int> nic, int per_domain,
                       std::vector<std::int64_t> flit_bytes);
  // Faults. The port's link took its last packet: what is queued on it and
  // not started moves to the GPU's other links (docs/reliability.md).
  void link_down(int port);
  void set_issue_factor(double f) { issue_factor_ = f; }
  // Some link in the fabric went down: from now on check, per packet,
  // that the switch a link leads to can still reach the destination.
  // `reach(sw, dst)`: switch sw has a working link toward endpoint dst.
  void network_changed(std::function<bool(int, int)> reach) {
    any_down_ = true;
    reach_ = std::move(reach);
  }
  // Starts the sweep's current call at time t (>= now).
  void begin_call(Ps t);
  void finish(Ps end);
  void check_end_of_run(Ps end) const;

  int id() const { return id_; }
  int links() const { return static_cast<int>(ports_.size()); }
  std::uint64_t injected() const { return injected_; }
  std::uint64_t delivered() const { return delivered_; }
  // Packets made and queued at a port, not sent yet (a call cut short).
  std::uint64_t packets_waiting() const;
  std::uint64_t delivered_flits() const { return delivered_flits_; }

 protected:
  void handle(const Item& item) override;

 private:
  enum : std::uint16_t { kItemTry = 16, kItemBegin = 17, kItemStart = 18 };
  static constexpr int kMcStep = 0xFFFF;  // packet step of multicast data
  // A read the switch asked of us (for an ld_reduce), not yet answered: the
  // request keeps its place in our receive buffer until its response is made.
  struct ReadReq {
    std::uint64_t first;
    std::uint32_t count;
    std::uint16_t group;
    HeldCredits held;
  };
  struct Port {
    Link* tx = nullptr;
    Link* rx = nullptr;
    std::vector<Ring<PacketId>> ready;  // [vc] packets made on arrival (forwards, stores)
    Ring<ReadReq> reads;                // read requests to answer on this link (VC 1)
    Ring<std::uint64_t> first_step;     // slices (first element) to send at the first step
    int vc_ptr = 0;
    Ps try_at = kNever;
    Ps not_before = 0;  // a throttled GPU's next send (straggler.issue_factor)
    int dest_k = 0;     // direct all-reduce: peers the front slice has gone to
    std::int64_t flit_bytes = 16;  // its link's flit (a NIC's differs from an NVLink's)
  };
  // Direct all-reduce: one output slice being folded in member order.
  struct Fold {
    int next = 0;                   // members folded so far
    PayloadId acc = kNoPayload;     // the running result
    std::vector<PayloadId> early;   // [member] arrived before its turn
  };

  void start_call();   // the call begins: counters, expected output
  void start_work();   // our kernel runs (maybe later, straggler.*): process and send
  void try_link(int l);
  void schedule_try(int l, Ps t);
  int pick_link(std::uint64_t addr, int dst = -1) const;
  // The ports toward dst: our domain's chips (dst -1: multicast, the
  // switches' engines), or our NICs.
  const std::vector<int>& toward(int dst) const {
    return dst < domain_end_ && (dst < 0 || dst >= domain_begin_) ? up_ports_ : nic_ports_;
  }
  // Flits of a packet with `bytes` of data on `port`: a header flit and the data.
  int flits_on(const Port& port, std::uint64_t bytes) const {
    const auto fb = static_cast<std::uint64_t>(port.flit_bytes);
    return 1 + static_cast<int>((bytes + fb - 1) / fb);
  }
  bool usable(int l, int dst) const {
    return !ports_[static_cast<size_t>(l)].tx->down() &&
           (dst < 0 || !reach_ || reach_(port_switch_[static_cast<size_t>(l)], dst));
  }
  // pick_link when the address's link is down: another link to the same
  // switch, else (unicast only) any working link; throws when none is left.
  int detour(int l, std::uint64_t addr, int dst) const;
  PacketId make_packet(int step, std::uint64_t first, std::uint64_t count);
  // The next first-step packet of link `port` (made now), or kNoPacket.
  PacketId make_first_step(Port& port);
  int first_step_dst(std::uint64_t first) const;
  // A first-step entry is an element index; hierarchical entries made from
  // our reduced chunk carry a tag in the top bits (phase 2: to the next
  // domain; phase 3 with one domain: to our domain's next GPU).
  static constexpr std::uint64_t kFromChunkInter = 1ull << 63;
  static constexpr std::uint64_t kFromChunkGather = 1ull << 62;
  static constexpr std::uint64_t kEntryElement = kFromChunkGather - 1;
  std::uint64_t first_step_count(std::uint64_t entry) const;  // elements it sends
  int first_step_link(std::uint64_t entry) const;             // the port it takes
  PacketId make_read_response(Port& port);  // answers port.reads' oldest request
  void queue(PacketId id);  // on the link its address picks, on its VC
  bool has_work(const Port& port) const;
  void receive(const Packet& p);
  void add_own_input(std::uint64_t first, std::uint64_t count, std::uint8_t* data);
  // The data work, skipped when timing only (collective.data=false).
  void input(std::uint64_t first, std::uint64_t count, std::uint8_t* out) const {
    if (data_)
      fill_input(sweep_.seed(), sweep_.current_index(), id_, first, count, cfg_.collective.dtype, out);
  }
  void reduce(std::uint8_t* acc, const std::uint8_t* in, std::size_t bytes) const {
    if (data_) alu_accumulate(cfg_.collective.redop, cfg_.collective.dtype, acc, in, bytes);
  }
  void copy(const std::uint8_t* from, std::size_t bytes, std::uint8_t* to) const {
    if (data_) std::copy(from, from + bytes, to);
  }
  void forward_or_release(const Packet& in, bool forward);
  void direct_fold(const Packet& in);
  // Hierarchical all-reduce (gpu_hierarchical.cpp).
  void hier_start();
  void hier_receive(const Packet& in);
  void begin_inter();  // our chunk is reduced inside the domain
  PacketId make_from_chunk(Port& port, std::uint64_t entry);
  void hier_final(std::uint64_t first, std::uint64_t count, PayloadId payload, int next_step);
  void send_on(int step, int dst, std::uint64_t first, std::uint64_t count, PayloadId payload);
  // Our domain-reduced data at `first` (our input itself with one GPU per domain).
  const std::uint8_t* chunk_data(std::uint64_t first, std::uint64_t count);
  int rank() const { return id_ - domain_begin_; }  // in our domain
  // The call's group: GPU of rank r (mod the group's size).
  int member(int r) const { return (*members_)[static_cast<size_t>(r % gn_)]; }
  int per_domain() const { return domain_end_ - domain_begin_; }
  int domain_next() const { return domain_begin_ + (rank() + 1) % per_domain(); }
  int inter_next() const { return (id_ + per_domain()) % n_; }
  int domain() const { return id_ / per_domain(); }
  int tree_gpu(int d) const { return d * per_domain() + rank(); }  // our rank in domain d
  // The tree (collective.inter=double_tree: 0 or 1) element `first` of our chunk takes.
  int tree_of(std::uint64_t first) const {
    return sweep_.hier().tree_of(rank(), first - sweep_.plan().chunk_begin(rank()));
  }
  void tree_up(const Packet& in);
  void output_done(std::uint64_t elements);

  int id_;
  int n_;
  const Config& cfg_;
  PacketPool& pool_;
  PayloadPool& payloads_;
  CollectiveSweep& sweep_;
  std::size_t es_;
  std::uint64_t stripe_bytes_;
  std::vector<Port> ports_;
  std::vector<int> port_switch_;  // [port] the switch it reaches
  std::vector<int> up_ports_, nic_ports_;
  int domain_begin_ = 0, domain_end_ = 0;  // the GPUs of our scale-up domain
  bool any_down_ = false;
  std::function<bool(int, int)> reach_;
  std::vector<std::uint8_t> own_;  // scratch: this GPU's input for one slice

  // Current call: our group (members in ring order), our rank in it.
  const std::vector<int>* members_ = nullptr;
  int gn_ = 1;
  int rank_ = 0;
  int group_ = 0;
  int first_step_ = 0;   // 0 (reduce-scatter first) or n-1 (all-gather only)
  int last_step_ = 0;    // the last step of the call
  std::uint64_t expected_ = 0;  // output elements this GPU must receive
  std::uint64_t rs_left_ = 0;   // ring all-reduce: our chunk's elements not yet reduced
  std::uint64_t received_ = 0;
  bool active_ = false;
  CollectiveOp op_ = CollectiveOp::kAllReduce;
  CollectiveAlgo algo_ = CollectiveAlgo::kRing;
  int root_ = 0;
  std::unordered_map<std::uint64_t, Fold> folds_;  // direct all-reduce, by first element
  bool nvls_ = false;
  bool push_ = false;
  bool pull_ = false;          // NVLS all-reduce: ld_reduce, then multimem.st
  int vcs_ = 1;
  std::uint64_t reads_in_flight_ = 0;
  // NVLS all-reduce: multimem stores made from results and not yet sent. A
  // GPU sends its one-flit reads before its stores (or stores would starve
  // the reads), so without a bound stores would pile up for the rest of a
  // call whenever its links are the limit; like an SM's full store buffer,
  // `outstanding` waiting stores stop new reads until one leaves.
  std::uint64_t stores_waiting_ = 0;
  // A new ld_reduce may be issued: a read slot is free and the stores are
  // below their bound.
  bool may_read() const {
    const auto window = static_cast<std::uint64_t>(cfg_.collective.outstanding);
    return reads_in_flight_ < window && stores_waiting_ < window;
  }
  // Hierarchical all-reduce: our chunk reduced inside the domain (phase 1's
  // result, phase 2's own input), its elements still to come, and phase-2
  // data that arrived before it was complete.
  bool data_ = true;  // collective.data: payloads computed and checked
  bool hier_ = false;
  bool sharp_ = false;  // phase 2 in the leaves' engines (scaleout.sharp)
  bool tree_ = false;   // phase 2 by a binary tree over the domains (collective.inter)
  std::vector<std::uint8_t> chunk_;
  std::uint64_t chunk_left_ = 0;
  std::uint64_t final_left_ = 0;  // our chunk's elements not yet fully reduced
  bool inter_ready_ = false;
  std::vector<Packet> inter_stash_;
  bool started_ = false;          // our kernel runs in the current call
  std::vector<Packet> stash_;     // data that arrived before it did
  double issue_factor_ = 1.0;

  std::uint64_t injected_ = 0;
  std::uint64_t delivered_ = 0;
  std::uint64_t delivered_flits_ = 0;
};

}  // namespace fabricsim
