// The switch's end-of-run invariants and the description of a stuck
// switch (the watchdog fired).
#include "models/sc/switch.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "models/core/errors.hpp"

namespace fabricsim {

void Switch::check_end_of_run(Ps end) {
  check_output_counts();
  check_output_space();
  check_column_view();
  if (engine_ && engine_->slots_held() > mc_.originals + engine_->inflight())
    throw InvariantError("reduction engine holds " + std::to_string(engine_->slots_held()) +
                         " replication slots but only " +
                         std::to_string(mc_.originals + engine_->inflight()) +
                         " multicast writes are in the switch (a slot leaked)");
  check_input_credits();
  check_liveness(end);
}

void Switch::check_output_counts() const {
  for (int o = 0; o < params_.ports; ++o) {
    const SwitchOutput& out = outputs_[static_cast<size_t>(o)];
    std::uint64_t n = 0;
    for (const PacketQueue& q : out.queues) n += q.size();
    if (n != out.queued)
      throw InvariantError(out.tx.link->name() + ": the output counts " +
                           std::to_string(out.queued) + " packets queued, its queues hold " +
                           std::to_string(n));
  }
}

void Switch::check_output_space() const {
  for (int o = 0; o < params_.ports && params_.queueing != Queueing::kOutput; ++o) {
    const SwitchOutput& out = outputs_[static_cast<size_t>(o)];
    for (int v = 0; v < params_.vcs; ++v) {
      std::int64_t held = outputs_.space(o, v);
      const PacketQueue& q = out.queues[static_cast<size_t>(v)];
      for (PacketId id = q.front(); id != kNoPacket; id = pool_.get(id).next)
        held += pool_.get(id).flits;
      for (std::size_t k = 0; k < out.sending.size(); ++k)
        if (out.sending[k].vc == v) held += out.sending[k].flits;
      if (held != params_.output_buffer_flits)
        throw InvariantError(
            out.tx.link->name() + ".vc" + std::to_string(v) +
            ": output buffer not conserved: free + queued + sending = " + std::to_string(held) +
            " flits, capacity " + std::to_string(params_.output_buffer_flits));
    }
  }
}

void Switch::check_column_view() {
  // The smallest heads allocation passes outputs over by must be the queues'
  // (alloc_.col_min_flits and alloc_.stalled).
  for (size_t k = 0; k < alloc_.col_min_flits.size(); ++k) {
    const int v = static_cast<int>(k) / params_.xports, o = static_cast<int>(k) % params_.xports;
    const int least = least_head_flits(v, o);
    if (alloc_.col_min_flits[k] != 0 && alloc_.col_min_flits[k] != least)
      throw InvariantError("vc" + std::to_string(v) + " -> out" + std::to_string(o) +
                           ": smallest waiting head recorded as " +
                           std::to_string(alloc_.col_min_flits[k]) + " flits, the queues hold " +
                           std::to_string(least));
    // An output passed over must still be one where no waiting head fits.
    if (alloc_.stalled[static_cast<size_t>(v)].test(o) &&
        (least == 0 || least <= outputs_.space(o, v) ||
         !outputs_.space_waiter[static_cast<size_t>(o)]))
      throw InvariantError("vc" + std::to_string(v) + " -> out" + std::to_string(o) +
                           ": passed over by allocation, but a head of " + std::to_string(least) +
                           " flits fits its " + std::to_string(outputs_.space(o, v)) +
                           " free flits or nothing waits");
  }
}

void Switch::check_input_credits() {
  // Per input: flits of packets not yet granted plus flits still on the wire
  // must equal the credits the upstream link counts as outstanding (granted
  // packets have had their credit return scheduled).
  for (int i = 0; i < params_.ports; ++i) {
    const Link& up = *inputs_[static_cast<size_t>(i)].rx.link;
    std::int64_t on_wire = 0;
    for_each_pending([&](const Item& it) {
      if (it.kind == kItemArrive && it.b == static_cast<std::uint32_t>(i))
        on_wire += pool_.get(it.a).flits;
    });
    std::int64_t outstanding = 0;
    for (int v = 0; v < up.vcs(); ++v) outstanding += up.flits_outstanding(v);
    const std::int64_t queued = queued_input_flits(i);
    if (queued + on_wire != outstanding)
      throw InvariantError(up.name() + ": " + std::to_string(queued) +
                           " flits queued at the input and " + std::to_string(on_wire) +
                           " on the wire, but " + std::to_string(outstanding) +
                           " credits outstanding");
  }
}

void Switch::check_liveness(Ps end) const {
  // Liveness: waiting packets need a scheduled allocation, unless each is
  // blocked on output-buffer space whose release will call for one.
  if (inputs_.pending_total > 0 && alloc_.tick_at == kNever) {
    for (int i = 0; i < params_.xports; ++i) {
      const SwitchInput& in = inputs_[static_cast<size_t>(i)];
      for (std::size_t k = 0; k < in.queues.size(); ++k) {
        const PacketQueue& q = in.queues[k].q;
        const bool lazy_only = q.empty() && !in.queues[k].lazy.empty();
        if (q.empty() && !lazy_only) continue;
        const int o =
            lazy_only ? static_cast<int>(k) % params_.xports : pool_.get(q.front()).out_port;
        if (is_engine_port(o) ? !eng_.waiter : !outputs_.space_waiter[static_cast<size_t>(o)])
          throw InvariantError("input " + std::to_string(i) + " holds a packet for output " +
                               std::to_string(o) +
                               " but no allocation is scheduled (lost wake-up)");
      }
    }
  }
  for (int o = 0; o < params_.ports; ++o) {
    const SwitchOutput& out = outputs_[static_cast<size_t>(o)];
    if (out.tx.link->sender_stranded(!out.nothing_queued(), out.try_at, end))
      throw InvariantError(out.tx.link->name() +
                           ": packets wait in the output buffer but nothing will send them "
                           "(lost wake-up)");
  }
}

void Switch::diagnose(Stuck& out) const {
  auto describe = [&](PacketId id) {
    const Packet& p = pool_.get(id);
    return "packet " + std::to_string(p.serial) + " (" + std::to_string(p.flits) + " flits, " +
           std::to_string(p.src) + " -> " + std::to_string(p.dst) + ")";
  };
  const std::string base = name();
  for (int i = 0; i < params_.ports; ++i) {
    const SwitchInput& in = inputs_[static_cast<size_t>(i)];
    std::vector<int> targets;  // outputs the queued packets wait for, once each
    std::uint32_t packets = 0;
    PacketId head = kNoPacket;
    for (std::size_t k = 0; k < in.queues.size(); ++k) {
      const PacketQueue& q = in.queues[k].q;
      for (PacketId id = q.front(); id != kNoPacket; id = pool_.get(id).next) {
        ++packets;
        if (head == kNoPacket) head = id;
        const int o = pool_.get(id).out_port;
        if (std::find(targets.begin(), targets.end(), o) == targets.end()) targets.push_back(o);
      }
      if (!in.queues[k].lazy.empty()) {  // copies not made yet
        packets += static_cast<std::uint32_t>(in.queues[k].lazy.size());
        if (head == kNoPacket) head = in.queues[k].lazy.front().original;
        const int o = static_cast<int>(k) % params_.xports;
        if (std::find(targets.begin(), targets.end(), o) == targets.end()) targets.push_back(o);
      }
    }
    if (packets == 0) continue;
    std::string outs;
    for (int o : targets) {
      outs += (outs.empty() ? "" : ", ") + std::string("out") + std::to_string(o);
      const SwitchOutput& ot = outputs_[static_cast<size_t>(o)];
      if (in.rx.link && ot.tx.link) out.waits.emplace_back(in.rx.link, ot.tx.link);
      std::string space;
      for (int v = 0; v < params_.vcs; ++v)
        space += (v ? "/" : "") + std::to_string(outputs_.space(o, v));
      outs += " (output buffer free " + space + " flits per VC)";
    }
    out.lines.push_back(base + ".in" + std::to_string(i) +
                        (in.rx.link ? " (fed by " + in.rx.link->name() + ")" : std::string()) + ": " +
                        std::to_string(packets) + " packets, " + std::to_string(in.total_occ) +
                        " flits; first " + describe(head) + "; waiting for " + outs);
  }
  for (int o = 0; o < params_.ports; ++o) {
    const SwitchOutput& ot = outputs_[static_cast<size_t>(o)];
    for (std::size_t v = 0; v < ot.queues.size(); ++v) {
      const PacketQueue& q = ot.queues[v];
      if (q.empty() || ot.tx.link == nullptr) continue;
      const Packet& h = pool_.get(q.front());
      const Link& l = *ot.tx.link;
      out.lines.push_back(l.name() + " vc" + std::to_string(v) + ": " + std::to_string(q.size()) +
                          " packets waiting for the link; first " + describe(q.front()) +
                          " needs " + std::to_string(h.flits) + " credits, has " +
                          std::to_string(l.credits(static_cast<int>(v)).available()) + " (" +
                          std::to_string(l.flits_outstanding(static_cast<int>(v))) +
                          " flits held by the receiver, " +
                          std::to_string(l.credits_returning(static_cast<int>(v))) + " returning)");
    }
  }
}

}  // namespace fabricsim
