// NCCL's ring all-reduce as the GPUs run it, with the Simple, LL or LL128
// protocol (collective.protocol; docs/models/gpu.md): the GPU side of the
// ring, from NCCL's design (../shared/notes/NCCL.md sections 1, 2 and 5).
//
// The call's elements are cut by the sweep's NcclRingPlan into channels, and
// each channel works through its ops (a slice received, reduced or copied,
// and sent on) in order, one op at a time, as one CTA does. Per channel and
// peer there is a FIFO of gpu.slots steps; a Simple slice takes 2 of them,
// an LL or LL128 slice 1 (NcclRingShape::window). On the fabric:
//   - the slice's data: writes of collective.payload_bytes (SM stores),
//     striped over the links by address; an LL write carries half as much
//     data (its lines are half flags), an LL128 write 120 of 128 B;
//   - with gpu.write_acks, a one-flit response per write, back to its writer;
//   - Simple only: the flag ('tail'), an 8-byte write after the slice, sent
//     once every response of the slice is back (the system-scope fence), in
//     slice order (LL and LL128 lines carry their own flags);
//   - the credit ('head'): an 8-byte write back to the sender once the op
//     that read the slice has sent its own writes.
// A Simple op starts when its slice's flag and data are in and a slot of the
// next GPU's FIFO is free; an LL or LL128 op when the slot is free, passing
// each line on as it arrives. An op ends when its last write has left. The
// next op may start before the fence of the last one is over (NCCL's post
// thread fences while the others copy on). With Simple, an op's first write
// goes gpu.slice_sync_ns after it may start: the CTA's barriers and the
// slice's first dependent load (prims_simple.h genericOp), one per slice.
//
// With gpu.channel_gbps, a channel's CTA copies at that rate: each write of
// an op (or, with LL and LL128, each line passed on) is made once the CTA
// has spent its data bytes / gpu.channel_gbps on it, one after another, and
// the last step's slice (received, not sent) is output once the CTA has
// copied it out of the FIFO into the output buffer at the same rate (NCCL's
// recv into an unregistered buffer). The CTA's time runs on across ops.
// Unset, the writes are made as fast as the links take them and the last
// step's slice is output as it lands. With LL and gpu.ll_trip_ns, each
// thread moves one line per trip (prims_ll.h): a line is copied no sooner
// than a trip after it may be, and the CTA at no more than gpu.threads x 8 B
// of data per trip.
//
// Timing assumptions: polling a Simple flag costs nothing after it arrives;
// a copy out of the FIFO costs as much per byte as a copy to the next GPU;
// the kernel starts gpu.launch_ns after the call, and its ring
// gpu.simple_start_ns or gpu.ll128_start_ns later with those protocols
// (CollectiveSweep::start_delay).
#include <algorithm>
#include <cmath>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/nccl_ring.hpp"
#include "models/core/ring.hpp"
#include "models/core/time.hpp"
#include "models/sc/collective_algorithm.hpp"

namespace fabricsim {

namespace {

// Step counters travel as 8-byte stores of the slice's sequence number.
constexpr std::uint32_t kFlagBytes = 8;

class RingNcclAlgorithm final : public CollectiveAlgorithm {
 public:
  RingNcclAlgorithm(Gpu& gpu, const Config& cfg)
      : CollectiveAlgorithm(gpu),
        acks_(cfg.gpu.write_acks),
        ack_vc_(cfg.sw.vcs > 1 ? 1 : 0),
        payload_(static_cast<std::uint64_t>(cfg.collective.payload_bytes)),
        slice_sync_(ns_to_ps(cfg.gpu.slice_sync_ns)) {}

