#include "models/sc/switch.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/errors.hpp"

namespace fabricsim {

Switch::Switch(const sc_core::sc_module_name& name, Scheduler& scheduler, const Config& cfg,
               PacketPool& pool, Window window, int ports, std::vector<std::vector<int>> routes,
               PayloadPool* payloads, std::unique_ptr<AluBackend> alu)
    : TimedModule(name, scheduler),
      ports_(ports),
      engine_port_(uses_reduction_engine(cfg) ? ports : -1),
      engine_ports_(uses_reduction_engine(cfg) ? static_cast<int>(cfg.reduction.ports) : 0),
      xports_(ports + (uses_reduction_engine(cfg) ? static_cast<int>(cfg.reduction.ports) : 0)),
      routes_(std::move(routes)),
      payloads_(payloads),
      stripe_bytes_(stripe_bytes(cfg)),
      vcs_(static_cast<int>(cfg.sw.vcs)),
      queueing_(cfg.sw.queueing),
      in_capacity_per_vc_(static_cast<int>(cfg.sw.input_buffer_flits / cfg.sw.vcs)),
      flit_ps_(flit_time_ps(cfg.link)),
      cycle_ps_(switch_cycle_ps(cfg.sw)),
      pipeline_ps_(static_cast<Ps>(cfg.sw.pipeline_cycles) * switch_cycle_ps(cfg.sw)),
      speedup_(cfg.sw.speedup),
      pool_(pool),
      window_(window),
      inputs_(static_cast<size_t>(xports_)),
      outputs_(static_cast<size_t>(xports_)),
      in_busy_(static_cast<size_t>(xports_), 0),
      out_busy_(static_cast<size_t>(xports_), 0),
      out_gone_(static_cast<size_t>(xports_), kNever),
      out_space_(static_cast<size_t>(xports_) * static_cast<size_t>(vcs_),
                 static_cast<int>(cfg.sw.output_buffer_flits)),
      space_waiter_(static_cast<size_t>(xports_), 0),
      allocator_(make_allocator(cfg.sw.allocator, xports_, xports_,
                                static_cast<int>(cfg.sw.iterations),
                                static_cast<std::uint64_t>(cfg.sim.seed))),
      requests_(
          xports_, xports_,
          queueing_ == Queueing::kVoq ? RequestMatrix::Major::kCols : RequestMatrix::Major::kRows),
      match_(xports_, xports_),
      active_(xports_),
      out_free_(xports_),
      scratch_(xports_),
      matched_out_(xports_),
      fits_any_(static_cast<size_t>(vcs_), PortSet(xports_)),
      busy_out_(xports_),
      sending_out_(xports_),
      col_(queueing_ == Queueing::kVoq ? static_cast<size_t>(vcs_ * xports_) : 0, PortSet(xports_)),
      requested_(static_cast<size_t>(vcs_), PortSet(xports_)),
      col_min_flits_(col_.size(), 0),
      stalled_(static_cast<size_t>(vcs_), PortSet(xports_)),
      free_in_(xports_),
      free_requested_(xports_),
      busy_requested_(xports_),
      max_flits_(max_packet_flits(cfg)),
      output_buffer_flits_(static_cast<int>(cfg.sw.output_buffer_flits)),
      mc_via_engine_(engine_port_ >= 0 && cfg.sw.multicast == Multicast::kEngine) {
  if (engine_port_ >= 0)
    engine_ = std::make_unique<ReductionEngine>(ReductionEngine::Params::from(cfg, engine_port_),
                                                pool, payloads, std::move(alu),
                                                static_cast<EngineHost&>(*this), window);
  for (Share& sh : share_) {
    sh.given.assign(static_cast<size_t>(xports_), -1);
    sh.by_bits = vcs_ * engine_ports_ <= 64;
    sh.ask_bits.assign(static_cast<size_t>(xports_), 0);
    sh.askers = PortSet(xports_);
  }
  for (auto& c : engine_class_)
    c.assign(static_cast<size_t>(std::max(0, vcs_ * engine_ports_)), PortSet(xports_));
  engine_scratch_ = PortSet(xports_);
  const size_t queues_per_input =
      static_cast<size_t>(queueing_ == Queueing::kVoq ? vcs_ * xports_ : vcs_);
  for (auto& in : inputs_) {
    in.queues.resize(queues_per_input);
    if (queueing_ == Queueing::kVoq)
      in.nonempty.assign(static_cast<size_t>(vcs_), PortSet(xports_));
    in.engine_heads.resize(static_cast<size_t>(vcs_ * engine_ports_));
    in.occupancy.assign(static_cast<size_t>(vcs_), 0);
  }
  for (auto& out : outputs_) out.queues.resize(static_cast<size_t>(vcs_));
  for (int o = 0; o < xports_; ++o)
    for (int v = 0; v < vcs_; ++v) update_fits(o, v);
  // Crossbar transfer of L flits at speedup x link rate, rounded up to 1 ps.
  xfer_ps_.resize(static_cast<size_t>(max_packet_flits(cfg)) + 1);
  for (size_t l = 0; l < xfer_ps_.size(); ++l)
    xfer_ps_[l] = static_cast<Ps>(std::ceil(static_cast<double>(l * flit_ps_) / speedup_));
}

void Switch::set_multicast_groups(std::vector<std::vector<int>> groups) {
  groups_ = std::move(groups);
  if (engine_) engine_->set_groups(groups_, routes_.size());
}

void Switch::enqueue_input(int port, PacketId id) {
  Input& in = inputs_[static_cast<size_t>(port)];
  const Packet& p = pool_.get(id);
  if (queueing_ == Queueing::kFifo) {
    in.queues[p.vc].q.push(pool_, id);
  } else {
    // Copies still to be made are ahead of it: make them first (FIFO).
    while (!lazy(in, p.vc, p.out_port).empty()) make_lazy_copy(in, p.vc, p.out_port);
    PacketQueue& q = voq(in, p.vc, p.out_port);
    if (q.empty() && is_engine_port(p.out_port)) set_engine_head(in, p.vc, p.out_port, id);
    q.push(pool_, id);
    voq_filled(port, p.vc, p.out_port, p.flits);
  }
  ++in.pending;
  ++pending_total_;
  active_.set(port);
}

void Switch::voq_filled(int i, int vc, int o, int flits) {
  inputs_[static_cast<size_t>(i)].nonempty[static_cast<size_t>(vc)].set(o);
  PortSet& c = col_[static_cast<size_t>(vc * xports_ + o)];
  // Pushed at the back: it is the head only if the queue was empty.
  if (!c.test(i)) head_joined(vc, o, flits);
  c.set(i);
  requested_[static_cast<size_t>(vc)].set(o);
}

int Switch::least_head_flits(int vc, int o) {
  int least = 0;
  col_[static_cast<size_t>(vc * xports_ + o)].for_each([&](int i) {
    const int f = head_flits(inputs_[static_cast<size_t>(i)], vc, o);
    least = least == 0 ? f : std::min(least, f);
  });
  return least;
}

int Switch::col_min_flits(int vc, int o) {
  int& m = col_min_flits_[static_cast<size_t>(vc * xports_ + o)];
  if (m == 0) m = least_head_flits(vc, o);
  return m;
}

void Switch::voq_emptied(int i, int vc, int o) {
  if (is_engine_port(o)) engine_head_gone(i, vc, o);
  inputs_[static_cast<size_t>(i)].nonempty[static_cast<size_t>(vc)].reset(o);
  PortSet& c = col_[static_cast<size_t>(vc * xports_ + o)];
  c.reset(i);
  if (!c.any()) requested_[static_cast<size_t>(vc)].reset(o);
}

void Switch::connect_input(int port, Link* in) {
  inputs_[static_cast<size_t>(port)].link = in;
}
void Switch::connect_output(int port, Link* out) {
  outputs_[static_cast<size_t>(port)].tx.link = out;
}

void Switch::handle(const Item& item) {
  if (!window_sampled_ && item.time >= window_.begin) sample_window_start();
  switch (item.kind) {
    case kItemArrive:
      arrive(item.a, static_cast<int>(item.b));
      break;
    case kItemCredit:
      outputs_[item.a].tx.link->credits_arrived(static_cast<int>(item.b), static_cast<int>(item.c));
      out_try(static_cast<int>(item.a));
      break;
    case kItemCreditWake:
      out_try(static_cast<int>(item.a));
      break;
    case kItemTick:
      if (item.time == tick_at_) {
        tick_at_ = kNever;
        alloc_due_ = true;
      }
      break;
    case kItemEngine:
      engine_->fold(item.a, now());
      break;
    case kItemOutTry: {
      Output& o = outputs_[item.a];
      if (item.time == o.try_at) o.try_at = kNever;
      out_try(static_cast<int>(item.a));
      break;
    }
    default:
      throw InvariantError("switch: unknown item kind " + std::to_string(item.kind));
  }
}

void Switch::after_items() {
  if (alloc_due_) {
    alloc_due_ = false;
    allocate(now());
  }
}

void Switch::apply_departures(Input& in, Ps t) {
  while (!in.departures.empty() && in.departures.front().t <= t) {
    const Departure& d = in.departures.front();
    in.occupancy[d.vc] -= d.flits;
    in.total_occ -= d.flits;
    in.departures.pop_front();
  }
}

int Switch::input_occupancy(int port, int vc, Ps t) {
  Input& in = inputs_[static_cast<size_t>(port)];
  apply_departures(in, t);
  return in.occupancy[static_cast<size_t>(vc)];
}

std::int64_t Switch::queued_input_flits(int port) const {
  // Multicast copies hold no buffer of their own: their original does.
  const Input& in = inputs_[static_cast<size_t>(port)];
  std::int64_t n = in.mc_held_flits;
  for (const Input::Queue& x : in.queues)
    for (PacketId id = x.q.front(); id != kNoPacket; id = pool_.get(id).next)
      if (pool_.get(id).parent == kNoPacket) n += pool_.get(id).flits;
  return n;
}

// The occupancy maximum is otherwise sampled at head arrivals in the window;
// a buffer already full when the window opens counts too.
void Switch::sample_window_start() {
  window_sampled_ = true;
  for (Input& in : inputs_) {
    apply_departures(in, window_.begin);
    in.max_occ = std::max(in.max_occ, in.total_occ);
  }
}

void Switch::check_end_of_run(Ps end) {
  for (int o = 0; o < ports_; ++o) {
    const Output& out = outputs_[static_cast<size_t>(o)];
    std::uint64_t n = 0;
    for (const PacketQueue& q : out.queues) n += q.size();
    if (n != out.queued)
      throw InvariantError(out.tx.link->name() + ": the output counts " + std::to_string(out.queued) +
                           " packets queued, its queues hold " + std::to_string(n));
  }
  for (int o = 0; o < ports_ && queueing_ != Queueing::kOutput; ++o) {
    const Output& out = outputs_[static_cast<size_t>(o)];
    for (int v = 0; v < vcs_; ++v) {
      std::int64_t held = space(o, v);
      const PacketQueue& q = out.queues[static_cast<size_t>(v)];
      for (PacketId id = q.front(); id != kNoPacket; id = pool_.get(id).next)
        held += pool_.get(id).flits;
      for (std::size_t k = 0; k < out.sending.size(); ++k)
        if (out.sending[k].vc == v) held += out.sending[k].flits;
      if (held != output_buffer_flits_)
        throw InvariantError(
            out.tx.link->name() + ".vc" + std::to_string(v) +
            ": output buffer not conserved: free + queued + sending = " + std::to_string(held) +
            " flits, capacity " + std::to_string(output_buffer_flits_));
    }
  }
  // The smallest heads allocation passes outputs over by must be the queues'
  // (col_min_flits_ and stalled_).
  for (size_t k = 0; k < col_min_flits_.size(); ++k) {
    const int v = static_cast<int>(k) / xports_, o = static_cast<int>(k) % xports_;
    const int least = least_head_flits(v, o);
    if (col_min_flits_[k] != 0 && col_min_flits_[k] != least)
      throw InvariantError("vc" + std::to_string(v) + " -> out" + std::to_string(o) +
                           ": smallest waiting head recorded as " +
                           std::to_string(col_min_flits_[k]) + " flits, the queues hold " +
                           std::to_string(least));
    // An output passed over must still be one where no waiting head fits.
    if (stalled_[static_cast<size_t>(v)].test(o) &&
        (least == 0 || least <= space(o, v) || !space_waiter_[static_cast<size_t>(o)]))
      throw InvariantError("vc" + std::to_string(v) + " -> out" + std::to_string(o) +
                           ": passed over by allocation, but a head of " + std::to_string(least) +
                           " flits fits its " + std::to_string(space(o, v)) +
                           " free flits or nothing waits");
  }
  if (engine_ && engine_->slots_held() > mc_originals_ + engine_->inflight())
    throw InvariantError("reduction engine holds " + std::to_string(engine_->slots_held()) +
                         " replication slots but only " +
                         std::to_string(mc_originals_ + engine_->inflight()) +
                         " multicast writes are in the switch (a slot leaked)");
  // Per input: flits of packets not yet granted plus flits still on the wire
  // must equal the credits the upstream link counts as outstanding (granted
  // packets have had their credit return scheduled).
  for (int i = 0; i < ports_; ++i) {
    const Link& up = *inputs_[static_cast<size_t>(i)].link;
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
  // Liveness: waiting packets need a scheduled allocation, unless each is
  // blocked on output-buffer space whose release will call for one.
  if (pending_total_ > 0 && tick_at_ == kNever) {
    for (int i = 0; i < xports_; ++i) {
      const Input& in = inputs_[static_cast<size_t>(i)];
      for (std::size_t k = 0; k < in.queues.size(); ++k) {
        const PacketQueue& q = in.queues[k].q;
        const bool lazy_only = q.empty() && !in.queues[k].lazy.empty();
        if (q.empty() && !lazy_only) continue;
        const int o = lazy_only ? static_cast<int>(k) % xports_ : pool_.get(q.front()).out_port;
        if (is_engine_port(o) ? !engine_waiter_ : !space_waiter_[static_cast<size_t>(o)])
          throw InvariantError("input " + std::to_string(i) + " holds a packet for output " +
                               std::to_string(o) +
                               " but no allocation is scheduled (lost wake-up)");
      }
    }
  }
  for (int o = 0; o < ports_; ++o) {
    const Output& out = outputs_[static_cast<size_t>(o)];
    if (out.tx.link->sender_stranded(!queues_empty(out), out.try_at, end))
      throw InvariantError(out.tx.link->name() +
                           ": packets wait in the output buffer but nothing will send them "
                           "(lost wake-up)");
  }
}

void Switch::finish(Ps end) {
  // Packets still waiting for allocation have occupied their input since
  // their head arrived; their share was not added at a grant.
  for (Input& in : inputs_)
    for (const Input::Queue& x : in.queues)
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

// The packet's flits occupy the input buffer from t_in (head arrival; the
// whole packet is counted from then, conservatively) to t_out (tail gone).
void Switch::leave_input(Input& in, int vc, int flits, Ps t_in, Ps t_out) {
  // Departures due by now go first: an input that receives nothing from a
  // link (the engine's) has no arrive() to apply them, and its ring would
  // otherwise grow for the whole run (measured: 8.6 MB at 32 MiB NVLS).
  apply_departures(in, now());
  in.departures.push_back(
      Departure{t_out, static_cast<std::uint16_t>(vc), static_cast<std::uint16_t>(flits)});
  if (in.link == nullptr) return;  // the engine's input: no buffer, no credits
  in.occ_integral += static_cast<double>(flits) *
                     static_cast<double>(overlap(t_in, t_out, window_.begin, window_.end));
  if (wave_) wave_->add(in.w_occupancy, t_out, -flits);
  in.link->return_credits(vc, flits, t_out);
}

void Switch::trace(WaveTrace& w) {
  wave_ = &w;
  const std::string base = name();
  for (int i = 0; i < ports_; ++i)
    inputs_[static_cast<size_t>(i)].w_occupancy =
        w.signal(base + ".in" + std::to_string(i) + ".occupancy", 24);
  if (engine_) engine_->trace(w, base);
}

int Switch::route(int dst, std::uint64_t addr) const {
  const std::vector<int>& r = routes_[static_cast<size_t>(dst)];
  int o = r.size() == 1 ? r[0] : r[(addr / stripe_bytes_) % r.size()];
  if (r.size() > 1 && !align_.empty()) {
    // The link the destination would pick for this address, if it is one of ours.
    const auto [first, total] = align_[static_cast<size_t>(dst)];
    const auto l =
        static_cast<int>((addr / stripe_bytes_) % static_cast<std::uint64_t>(total)) - first;
    if (l >= 0 && l < static_cast<int>(r.size())) o = r[static_cast<size_t>(l)];
  }
  if (!any_down_ || !outputs_[static_cast<size_t>(o)].tx.link->down()) return o;
  // Its link is down: another route to the destination (same address, same choice).
  std::vector<int> alive;
  for (int k : r)
    if (!outputs_[static_cast<size_t>(k)].tx.link->down()) alive.push_back(k);
  if (alive.empty()) {
    std::string links;
    for (int k : r)
      links += (links.empty() ? "" : ", ") + outputs_[static_cast<size_t>(k)].tx.link->name();
    throw InvariantError(std::string(name()) + ": no path to endpoint " + std::to_string(dst) +
                         ": every link toward it is down (" + links + ")");
  }
  return alive[static_cast<size_t>((addr / stripe_bytes_) % alive.size())];
}

bool Switch::can_reach(int dst) const {
  for (int k : routes_[static_cast<size_t>(dst)])
    if (!outputs_[static_cast<size_t>(k)].tx.link->down()) return true;
  return false;
}

void Switch::output_down(int o) {
  any_down_ = true;
  // Packets still waiting for allocation toward `o` take another route;
  // those already past the crossbar (its output queue) still cross.
  for (int i = 0; i < xports_; ++i) {
    Input& in = inputs_[static_cast<size_t>(i)];
    // Copies not yet made are made now (rare: a fault), so every queue
    // holds only packets and moved ones keep their order behind them.
    for (int k = 0; k < static_cast<int>(in.queues.size()); ++k)
      while (!in.queues[static_cast<size_t>(k)].lazy.empty())
        make_lazy_copy(in, k / xports_, k % xports_);
    if (queueing_ == Queueing::kFifo) {
      for (Input::Queue& x : in.queues)
        for (PacketId id = x.q.front(); id != kNoPacket; id = pool_.get(id).next) {
          Packet& p = pool_.get(id);
          if (p.out_port == o) p.out_port = route(p.dst, p.addr);
        }
    } else if (queueing_ == Queueing::kVoq) {
      for (int v = 0; v < vcs_; ++v) {
        PacketQueue& q = voq(in, v, o);
        if (q.empty()) continue;
        std::vector<PacketId> moved;
        while (!q.empty()) moved.push_back(q.pop(pool_));
        col_min_flits_[static_cast<size_t>(v * xports_ + o)] = 0;
        stalled_[static_cast<size_t>(v)].reset(o);
        voq_emptied(i, v, o);
        for (PacketId id : moved) {
          Packet& p = pool_.get(id);
          p.out_port = route(p.dst, p.addr);
          voq(in, v, p.out_port).push(pool_, id);
          voq_filled(i, v, p.out_port, p.flits);
        }
      }
    }
  }
  if (pending_total_ > 0) request_tick(now());
}

void Switch::diagnose(Stuck& out) const {
  auto describe = [&](PacketId id) {
    const Packet& p = pool_.get(id);
    return "packet " + std::to_string(p.serial) + " (" + std::to_string(p.flits) + " flits, " +
           std::to_string(p.src) + " -> " + std::to_string(p.dst) + ")";
  };
  const std::string base = name();
  for (int i = 0; i < ports_; ++i) {
    const Input& in = inputs_[static_cast<size_t>(i)];
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
        const int o = static_cast<int>(k) % xports_;
        if (std::find(targets.begin(), targets.end(), o) == targets.end()) targets.push_back(o);
      }
    }
    if (packets == 0) continue;
    std::string outs;
    for (int o : targets) {
      outs += (outs.empty() ? "" : ", ") + std::string("out") + std::to_string(o);
      const Output& ot = outputs_[static_cast<size_t>(o)];
      if (in.link && ot.tx.link) out.waits.emplace_back(in.link, ot.tx.link);
      std::string space;
      for (int v = 0; v < vcs_; ++v) space += (v ? "/" : "") + std::to_string(this->space(o, v));
      outs += " (output buffer free " + space + " flits per VC)";
    }
    out.lines.push_back(base + ".in" + std::to_string(i) +
                        (in.link ? " (fed by " + in.link->name() + ")" : std::string()) + ": " +
                        std::to_string(packets) + " packets, " + std::to_string(in.total_occ) +
                        " flits; first " + describe(head) + "; waiting for " + outs);
  }
  for (int o = 0; o < ports_; ++o) {
    const Output& ot = outputs_[static_cast<size_t>(o)];
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

void Switch::arrive(PacketId id, int port) {
  Input& in = inputs_[static_cast<size_t>(port)];
  in.link->arrived();
  Packet& p = pool_.get(id);
  const Ps t = now();
  // Route: the output ports toward the destination endpoint; with several
  // (parallel links, planes) the address picks one, so an address stream is
  // spread evenly and each address always takes the same path (in order).
  const bool multicast = p.kind == PacketKind::kMcStore && !mc_via_engine_;
  if (to_engine(p.kind) || (p.kind == PacketKind::kMcStore && mc_via_engine_)) {
    if (!has_engine())
      throw InvariantError("a reduction request reached a switch without an engine");
    p.out_port = engine_port_for(p.addr);
  } else if (!multicast) {
    if (p.dst < 0 || static_cast<size_t>(p.dst) >= routes_.size() ||
        routes_[static_cast<size_t>(p.dst)].empty())
      throw InvariantError("packet " + std::to_string(p.serial) + " has no route to endpoint " +
                           std::to_string(p.dst));
    p.out_port = route(p.dst, p.addr);
  }
  if (log_.packet(p))
    log("in" + std::to_string(port) + " takes " + describe(p) + " -> " +
        (multicast
             ? std::string("replicated to group ") + std::to_string(p.group)
             : (has_engine() && p.out_port >= engine_port_ ? "the reduction engine"
                                                           : "out" + std::to_string(p.out_port))));
  apply_departures(in, t);
  int& occ = in.occupancy[p.vc];
  if (occ + p.flits > in_capacity_per_vc_)
    throw InvariantError(in.link->name() + ": input buffer overrun on vc" + std::to_string(p.vc) +
                         " (" + std::to_string(occ) + " + " + std::to_string(p.flits) + " > " +
                         std::to_string(in_capacity_per_vc_) +
                         " flits): credits were not honoured");
  occ += p.flits;
  in.total_occ += p.flits;
  if (wave_) wave_->add(in.w_occupancy, t, p.flits);
  if (window_.contains(t)) in.max_occ = std::max(in.max_occ, in.total_occ);
  if (multicast) {
    replicate(id, port, t);
    return;
  }

  if (queueing_ == Queueing::kOutput) {
    const Ps tail = t + static_cast<Ps>(p.flits - 1) * in.link->flit_ps();
    leave_input(in, p.vc, p.flits, t, tail);
    enqueue_output(p.out_port, id, edge_at_or_after(t, cycle_ps_) + pipeline_ps_);
    return;
  }
  enqueue_input(port, id);
  request_tick(t);
}

void Switch::request_tick(Ps t) {
  Ps e = edge_at_or_after(t, cycle_ps_);
  if (last_alloc_ != kNever && e <= last_alloc_) e = last_alloc_ + cycle_ps_;
  if (tick_at_ != kNever && tick_at_ <= e) return;
  tick_at_ = e;
  schedule(e, kItemTick);
}

void Switch::allocate(Ps e) {
  last_alloc_ = e;
  if (window_.contains(e)) ++alloc_cycles_;
  // Per output: crossbar port free at this edge? Output buffer of each VC
  // able to take a packet of the largest size? (Bit-parallel fast path:
  // smaller heads into a fuller buffer are checked one by one.)
  // Only the outputs that had packets leave or a port busy are looked at.
  scratch_ = sending_out_;  // release_space changes sending_out_
  scratch_.for_each([&](int o) {
    // Most outputs of a loaded wide switch are mid-packet: look before calling.
    if (out_gone_[static_cast<size_t>(o)] <= e) release_space(o, e);
  });
  out_free_.fill();
  Ps first_release = kNever;
  scratch_ = busy_out_;
  scratch_.for_each([&](int o) {
    const Ps b = out_busy_[static_cast<size_t>(o)];
    if (b <= e) {
      busy_out_.reset(o);
    } else {
      out_free_.reset(o);
      first_release = std::min(first_release, b);
    }
  });

  // Build the request matrix; remember the earliest time a blocked request
  // could change (a busy port frees). Requests blocked by a full output
  // buffer are woken by out_try when it frees space.
  Ps wake = kNever;
  requests_.clear();
  free_in_.clear();
  active_.for_each([&](int i) {
    const Ps b = in_busy_[static_cast<size_t>(i)];
    if (b > e)
      wake = std::min(wake, b);
    else
      free_in_.set(i);
  });
  if (queueing_ == Queueing::kVoq)
    request_voq(first_release, wake);
  else
    request_fifo(wake);

  for (Need n : {kNeedTable, kNeedSlot}) {
    const Share& sh = share_[n];
    if (sh.by_bits ? sh.askers.any() : !sh.wanted.empty()) share_engine(n, e, wake);
  }
  allocator_->allocate(requests_, match_);
  matched_out_.clear();
  for (int i : match_.matched_inputs) matched_out_.set(match_.out_of_in[static_cast<size_t>(i)]);

  // Grant every match, then decide when to look again: next edge if a
  // requesting input and a requested output both stayed free (another
  // iteration-limited allocation may match them), else when a port frees.
  Ps first_free = kNever;
  // In port order, as the grants change shared state (pools, output queues).
  granted_order_.assign(match_.matched_inputs.begin(), match_.matched_inputs.end());
  std::sort(granted_order_.begin(), granted_order_.end());
  for (int i : granted_order_) {
    const int o = match_.out_of_in[static_cast<size_t>(i)];
    const PacketId parent = grant(i, o, e);
    if (parent != kNoPacket) fan_out(i, parent, e, in_busy_[static_cast<size_t>(i)]);
    first_free = std::min(first_free, out_busy_[static_cast<size_t>(o)]);
    // More packets behind the granted one: look again when this input frees.
    const Input& in = inputs_[static_cast<size_t>(i)];
    if (in.pending > 0) wake = std::min(wake, in_busy_[static_cast<size_t>(i)]);
  }
  for (int i = std::max(engine_port_, 0); engine_port_ >= 0 && i < xports_; ++i)
    wide_grants(i, e, wake);
  for (Share& sh : share_) {  // what was not used lapses
    for (int i : sh.given_list) sh.given[static_cast<size_t>(i)] = -1;
    sh.given_list.clear();
  }
  // An input still waiting that requested an output nobody took: both
  // stayed free, so another (iteration-limited) allocation may match them
  // next edge. Waiting inputs whose requests all went to others: when a
  // port frees.
  bool retry_next_edge = false;
  bool waiting = false;
  if (requests_.major() == RequestMatrix::Major::kCols) {
    scratch_.clear();  // inputs that requested, still wait and were not matched
    requests_.written().for_each([&](int o) { scratch_ |= requests_.col(o); });
    scratch_ &= active_;
    for (int i : match_.matched_inputs) scratch_.reset(i);
    waiting = scratch_.any();
    if (waiting) {
      requests_.written().for_each([&](int o) {
        if (!retry_next_edge && !matched_out_.test(o))
          retry_next_edge = requests_.col(o).intersects(scratch_);
      });
    }
  } else {
    scratch_.assign_and(requests_.written(), active_);
    scratch_.for_each([&](int i) {
      if (match_.out_of_in[static_cast<size_t>(i)] >= 0) return;
      const PortSet& row = requests_.row(i);
      if (row.has_bits_outside(matched_out_))
        retry_next_edge = true;
      else if (row.any())
        waiting = true;
    });
  }
  if (waiting) wake = std::min(wake, first_free);
  if (pending_total_ == 0) return;
  if (retry_next_edge) wake = e + cycle_ps_;
  if (wake != kNever) request_tick(std::max(wake, e + 1));
}

// Output by output: the free inputs with a packet for it on this VC.
// Outputs whose buffer takes a packet of any size get them all at once;
// the rest are checked head by head. Heads asking for an engine resource
// are noted for share_engine, which serves them in input order.
void Switch::request_voq(Ps first_release, Ps& wake) {
  bool waits_for_busy = false;  // a free input has a packet for a busy output
  for (int v = 0; v < vcs_; ++v) {
    const PortSet& fits = fits_any_[static_cast<size_t>(v)];
    const PortSet& requested = requested_[static_cast<size_t>(v)];
    // Busy outputs: one free input waiting for any of them is all we need.
    busy_requested_.assign_andnot(requested, out_free_);
    for (int o = busy_requested_.find_next(0); o != PortSet::kNone && !waits_for_busy;
         o = busy_requested_.find_next(o + 1))
      waits_for_busy = col_[static_cast<size_t>(v * xports_ + o)].intersects(free_in_);
    free_requested_.assign_and(requested, out_free_);
    free_requested_.subtract(stalled_[static_cast<size_t>(v)]);
    free_requested_.for_each([&](int o) {
      scratch_.assign_and(col_[static_cast<size_t>(v * xports_ + o)], free_in_);
      if (!scratch_.any()) return;
      if (fits.test(o)) {
        requests_.mutable_col(o) |= scratch_;
        return;
      }
      Output& out = outputs_[static_cast<size_t>(o)];
      if (!is_engine_port(o) && col_min_flits(v, o) > space(o, v)) {
        // No head waiting for o fits its buffer, whichever inputs are free:
        // what the loop below would conclude, without visiting each head.
        if (!space_waiter_[static_cast<size_t>(o)]) {
          space_waiter_[static_cast<size_t>(o)] = 1;
          if (!out.sending.empty()) schedule_out_try(o, out.sending.front().tail_gone);
        }
        stalled_[static_cast<size_t>(v)].set(o);
        return;
      }
      if (is_engine_port(o)) {
        const auto k = static_cast<size_t>(v * engine_ports_ + o - engine_port_);
        engine_scratch_.assign_and(engine_class_[kNeedNone][k], free_in_);
        if (engine_scratch_.any()) requests_.mutable_col(o) |= engine_scratch_;
        for (Need n : {kNeedTable, kNeedSlot}) {
          engine_scratch_.assign_and(engine_class_[n][k], free_in_);
          if (!engine_scratch_.any()) continue;
          if (engine_free(n) == 0)
            engine_waiter_ = true;  // what share_engine would conclude
          else
            engine_scratch_.for_each([&](int i) { ask(n, i, v, o); });  // shared out below
        }
        return;
      }
      scratch_.for_each([&](int i) {
        if (flits_fit(o, v, head_flits(inputs_[static_cast<size_t>(i)], v, o))) {
          requests_.set(i, o);
        } else if (!space_waiter_[static_cast<size_t>(o)]) {
          // Blocked on output-buffer space: wake when the next tail leaves.
          space_waiter_[static_cast<size_t>(o)] = 1;
          if (!out.sending.empty()) schedule_out_try(o, out.sending.front().tail_gone);
        }
      });
    });
  }
  if (waits_for_busy) wake = std::min(wake, first_release);
}

// Input by input: the head of each VC's FIFO asks for its output.
void Switch::request_fifo(Ps& wake) {
  free_in_.for_each([&](int i) {
    Input& in = inputs_[static_cast<size_t>(i)];
    for (int v = 0; v < vcs_; ++v) {
      const PacketQueue& q = in.queues[static_cast<size_t>(v)].q;
      if (q.empty()) continue;
      const PacketId head = q.front();
      const int o = pool_.get(head).out_port;
      Output& out = outputs_[static_cast<size_t>(o)];
      if (!out_free_.test(o)) {
        wake = std::min(wake, out_busy_[static_cast<size_t>(o)]);
      } else if (is_engine_port(o)) {
        const Need n = engine_need(pool_.get(head));
        if (n == kNeedNone)
          requests_.set(i, o);
        else
          ask(n, i, v, o);
      } else if (head_fits(o, v, head)) {
        requests_.set(i, o);
      } else if (!space_waiter_[static_cast<size_t>(o)]) {
        space_waiter_[static_cast<size_t>(o)] = 1;
        if (!out.sending.empty()) schedule_out_try(o, out.sending.front().tail_gone);
      }
    }
  });
}

PacketId Switch::grant(int i, int o, Ps e, int only_vc) {
  Input& in = inputs_[static_cast<size_t>(i)];
  // Among this input's VCs with an eligible packet for `o`, round-robin.
  int vc = -1;
  for (int k = 0; k < vcs_ && vc < 0; ++k) {
    if (only_vc >= 0 && k > 0) break;  // (that VC looked at once)
    const int v = only_vc >= 0 ? only_vc : (in.vc_ptr + k) % vcs_;
    int flits;
    if (queueing_ == Queueing::kFifo) {
      const PacketQueue& q = in.queues[static_cast<size_t>(v)].q;
      if (q.empty() || pool_.get(q.front()).out_port != o) continue;
      flits = pool_.get(q.front()).flits;
    } else {
      if (voq_empty(in, v, o)) continue;
      flits = head_flits(in, v, o);
    }
    // A head needing an engine resource goes only where share_engine gave one.
    bool ok;
    if (is_engine_port(o)) {  // (no lazy copies: copies go to link outputs)
      const PacketQueue& q =
          queueing_ == Queueing::kFifo ? in.queues[static_cast<size_t>(v)].q : voq(in, v, o);
      const Need n = engine_need(pool_.get(q.front()));
      ok = n == kNeedNone || share_[n].given[static_cast<size_t>(i)] == o;
    } else {
      ok = flits_fit(o, v, flits);
    }
    if (ok) vc = v;
  }
  if (vc < 0) throw InvariantError("allocator granted a pair without an eligible packet");
  in.vc_ptr = (vc + 1) % vcs_;
  PacketQueue& q =
      queueing_ == Queueing::kFifo ? in.queues[static_cast<size_t>(vc)].q : voq(in, vc, o);
  // (A lazy copy is made now, and taken without passing through the queue.)
  const PacketId id = queueing_ == Queueing::kVoq ? take_head(in, vc, o) : q.pop(pool_);
  if (queueing_ == Queueing::kVoq) {
    head_left(vc, o, pool_.get(id).flits);
    if (voq_empty(in, vc, o))
      voq_emptied(i, vc, o);
    else
      head_joined(vc, o, head_flits(in, vc, o));
  }
  if (queueing_ == Queueing::kVoq && !q.empty() && is_engine_port(o))
    set_engine_head(in, vc, o, q.front());
  Packet& p = pool_.get(id);
  // The tail arrives at the input's own link rate (a degraded link is slower).
  const Ps in_flit = in.link != nullptr ? in.link->flit_ps() : flit_ps_;
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
    if (p.parent == kNoPacket || p.parent != in.edge_parent) in.edge_bytes += engine_bytes(p);
    if (p.parent != kNoPacket) in.edge_parent = p.parent;
    b = e + engine_port_ps(in.edge_bytes);
  } else {
    b = std::max(e + xfer_ps_[p.flits], tail_in);
  }
  if (is_engine_port(o)) {
    // The engine port is busy until it and its ALU can take the next
    // packet (ReductionEngine::accept); the link input until the tail has crossed.
    const Need n = engine_need(p);
    if (n != kNeedNone) share_[n].given[static_cast<size_t>(i)] = -1;
    const Ps alu_end = engine_->accept(p, o, e, n);
    if (n == kNeedTable) table_changed(entry_key(p), true);
    in_busy_[static_cast<size_t>(i)] = b;
    out_busy_[static_cast<size_t>(o)] = alu_end;
    busy_out_.set(o);
    leave_input(in, vc, p.flits, p.t_head, b);
    --in.pending;
    --pending_total_;
    if (in.pending == 0) active_.reset(i);
    if (window_.contains(e)) ++grants_;
    schedule(std::max(b, alu_end) + pipeline_ps_ + engine_->pipeline_ps(), kItemEngine, id);
    return kNoPacket;
  }
  in_busy_[static_cast<size_t>(i)] = b;
  out_busy_[static_cast<size_t>(o)] = is_engine_port(i) ? e + xfer_ps_[p.flits] : b;
  busy_out_.set(o);
  PacketId siblings = kNoPacket;  // an original with copies still to send
  if (p.parent == kNoPacket) {
    leave_input(in, vc, p.flits, p.t_head, b);
  } else if (--pool_.get(p.parent).copies_left == 0) {
    retire_original(i, p.parent, b);
  } else {
    siblings = p.parent;
  }
  space(o, vc) -= p.flits;
  update_fits(o, vc);
  --in.pending;
  --pending_total_;
  if (in.pending == 0) active_.reset(i);
  if (window_.contains(e)) ++grants_;
  if (log_.packet(p))
    log("grants " + describe(p) + " in" + std::to_string(i) + " -> out" + std::to_string(o) +
        " at " + format_real(ps_to_ns(e)) + " ns, through the pipeline at " +
        format_real(ps_to_ns(e + pipeline_ps_)) + " ns");
  enqueue_output(o, id, e + pipeline_ps_);
  return siblings;
}

bool Switch::queues_empty(const Output& out) const {
  return out.queued == 0;
}

void Switch::update_fits(int o, int vc) {
  // Engine ports take the per-packet path: a head needing a new table entry
  // uses one of the entries still free at its edge.
  if (is_engine_port(o)) return;
  PortSet& f = fits_any_[static_cast<size_t>(vc)];
  if (space(o, vc) >= max_flits_)
    f.set(o);
  else
    f.reset(o);
}

void Switch::release_space(int o, Ps t) {
  Output& out = outputs_[static_cast<size_t>(o)];
  bool released = false;
  while (!out.sending.empty() && out.sending.front().tail_gone <= t) {
    const int vc = out.sending.front().vc;
    space(o, vc) += out.sending.front().flits;
    out.sending.pop_front();
    update_fits(o, vc);
    released = true;
  }
  out_gone_[static_cast<size_t>(o)] = out.sending.empty() ? kNever : out.sending.front().tail_gone;
  if (released)  // space, and the waiter cleared below: look at o again on every VC
    for (PortSet& st : stalled_) st.reset(o);
  if (out.sending.empty()) sending_out_.reset(o);
  if (released && space_waiter_[static_cast<size_t>(o)]) {
    space_waiter_[static_cast<size_t>(o)] = 0;
    if (pending_total_ > 0) request_tick(t);
  }
}

void Switch::enqueue_output(int o, PacketId id, Ps ready) {
  Output& out = outputs_[static_cast<size_t>(o)];
  Packet& p = pool_.get(id);
  p.t_ready = ready;
  if (queues_empty(out) && out.tx.link->free_at() <= ready &&
      out.tx.link->has_credits(p.vc, p.flits, now())) {
    out.tx.sent(p.vc, vcs_, now());
    transmit(o, id, ready);
    return;
  }
  out.queues[p.vc].push(pool_, id);
  ++out.queued;
  ++out_queued_total_;
  schedule_out_try(o, std::max(ready, out.tx.link->free_at()));
}

void Switch::transmit(int o, PacketId id, Ps start) {
  Output& out = outputs_[static_cast<size_t>(o)];
  Packet& p = pool_.get(id);
  out.tx.link->send(id, p, start);
  const Ps gone = out.tx.link->free_at();
  if (queueing_ != Queueing::kOutput) {
    if (out.sending.empty()) out_gone_[static_cast<size_t>(o)] = gone;
    out.sending.push_back(Sending{gone, p.vc, p.flits});
    sending_out_.set(o);
  }
  // Wake when the tail has gone only if someone needs that moment: the next
  // queued packet, or an allocation waiting for this buffer space.
  if (!queues_empty(out) || space_waiter_[static_cast<size_t>(o)]) schedule_out_try(o, gone);
}

void Switch::schedule_out_try(int o, Ps t) {
  Output& out = outputs_[static_cast<size_t>(o)];
  if (out.try_at != kNever && out.try_at <= t) return;
  out.try_at = t;
  schedule(t, kItemOutTry, static_cast<std::uint32_t>(o));
}

void Switch::out_try(int o) {
  Output& out = outputs_[static_cast<size_t>(o)];
  const Ps t = now();
  if (queueing_ != Queueing::kOutput) release_space(o, t);
  if (out.tx.link->free_at() > t) {
    if (!queues_empty(out)) schedule_out_try(o, out.tx.link->free_at());
    return;
  }
  Ps next_ready = kNever;
  const Transmitter::Outcome sent = out.tx.offer(
      t, vcs_,
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
        --out_queued_total_;
        transmit(o, id, t);
        return true;
      });
  // Nothing went: look again when a head leaves the pipeline (a credit
  // shortage wakes us through the link).
  if (sent != Transmitter::Outcome::kSent && next_ready != kNever) schedule_out_try(o, next_ready);
}

}  // namespace fabricsim
