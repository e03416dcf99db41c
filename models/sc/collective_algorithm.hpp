// A collective algorithm as one GPU's strategy: what the GPU queues when its
// kernel starts, which packet each first-step entry makes, and what an
// arriving packet does. The Gpu owns the transport (ports, link queues,
// credits, faults, statistics), this GPU's part in the current call and the
// read responses it owes the switches; the collective sweep owns the calls
// and their barrier. An algorithm reaches the GPU only through the protected
// helpers below.
//
// One instance per GPU and algorithm (the Gpu makes one for every algorithm
// its sweep's calls use): it keeps that GPU's state of the algorithm between
// hooks. The hooks run on the GPU's per-packet paths, so an algorithm makes
// no heap allocation per packet and each hook is one virtual call.
//
// Adding an algorithm: a file in models/sc/algorithms/ with its class and a
// factory `make_NAME_algorithm`, declared below and entered in the
// registry table in collective_algorithm.cpp; the `collective.algorithm`
// value that names it is in the config schema.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/sc/gpu.hpp"

namespace fabricsim {

class CollectiveAlgorithm {
 public:
  explicit CollectiveAlgorithm(Gpu& gpu) : gpu_(gpu) {}
  virtual ~CollectiveAlgorithm() = default;
  CollectiveAlgorithm(const CollectiveAlgorithm&) = delete;
  CollectiveAlgorithm& operator=(const CollectiveAlgorithm&) = delete;

  // Its packets are reduced or multicast by the switches' engines (they
  // cannot detour to another switch), and its results come back as switch
  // multicasts, which include the sender.
  virtual bool through_switch() const { return false; }
  // The current call's first-step packets are one-flit requests limited by
  // a window (NVLS's multimem.ld_reduce): the GPU makes one only while
  // may_issue(), sends them before the packets on VC 0's ready queue, and
  // tells sent() about every packet that leaves.
  virtual bool requests() const { return false; }
  // Its output_done() comes once, at the call's end; progress() tells the
  // sweep as the output comes in.
  virtual bool reports_progress() const { return false; }
  virtual bool may_issue() const { return true; }
  // requests(): packet `p` left; true when that reopened the window.
  virtual bool sent(const Packet& /*p*/) { return false; }

  // The call begins on this GPU (its op, group and rank are set): reset the
  // per-call state.
  virtual void begin_call() {}
  // Our kernel starts (data that came early has been received): queue the
  // first-step entries (send_chunk, push_first_step).
  virtual void start_work() = 0;
  // Where first-step entry `entry` goes: a GPU, or -1 for the switches. It
  // picks the entry's port (a NIC for another domain's GPU).
  virtual int first_step_dst(std::uint64_t entry) const = 0;
  // Elements the entry's packet carries: up to a slice, within its chunk.
  virtual std::uint64_t first_step_count(std::uint64_t entry) const {
    const RingPlan& p = plan();
    const std::uint64_t first = entry & kEntryElement;
    return std::min(p.slice_elements, p.chunk_begin(p.chunk_of(first) + 1) - first);
  }
  // Bytes the entry's packet takes on the wire (its data, unless the
  // algorithm's writes carry more, as NCCL's LL lines carry flags).
  virtual std::uint64_t first_step_wire_bytes(std::uint64_t entry) const {
    return first_step_count(entry) * gpu_.es_;
  }
  // The address whose stripe picks the entry's link (Gpu::pick_link): its
  // data's, unless the algorithm's writes land elsewhere on the wire.
  virtual std::uint64_t first_step_addr(std::uint64_t entry) const {
    return (entry & kEntryElement) * gpu_.es_;
  }
  // The packet of `port`'s front first-step entry (the queue is not empty),
  // made now; the entry leaves the queue when it has made its last packet.
  virtual PacketId make_first_step(Gpu::Port& port) = 0;
  // A packet arrived (anything but a read request, which the GPU answers):
  // the algorithm takes its payload (forwards, keeps or releases it).
  virtual void receive(const Packet& in) = 0;
  // A timer the algorithm set with wake_at is due, with its tag.
  virtual void timer(std::uint32_t /*tag*/) {}

