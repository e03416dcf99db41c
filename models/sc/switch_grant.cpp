// A grant of the allocator carried out: the packet leaves its input queue,
// crosses (ports busy while it does) and enters its output buffer or the
// reduction engine.
#include "models/sc/switch.hpp"

#include <algorithm>
#include <string>

#include "models/core/errors.hpp"

namespace fabricsim {

PacketId Switch::grant(int i, int o, Ps e, int only_vc) {
  SwitchInput& in = inputs_[static_cast<size_t>(i)];
  // Among this input's VCs with an eligible packet for `o`, round-robin.
  int vc = -1;
  for (int k = 0; k < params_.vcs && vc < 0; ++k) {
    if (only_vc >= 0 && k > 0) break;  // (that VC looked at once)
    const int v = only_vc >= 0 ? only_vc : (in.vc_ptr + k) % params_.vcs;
    int flits;
    if (params_.queueing == Queueing::kFifo) {
      const PacketQueue& q = in.queues[static_cast<size_t>(v)].q;
      if (q.empty() || pool_.get(q.front()).out_port != o) continue;
      flits = pool_.get(q.front()).flits;
    } else {
      if (inputs_.voq_empty(in, v, o)) continue;
      flits = inputs_.head_flits(in, v, o);
    }
    // A head needing an engine resource goes only where share_engine gave one.
    bool ok;
    if (is_engine_port(o)) {  // (no lazy copies: copies go to link outputs)
      const PacketQueue& q =
          params_.queueing == Queueing::kFifo ? in.queues[static_cast<size_t>(v)].q : inputs_.voq(in, v, o);
      const Need n = engine_->need(pool_.get(q.front()));
      ok = n == kNeedNone || eng_.share[n].given[static_cast<size_t>(i)] == o;
    } else {
      ok = flits_fit(o, v, flits);
    }
    if (ok) vc = v;
  }
  if (vc < 0) throw InvariantError("allocator granted a pair without an eligible packet");
  in.vc_ptr = (vc + 1) % params_.vcs;
  PacketQueue& q =
      params_.queueing == Queueing::kFifo ? in.queues[static_cast<size_t>(vc)].q : inputs_.voq(in, vc, o);
  // (A lazy copy is made now, and taken without passing through the queue.)
  const PacketId id = params_.queueing == Queueing::kVoq ? take_head(in, vc, o) : q.pop(pool_);
  if (params_.queueing == Queueing::kVoq) {
    alloc_.head_left(vc, o, pool_.get(id).flits);
    if (inputs_.voq_empty(in, vc, o))
      voq_emptied(i, vc, o);
    else
      alloc_.head_joined(vc, o, inputs_.head_flits(in, vc, o));
  }
  if (params_.queueing == Queueing::kVoq && !q.empty() && is_engine_port(o))
    set_engine_head(in, vc, o, q.front());
  Packet& p = pool_.get(id);
  // The tail arrives at the input's own link rate (a degraded link is slower).
  const Ps in_flit = in.link != nullptr ? in.link->flit_ps() : params_.flit_ps;
  const Ps tail_in = p.t_head + static_cast<Ps>(p.flits - 1) * in_flit;
  // An engine port moves port_bytes_per_cycle per cycle, on either side;
  // its input may start several packets in one edge (wide_grants): it is
  // busy for the bytes of all of them.
  Ps b;
  if (is_engine_port(i)) {
    if (in.edge_at != e) {
      in.edge_at = e;
      in.edge_bytes = 0;
      in.edge_parent = kNoPacket;
    }
    // Copies of one original sent in the same edge read its data once (the
    // crossbar fans it out).
    if (p.parent == kNoPacket || p.parent != in.edge_parent) in.edge_bytes += engine_->bytes_of(p);
    if (p.parent != kNoPacket) in.edge_parent = p.parent;
    b = e + engine_->port_ps(in.edge_bytes);
  } else {
    b = std::max(e + alloc_.xfer_ps[p.flits], tail_in);
  }
  if (is_engine_port(o)) {
    // The engine port is busy until it and its ALU can take the next
    // packet (ReductionEngine::accept); the link input until the tail has crossed.
    const Need n = engine_->need(p);
    if (n != kNeedNone) eng_.share[n].given[static_cast<size_t>(i)] = -1;
    const Ps alu_end = engine_->accept(p, o, e, n);
    if (n == kNeedTable) table_changed(entry_key(p), true);
    inputs_.busy[static_cast<size_t>(i)] = b;
    outputs_.busy[static_cast<size_t>(o)] = alu_end;
    alloc_.busy_out.set(o);
    leave_input(in, vc, p.flits, p.t_head, b);
    --in.pending;
    --inputs_.pending_total;
    if (in.pending == 0) inputs_.active.reset(i);
    if (window_.contains(e)) ++alloc_.grants;
    schedule(std::max(b, alu_end) + params_.pipeline_ps + engine_->pipeline_ps(), kItemEngine, id);
    return kNoPacket;
  }
  inputs_.busy[static_cast<size_t>(i)] = b;
  outputs_.busy[static_cast<size_t>(o)] = is_engine_port(i) ? e + alloc_.xfer_ps[p.flits] : b;
  alloc_.busy_out.set(o);
  PacketId siblings = kNoPacket;  // an original with copies still to send
  if (p.parent == kNoPacket) {
    leave_input(in, vc, p.flits, p.t_head, b);
  } else if (--pool_.get(p.parent).copies_left == 0) {
    retire_original(i, p.parent, b);
  } else {
    siblings = p.parent;
  }
  outputs_.space(o, vc) -= p.flits;
  update_fits(o, vc);
  --in.pending;
  --inputs_.pending_total;
  if (in.pending == 0) inputs_.active.reset(i);
  if (window_.contains(e)) ++alloc_.grants;
  if (log_.packet(p))
    log("grants " + describe(p) + " in" + std::to_string(i) + " -> out" + std::to_string(o) +
        " at " + format_real(ps_to_ns(e)) + " ns, through the pipeline at " +
        format_real(ps_to_ns(e + params_.pipeline_ps)) + " ns");
  enqueue_output(o, id, e + params_.pipeline_ps);
  return siblings;
}

}  // namespace fabricsim
