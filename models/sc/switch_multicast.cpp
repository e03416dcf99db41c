// Multicast in the switch (see switch.hpp and docs/models/multicast.md): an
// original is replicated into one copy per member; the copies wait in their
// VOQs (as references until granted) and fan out in one crossbar traversal.
#include "models/sc/switch.hpp"

#include <string>
#include <vector>

#include "models/core/errors.hpp"

namespace fabricsim {

void Switch::replicate(PacketId id, int port, Ps t) {
  SwitchInput& in = inputs_[static_cast<size_t>(port)];
  const Packet original = pool_.get(id);  // a copy: alloc() below may move the pool
  if (original.group >= mc_.groups.size() || mc_.groups[original.group].empty())
    throw InvariantError("multicast packet " + std::to_string(original.serial) + " names group " +
                         std::to_string(original.group) +
                         ", which is not in this switch's group table");
  if (original.payload != kNoPayload && payloads_ == nullptr)
    throw InvariantError("multicast data without a payload pool");
  const std::vector<int>& members = mc_.groups[original.group];
  pool_.get(id).copies_left = static_cast<std::uint16_t>(members.size());
  if (is_engine_port(port)) {  // results enter without arrive(): count them here
    in.hold(original.vc, original.flits);
  }
  ++mc_.originals;
  in.mc_held_flits += original.flits;
  const Ps ready = edge_at_or_after(t, params_.cycle_ps) + params_.pipeline_ps;
  std::uint64_t serial = pool_.reserve_serials(members.size());
  for (int m : members) {
    const std::vector<int>& r = routes_[static_cast<size_t>(m)];
    if (r.empty()) throw InvariantError("multicast member " + std::to_string(m) + " has no route");
    const int out = route(m, original.addr);
    ++mc_.copies_made;
    if (params_.queueing == Queueing::kVoq) {  // made when it leaves (LazyCopy)
      inputs_.lazy(in, original.vc, out).push_back(LazyCopy{id, m, serial++, original.flits});
      ++in.pending;
      ++inputs_.pending_total;
      inputs_.active.set(port);
      voq_filled(port, original.vc, out, original.flits);
      continue;
    }
    const PacketId c = make_copy(id, m, out, serial++);
    if (params_.queueing == Queueing::kOutput)
      enqueue_output(out, c, ready);
    else
      enqueue_input(port, c);
  }
  if (params_.queueing == Queueing::kOutput) {
    // Ideal output queueing: every copy is in its output queue at once.
    retire_original(port, id, t + static_cast<Ps>(original.flits - 1) * in.rx.link->flit_ps());
    return;
  }
  request_tick(t);
}

PacketId Switch::make_copy(PacketId original_id, int member, int out, std::uint64_t serial) {
  const PacketId c = pool_.alloc_copy(original_id, serial);
  Packet& cp = pool_.get(c);  // (references taken after alloc_copy: it may move the pool)
  const Packet& original = pool_.get(original_id);
  cp.kind = original.kind == PacketKind::kReadReq ? PacketKind::kReadReq : PacketKind::kWrite;
  cp.dst = member;
  cp.parent = original_id;
  cp.copies_left = 0;
  cp.engine_slot = false;
  cp.out_port = static_cast<std::int16_t>(out);
  cp.next = kNoPacket;
  if (original.payload != kNoPayload) payloads_->retain(original.payload);
  return c;
}

void Switch::make_lazy_copy(SwitchInput& in, int vc, int out) {
  inputs_.voq(in, vc, out).push(pool_, take_lazy_copy(in, vc, out));
}

PacketId Switch::take_lazy_copy(SwitchInput& in, int vc, int out) {
  Ring<LazyCopy>& l = inputs_.lazy(in, vc, out);
  const LazyCopy lc = l.front();
  l.pop_front();
  return make_copy(lc.original, lc.member, out, lc.serial);
}

PacketId Switch::take_head(SwitchInput& in, int vc, int out) {
  PacketQueue& q = inputs_.voq(in, vc, out);
  return q.empty() ? take_lazy_copy(in, vc, out) : q.pop(pool_);
}

PacketId Switch::voq_head(SwitchInput& in, int vc, int out) {
  PacketQueue& q = inputs_.voq(in, vc, out);
  if (q.empty() && !inputs_.lazy(in, vc, out).empty()) make_lazy_copy(in, vc, out);
  return q.front();
}

PacketId Switch::head_parent(SwitchInput& in, int vc, int out) {
  const PacketQueue& q = inputs_.voq(in, vc, out);
  return q.empty() ? inputs_.lazy(in, vc, out).front().original : pool_.get(q.front()).parent;
}

// The last copy of a multicast original has left the input (at t_out): its
// flits leave the buffer and their credits go upstream.
void Switch::retire_original(int port, PacketId id, Ps t_out) {
  SwitchInput& in = inputs_[static_cast<size_t>(port)];
  const Packet& o = pool_.get(id);
  leave_input(in, o.vc, o.flits, o.t_head, t_out);
  in.mc_held_flits -= o.flits;
  --mc_.originals;
  ++mc_.originals_retired;
  // A write passing through the engine: its slot frees once every copy has
  // been granted (nothing more reads the data).
  if (o.engine_slot) engine_->release_slot(o, now());
  if (o.payload != kNoPayload) payloads_->release(o.payload);
  pool_.release(id);
}

void Switch::fan_out(int i, PacketId parent, Ps e, Ps busy_until) {
  SwitchInput& in = inputs_[static_cast<size_t>(i)];
  for (int v = 0; v < params_.vcs; ++v) {
    if (params_.queueing != Queueing::kVoq) break;  // FIFO: copies leave one per edge
    alloc_.scratch.assign_andnot(in.nonempty[static_cast<size_t>(v)], alloc_.matched_out);
    alloc_.scratch &= alloc_.out_free;
    alloc_.scratch.subtract(alloc_.stalled[static_cast<size_t>(v)]);  // no head fits there
    alloc_.scratch.for_each([&](int o) {
      if (head_parent(in, v, o) != parent) return;  // copies go to link outputs only
      if (!flits_fit(o, v, inputs_.head_flits(in, v, o))) return;
      alloc_.matched_out.set(o);
      grant(i, o, e, v);
      // One traversal: the input stays busy as long as the first copy's.
      inputs_.busy[static_cast<size_t>(i)] =
          std::max(inputs_.busy[static_cast<size_t>(i)], busy_until);
    });
  }
}

}  // namespace fabricsim
