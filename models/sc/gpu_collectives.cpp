// The GPU's part in a collective call: its group and rank, the output it
// expects, its kernel's start, and the arrivals it hands to the call's
// algorithm (models/sc/algorithms/). The transport is in gpu.cpp.
#include <algorithm>

#include "models/core/errors.hpp"
#include "models/sc/collective_algorithm.hpp"
#include "models/sc/gpu.hpp"

namespace fabricsim {

CollectiveAlgorithm* Gpu::algorithm(CollectiveAlgo a) const {
  return algorithms_[static_cast<size_t>(a)].get();
}

// Output elements this GPU receives. Multicast through the switches
// includes the sender, so there even a lone GPU receives its own data back.
std::uint64_t Gpu::expected_output() const {
  const RingPlan& plan = sweep_.plan();
  const std::uint64_t all = plan.elements, own = plan.chunk_elements(call_.rank);
  const bool mc = algo_->through_switch();
  const int n = call_.size;
  switch (call_.op) {
    case CollectiveOp::kAllReduce:
      return n > 1 || mc ? all : 0;
    case CollectiveOp::kReduceScatter:
      return n > 1 ? own : 0;
    case CollectiveOp::kAllGather:
      return mc ? all : all - own;
    case CollectiveOp::kAllToAll:
      return static_cast<std::uint64_t>(n - 1) * own;
    case CollectiveOp::kBroadcast:
      return mc || call_.rank != call_.root ? all : 0;
    case CollectiveOp::kReduce:
      return call_.rank == call_.root && (n > 1 || mc) ? all : 0;
  }
  return 0;
}

void Gpu::start_call() {
  const CollectiveCall& call = sweep_.current();
  algo_id_ = call.algorithm;
  algo_ = call.symmetric ? symmetric_.get() : algorithm(algo_id_);
  const Partition& part = sweep_.partition(call.partition);
  call_.op = call.op;
  call_.group = part.group_of[static_cast<size_t>(id_)];
  call_.rank = part.rank_of[static_cast<size_t>(id_)];
  call_.members = &part.groups[static_cast<size_t>(call_.group)];
  call_.size = static_cast<int>(call_.members->size());
  call_.root = static_cast<int>(cfg_.collective.root);
  requests_ = algo_->requests();
  own_progress_ = algo_->reports_progress();
  for (Port& p : ports_) p.dest_k = 0;
  expected_ = expected_output();
  sweep_.expect_output(expected_);
  algo_->begin_call();
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
// the data that came early, then the algorithm queues what we send first
// (each entry on the link its address picks; packets are made when the link
// can take them).
void Gpu::start_work() {
  started_ = true;
  std::vector<Packet> early;
  early.swap(stash_);
  for (const Packet& p : early) receive(p);
  algo_->start_work();
  for (int l = 0; l < links(); ++l) try_link(l);
  if (expected_ == 0) output_done(0);
}

int Gpu::first_step_link(std::uint64_t entry) const {
  return pick_link(algo_->first_step_addr(entry), algo_->first_step_dst(entry));
}

bool Gpu::may_issue() const {
  return !requests_ || algo_->may_issue();
}

// The packet pool may grow below: `in` is a copy, read before any allocation.
void Gpu::receive(const Packet& in) {
  if (in.kind != PacketKind::kReadReq) {
    algo_->receive(in);
    return;
  }
  // The switch reads our data for a reduction: answer on the response VC,
  // on the link the address picks (so it reaches the same chip's engine),
  // when that link can send it (make_read_response). Memory read time is
  // not modelled (assumption: the HBM is not the limit).
  const int l = pick_link(in.addr);
  ports_[static_cast<size_t>(l)].reads.push_back(
      ReadReq{in.addr / es_, static_cast<std::uint32_t>(in.bytes / es_), in.group,
              ports_[static_cast<size_t>(in.out_port)].rx.hold(in)});
  try_link(l);
}

void Gpu::add_own_input(std::uint64_t first, std::uint64_t count, std::uint8_t* data) {
  input(first, count, own_.data());
  reduce(data, own_.data(), count * es_);
}

}  // namespace fabricsim
