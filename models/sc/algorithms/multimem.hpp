// What NCCL's multimem kernels on the GPU side share (NVLS: nvls_nccl.cpp;
// the symmetric kernel: nvls_symmetric.cpp): a warp's multimem.ld_reduce
// requests, its multimem.st of the results it holds, 8-byte multicast
// counters, and a result arriving in this GPU's output (checked, counted
// and, with gpu.write_acks, answered by a one-flit response to its writer on
// the response VC).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/sc/collective_algorithm.hpp"

namespace fabricsim {

class MultimemAlgorithm : public CollectiveAlgorithm {
 public:
  MultimemAlgorithm(Gpu& gpu, const Config& cfg)
      : CollectiveAlgorithm(gpu), acks_(cfg.gpu.write_acks), ack_vc_(cfg.sw.vcs > 1 ? 1 : 0) {}
  bool through_switch() const override { return true; }
  int first_step_dst(std::uint64_t /*entry*/) const override { return -1; }
  PacketId make_first_step(Port& /*port*/) override { return kNoPacket; }  // (none queued)

 protected:
  // A reduced payload back from the switches, held until its warp stores it.
  struct Held {
    std::uint64_t first = 0, count = 0;
    PayloadId payload = kNoPayload;
    std::uint16_t group = 0;
  };

  // Elements [first, first + count) read with one multimem.ld_reduce request
  // (one flit) per `request` elements; returns the requests made.
  std::uint64_t read_reduced(std::uint16_t step, std::uint64_t first, std::uint64_t count,
                             std::uint64_t request) const {
    std::uint64_t made = 0;
    for (std::uint64_t e = first; e < first + count; e += request) {
      const PacketId pk = make_packet(step, e, std::min(request, first + count - e));
      Packet& p = pool().get(pk);
      p.kind = PacketKind::kLdReduceReq;
      p.dst = -1;
      p.group = 0;
      p.flits = 1;
      ++made;
      queue_deferred(pk);
    }
    return made;
  }

  // multimem.st of every held result (a multicast write each), in order;
  // returns the copies that will be answered (n per store with
  // gpu.write_acks, else 0). Clears `held`.
  std::uint64_t store(std::uint16_t step, std::vector<Held>& held) const {
    std::uint64_t answered = 0;
    const auto n = static_cast<std::uint64_t>(call().size);
    for (const Held& h : held) {
      const PacketId pk = make_packet(step, h.first, h.count);
      Packet& st = pool().get(pk);
      st.kind = PacketKind::kMcStore;
      st.dst = -1;
      st.group = h.group;
      st.payload = h.payload;
      if (acks_) answered += n;
      queue_deferred(pk);
    }
    held.clear();
    return answered;
  }

  // An 8-byte multicast store to `addr` (a step counter or a barrier).
  void multicast_counter(std::uint16_t seq, std::uint64_t addr) const {
    const PacketId pk = make_packet(seq, 0, 0);
    Packet& p = pool().get(pk);
    p.kind = PacketKind::kMcStore;
    p.dst = -1;
    p.group = 0;
    p.bytes = kCounterBytes;
    p.payload = payloads().alloc();  // (its copies arrive as writes, which carry data)
    p.addr = addr;
    queue_deferred(pk);
  }

  // A copy of a result store arrived: checked against the golden result,
  // released and, with gpu.write_acks, answered. Returns its elements.
  std::uint64_t take_result(const Packet& in) const {
    const std::uint64_t first = in.addr / es();
    const std::uint64_t count = in.bytes / es();
    sweep().check(first, count, payloads().data(in.payload), call().size, call().group);
    payloads().release(in.payload);
    if (acks_) {
      const PacketId pk = make_packet(in.step, 0, 0);
      Packet& p = pool().get(pk);
      p.kind = PacketKind::kWriteAck;
      p.dst = in.src;
      p.addr = in.addr;
      p.bytes = 0;
      p.vc = static_cast<std::uint8_t>(ack_vc_);
      queue_deferred(pk);
    }
    return count;
  }

 private:
  static constexpr std::uint32_t kCounterBytes = 8;
  bool acks_;
  int ack_vc_;
};

}  // namespace fabricsim