 protected:
  using Port = Gpu::Port;
  // A first-step entry's element (the top two bits are the algorithm's tags).
  static constexpr std::uint64_t kEntryElement = Gpu::kEntryElement;
  // The packet step of data from a switch engine (multicast or reduced).
  static constexpr int kMcStep = 0xFFFF;

  // This GPU and its part in the current call.
  int id() const { return gpu_.id_; }
  int gpus() const { return gpu_.n_; }  // in the fabric
  const GpuCall& call() const { return gpu_.call_; }
  int member(int r) const { return gpu_.call_.member(r); }
  const Config& config() const { return gpu_.cfg_; }
  CollectiveSweep& sweep() const { return gpu_.sweep_; }
  const RingPlan& plan() const { return gpu_.sweep_.plan(); }
  std::size_t es() const { return gpu_.es_; }  // bytes per element
  bool data() const { return gpu_.data_; }     // payloads computed and checked
  Ps now() const { return gpu_.now(); }
  std::string name() const { return gpu_.name(); }
  // Our scale-up domain: its first GPU and its size.
  int domain_begin() const { return gpu_.domain_begin_; }
  int per_domain() const { return gpu_.domain_end_ - gpu_.domain_begin_; }
  PacketPool& pool() const { return gpu_.pool_; }
  PayloadPool& payloads() const { return gpu_.payloads_; }

  // Packets: a write of `count` elements from `first` to the ring's next
  // GPU (the caller sets what differs), queued on the link its address
  // picks; its size on a port.
  PacketId make_packet(int step, std::uint64_t first, std::uint64_t count) const {
    return gpu_.make_packet(step, first, count);
  }
  void queue(PacketId id) const { gpu_.queue(id); }
  // The same, from inside a link's send (make_first_step): the link it takes
  // looks at its queues at once, as an event, not in this call.
  void queue_deferred(PacketId id) const { gpu_.queue_deferred(id); }
  // Every link with something to send looks at its queues at once (an event).
  void wake_links() const { gpu_.wake_links(); }
  // timer(tag) runs at time t (>= now), as an event of this GPU.
  void wake_at(Ps t, std::uint32_t tag) const { gpu_.schedule(t, Gpu::kItemAlgo, tag); }
  // Takes the port's next first-step entry and makes its packet for `step`,
  // sized for the port's link; with `data`, carrying our input for it.
  PacketId take_first_step(Port& port, int step, bool data) const {
    const std::uint64_t first = port.first_step.front();
    const std::uint64_t count = first_step_count(first);
    port.first_step.pop_front();
    const PacketId pk = make_packet(step, first, count);
    Packet& p = pool().get(pk);
    p.flits = flits_on(port, p.bytes);
    if (data) {
      p.payload = payloads().alloc();
      input(first, count, payloads().data(p.payload));
    }
    return pk;
  }
  static std::uint16_t flits_on(const Port& port, std::uint64_t bytes) {
    return static_cast<std::uint16_t>(Gpu::flits_on(port, bytes));
  }
  void try_links() const {
    for (int l = 0; l < gpu_.links(); ++l) gpu_.try_link(l);
  }
  // First-step entries, on the port each one's address and destination pick.
  void push_first_step(std::uint64_t entry) const {
    gpu_.ports_[static_cast<size_t>(gpu_.first_step_link(entry))].first_step.push_back(entry);
  }
  // The same, and its link looks at once (not from inside a link's send).
  void send_first_step(std::uint64_t entry) const {
    const int l = gpu_.first_step_link(entry);
    gpu_.ports_[static_cast<size_t>(l)].first_step.push_back(entry);
    gpu_.try_link(l);
  }
  void send_chunk(int c) const {
    const RingPlan& p = plan();
    for (std::uint64_t e = p.chunk_begin(c); e < p.chunk_begin(c + 1); e += p.slice_elements)
      push_first_step(e);
  }
  void send_all() const {
    for (int c = 0; c < call().size; ++c) send_chunk(c);
  }

