// What a GPU sends and does with what it receives, per collective and
// algorithm (the transport - links, queues, credits - is in gpu.cpp).
#include <algorithm>

#include "models/core/errors.hpp"
#include "models/sc/gpu.hpp"

namespace fabricsim {

// Global ring step t: reduce-scatter steps 0 .. n-2, all-gather steps
// n-1 .. 2n-3. Other collectives do not use the step.
void Gpu::start_call() {
  const RingPlan& plan = sweep_.plan();
  const CollectiveCall& call = sweep_.current();
  op_ = call.op;
  algo_ = call.algorithm;
  const Partition& part = sweep_.partition(call.partition);
  group_ = part.group_of[static_cast<size_t>(id_)];
  rank_ = part.rank_of[static_cast<size_t>(id_)];
  members_ = &part.groups[static_cast<size_t>(group_)];
  gn_ = static_cast<int>(members_->size());
  root_ = static_cast<int>(cfg_.collective.root);
  first_step_ = op_ == CollectiveOp::kAllGather ? gn_ - 1 : 0;
  last_step_ = op_ == CollectiveOp::kReduceScatter ? gn_ - 2 : 2 * gn_ - 3;
  nvls_ = algo_ == CollectiveAlgo::kNvls;
  push_ = algo_ == CollectiveAlgo::kPush;
  pull_ = nvls_ && op_ == CollectiveOp::kAllReduce;
  hier_ = algo_ == CollectiveAlgo::kHierarchical;
  reads_in_flight_ = 0;
  stores_waiting_ = 0;
  for (Port& p : ports_) p.dest_k = 0;
  // Output elements this GPU receives. Multicast (NVLS, push) includes the
  // sender, so there even a lone GPU receives its own data back.
  const std::uint64_t all = plan.elements, own = plan.chunk_elements(rank_);
  const bool mc = nvls_ || push_;
  switch (op_) {
    case CollectiveOp::kAllReduce:
      expected_ = gn_ > 1 || mc ? all : 0;
      break;
    case CollectiveOp::kReduceScatter:
      expected_ = gn_ > 1 ? own : 0;
      break;
    case CollectiveOp::kAllGather:
      expected_ = mc ? all : all - own;
      break;
    case CollectiveOp::kAllToAll:
      expected_ = static_cast<std::uint64_t>(gn_ - 1) * own;
      break;
    case CollectiveOp::kBroadcast:
      expected_ = mc || rank_ != root_ ? all : 0;
      break;
    case CollectiveOp::kReduce:
      expected_ = rank_ == root_ && (gn_ > 1 || mc) ? all : 0;
      break;
  }
  if (hier_) hier_start();
  rs_left_ = op_ == CollectiveOp::kAllReduce && algo_ == CollectiveAlgo::kRing && gn_ > 1 ? own : 0;
  received_ = 0;
  active_ = true;
  started_ = false;
  const Ps delay = sweep_.start_delay(id_);
  if (delay == 0)
    start_work();
  else
    schedule(now() + delay, kItemStart);
}

// Our kernel starts (at the call's start, or later for a straggler): handle
// the data that came early, then queue what we send first (each slice on
// the link its address picks; packets are made when the link can take them).
void Gpu::start_work() {
  started_ = true;
  std::vector<Packet> early;
  early.swap(stash_);
  for (const Packet& p : early) receive(p);
  const RingPlan& plan = sweep_.plan();
  auto send_chunk = [&](int c) {
    for (std::uint64_t e = plan.chunk_begin(c); e < plan.chunk_begin(c + 1); e += plan.slice_elements)
      ports_[static_cast<size_t>(first_step_link(e))].first_step.push_back(e);
  };
  auto send_all = [&] {
    for (int c = 0; c < gn_; ++c) send_chunk(c);
  };
  switch (op_) {
    case CollectiveOp::kAllReduce:
      // push / direct: our whole buffer (to the engines / to every peer);
      // NVLS: ld_reduce of our 1/n share; ring: reduce-scatter step 0 sends
      // chunk g-1.
      if (hier_) {
        // Phase 1 as the ring's reduce-scatter step 0, inside our domain.
        if (gn_ > 1 && per_domain() > 1) send_chunk((rank() + per_domain() - 1) % per_domain());
        if (gn_ > 1 && chunk_left_ == 0) begin_inter();
      } else if (push_ || (algo_ == CollectiveAlgo::kDirect && gn_ > 1)) {
        send_all();
      } else if (pull_) {
        send_chunk(rank_);
      } else if (gn_ > 1) {
        send_chunk((rank_ + gn_ - 1) % gn_);
      }
      break;
    case CollectiveOp::kReduceScatter:
      if (gn_ > 1) send_chunk((rank_ + gn_ - 1) % gn_);
      break;
    case CollectiveOp::kAllGather:
      // Our own chunk, even if we receive nothing: the others need it.
      if (gn_ > 1 || nvls_) send_chunk(rank_);
      break;
    case CollectiveOp::kAllToAll:
      // Chunk j goes to GPU j, starting with our right neighbour's.
      for (int k = 1; k < gn_; ++k) send_chunk((rank_ + k) % gn_);
      break;
    case CollectiveOp::kBroadcast:
      if (rank_ == root_ && (gn_ > 1 || nvls_)) send_all();
      break;
    case CollectiveOp::kReduce:
      // Push: everyone contributes; ring: the chain starts after the root.
      if (push_ || (gn_ > 1 && rank_ == (root_ + 1) % gn_)) send_all();
      break;
  }
  for (int l = 0; l < links(); ++l) try_link(l);
  if (expected_ == 0) output_done(0);
}

// Where a first-step slice goes: all-to-all's owner of its chunk, the
// ring's next GPU, or (-1) the switches (NVLS, push). It picks the ports
// (a NIC for another domain's GPU).
int Gpu::first_step_dst(std::uint64_t first) const {
  if (nvls_ || push_) return -1;
  if (hier_) return domain_next();
  if (op_ == CollectiveOp::kAllToAll) return member(sweep_.plan().chunk_of(first));
  return member(rank_ + 1);
}

std::uint64_t Gpu::first_step_count(std::uint64_t entry) const {
  const std::uint64_t first = entry & kEntryElement;
  const RingPlan& plan = sweep_.plan();
  int c = plan.chunk_of(first);
  std::uint64_t end = plan.chunk_begin(c + 1);
  if ((entry & kFromChunkInter) && !sharp_ && !tree_) {  // a sub-chunk of our chunk
    const RingPlan sub = sweep_.hier().inter(c);
    const std::uint64_t base = plan.chunk_begin(c);
    end = base + sub.chunk_begin(sub.chunk_of(first - base) + 1);
  } else if ((entry & kFromChunkInter) && tree_) {  // double tree: tree 0's part ends at the split
    const std::uint64_t split = plan.chunk_begin(c) + sweep_.hier().tree_split(c);
    if (first < split) end = split;
  }
  return std::min(plan.slice_elements, end - first);
}

int Gpu::first_step_link(std::uint64_t entry) const {
  const std::uint64_t first = entry & kEntryElement;
  const int dst = entry & kFromChunkInter    ? inter_next()
                  : entry & kFromChunkGather ? domain_next()
                                             : first_step_dst(first);
  return pick_link(first * es_, dst);
}

PacketId Gpu::make_first_step(Port& port) {
  if (port.first_step.empty()) return kNoPacket;
  if (pull_ && !may_read()) return kNoPacket;  // a response or a store leaving will try again
  const std::uint64_t first = port.first_step.front();
  if (first & ~kEntryElement) {
    port.first_step.pop_front();
    return make_from_chunk(port, first);
  }
  const std::uint64_t count = first_step_count(first);
  int dst = hier_ ? domain_next() : member(rank_ + 1);
  if (algo_ == CollectiveAlgo::kDirect && op_ == CollectiveOp::kAllReduce) {
    // One slice goes to every peer in turn: id+1, id+2, ...
    dst = member(rank_ + 1 + port.dest_k);
    if (++port.dest_k == gn_ - 1) port.dest_k = 0;
    if (port.dest_k == 0) port.first_step.pop_front();
  } else {
    port.first_step.pop_front();
    if (op_ == CollectiveOp::kAllToAll) dst = member(sweep_.plan().chunk_of(first));
  }
  const PacketId id = make_packet(nvls_ || push_ ? kMcStep : first_step_, first, count);
  Packet& p = pool_.get(id);
  p.dst = dst;
  p.flits = static_cast<std::uint16_t>(flits_on(port, p.bytes));
  if (pull_) {  // multimem.ld_reduce: a header-only read request
    p.kind = PacketKind::kLdReduceReq;
    p.flits = 1;
    p.group = 0;
    ++reads_in_flight_;
    return id;
  }
  if (nvls_ || push_) {
    p.kind = push_ ? PacketKind::kReduceContrib : PacketKind::kMcStore;
    p.group = 0;
    // A push contribution names where its result goes: the root (reduce),
    // or nobody (-1: multicast to the group).
    if (push_) p.dst = op_ == CollectiveOp::kReduce ? root_ : -1;
  }
  p.payload = payloads_.alloc();
  input(first, count, payloads_.data(p.payload));
  return id;
}

// Takes the packet's payload (forwarded, kept or released here). The packet
// pool may grow below, so `in` is read before any allocation.
void Gpu::receive(const Packet& in) {
  const std::uint64_t first = in.addr / es_;
  const std::uint64_t count = in.bytes / es_;
  const PayloadId payload = in.payload;
  if (hier_) {
    hier_receive(in);
    return;
  }
  if (in.kind == PacketKind::kReadReq) {
    // The switch reads our data for a reduction: answer on the response VC,
    // on the link the address picks (so it reaches the same chip's engine),
    // when that link can send it (make_read_response). Memory read time is
    // not modelled (assumption: the HBM is not the limit).
    const int l = pick_link(in.addr);
    ports_[static_cast<size_t>(l)].reads.push_back(
        ReadReq{first, static_cast<std::uint32_t>(count), in.group,
                HeldCredits{ports_[static_cast<size_t>(in.out_port)].rx, in.vc, in.flits}});
    try_link(l);
    return;
  }
  if (in.kind == PacketKind::kLdReduceResp) {
    // The reduced slice: store it to every GPU (multimem.st), and read on.
    --reads_in_flight_;
    const PacketId id = make_packet(kMcStep, first, count);
    Packet& st = pool_.get(id);
    st.kind = PacketKind::kMcStore;
    st.group = in.group;
    st.payload = payload;
    ++stores_waiting_;
    auto& most = sweep_.current().stores_waiting_max;
    most = std::max(most, stores_waiting_);
    queue(id);
    for (int l = 0; l < links(); ++l) try_link(l);
    return;
  }
  std::uint8_t* data = payloads_.data(payload);
  if (in.step == kMcStep) {
    // Final data from the switch (a multicast copy, or a push reduce's
    // result for the root): nothing to forward.
    sweep_.check(first, count, data, op_ == CollectiveOp::kReduce ? 1 : gn_, group_);
    output_done(count);
    payloads_.release(payload);
    return;
  }
  switch (op_) {
    case CollectiveOp::kAllToAll:
      sweep_.check_copy(in.src, first, count, data);
      output_done(count);
      payloads_.release(payload);
      return;
    case CollectiveOp::kAllReduce:
      if (algo_ == CollectiveAlgo::kDirect) {
        direct_fold(in);
        return;
      }
      break;
    case CollectiveOp::kBroadcast:
      // Ring (a chain from the root): keep and pass on.
      sweep_.check(first, count, data, gn_ - 1, group_);
      output_done(count);
      forward_or_release(in, (rank_ + 1) % gn_ != root_);
      return;
    case CollectiveOp::kReduce:
      // Ring (a chain ending at the root): add our input, pass on.
      add_own_input(first, count, data);
      if (rank_ == root_) {
        sweep_.check(first, count, data, 1, group_);
        output_done(count);
      }
      forward_or_release(in, rank_ != root_);
      return;
    default:
      break;
  }
  // Ring all-reduce, reduce-scatter, all-gather.
  const int t = in.step;
  const CollectiveOp op = op_;
  if (t <= gn_ - 2) {
    // Reduce-scatter: add our own input (left fold: what came, then us).
    add_own_input(first, count, data);
    if (t == gn_ - 2) {  // chunk complete: it is our output slice
      sweep_.check(first, count, data, op == CollectiveOp::kAllReduce ? gn_ : 1, group_);
      if (rs_left_ > 0 && (rs_left_ -= count) == 0) sweep_.mark_mid(id_, now());
      output_done(count);
    }
  } else {
    sweep_.check(first, count, data, op == CollectiveOp::kAllReduce ? gn_ : gn_ - 1, group_);
    output_done(count);
  }
  forward_or_release(in, t < last_step_);
}

void Gpu::add_own_input(std::uint64_t first, std::uint64_t count, std::uint8_t* data) {
  input(first, count, own_.data());
  reduce(data, own_.data(), count * es_);
}

// Passes the data on to the next GPU of the ring (the payload moves to the
// new packet, one step later), or releases it.
void Gpu::forward_or_release(const Packet& in, bool forward) {
  if (!forward) {
    payloads_.release(in.payload);
    return;
  }
  const PayloadId payload = in.payload;
  const PacketId id = make_packet(in.step + 1, in.addr / es_, in.bytes / es_);
  pool_.get(id).payload = payload;
  queue(id);
}

// One-shot all-reduce: every peer's slice arrives once; we fold them with
// our own input in member order 0, 1, ..., n-1 (the order is fixed so the
// result is bit-exact whatever the arrival order; early arrivals wait).
void Gpu::direct_fold(const Packet& in) {
  const std::uint64_t first = in.addr / es_;
  const std::uint64_t count = in.bytes / es_;
  const std::size_t bytes = static_cast<std::size_t>(count) * es_;
  Fold& f = folds_[first];
  if (f.early.empty()) f.early.assign(static_cast<size_t>(n_), kNoPayload);
  if (in.src < 0 || in.src >= n_ || in.src == id_ || f.early[static_cast<size_t>(in.src)] != kNoPayload ||
      in.src < f.next)
    throw InvariantError(std::string(name()) + ": GPU " + std::to_string(in.src) +
                         " sent element " + std::to_string(first) + " twice or out of place");
  f.early[static_cast<size_t>(in.src)] = in.payload;
  while (f.next < n_) {
    const int m = f.next;
    if (m == id_) {  // our own input: always at hand
      input(first, count, own_.data());
      if (f.acc == kNoPayload) {
        f.acc = payloads_.alloc();
        copy(own_.data(), bytes, payloads_.data(f.acc));
      } else {
        reduce(payloads_.data(f.acc), own_.data(), bytes);
      }
    } else {
      const PayloadId p = f.early[static_cast<size_t>(m)];
      if (p == kNoPayload) break;
      f.early[static_cast<size_t>(m)] = kNoPayload;
      if (f.acc == kNoPayload) {
        f.acc = p;
      } else {
        reduce(payloads_.data(f.acc), payloads_.data(p), bytes);
        payloads_.release(p);
      }
    }
    ++f.next;
  }
  if (f.next < n_) return;
  sweep_.check(first, count, payloads_.data(f.acc), n_, group_);
  payloads_.release(f.acc);
  folds_.erase(first);
  output_done(count);
}

}  // namespace fabricsim