  bool reports_progress() const override { return true; }
  void begin_call() override;
  void start_work() override;
  int first_step_dst(std::uint64_t /*entry*/) const override { return member(call().rank + 1); }
  std::uint64_t first_step_count(std::uint64_t entry) const override {
    const NcclRingPlan::Op& op = channel_of(entry).cursor.op();
    return std::min(write_, op.first + op.count - entry);
  }
  // A line's flags travel with its data (LL: as many bytes; LL128: 8 of 128).
  std::uint64_t first_step_wire_bytes(std::uint64_t entry) const override {
    const std::uint64_t data = first_step_count(entry) * es();
    return (data * den_ + num_ - 1) / num_;
  }
  // LL and LL128 writes are whole lines stored one after another into the
  // receiver's FIFO, so their wire offset (not their data's: 120 of every
  // 128 B with LL128) picks the link, and consecutive writes take the links
  // in turn. Simple: the same as the data's.
  std::uint64_t first_step_addr(std::uint64_t entry) const override {
    return CollectiveAlgorithm::first_step_addr(entry) * den_ / num_;
  }
  PacketId make_first_step(Port& port) override;
  void receive(const Packet& in) override;
  // tag: the channel whose op may write now, or (with kCopied) whose CTA
  // has copied the data of its next write.
  void timer(std::uint32_t tag) override;

 private:
  struct Copy {
    std::uint64_t entry = 0;
    Ps done = 0;
  };
  static constexpr std::uint32_t kCopied = 1u << 31;  // timer tag: a copy is done
  // A Copy's entry tag: output copied out of the FIFO (the last step), not a write.
  static constexpr std::uint64_t kOutput = 1ull << 62;
  struct Channel {
    NcclRingPlan::Cursor cursor;
    bool running = false;          // its op has started and not ended
    bool syncing = false;          // its next op waits gpu.slice_sync_ns to start
    std::uint64_t to_make = 0;     // writes of the running op not made yet
    std::uint64_t sent = 0;        // slices sent (ops with a send that ended)
    std::uint64_t consumed = 0;    // slices received and done with
    std::uint64_t flagged_in = 0;  // slices the previous GPU has flagged
    std::uint64_t credits = 0;     // slices the next GPU is done with
    std::uint64_t flagged_out = 0;  // slices we have flagged
    std::vector<std::uint64_t> arrived;  // [slice % window] bytes of an incoming slice
    std::vector<std::uint64_t> unacked;  // [slice % window] writes awaiting a response
    std::uint64_t unacked_all = 0;       // all of them
    bool closed = false;  // every op ended, every slice sent flagged and credited
    // gpu.channel_gbps: writes the CTA is copying, each with the time it is
    // done, the time the CTA is free, and whether a timer waits for the
    // first of them (they are done in order).
    Ring<Copy> copying;
    Ps copy_free = 0;
    bool copy_timer = false;
    // The slices to receive next: a cursor ahead of ours, and the first
    // element of each (an arriving write finds its place from it).
    NcclRingPlan::Cursor ahead;
    std::uint64_t ahead_seq = 0;        // received slices the cursor has passed
    std::vector<std::uint64_t> expect;  // [slice % window] its first element
    std::vector<PayloadId> held;        // [slice % window][write] data received
  };

  const NcclRingPlan& nccl() const { return *sweep().nccl_plan(); }
  Channel& channel_of(std::uint64_t element) {
    return channels_[static_cast<std::size_t>(nccl().channel_of(element))];
  }
  const Channel& channel_of(std::uint64_t element) const {
    return channels_[static_cast<std::size_t>(nccl().channel_of(element))];
  }
  // A 16-bit sequence number carried by a packet, widened: the true one is
  // within a window of `base` (counters may arrive out of order).
  std::uint64_t widen(std::uint16_t seq, std::uint64_t base) const {
    const std::uint64_t lo = base >= window_ ? base - window_ : 0;
    return lo + static_cast<std::uint16_t>(seq - static_cast<std::uint16_t>(lo));
  }
  void run(int c);     // starts every op of channel c that can start
  bool can_start(const Channel& ch) const;
  void start(int c);
  void end_op(int c);  // the running op has made its last write
  void send_flags(int c);
  void control(PacketKind kind, int dst, int c, std::uint64_t seq, std::uint64_t addr);
  void finished_slice(Channel& ch);  // a recv-only op: the last data in
  void settle(int c);  // channel c may have nothing left to do or wait for

