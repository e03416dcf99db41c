// Packets live in a per-fabric pool and are named by a 32-bit index, so the
// hot path moves integers, never allocates per packet, and queues are
// intrusive singly linked lists through Packet::next.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/reduction_alu.hpp"
#include "models/core/time.hpp"

namespace fabricsim {

using PacketId = std::uint32_t;
constexpr PacketId kNoPacket = 0xFFFFFFFFu;
using PayloadId = std::uint32_t;
constexpr PayloadId kNoPayload = 0xFFFFFFFFu;

// What a packet is, for the endpoint that receives it.
enum class PacketKind : std::uint8_t {
  kSynthetic,  // open-loop test traffic (a posted write): counted and dropped at the sink
  kMemRead,     // synthetic read request: header only, answered by kMemReadData
  kMemReadData, // the data a synthetic read returns to its requester
  kWrite,      // posted write of `bytes` data bytes at `addr` (collectives)
  kMcStore,    // multimem.st: a write the switch replicates to every member of `group`
  kReduceContrib,  // push-style reduction: this GPU's data for `addr` of `group`
  kLdReduceReq,    // multimem.ld_reduce: asks the switch for the reduction of `addr`
  kReadReq,        // the engine reads `bytes` at `addr` from a member (multicast)
  kReadResp,       // a member's data for the engine (folded like a contribution)
  kLdReduceResp,   // the reduced data, back to the ld_reduce requester
  kAtomic,         // a read-modify-write of one element at `addr` (operand in the payload)
  kAtomicResp,     // the element's old value, back to the requester
  // NCCL's Simple protocol (collective.protocol=simple): 8-byte stores of a
  // step counter, and the responses of non-posted writes (gpu.write_acks).
  kStepFlag,  // 'tail': the slice of step `step` of channel `group` is complete
  kStepAck,   // 'head': the receiver is done with slice `step`: its slot is free
  kWriteAck,  // the response to one data write, back to its writer
};

// Kinds the switch sends to its reduction engine.
inline bool to_engine(PacketKind k) {
  return k == PacketKind::kReduceContrib || k == PacketKind::kLdReduceReq ||
         k == PacketKind::kReadResp;
}

struct Packet {
  std::uint64_t serial = 0;  // unique per fabric, in injection order
  Ps t_gen = 0;              // entered the source queue
  Ps t_inject = 0;           // head started serialising at the source
  Ps t_head = 0;             // head fully received at the current hop
  Ps t_ready = 0;            // head available in the current output buffer
  std::uint64_t addr = 0;    // byte address at the destination (drives link striping)
  std::int32_t src = 0;      // source endpoint
  std::int32_t dst = 0;      // destination endpoint
  std::int16_t out_port = 0; // output port at the current switch (set on arrival)
  // A reduction's operator and element type (contributions, ld_reduce):
  // the engine folds an address with those of the packet that opened it.
  RedOp redop = RedOp::kSum;
  DType dtype = DType::kFp32;
  std::uint16_t flits = 1;
  std::uint8_t vc = 0;
  bool live = false;
  bool engine_slot = false;  // a multicast write holding a replication slot of the engine
  PacketKind kind = PacketKind::kSynthetic;
  std::uint16_t step = 0;         // collective: algorithm step; tlm: the transaction's tag
  std::uint32_t bytes = 0;        // data bytes carried
  PayloadId payload = kNoPayload; // the data itself, if the workload carries values
  std::uint16_t group = 0;        // multicast group (kMcStore); kAtomic: the operation
  std::uint16_t copies_left = 0;  // a replicated packet: copies not yet sent on
  PacketId parent = kNoPacket;    // a copy: the packet it was replicated from
  PacketId next = kNoPacket;  // intrusive queue link
};

class PacketPool {
 public:
  PacketId alloc() { return alloc_reserved(next_serial_++); }
  // Serial numbers for `n` packets made later (multicast copies made when
  // they leave): they keep the numbers they would have had if made now.
  std::uint64_t reserve_serials(std::uint64_t n) {
    const std::uint64_t first = next_serial_;
    next_serial_ += n;
    return first;
  }
  // A packet with a serial number from reserve_serials().
  PacketId alloc_reserved(std::uint64_t serial) {
    const PacketId id = take_slot();
    slots_[id] = Packet{};
    return made_live(id, serial);
  }
  // The same, made as a copy of live packet `of` (one copy of the slot, no
  // zeroing first): a multicast copy of its original.
  PacketId alloc_copy(PacketId of, std::uint64_t serial) {
    const PacketId id = take_slot();
    slots_[id] = slots_[of];  // indexed after take_slot: the pool may have grown
    return made_live(id, serial);
  }
  void release(PacketId id) {
    Packet& p = get(id);
    if (!p.live) throw InvariantError("packet pool: packet released twice");
    p.live = false;
    free_.push_back(id);
    --live_;
  }
  Packet& get(PacketId id) { return slots_[id]; }
  const Packet& get(PacketId id) const { return slots_[id]; }
  std::uint64_t live() const { return live_; }
  std::uint64_t allocated_total() const { return next_serial_; }
  // The most packets ever alive at once (the pool's size).
  std::uint64_t slots() const { return slots_.size(); }

