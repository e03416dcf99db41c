// NCCL's ring, pipelined per packet, over the call's group in ring order
// (the GPU of rank r sends to rank r+1). The message is cut into n chunks
// and each chunk into packet-sized slices. Reduce-scatter step s: rank r
// sends chunk (r-s-1) mod n to rank r+1; the receiver adds its own input to
// each arriving slice and forwards it at step s+1, so after n-1 steps rank r
// holds chunk r fully reduced. All-gather step s: rank r sends chunk
// (r-s) mod n; receivers keep and forward. All-reduce is the two in turn
// (global step t: reduce-scatter 0 .. n-2, all-gather n-1 .. 2n-3).
// Broadcast is a chain from the root, reduce a chain ending at it.
//
// Timing assumptions: a slice moves on as soon as it arrives (no wait for
// the whole chunk); a GPU's local add is instantaneous (GPU arithmetic is
// not the bottleneck). Step-0 slices are made only when a link can take
// them, so memory follows what is in flight.
#include "models/core/errors.hpp"
#include "models/sc/collective_algorithm.hpp"

namespace fabricsim {

namespace {

class RingAlgorithm final : public CollectiveAlgorithm {
 public:
  using CollectiveAlgorithm::CollectiveAlgorithm;

  void begin_call() override {
    const int n = call().size;
    first_step_ = call().op == CollectiveOp::kAllGather ? n - 1 : 0;
    last_step_ = call().op == CollectiveOp::kReduceScatter ? n - 2 : 2 * n - 3;
    rs_left_ =
        call().op == CollectiveOp::kAllReduce && n > 1 ? plan().chunk_elements(call().rank) : 0;
  }

  void start_work() override {
    const GpuCall& c = call();
    switch (c.op) {
      case CollectiveOp::kAllReduce:
      case CollectiveOp::kReduceScatter:
        // Reduce-scatter step 0 sends chunk r-1.
        if (c.size > 1) send_chunk((c.rank + c.size - 1) % c.size);
        break;
      case CollectiveOp::kAllGather:
        // Our own chunk, even if we receive nothing: the others need it.
        if (c.size > 1) send_chunk(c.rank);
        break;
      case CollectiveOp::kBroadcast:
        if (c.rank == c.root && c.size > 1) send_all();
        break;
      case CollectiveOp::kReduce:
        // The chain starts after the root.
        if (c.size > 1 && c.rank == (c.root + 1) % c.size) send_all();
        break;
      default:
        throw InvariantError(name() + ": collective.algorithm=ring does not implement " +
                             to_string(c.op));
    }
  }

  int first_step_dst(std::uint64_t /*entry*/) const override { return member(call().rank + 1); }

  PacketId make_first_step(Port& port) override {
    return take_first_step(port, first_step_, true);
  }

  void receive(const Packet& in) override;

 private:
  // Passes the data on to the next GPU of the ring (the payload moves to
  // the new packet, one step later), or releases it.
  void forward_or_release(const Packet& in, bool forward) const {
    if (!forward) {
      payloads().release(in.payload);
      return;
    }
    const PacketId pk = make_packet(in.step + 1, in.addr / es(), in.bytes / es());
    pool().get(pk).payload = in.payload;
    queue(pk);
  }

  int first_step_ = 0;         // 0 (reduce-scatter first) or n-1 (all-gather only)
  int last_step_ = 0;          // the last step of the call
  std::uint64_t rs_left_ = 0;  // all-reduce: our chunk's elements not yet reduced
};

void RingAlgorithm::receive(const Packet& in) {
  const GpuCall& c = call();
  const std::uint64_t first = in.addr / es();
  const std::uint64_t count = in.bytes / es();
  std::uint8_t* data = payloads().data(in.payload);
  if (c.op == CollectiveOp::kBroadcast) {  // keep and pass on
    sweep().check(first, count, data, c.size - 1, c.group);
    output_done(count);
    forward_or_release(in, (c.rank + 1) % c.size != c.root);
    return;
  }
  if (c.op == CollectiveOp::kReduce) {  // add our input, pass on
    add_own_input(first, count, data);
    if (c.rank == c.root) {
      sweep().check(first, count, data, 1, c.group);
      output_done(count);
    }
    forward_or_release(in, c.rank != c.root);
    return;
  }
  // All-reduce, reduce-scatter, all-gather.
  const int t = in.step;
  const bool all_reduce = c.op == CollectiveOp::kAllReduce;
  if (t <= c.size - 2) {
    // Reduce-scatter: add our own input (left fold: what came, then us).
    add_own_input(first, count, data);
    if (t == c.size - 2) {  // chunk complete: it is our output slice
      sweep().check(first, count, data, all_reduce ? c.size : 1, c.group);
      if (rs_left_ > 0 && (rs_left_ -= count) == 0) sweep().mark_mid(id(), now());
      output_done(count);
    }
  } else {
    sweep().check(first, count, data, all_reduce ? c.size : c.size - 1, c.group);
    output_done(count);
  }
  forward_or_release(in, t < last_step_);
}

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_ring_algorithm(Gpu& gpu, const Config& cfg,
                                                         const CollectiveSweep& /*sweep*/) {
  if (cfg.collective.protocol == Protocol::kSimple) return make_ring_simple_algorithm(gpu, cfg);
  return std::make_unique<RingAlgorithm>(gpu);
}

}  // namespace fabricsim
