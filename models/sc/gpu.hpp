// A GPU taking part in collectives: it runs the calls of a CollectiveSweep
// with real data, sending posted writes over its links (striped by address)
// and checking every output element against the golden result.
//
// The GPU is the transport and the bookkeeping: its ports (a queue of
// packets made on arrival per VC, the read responses it owes the switches,
// the first-step entries to make packets from when the link can take them),
// link selection and detours around faults, credits and statistics, and its
// part in the current call (group, rank, the output it expects). What it
// sends and what an arrival does belong to the call's algorithm, a
// CollectiveAlgorithm (collective_algorithm.hpp; one class per algorithm in
// models/sc/algorithms/, described in docs/models/collectives.md). The call
// barrier (the last GPU to finish starts the next call everywhere) is the
// sweep's (CollectiveSweep::gpu_finished).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/core/collective.hpp"
#include "models/core/config.hpp"
#include "models/core/packet.hpp"
#include "models/core/ring.hpp"
#include "models/sc/link.hpp"
#include "models/sc/link_port.hpp"
#include "models/sc/timed_module.hpp"

namespace fabricsim {

class CollectiveAlgorithm;

// A GPU's part in the current call.
struct GpuCall {
  CollectiveOp op = CollectiveOp::kAllReduce;
  const std::vector<int>* members = nullptr;  // our group, in ring order
  int size = 1;                               // its GPUs
  int rank = 0;                               // our place in it
  int group = 0;                              // its index in the call's partition
  int root = 0;                               // broadcast and reduce (collective.root)
  // The GPU of rank r (mod the group's size).
  int member(int r) const { return (*members)[static_cast<size_t>(r % size)]; }
};

class Gpu : public TimedModule {
 public:
  Gpu(const sc_core::sc_module_name& name, Scheduler& scheduler, int id, const Config& cfg,
      PacketPool& pool, PayloadPool& payloads, CollectiveSweep& sweep, int links);
  ~Gpu() override;
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  // `peer_switch`: the switch the port's links go to (faults move traffic
  // to another link of the same switch first).
  void connect(int port, Link* tx, Link* rx, int peer_switch);
  // Scale-out: the ports into our domain's chips and our NIC ports, the GPUs
  // per domain, and each port's flit size. Without this call every port is
  // a chip port and every GPU is in our domain.
  void set_port_groups(std::vector<int> up, std::vector<int> nic, int per_domain,
                       std::vector<std::int64_t> flit_bytes);
  // Faults. Port l's link took its last packet: what is queued on it and
  // not started moves to the GPU's other links (docs/reliability.md).
  void link_down(int l);
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
  friend class CollectiveAlgorithm;  // its helpers are the algorithms' access
  // kItemAlgo: the algorithm's own timer (CollectiveAlgorithm::timer).
  enum : std::uint16_t { kItemTry = 16, kItemBegin = 17, kItemStart = 18, kItemAlgo = 19 };
  // A first-step entry: the element its packet starts at, in the low bits;
  // an algorithm may tag the top two bits.
  static constexpr std::uint64_t kEntryElement = (1ull << 62) - 1;
  // A read the switch asked of us (for an ld_reduce), not yet answered: the
  // request keeps its place in our receive buffer until its response is made.
  struct ReadReq {
    std::uint64_t first = 0;
    std::uint32_t count = 0;
    std::uint16_t group = 0;
    HeldCredits held;
  };
  struct Port {
    Transmitter tx;  // its link and the VC served next
    Receiver rx;
    std::vector<Ring<PacketId>> ready;  // [vc] packets made on arrival (forwards, stores)
    Ring<ReadReq> reads;                // read requests to answer on this link (VC 1)
    Ring<std::uint64_t> first_step;     // entries to make the first step's packets from
    Ps try_at = kNever;
    Ps not_before = 0;  // a throttled GPU's next send (straggler.issue_factor)
    // Packets made from the front entry so far (an entry may make several:
    // the direct all-reduce sends each slice to every peer in turn).
    int dest_k = 0;
    std::int64_t flit_bytes = 16;  // its link's flit (a NIC's differs from an NVLink's)
  };