 private:
  PacketId take_slot() {
    if (free_.empty()) {
      slots_.emplace_back();
      return static_cast<PacketId>(slots_.size() - 1);
    }
    const PacketId id = free_.back();
    free_.pop_back();
    return id;
  }
  PacketId made_live(PacketId id, std::uint64_t serial) {
    Packet& p = slots_[id];
    p.live = true;
    p.serial = serial;
    ++live_;
    return id;
  }
  std::vector<Packet> slots_;
  std::vector<PacketId> free_;
  std::uint64_t live_ = 0;
  std::uint64_t next_serial_ = 0;
};

// Data carried by packets, in fixed-size slots (the largest payload): only
// packets in flight hold one, so memory follows the bytes in flight, not the
// message size. Multicast copies share one slot: slots are reference counted.
// data() pointers are invalidated by alloc() (the storage may grow).
class PayloadPool {
 public:
  explicit PayloadPool(std::size_t slot_bytes = 256) : slot_(slot_bytes) {}
  // Timing only (collective.data=false): every payload is one shared
  // scratch slot nobody reads; live() counts the references still held.
  void set_timing_only() {
    timing_only_ = true;
    data_.assign(slot_, 0);
    refs_.assign(1, 0);
  }
  PayloadId alloc() {
    if (timing_only_) {
      ++live_;
      return 0;
    }
    PayloadId id = 0;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<PayloadId>(data_.size() / slot_);
      data_.resize(data_.size() + slot_);
      refs_.push_back(0);
    }
    refs_[id] = 1;
    ++live_;
    return id;
  }
  void retain(PayloadId id) {
    if (timing_only_) {
      ++live_;
      return;
    }
    ++refs_[id];
  }
  void release(PayloadId id) {
    if (timing_only_) {
      if (live_ == 0) throw InvariantError("payload released twice");
      --live_;
      return;
    }
    if (refs_[id] == 0) throw InvariantError("payload released twice");
    if (--refs_[id] > 0) return;
    free_.push_back(id);
    --live_;
  }
  std::uint8_t* data(PayloadId id) { return data_.data() + static_cast<std::size_t>(id) * slot_; }
  std::size_t slot_bytes() const { return slot_; }
  std::uint64_t live() const { return live_; }
  // The most slots ever held at once (the pool's size).
  std::uint64_t slots() const { return refs_.size(); }

 private:
  std::size_t slot_;
  bool timing_only_ = false;
  std::vector<std::uint8_t> data_;
  std::vector<std::uint32_t> refs_;
  std::vector<PayloadId> free_;
  std::uint64_t live_ = 0;
};

// A packet reaching endpoint `at` must be live (not delivered twice) and
// addressed to it (not misrouted); anything else is a model bug.
inline void check_delivery(const Packet& p, int at) {
  if (!p.live) throw InvariantError("delivered a packet that is no longer live (duplicate?)");
  if (p.dst != at)
    throw InvariantError("packet " + std::to_string(p.serial) + " for endpoint " +
                         std::to_string(p.dst) + " delivered to endpoint " + std::to_string(at));
}

// FIFO of packets threaded through Packet::next (O(1), no allocation).
class PacketQueue {
 public:
  bool empty() const { return head_ == kNoPacket; }
  PacketId front() const { return head_; }
  // The front packet's flits, kept here so a switch can test whether a head
  // fits without touching the packet (a cache miss in a large run).
  int front_flits() const { return front_flits_; }
  std::uint32_t size() const { return size_; }
  void push(PacketPool& pool, PacketId id) {
    pool.get(id).next = kNoPacket;
    if (tail_ == kNoPacket) {
      head_ = id;
      front_flits_ = pool.get(id).flits;
    } else
      pool.get(tail_).next = id;
    tail_ = id;
    ++size_;
  }
  PacketId pop(PacketPool& pool) {
    const PacketId id = head_;
    head_ = pool.get(id).next;
    if (head_ == kNoPacket)
      tail_ = kNoPacket;
    else
      front_flits_ = pool.get(head_).flits;
    --size_;
    return id;
  }

 private:
  PacketId head_ = kNoPacket;
  PacketId tail_ = kNoPacket;
  std::uint32_t size_ = 0;
  int front_flits_ = 0;
};

}  // namespace fabricsim
