// One shot, GPU to GPU, no switch engine.
// - All-reduce: every GPU sends each slice of its whole buffer to every peer
//   in turn (rank+1, rank+2, ...); each GPU folds the n inputs of a slice in
//   member order 0, 1, ..., n-1 (fixed, so the result is bit-exact whatever
//   the arrival order; early arrivals wait).
// - All-to-all: chunk j goes to the GPU of rank j, starting with our right
//   neighbour's; what arrives is a copy of the sender's input.
#include <unordered_map>

#include "models/core/errors.hpp"
#include "models/sc/collective_algorithm.hpp"

namespace fabricsim {

namespace {

class DirectAlgorithm final : public CollectiveAlgorithm {
 public:
  using CollectiveAlgorithm::CollectiveAlgorithm;

  void start_work() override {
    const GpuCall& c = call();
    if (c.op == CollectiveOp::kAllReduce) {
      if (c.size > 1) send_all();
    } else if (c.op == CollectiveOp::kAllToAll) {
      for (int k = 1; k < c.size; ++k) send_chunk((c.rank + k) % c.size);
    } else {
      throw InvariantError(name() + ": collective.algorithm=direct does not implement " +
                           to_string(c.op));
    }
  }

  // The port: all-to-all's owner of the chunk; all-reduce's slices take the
  // port toward the next GPU and go to every peer from there.
  int first_step_dst(std::uint64_t entry) const override {
    if (call().op == CollectiveOp::kAllToAll) return member(plan().chunk_of(entry));
    return member(call().rank + 1);
  }

  PacketId make_first_step(Port& port) override {
    const GpuCall& c = call();
    const std::uint64_t first = port.first_step.front();
    const std::uint64_t count = first_step_count(first);
    int dst = -1;
    if (c.op == CollectiveOp::kAllReduce) {
      // One slice goes to every peer in turn: rank+1, rank+2, ...
      dst = member(c.rank + 1 + port.dest_k);
      if (++port.dest_k == c.size - 1) port.dest_k = 0;
      if (port.dest_k == 0) port.first_step.pop_front();
    } else {
      port.first_step.pop_front();
      dst = member(plan().chunk_of(first));
    }
    const PacketId pk = make_packet(0, first, count);
    Packet& p = pool().get(pk);
    p.dst = dst;
    p.flits = flits_on(port, p.bytes);
    p.payload = payloads().alloc();
    input(first, count, payloads().data(p.payload));
    return pk;
  }

  void receive(const Packet& in) override {
    if (call().op == CollectiveOp::kAllReduce) {
      fold(in);
      return;
    }
    const std::uint64_t count = in.bytes / es();
    sweep().check_copy(in.src, in.addr / es(), count, payloads().data(in.payload));
    output_done(count, in.src);
    payloads().release(in.payload);
  }

 private:
  void fold(const Packet& in);
  std::unordered_map<std::uint64_t, Fold> folds_;  // by first element
};

void DirectAlgorithm::fold(const Packet& in) {
  const int n = gpus();
  const std::uint64_t first = in.addr / es();
  const std::uint64_t count = in.bytes / es();
  const std::size_t bytes = static_cast<std::size_t>(count) * es();
  Fold& f = folds_[first];
  if (f.early.empty()) f.early.assign(static_cast<size_t>(n), kNoPayload);
  if (in.src < 0 || in.src >= n || in.src == id() ||
      f.early[static_cast<size_t>(in.src)] != kNoPayload || in.src < f.next)
    throw InvariantError(name() + ": GPU " + std::to_string(in.src) + " sent element " +
                         std::to_string(first) + " twice or out of place");
  f.early[static_cast<size_t>(in.src)] = in.payload;
  PayloadPool& pl = payloads();
  while (f.next < n) {
    const int m = f.next;
    if (m == id()) {  // our own input: always at hand
      input(first, count, own());
      if (f.acc == kNoPayload) {
        f.acc = pl.alloc();
        copy(own(), bytes, pl.data(f.acc));
      } else {
        reduce(pl.data(f.acc), own(), bytes);
      }
    } else {
      const PayloadId p = f.early[static_cast<size_t>(m)];
      if (p == kNoPayload) break;
      f.early[static_cast<size_t>(m)] = kNoPayload;
      if (f.acc == kNoPayload) {
        f.acc = p;
      } else {
        reduce(pl.data(f.acc), pl.data(p), bytes);
        pl.release(p);
      }
    }
    ++f.next;
  }
  if (f.next < n) return;
  sweep().check(first, count, pl.data(f.acc), n, call().group);
  pl.release(f.acc);
  folds_.erase(first);
  output_done(count);
}

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_direct_algorithm(Gpu& gpu, const Config& /*cfg*/,
                                                           const CollectiveSweep& /*sweep*/) {
  return std::make_unique<DirectAlgorithm>(gpu);
}

}  // namespace fabricsim
