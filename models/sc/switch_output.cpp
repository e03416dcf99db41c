// The switch's output side (switch_output.hpp): output-buffer space, the
// packets waiting for their link, and sending them through the Transmitter.
#include "models/sc/switch.hpp"

#include <algorithm>

namespace fabricsim {

SwitchOutputs::SwitchOutputs(const SwitchParams& p)
    : vcs(p.vcs),
      port(static_cast<size_t>(p.xports)),
      busy(static_cast<size_t>(p.xports), 0),
      gone(static_cast<size_t>(p.xports), kNever),
      free_flits(static_cast<size_t>(p.xports) * static_cast<size_t>(p.vcs), p.output_buffer_flits),
      space_waiter(static_cast<size_t>(p.xports), 0),
      with_sending(p.xports) {
  for (SwitchOutput& out : port) out.queues.resize(static_cast<size_t>(p.vcs));
}

void Switch::update_fits(int o, int vc) {
  // Engine ports take the per-packet path: a head needing a new table entry
  // uses one of the entries still free at its edge.
  if (is_engine_port(o)) return;
  PortSet& f = alloc_.fits_any[static_cast<size_t>(vc)];
  if (outputs_.space(o, vc) >= params_.max_flits)
    f.set(o);
  else
    f.reset(o);
}

void Switch::release_space(int o, Ps t) {
  SwitchOutput& out = outputs_[static_cast<size_t>(o)];
  bool released = false;
  while (!out.sending.empty() && out.sending.front().tail_gone <= t) {
    const int vc = out.sending.front().vc;
    outputs_.space(o, vc) += out.sending.front().flits;
    out.sending.pop_front();
    update_fits(o, vc);
    released = true;
  }
  outputs_.gone[static_cast<size_t>(o)] =
      out.sending.empty() ? kNever : out.sending.front().tail_gone;
  if (released)  // space, and the waiter cleared below: look at o again on every VC
    for (PortSet& st : alloc_.stalled) st.reset(o);
  if (out.sending.empty()) outputs_.with_sending.reset(o);
  if (released && outputs_.space_waiter[static_cast<size_t>(o)]) {
    outputs_.space_waiter[static_cast<size_t>(o)] = 0;
    if (inputs_.pending_total > 0) request_tick(t);
  }
}

void Switch::enqueue_output(int o, PacketId id, Ps ready) {
  SwitchOutput& out = outputs_[static_cast<size_t>(o)];
  Packet& p = pool_.get(id);
  p.t_ready = ready;
  if (out.nothing_queued() && out.tx.link->free_at() <= ready &&
      out.tx.link->has_credits(p.vc, p.flits, now())) {
    out.tx.sent(p.vc, params_.vcs, now());
    transmit(o, id, ready);
    return;
  }
  out.queues[p.vc].push(pool_, id);
  ++out.queued;
  ++outputs_.queued_total;
  schedule_out_try(o, std::max(ready, out.tx.link->free_at()));
}

void Switch::transmit(int o, PacketId id, Ps start) {
  SwitchOutput& out = outputs_[static_cast<size_t>(o)];
  Packet& p = pool_.get(id);
  out.tx.link->send(id, p, start);
  const Ps gone = out.tx.link->free_at();
  if (params_.queueing != Queueing::kOutput) {
    if (out.sending.empty()) outputs_.gone[static_cast<size_t>(o)] = gone;
    out.sending.push_back(Sending{gone, p.vc, p.flits});
    outputs_.with_sending.set(o);
  }
  // Wake when the tail has gone only if someone needs that moment: the next
  // queued packet, or an allocation waiting for this buffer space.
  if (!out.nothing_queued() || outputs_.space_waiter[static_cast<size_t>(o)])
    schedule_out_try(o, gone);
}

void Switch::schedule_out_try(int o, Ps t) {
  SwitchOutput& out = outputs_[static_cast<size_t>(o)];
  if (out.try_at != kNever && out.try_at <= t) return;
  out.try_at = t;
  schedule(t, kItemOutTry, static_cast<std::uint32_t>(o));
}

void Switch::out_try(int o) {
  SwitchOutput& out = outputs_[static_cast<size_t>(o)];
  const Ps t = now();
  if (params_.queueing != Queueing::kOutput) release_space(o, t);
  if (out.tx.link->free_at() > t) {
    if (!out.nothing_queued()) schedule_out_try(o, out.tx.link->free_at());
    return;
  }
  Ps next_ready = kNever;
  const Transmitter::Outcome sent = out.tx.offer(
      t, params_.vcs,
      [&](int v) {
        const PacketQueue& q = out.queues[static_cast<size_t>(v)];
        if (q.empty()) return 0;
        const Packet& h = pool_.get(q.front());
        if (h.t_ready > t) {  // still in the pipeline
          next_ready = std::min(next_ready, h.t_ready);
          return 0;
        }
        return static_cast<int>(h.flits);
      },
      [&](int v) {
        const PacketId id = out.queues[static_cast<size_t>(v)].pop(pool_);
        --out.queued;
        --outputs_.queued_total;
        transmit(o, id, t);
        return true;
      });
  // Nothing went: look again when a head leaves the pipeline (a credit
  // shortage wakes us through the link).
  if (sent != Transmitter::Outcome::kSent && next_ready != kNever) schedule_out_try(o, next_ready);
}

}  // namespace fabricsim
