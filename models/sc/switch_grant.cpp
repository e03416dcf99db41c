// A grant of the allocator carried out: the packet leaves its input queue,
// crosses (ports busy while it does) and enters its output buffer or the
// reduction engine.
#include "models/sc/switch.hpp"

#include <algorithm>
#include <string>

#include "models/core/errors.hpp"

namespace fabricsim {

// Timing: the input and output crossbar ports are busy until the packet
// has crossed (input_busy_until); the head enters the output buffer (or the
// engine) after the pipeline.
PacketId Switch::grant(int i, int o, Ps e, int only_vc) {
  SwitchInput& in = inputs_[static_cast<size_t>(i)];
  const int vc = granted_vc(in, i, o, only_vc);
  in.vc_ptr = (vc + 1) % params_.vcs;
  const PacketId id = take_granted(in, i, vc, o);
  const Ps b = input_busy_until(in, i, pool_.get(id), e);
  if (is_engine_port(o)) {
    grant_to_engine(in, i, o, vc, id, e, b);
    return kNoPacket;
  }
  return grant_to_output(in, i, o, vc, id, e, b);
}

int Switch::granted_vc(SwitchInput& in, int i, int o, int only_vc) {
  // Among this input's VCs with an eligible packet for `o`, round-robin.
  for (int k = 0; k < params_.vcs; ++k) {
    if (only_vc >= 0 && k > 0) break;  // (that VC looked at once)
    const int v = only_vc >= 0 ? only_vc : (in.vc_ptr + k) % params_.vcs;
    const bool fifo = params_.queueing == Queueing::kFifo;
    const PacketQueue& q = fifo ? in.queues[static_cast<size_t>(v)].q : inputs_.voq(in, v, o);
    int flits = 0;
    if (fifo) {
      if (q.empty() || pool_.get(q.front()).out_port != o) continue;
      flits = pool_.get(q.front()).flits;
    } else {
      if (inputs_.voq_empty(in, v, o)) continue;
      flits = inputs_.head_flits(in, v, o);
    }
    // A head needing an engine resource goes only where share_engine gave
    // one (no lazy copies there: copies go to link outputs).
    if (is_engine_port(o)) {
      const Need n = engine_->need(pool_.get(q.front()), o);
      if (n == kNeedNone || eng_.share[n].given[static_cast<size_t>(i)] == o) return v;
    } else if (flits_fit(o, v, flits)) {
      return v;
    }
  }
  throw InvariantError("allocator granted a pair without an eligible packet");
}

PacketId Switch::take_granted(SwitchInput& in, int i, int vc, int o) {
  if (params_.queueing == Queueing::kFifo) return in.queues[static_cast<size_t>(vc)].q.pop(pool_);
  // (A lazy copy is made now, and taken without passing through the queue.)
  const PacketId id = take_head(in, vc, o);
  alloc_.head_left(vc, o, pool_.get(id).flits);
  if (inputs_.voq_empty(in, vc, o))
    voq_emptied(i, vc, o);
  else
    alloc_.head_joined(vc, o, inputs_.head_flits(in, vc, o));
  const PacketQueue& q = inputs_.voq(in, vc, o);
  if (!q.empty() && is_engine_port(o)) set_engine_head(in, vc, o, q.front());
  return id;
}

Ps Switch::input_busy_until(SwitchInput& in, int i, const Packet& p, Ps e) {
  if (!is_engine_port(i)) {
    // The tail arrives at the input's own link rate (a degraded link is slower).
    const Ps in_flit = in.rx.link != nullptr ? in.rx.link->flit_ps() : params_.flit_ps;
    const Ps tail_in = p.t_head + static_cast<Ps>(p.flits - 1) * in_flit;
    return std::max(e + alloc_.xfer_ps[p.flits], tail_in);
  }
  // An engine port moves port_bytes_per_cycle per cycle, on either side;
  // its input may start several packets in one edge (wide_grants): it is
  // busy for the bytes of all of them.
  if (in.edge_at != e) {
    in.edge_at = e;
    in.edge_bytes = 0;
    in.edge_parent = kNoPacket;
  }
  // Copies of one original sent in the same edge read its data once (the
  // crossbar fans it out).
  if (p.parent == kNoPacket || p.parent != in.edge_parent) in.edge_bytes += engine_->bytes_of(p);
  if (p.parent != kNoPacket) in.edge_parent = p.parent;
  return e + engine_->port_ps(i, in.edge_bytes);
}

// The engine port is busy until it and its ALU can take the next packet
// (ReductionEngine::accept); the link input until the tail has crossed.
// The engine folds the packet once it has crossed and the pipelines passed.
void Switch::grant_to_engine(SwitchInput& in, int i, int o, int vc, PacketId id, Ps e, Ps b) {
  Packet& p = pool_.get(id);
  const Need n = engine_->need(p, o);
  if (n != kNeedNone) eng_.share[n].given[static_cast<size_t>(i)] = -1;
  const Ps alu_end = engine_->accept(p, o, e, n);
  if (n == kNeedTable) table_changed(entry_key(p), true);
  inputs_.busy[static_cast<size_t>(i)] = b;
  outputs_.busy[static_cast<size_t>(o)] = alu_end;
  alloc_.busy_out.set(o);
  leave_input(in, vc, p.flits, p.t_head, b);
  granted_one(in, i, e);
  schedule(std::max(b, alu_end) + params_.pipeline_ps + engine_->pipeline_ps(o), kItemEngine, id);
}

// A link output: its buffer space is taken now, the packet is in it after
// the pipeline. An engine input streams into the output at crossbar rate.
PacketId Switch::grant_to_output(SwitchInput& in, int i, int o, int vc, PacketId id, Ps e, Ps b) {
  const Packet& p = pool_.get(id);
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
  granted_one(in, i, e);
  if (log_.packet(p))
    log("grants " + describe(p) + " in" + std::to_string(i) + " -> out" + std::to_string(o) +
        " at " + format_real(ps_to_ns(e)) + " ns, through the pipeline at " +
        format_real(ps_to_ns(e + params_.pipeline_ps)) + " ns");
  enqueue_output(o, id, e + params_.pipeline_ps);
  return siblings;
}

void Switch::granted_one(SwitchInput& in, int i, Ps e) {
  --in.pending;
  --inputs_.pending_total;
  if (in.pending == 0) inputs_.active.reset(i);
  if (window_.contains(e)) ++alloc_.grants;
}

}  // namespace fabricsim
