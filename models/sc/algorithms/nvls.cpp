// NVLink SHARP through the switches' engines (multicast group 0: the call's
// GPUs).
// - All-reduce (pull): each GPU issues multimem.ld_reduce for its 1/n share,
//   one header-only request per slice; the switch reads the slice from every
//   GPU, reduces it and returns the sum, which the GPU stores to every GPU
//   with one multimem.st (a multicast the switch replicates).
// - All-gather: each GPU multicasts its own chunk; broadcast: the root
//   multicasts its buffer.
// The multicast includes the sender, so even a lone GPU receives its data.
//
// Timing assumption: many SMs issue at once, so up to collective.outstanding
// reads are in flight; like an SM's full store buffer, as many stores made
// from results and not yet sent stop new reads. The SMs issue the share's
// reads in address order: a read counts against the window from its issue
// (while it waits for the link its address picks, too) until its result is
// back, so a slow link holds the window and the others wait for it, as
// in-order loads do; the links never run more than a window apart.
#include <algorithm>

#include "models/core/errors.hpp"
#include "models/sc/collective_algorithm.hpp"

namespace fabricsim {

namespace {

class NvlsAlgorithm final : public CollectiveAlgorithm {
 public:
  using CollectiveAlgorithm::CollectiveAlgorithm;

  bool through_switch() const override { return true; }
  bool requests() const override { return call().op == CollectiveOp::kAllReduce; }
  // An issued ld_reduce may leave on its link: the stores are below their
  // bound (the read window was applied at its issue, release()). (A GPU
  // sends its one-flit reads before its stores, or stores would starve the
  // reads; without the bound stores would pile up for the rest of a call
  // whenever its links are the limit.)
  bool may_issue() const override { return stores_waiting_ < window(); }
  bool sent(const Packet& p) override {
    if (p.kind != PacketKind::kMcStore) return false;
    const bool stopped = !may_issue();
    --stores_waiting_;
    return stopped && may_issue();
  }

  void begin_call() override {
    reads_in_flight_ = 0;
    stores_waiting_ = 0;
    next_ = end_ = 0;
  }

  void start_work() override {
    const GpuCall& c = call();
    switch (c.op) {
      case CollectiveOp::kAllReduce:  // ld_reduce of our share, in address order
        next_ = plan().chunk_begin(c.rank);
        end_ = plan().chunk_begin(c.rank + 1);
        release();
        break;
      case CollectiveOp::kAllGather:  // our own chunk, even alone
        send_chunk(c.rank);
        break;
      case CollectiveOp::kBroadcast:
        if (c.rank == c.root) send_all();
        break;
      default:
        throw InvariantError(name() + ": collective.algorithm=nvls does not implement " +
                             to_string(c.op));
    }
  }

  int first_step_dst(std::uint64_t /*entry*/) const override { return -1; }

  PacketId make_first_step(Port& port) override {
    const bool pull = requests();
    if (pull && !may_issue()) return kNoPacket;  // a response or a store leaving will try again
    const PacketId pk = take_first_step(port, kMcStep, !pull);
    Packet& p = pool().get(pk);
    p.group = 0;
    if (pull) {  // multimem.ld_reduce: a header-only read request
      p.kind = PacketKind::kLdReduceReq;
      p.flits = 1;
      return pk;
    }
    p.kind = PacketKind::kMcStore;
    return pk;
  }

  void receive(const Packet& in) override {
    if (in.kind != PacketKind::kLdReduceResp) {
      final_from_switch(in);  // a multicast copy
      return;
    }
    // The reduced slice: store it to every GPU (multimem.st), and read on.
    --reads_in_flight_;
    release();
    const PacketId pk = make_packet(kMcStep, in.addr / es(), in.bytes / es());
    Packet& st = pool().get(pk);
    st.kind = PacketKind::kMcStore;
    st.group = in.group;
    st.payload = in.payload;
    ++stores_waiting_;
    auto& most = sweep().current().stores_waiting_max;
    most = std::max(most, stores_waiting_);
    queue(pk);
    try_links();
  }

 private:
  std::uint64_t window() const { return static_cast<std::uint64_t>(config().collective.outstanding); }
  // Issues the share's next reads while the window has room: each goes to
  // the queue of the link its address picks (sent when that link can).
  void release() {
    const std::uint64_t slice = plan().slice_elements;
    for (; next_ < end_ && reads_in_flight_ < window(); next_ += slice) {
      push_first_step(next_);
      ++reads_in_flight_;
    }
  }

  std::uint64_t next_ = 0, end_ = 0;  // our share's reads not issued yet
  std::uint64_t reads_in_flight_ = 0;  // issued, result not back
  std::uint64_t stores_waiting_ = 0;  // multimem stores made from results, not yet sent
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_nvls_algorithm(Gpu& gpu, const Config& cfg,
                                                         const CollectiveSweep& /*sweep*/) {
  if (cfg.collective.protocol != Protocol::kIdeal) return make_nvls_nccl_algorithm(gpu, cfg);
  return std::make_unique<NvlsAlgorithm>(gpu);
}

}  // namespace fabricsim