  void took_line(int c, std::uint64_t first);  // LL, LL128: a line of the running op is in
  // A write of channel c's running op may be made once the CTA has copied
  // its data (at once without gpu.channel_gbps). `look`: its link looks at
  // once (not from inside a link's send). An entry tagged kOutput is a piece
  // of the last step's slice, copied out of the FIFO instead.
  void copy(int c, std::uint64_t entry, bool look);
  // The timer: the writes copied by now go to their links; the last step's
  // op ends once its whole slice is copied out.
  void copied(int c);

  bool acks_;
  int ack_vc_;
  std::uint64_t payload_;  // collective.payload_bytes: a write's bytes on the wire
  Ps slice_sync_;          // gpu.slice_sync_ns (Simple only)
  // The current call's protocol (NcclRingShape): slices a sender may be
  // ahead, data elements per write, data bytes per wire byte (num_ / den_),
  // and whether lines are passed on as they arrive.
  std::uint64_t window_ = 4;
  std::uint64_t write_ = 32;
  std::uint64_t num_ = 1, den_ = 1;
  bool per_line_ = false;
  // The CTA's copy cost per data byte (0: the links alone bound the copy) and,
  // with LL, the least time from a line's arrival to its copy (a trip).
  double ps_per_byte_ = 0;
  Ps trip_ = 0;
  // Channel c's slot for the `write`-th write of incoming slice `seq`.
  PayloadId& held(Channel& ch, std::uint64_t seq, std::uint64_t write) const {
    return ch.held[(seq % window_) * slice_writes_ + write];
  }
  void look_ahead(Channel& ch) const;  // ch.expect covers the window
  // The data of write `first` of the slice being consumed, taken out.
  PayloadId take(Channel& ch, std::uint64_t first) const;