  void start_call();  // the call begins: our part, expected output, the algorithm
  void start_work();  // our kernel runs (maybe later, straggler.*): process and send
  // The algorithm of collective.algorithm value `a` (made at construction).
  CollectiveAlgorithm* algorithm(CollectiveAlgo a) const;
  std::uint64_t expected_output() const;  // output elements of this call
  void try_link(int l);
  void schedule_try(int l, Ps t);
  int pick_link(std::uint64_t addr, int dst = -1) const;
  // The ports toward dst: our domain's chips (dst -1: multicast, the
  // switches' engines), or our NICs.
  const std::vector<int>& toward(int dst) const {
    return dst < domain_end_ && (dst < 0 || dst >= domain_begin_) ? up_ports_ : nic_ports_;
  }
  // Flits of a packet with `bytes` of data on `port`: a header flit and the data.
  static int flits_on(const Port& port, std::uint64_t bytes) {
    const auto fb = static_cast<std::uint64_t>(port.flit_bytes);
    return 1 + static_cast<int>((bytes + fb - 1) / fb);
  }
  bool usable(int l, int dst) const {
    return !ports_[static_cast<size_t>(l)].tx.link->down() &&
           (dst < 0 || !reach_ || reach_(port_switch_[static_cast<size_t>(l)], dst));
  }
  // pick_link when the address's link is down: another link to the same
  // switch, else (unicast only) any working link; throws when none is left.
  int detour(int l, std::uint64_t addr, int dst) const;
  PacketId make_packet(int step, std::uint64_t first, std::uint64_t count);
  int first_step_link(std::uint64_t entry) const;  // the port a first-step entry takes
  PacketId make_read_response(Port& port);         // answers port.reads' oldest request
  void queue(PacketId id);                         // on the link its address picks, on its VC
  void queue_deferred(PacketId id);                // the same; the link looks at once, as an event
  void wake_links();                               // every link with work looks at once
  int place(PacketId id);                          // queues it; returns its link
  bool has_work(const Port& port) const;
  // A first-step packet may be made now (requests_: the algorithm's window).
  bool may_issue() const;
  void receive(const Packet& in);
  void add_own_input(std::uint64_t first, std::uint64_t count, std::uint8_t* data);
  // The data work, skipped when timing only (collective.data=false).
  void input(std::uint64_t first, std::uint64_t count, std::uint8_t* out) const {
    if (data_)
      fill_input(sweep_.seed(), sweep_.current_index(), id_, first, count, cfg_.collective.dtype,
                 out);
  }
  void reduce(std::uint8_t* acc, const std::uint8_t* in, std::size_t bytes) const {
    if (data_) alu_accumulate(cfg_.collective.redop, cfg_.collective.dtype, acc, in, bytes);
  }
  void copy(const std::uint8_t* from, std::size_t bytes, std::uint8_t* to) const {
    if (data_) std::copy(from, from + bytes, to);
  }
  // `elements` of our output are in; `lane`: who sent them (-1: unknown,
  // this GPU's own lane), for the fast-forward's progress.
  void output_done(std::uint64_t elements, int lane = -1);

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
  int vcs_ = 1;
  bool data_ = true;  // collective.data: payloads computed and checked

  // [collective.algorithm value] one instance for each algorithm the sweep uses.
  std::vector<std::unique_ptr<CollectiveAlgorithm>> algorithms_;
  std::unique_ptr<CollectiveAlgorithm> symmetric_;  // NCCL's symmetric kernel, when a call runs it
  CollectiveAlgorithm* algo_ = nullptr;             // the current call's
  CollectiveAlgo algo_id_ = CollectiveAlgo::kRing;  // its collective.algorithm value
  bool requests_ = false;                           // algo_->requests() for this call
  bool own_progress_ = false;                       // algo_->reports_progress() for this call
  GpuCall call_;
  std::uint64_t expected_ = 0;  // output elements this GPU must receive
  std::uint64_t received_ = 0;
  bool active_ = false;
  bool started_ = false;       // our kernel runs in the current call
  std::vector<Packet> stash_;  // data that arrived before it did
  double issue_factor_ = 1.0;

  std::uint64_t injected_ = 0;
  std::uint64_t delivered_ = 0;
  std::uint64_t delivered_flits_ = 0;
};

}  // namespace fabricsim
