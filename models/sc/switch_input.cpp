// The switch's input side (switch_input.hpp): packets arriving from the
// links, their queues and the column view allocation reads, and the
// input-buffer occupancy and its statistics.
#include "models/sc/switch.hpp"

#include <algorithm>
#include <string>

#include "models/core/errors.hpp"

namespace fabricsim {

SwitchInputs::SwitchInputs(const SwitchParams& p)
    : xports(p.xports),
      port(static_cast<size_t>(p.xports)),
      busy(static_cast<size_t>(p.xports), 0),
      active(p.xports) {
  const bool voq = p.queueing == Queueing::kVoq;
  const auto vcs = static_cast<size_t>(p.vcs);
  for (SwitchInput& in : port) {
    in.queues.resize(voq ? vcs * static_cast<size_t>(p.xports) : vcs);
    if (voq) in.nonempty.assign(vcs, PortSet(p.xports));
    in.engine_heads.resize(vcs * static_cast<size_t>(p.engine_ports));
    in.occupancy.assign(vcs, 0);
  }
}

void Switch::arrive(PacketId id, int port) {
  SwitchInput& in = inputs_[static_cast<size_t>(port)];
  in.rx.arrived();
  Packet& p = pool_.get(id);
  const Ps t = now();
  // Route: the output ports toward the destination endpoint; with several
  // (parallel links, planes) the address picks one, so an address stream is
  // spread evenly and each address always takes the same path (in order).
  const bool multicast = p.kind == PacketKind::kMcStore && !params_.mc_via_engine;
  if (to_engine(p.kind) || (p.kind == PacketKind::kMcStore && params_.mc_via_engine)) {
    if (!has_engine())
      throw InvariantError("a reduction request reached a switch without an engine");
    p.out_port = static_cast<std::int16_t>(engine_->port_for(p, port));
  } else if (!multicast) {
    if (p.dst < 0 || static_cast<size_t>(p.dst) >= routes_.size() ||
        routes_[static_cast<size_t>(p.dst)].empty())
      throw InvariantError("packet " + std::to_string(p.serial) + " has no route to endpoint " +
                           std::to_string(p.dst));
    p.out_port = static_cast<std::int16_t>(route(p.dst, p.addr));
  }
  if (log_.packet(p))
    log("in" + std::to_string(port) + " takes " + describe(p) + " -> " +
        (multicast ? std::string("replicated to group ") + std::to_string(p.group)
                   : (has_engine() && p.out_port >= params_.engine_port
                          ? "the reduction engine"
                          : "out" + std::to_string(p.out_port))));
  take_into_buffer(in, p, t);
  if (multicast) {
    replicate(id, port, t);
    return;
  }

  if (params_.queueing == Queueing::kOutput) {
    const Ps tail = t + static_cast<Ps>(p.flits - 1) * in.rx.link->flit_ps();
    leave_input(in, p.vc, p.flits, t, tail);
    enqueue_output(p.out_port, id, edge_at_or_after(t, params_.cycle_ps) + params_.pipeline_ps);
    return;
  }
  enqueue_input(port, id);
  request_tick(t);
}

void Switch::take_into_buffer(SwitchInput& in, const Packet& p, Ps t) {
  in.apply_departures(t);
  const int occ = in.occupancy[p.vc];
  if (occ + p.flits > params_.in_capacity_per_vc)
    throw InvariantError(in.rx.link->name() + ": input buffer overrun on vc" + std::to_string(p.vc) +
                         " (" + std::to_string(occ) + " + " + std::to_string(p.flits) + " > " +
                         std::to_string(params_.in_capacity_per_vc) +
                         " flits): credits were not honoured");
  in.hold(p.vc, p.flits);
  if (wave_) wave_->add(in.w_occupancy, t, p.flits);
  if (window_.contains(t)) in.max_occ = std::max(in.max_occ, in.total_occ);
}

void Switch::enqueue_input(int port, PacketId id) {
  SwitchInput& in = inputs_[static_cast<size_t>(port)];
  const Packet& p = pool_.get(id);
  if (params_.queueing == Queueing::kFifo) {
    in.queues[p.vc].q.push(pool_, id);
  } else {
    // Copies still to be made are ahead of it: make them first (FIFO).
    while (!inputs_.lazy(in, p.vc, p.out_port).empty()) make_lazy_copy(in, p.vc, p.out_port);
    PacketQueue& q = inputs_.voq(in, p.vc, p.out_port);
    if (q.empty() && is_engine_port(p.out_port)) set_engine_head(in, p.vc, p.out_port, id);
    q.push(pool_, id);
    voq_filled(port, p.vc, p.out_port, p.flits);
  }
  ++in.pending;
  ++inputs_.pending_total;
  inputs_.active.set(port);
}

void Switch::voq_filled(int i, int vc, int o, int flits) {
  inputs_[static_cast<size_t>(i)].nonempty[static_cast<size_t>(vc)].set(o);
  PortSet& c = alloc_.column(vc, o);
  // Pushed at the back: it is the head only if the queue was empty.
  if (!c.test(i)) alloc_.head_joined(vc, o, flits);
  c.set(i);
  alloc_.requested[static_cast<size_t>(vc)].set(o);
}

int Switch::least_head_flits(int vc, int o) {
  int least = 0;
  alloc_.column(vc, o).for_each([&](int i) {
    const int f = inputs_.head_flits(inputs_[static_cast<size_t>(i)], vc, o);
    least = least == 0 ? f : std::min(least, f);
  });
  return least;
}

int Switch::col_min_flits(int vc, int o) {
  int& m = alloc_.col_min(vc, o);
  if (m == 0) m = least_head_flits(vc, o);
  return m;
}

void Switch::voq_emptied(int i, int vc, int o) {
  if (is_engine_port(o)) engine_head_gone(i, vc, o);
  inputs_[static_cast<size_t>(i)].nonempty[static_cast<size_t>(vc)].reset(o);
  PortSet& c = alloc_.column(vc, o);
  c.reset(i);
  if (!c.any()) alloc_.requested[static_cast<size_t>(vc)].reset(o);
}

// The packet's flits occupy the input buffer from t_in (head arrival; the
// whole packet is counted from then, conservatively) to t_out (tail gone).
void Switch::leave_input(SwitchInput& in, int vc, int flits, Ps t_in, Ps t_out) {
  // Departures due by now go first: an input that receives nothing from a
  // link (the engine's) has no arrive() to apply them, and its ring would
  // otherwise grow for the whole run (measured: 8.6 MB at 32 MiB NVLS).
  in.apply_departures(now());
  in.departures.push_back(
      Departure{t_out, static_cast<std::uint16_t>(vc), static_cast<std::uint16_t>(flits)});
  if (in.rx.link == nullptr) return;  // the engine's input: no buffer, no credits
  in.occ_integral += static_cast<double>(flits) *
                     static_cast<double>(overlap(t_in, t_out, window_.begin, window_.end));
  if (wave_) wave_->add(in.w_occupancy, t_out, -flits);
  in.rx.free(vc, flits, t_out);
}

int Switch::input_occupancy(int port, int vc, Ps t) {
  SwitchInput& in = inputs_[static_cast<size_t>(port)];
  in.apply_departures(t);
  return in.occupancy[static_cast<size_t>(vc)];
}

std::int64_t SwitchInput::queued_flits(const PacketPool& pool) const {
  // Multicast copies hold no buffer of their own: their original does.
  std::int64_t n = mc_held_flits;
  for (const Queue& x : queues)
    for (PacketId id = x.q.front(); id != kNoPacket; id = pool.get(id).next)
      if (pool.get(id).parent == kNoPacket) n += pool.get(id).flits;
  return n;
}

std::uint64_t SwitchInputs::copies_unmade() const {
  std::uint64_t n = 0;
  for (const SwitchInput& in : port)
    for (const SwitchInput::Queue& x : in.queues) n += x.lazy.size();
  return n;
}

// The occupancy maximum is otherwise sampled at head arrivals in the window;
// a buffer already full when the window opens counts too.
void Switch::sample_window_start() {
  window_sampled_ = true;
  for (SwitchInput& in : inputs_) {
    in.apply_departures(window_.begin);
    in.max_occ = std::max(in.max_occ, in.total_occ);
  }
}

void Switch::finish(Ps end) {
  // Packets still waiting for allocation have occupied their input since
  // their head arrived; their share was not added at a grant.
  for (SwitchInput& in : inputs_)
    for (const SwitchInput::Queue& x : in.queues)
      for (PacketId id = x.q.front(); id != kNoPacket; id = pool_.get(id).next) {
        const Packet& p = pool_.get(id);
        if (p.parent != kNoPacket) continue;  // counted once, through its original
        in.occ_integral += static_cast<double>(p.flits) *
                           static_cast<double>(overlap(p.t_head, end, window_.begin, window_.end));
      }
}

double Switch::mean_input_occupancy(int port) const {
  return window_.length() ? inputs_[static_cast<size_t>(port)].occ_integral /
                                static_cast<double>(window_.length())
                          : 0.0;
}

}  // namespace fabricsim