  std::vector<Channel> channels_;
  std::uint64_t slice_writes_ = 1;  // writes in the call's largest slice
  std::uint64_t output_ = 0;   // elements output, reported when the call is done
  std::uint64_t rs_left_ = 0;  // elements of our chunk not reduced yet
  std::size_t open_ = 0;       // channels not closed
};

void RingNcclAlgorithm::begin_call() {
  const NcclRingPlan& p = nccl();
  const NcclRingShape& shape = sweep().nccl_shape();
  window_ = shape.window;
  num_ = shape.data_num;
  den_ = shape.data_den;
  per_line_ = shape.per_line;
  ps_per_byte_ = shape.ps_per_byte;
  trip_ = shape.trip_ps;
  write_ = payload_ * num_ / den_ / es();
  const std::uint64_t pe = write_;
  slice_writes_ = std::max<std::uint64_t>(1, (p.max_slice_elements() + pe - 1) / pe);
  channels_.assign(static_cast<std::size_t>(p.channels()), Channel{});
  rs_left_ = 0;
  for (int c = 0; c < p.channels(); ++c) {
    Channel& ch = channels_[static_cast<std::size_t>(c)];
    ch.cursor = NcclRingPlan::Cursor(p, c, call().rank);
    ch.arrived.assign(window_, 0);
    ch.unacked.assign(window_, 0);
    for (NcclRingPlan::Cursor k(p, c, call().rank); !k.done(); k.next())
      if (k.op().step == call().size - 1) rs_left_ += k.op().count;
    ch.ahead = ch.cursor;
    ch.expect.assign(window_, 0);
    ch.held.assign(window_ * slice_writes_, kNoPayload);
    look_ahead(ch);
  }
  output_ = 0;
  open_ = channels_.size();
}

void RingNcclAlgorithm::look_ahead(Channel& ch) const {
  for (; ch.ahead_seq < ch.consumed + window_ && !ch.ahead.done(); ch.ahead.next())
    if (ch.ahead.op().recv) ch.expect[ch.ahead_seq++ % window_] = ch.ahead.op().first;
}

PayloadId RingNcclAlgorithm::take(Channel& ch, std::uint64_t first) const {
  const NcclRingPlan::Op& op = ch.cursor.op();
  PayloadId& slot = held(ch, ch.consumed, (first - op.first) / write_);
  const PayloadId id = slot;
  if (id == kNoPayload)
    throw InvariantError(name() + ": no data received for element " + std::to_string(first));
  slot = kNoPayload;
  return id;
}

void RingNcclAlgorithm::start_work() {
  if (call().op != CollectiveOp::kAllReduce)
    throw InvariantError(name() + ": NCCL's protocols here implement all_reduce only");
  for (int c = 0; c < static_cast<int>(channels_.size()); ++c) {
    run(c);
    settle(c);
  }
}

bool RingNcclAlgorithm::can_start(const Channel& ch) const {
  if (ch.running || ch.syncing || ch.cursor.done()) return false;
  const NcclRingPlan::Op& op = ch.cursor.op();
  // Simple: the whole slice and its flag; LL, LL128: lines go on as they come.
  if (!per_line_ && op.recv &&
      (ch.flagged_in <= ch.consumed || ch.arrived[ch.consumed % window_] < op.count * es()))
    return false;
  return !op.send || ch.sent < ch.credits + window_;
}

void RingNcclAlgorithm::run(int c) {
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  while (can_start(ch)) {
    if (slice_sync_ > 0 && !per_line_) {  // Simple: the slice's barriers and first load
      ch.syncing = true;
      wake_at(now() + slice_sync_, static_cast<std::uint32_t>(c));
      return;
    }
    start(c);
  }
}

// What let the op start still holds: flags, data and credits only grow, and
// nothing else of the channel moves while it waits.
void RingNcclAlgorithm::timer(std::uint32_t tag) {
  if ((tag & kCopied) != 0) {
    copied(static_cast<int>(tag & ~kCopied));
    return;
  }
  const int c = static_cast<int>(tag);
  channels_[tag].syncing = false;
  start(c);
  settle(c);
}

void RingNcclAlgorithm::start(int c) {
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  const NcclRingPlan::Op& op = ch.cursor.op();
  ch.running = true;
  if (!op.send) {  // the last step: the data is our output, once it is all in
    if (ps_per_byte_ > 0 && op.count > 0) {  // the CTA copies it out of the FIFO
      ch.to_make = (op.count + write_ - 1) / write_;
      for (std::uint64_t e = op.first; e < op.first + op.count; e += write_)
        if (!per_line_ || held(ch, ch.consumed, (e - op.first) / write_) != kNoPayload)
          copy(c, e | kOutput, false);
      return;
    }
    if (ch.arrived[ch.consumed % window_] < op.count * es()) return;  // (LL, LL128)
    finished_slice(ch);
    end_op(c);
    return;
  }
  const std::uint64_t pe = write_;
  ch.to_make = (op.count + pe - 1) / pe;
  for (std::uint64_t e = op.first; e < op.first + op.count; e += pe)
    // LL, LL128: the lines in so far; the rest go on as they arrive.
    if (!per_line_ || !op.recv || held(ch, ch.consumed, (e - op.first) / pe) != kNoPayload)
      copy(c, e, false);
  if (ch.to_make == 0) {
    end_op(c);
    return;
  }
  wake_links();  // (we may be inside a link's send: the links look again at once)
}

PacketId RingNcclAlgorithm::make_first_step(Port& port) {
  const std::uint64_t first = port.first_step.front();
  const int c = nccl().channel_of(first);
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  const NcclRingPlan::Op& op = ch.cursor.op();
  const std::uint64_t count = first_step_count(first);
  port.first_step.pop_front();
  const PacketId pk = make_packet(static_cast<std::uint16_t>(ch.sent), first, count);
  Packet& p = pool().get(pk);
  p.group = static_cast<std::uint16_t>(c);
  p.flits = flits_on(port, first_step_wire_bytes(first));
  if (op.step == 0) {  // our own input starts the chunk
    p.payload = payloads().alloc();
    input(first, count, payloads().data(p.payload));
  } else {  // the slice received: add our part (reduce-scatter) and pass it on
    p.payload = take(ch, first);
    std::uint8_t* data = payloads().data(p.payload);
    if (op.step <= call().size - 1) add_own_input(first, count, data);
    if (op.final) {
      sweep().check(first, count, data, call().size, call().group);
      output_ += count;
      progress(count, id());
    }
    if (op.step == call().size - 1 && (rs_left_ -= count) == 0) sweep().mark_mid(id(), now());
  }
  if (acks_) {
    ++ch.unacked[ch.sent % window_];
    ++ch.unacked_all;
  }
  if (--ch.to_make == 0) end_op(c);
  return pk;
}

void RingNcclAlgorithm::finished_slice(Channel& ch) {
  const NcclRingPlan::Op& op = ch.cursor.op();
  const std::uint64_t pe = write_;
  for (std::uint64_t e = op.first; e < op.first + op.count; e += pe) {
    const PayloadId slice = take(ch, e);
    const std::uint64_t count = std::min(pe, op.first + op.count - e);
    sweep().check(e, count, payloads().data(slice), call().size, call().group);
    payloads().release(slice);
    output_ += count;
    progress(count, id());
  }
}

void RingNcclAlgorithm::end_op(int c) {
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  const NcclRingPlan::Op op = ch.cursor.op();
  if (op.recv) {  // its slot is free again: tell the sender
    ch.arrived[ch.consumed % window_] = 0;
    control(PacketKind::kStepAck, member(call().rank - 1 + call().size), c, ch.consumed++,
            op.first * es());
    look_ahead(ch);
  }
  if (op.send) {
    ++ch.sent;
    if (per_line_)
      ch.flagged_out = ch.sent;  // its lines carried their flags
    else
      send_flags(c);
  }
  ch.running = false;
  ch.cursor.next();
  // Called from make_first_step too: the next op's writes go in the queues
  // now and are made when the links take them.
  run(c);
  settle(c);
}

// Flags go in slice order, each once the slice's writes are all answered.
void RingNcclAlgorithm::send_flags(int c) {
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  while (ch.flagged_out < ch.sent && ch.unacked[ch.flagged_out % window_] == 0)
    control(PacketKind::kStepFlag, member(call().rank + 1), c, ch.flagged_out++,
            static_cast<std::uint64_t>(c) * payload_);
}

void RingNcclAlgorithm::control(PacketKind kind, int dst, int c, std::uint64_t seq,
                                  std::uint64_t addr) {
  const PacketId pk = make_packet(static_cast<std::uint16_t>(seq), 0, 0);
  Packet& p = pool().get(pk);
  p.kind = kind;
  p.dst = dst;
  p.addr = addr;
  p.group = static_cast<std::uint16_t>(c);
  p.bytes = kind == PacketKind::kWriteAck ? 0 : kFlagBytes;
  p.vc = static_cast<std::uint8_t>(kind == PacketKind::kWriteAck ? ack_vc_ : 0);
  queue_deferred(pk);  // (we may be inside a link's send)
}

void RingNcclAlgorithm::receive(const Packet& in) {
  const int c = in.group;
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  switch (in.kind) {
    case PacketKind::kWrite: {
      const std::uint64_t seq = widen(in.step, ch.consumed);
      const std::uint64_t first = in.addr / es();
      held(ch, seq, (first - ch.expect[seq % window_]) / write_) = in.payload;
      ch.arrived[seq % window_] += in.bytes;
      if (acks_) control(PacketKind::kWriteAck, in.src, c, in.step, in.addr);
      if (per_line_ && ch.running && ch.cursor.op().recv && seq == ch.consumed) {
        took_line(c, first);
        settle(c);
        return;
      }
      break;
    }
    case PacketKind::kStepFlag:
      ch.flagged_in = std::max(ch.flagged_in, widen(in.step, ch.consumed) + 1);
      break;
    case PacketKind::kStepAck:
      ch.credits = std::max(ch.credits, widen(in.step, ch.credits) + 1);
      break;
    case PacketKind::kWriteAck:
      --ch.unacked[widen(in.step, ch.flagged_out) % window_];
      --ch.unacked_all;
      send_flags(c);
      settle(c);
      return;
    default:
      throw InvariantError(name() + ": NCCL's ring got a packet of kind " +
                           std::to_string(static_cast<int>(in.kind)));
  }
  run(c);
  settle(c);
}

// A line of the running op's slice arrived (LL, LL128): pass it on (once
// the CTA has copied it), or, at the last step, end the op once the slice is
// all in (and, with gpu.channel_gbps, copied out of the FIFO).
void RingNcclAlgorithm::took_line(int c, std::uint64_t first) {
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  const NcclRingPlan::Op& op = ch.cursor.op();
  if (op.send) {
    copy(c, first, true);
    return;
  }
  if (ps_per_byte_ > 0) {
    copy(c, first | kOutput, false);
    return;
  }
  if (ch.arrived[ch.consumed % window_] < op.count * es()) return;
  finished_slice(ch);
  end_op(c);
}

void RingNcclAlgorithm::copy(int c, std::uint64_t entry, bool look) {
  if (ps_per_byte_ == 0) {
    if (look)
      send_first_step(entry);
    else
      push_first_step(entry);
    return;
  }
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  const auto bytes = static_cast<double>(first_step_count(entry & kEntryElement) * es());
  // At least 1 ps: a copy is never done at the instant it starts.
  ch.copy_free = std::max(now(), ch.copy_free) +
                 std::max<Ps>(1, static_cast<Ps>(std::llround(bytes * ps_per_byte_)));
  // LL: a trip from the moment the line may go (its threads' loads and poll).
  if (trip_ > 0) ch.copy_free = std::max(ch.copy_free, now() + trip_);
  ch.copying.push_back(Copy{entry, ch.copy_free});
  if (!ch.copy_timer) {
    ch.copy_timer = true;
    wake_at(ch.copy_free, kCopied | static_cast<std::uint32_t>(c));
  }
}

void RingNcclAlgorithm::copied(int c) {
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  ch.copy_timer = false;
  while (!ch.copying.empty() && ch.copying.front().done <= now()) {
    const std::uint64_t entry = ch.copying.front().entry;
    ch.copying.pop_front();
    if ((entry & kOutput) == 0) {
      send_first_step(entry);  // (its op may end here, and the next one start: copy())
    } else if (--ch.to_make == 0) {  // the received slice is all copied out
      finished_slice(ch);
      end_op(c);
    }
  }
  if (!ch.copying.empty() && !ch.copy_timer) {
    ch.copy_timer = true;
    wake_at(ch.copying.front().done, kCopied | static_cast<std::uint32_t>(c));
  }
}

// The call is over for us when every op has ended, every slice we sent is
// flagged and credited and every write answered: nothing of ours is left on
// the fabric, and nothing more will come.
void RingNcclAlgorithm::settle(int c) {
  Channel& ch = channels_[static_cast<std::size_t>(c)];
  if (ch.closed || !ch.cursor.done() || ch.flagged_out < ch.sent || ch.credits < ch.sent ||
      ch.unacked_all > 0)
    return;
  ch.closed = true;
  if (--open_ == 0) output_done(output_);
}

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_ring_nccl_algorithm(Gpu& gpu, const Config& cfg) {
  return std::make_unique<RingNcclAlgorithm>(gpu, cfg);
}

}  // namespace fabricsim