  // The data work (skipped when timing only, collective.data=false): our
  // input, a reduction into `acc`, a copy; `own()` is a slice of scratch.
  void input(std::uint64_t first, std::uint64_t count, std::uint8_t* out) const {
    gpu_.input(first, count, out);
  }
  void reduce(std::uint8_t* acc, const std::uint8_t* in, std::size_t bytes) const {
    gpu_.reduce(acc, in, bytes);
  }
  void copy(const std::uint8_t* from, std::size_t bytes, std::uint8_t* to) const {
    gpu_.copy(from, bytes, to);
  }
  void add_own_input(std::uint64_t first, std::uint64_t count, std::uint8_t* data) const {
    gpu_.add_own_input(first, count, data);
  }
  std::uint8_t* own() const { return gpu_.own_.data(); }
  // `elements` of our output are in (checked by the caller), sent by GPU
  // `lane` (-1: not known; the fast-forward's progress lanes).
  void output_done(std::uint64_t elements, int lane = -1) const { gpu_.output_done(elements, lane); }
  // An algorithm that reports its output only when the call is done
  // (reports_progress()) says here when each part of it came in: the
  // sweep's fast-forward probes watch that progress (models/core/fast_forward.hpp).
  // `lane`: the GPU that sent them.
  void progress(std::uint64_t elements, int lane) const { gpu_.sweep_.output(elements, gpu_.now(), lane); }
  // Final data from the switch (a multicast copy, or a reduce's result for
  // the root): checked, counted, released.
  void final_from_switch(const Packet& in) const;

  // One output slice folded in a fixed order whatever the arrival order:
  // `early[k]` holds the k-th contribution until its turn.
  struct Fold {
    int next = 0;                  // contributions folded so far
    PayloadId acc = kNoPayload;    // the running result
    std::vector<PayloadId> early;  // [k] arrived before its turn
  };

 private:
  Gpu& gpu_;
};

// The registry: one entry per `collective.algorithm` value, built once from
// constant data. Throws ConfigError naming the value and the algorithms
// there are when none implements `a`. A factory may pick a variant from the
// config and the sweep (the hierarchical all-reduce's phase 2).
using AlgorithmFactory = std::unique_ptr<CollectiveAlgorithm> (*)(Gpu&, const Config&,
                                                                  const CollectiveSweep&);
std::unique_ptr<CollectiveAlgorithm> make_collective_algorithm(CollectiveAlgo a, Gpu& gpu,
                                                               const Config& cfg,
                                                               const CollectiveSweep& sweep);
// The names of the registered algorithms, in registry order.
std::vector<std::string> collective_algorithm_names();

// The factories (one per file in models/sc/algorithms/).
std::unique_ptr<CollectiveAlgorithm> make_ring_algorithm(Gpu& gpu, const Config& cfg,
                                                         const CollectiveSweep& sweep);
std::unique_ptr<CollectiveAlgorithm> make_nvls_algorithm(Gpu& gpu, const Config& cfg,
                                                         const CollectiveSweep& sweep);
// NCCL's symmetric all-reduce kernel (collective.registration=symmetric);
// not a collective.algorithm value: the sweep gives it the calls NCCL would.
std::unique_ptr<CollectiveAlgorithm> make_nvls_symmetric_algorithm(Gpu& gpu, const Config& cfg);
std::unique_ptr<CollectiveAlgorithm> make_push_algorithm(Gpu& gpu, const Config& cfg,
                                                         const CollectiveSweep& sweep);
std::unique_ptr<CollectiveAlgorithm> make_direct_algorithm(Gpu& gpu, const Config& cfg,
                                                           const CollectiveSweep& sweep);
std::unique_ptr<CollectiveAlgorithm> make_hierarchical_algorithm(Gpu& gpu, const Config& cfg,
                                                                 const CollectiveSweep& sweep);
// The ring as NCCL's protocols run it (collective.protocol other than
// ideal), made by make_ring_algorithm.
std::unique_ptr<CollectiveAlgorithm> make_ring_nccl_algorithm(Gpu& gpu, const Config& cfg);
// NVLS as NCCL's kernel runs it (collective.protocol=simple or auto), made by
// make_nvls_algorithm.
std::unique_ptr<CollectiveAlgorithm> make_nvls_nccl_algorithm(Gpu& gpu, const Config& cfg);

}  // namespace fabricsim
