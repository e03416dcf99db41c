#include "models/sc/endpoint.hpp"

#include <algorithm>

#include "models/core/errors.hpp"

namespace fabricsim {

Endpoint::Endpoint(const sc_core::sc_module_name& name, Scheduler& scheduler, int id,
                   const Config& cfg, const TrafficPattern& pattern, PacketPool& pool,
                   SinkStats& sink, Window window)
    : TimedModule(name, scheduler),
      id_(id),
      flits_(static_cast<int>(cfg.traffic.packet_flits)),
      vcs_(static_cast<int>(cfg.sw.vcs)),
      process_(cfg.traffic.process),
      load_(cfg.traffic.load),
      burst_packets_(cfg.traffic.burst_packets),
      slot_ps_(flit_time_ps(cfg.link)),
      window_(window),
      pattern_(pattern),
      pool_(pool),
      sink_(sink),
      rng_(static_cast<std::uint64_t>(cfg.sim.seed), 1000u + static_cast<std::uint64_t>(id)),
      source_(static_cast<size_t>(vcs_)) {
  if (load_ <= 0.0) {
    exhausted_ = true;
  } else if (process_ == Process::kBernoulli) {
    next_slot_ = rng_.geometric(load_ / flits_);
    if (next_slot_ > kNever / slot_ps_ / 2) exhausted_ = true;
  } else {
    // Start in an idle gap so the endpoints' bursts are not aligned.
    burst_left_ = 0;
    next_slot_ = 0;
    draw_next();
  }
}

void Endpoint::connect(Link* tx, Link* rx) {
  tx_ = tx;
  rx_ = rx;
}

void Endpoint::start_of_simulation() {
  if (!exhausted_) schedule_try(next_slot_ * slot_ps_);
}

void Endpoint::draw_next() {
  advance_slot();
  // A load so small that the next packet lies beyond representable time.
  if (next_slot_ > kNever / slot_ps_ / 2) exhausted_ = true;
}

void Endpoint::advance_slot() {
  if (process_ == Process::kBernoulli) {
    next_slot_ += 1 + rng_.geometric(load_ / flits_);
    return;
  }
  // Bursty on/off: bursts of 1 + Geom(1/B) packets (mean B), back to back;
  // idle gaps of Geom(p_off) slots with mean G = B*L*(1-load)/load, so the
  // long-run flit rate is B*L / (B*L + G) = load.
  if (burst_left_ > 0) {
    --burst_left_;
    next_slot_ += static_cast<std::uint64_t>(flits_);
    if (burst_left_ > 0) return;
  }
  const double gap_mean = burst_packets_ * flits_ * (1.0 - load_) / load_;
  const std::uint64_t gap = rng_.geometric(1.0 / (gap_mean + 1.0));
  burst_left_ = 1 + rng_.geometric(1.0 / burst_packets_);
  next_slot_ += gap;
}

void Endpoint::generate_until(Ps t) {
  if (exhausted_) return;
  while (next_slot_ * slot_ps_ <= t) {
    const Ps t_gen = next_slot_ * slot_ps_;
    const int dst = pattern_.destination(id_, rng_);
    const int vc = vcs_ > 1 ? static_cast<int>(rng_.below(static_cast<std::uint64_t>(vcs_))) : 0;
    source_[static_cast<size_t>(vc)].push_back(Queued{t_gen, dst});
    ++generated_;
    if (window_.contains(t_gen)) offered_flits_window_ += static_cast<std::uint64_t>(flits_);
    draw_next();
  }
}

std::uint64_t Endpoint::source_queued() const {
  std::uint64_t n = 0;
  for (auto& q : source_) n += q.size();
  return n;
}

void Endpoint::schedule_try(Ps t) {
  if (try_at_ != kNever && try_at_ <= t) return;
  try_at_ = t;
  schedule(t, kItemTry);
}

void Endpoint::try_inject() {
  const Ps t = now();
  if (tx_->free_at() > t) {
    schedule_try(tx_->free_at());
    return;
  }
  generate_until(t);
  bool waiting = false;
  for (int k = 0; k < vcs_; ++k) {
    const int vc = (vc_ptr_ + k) % vcs_;
    auto& q = source_[static_cast<size_t>(vc)];
    if (q.empty()) continue;
    if (!tx_->has_credits(vc, flits_, t)) {
      waiting = true;
      continue;
    }
    const Queued head = q.front();
    q.pop_front();
    const PacketId id = pool_.alloc();
    Packet& p = pool_.get(id);
    p.t_gen = head.t_gen;
    p.t_inject = t;
    p.src = id_;
    p.dst = head.dst;
    p.flits = static_cast<std::uint16_t>(flits_);
    p.vc = static_cast<std::uint8_t>(vc);
    tx_->set_stalled(t, false);
    tx_->send(id, p, t);
    ++injected_;
    vc_ptr_ = (vc + 1) % vcs_;
    // Next look: when the link frees, or, if nothing is queued, when the
    // next packet is generated (whichever is later): one wake per packet.
    Ps next = tx_->free_at();
    if (source_queued() == 0) {
      if (exhausted_) return;
      next = std::max(next, next_slot_ * slot_ps_);
    }
    schedule_try(next);
    return;
  }
  // Nothing sent: either blocked on credits (the link wakes us when they
  // return) or the source is empty until the next generation slot.
  tx_->set_stalled(t, waiting);
  if (waiting) tx_->wait_for_credits();
  // With several VCs, a packet generated later may find credits on its own
  // VC while another VC waits: look again at the next generation too.
  if (!exhausted_ && (!waiting || vcs_ > 1)) schedule_try(next_slot_ * slot_ps_);
}

void Endpoint::handle(const Item& item) {
  switch (item.kind) {
    case kItemTry:
      if (item.time == try_at_) try_at_ = kNever;
      try_inject();
      break;
    case kItemCredit:
      tx_->credits_arrived(static_cast<int>(item.b), static_cast<int>(item.c));
      try_inject();
      break;
    case kItemCreditWake:
      try_inject();
      break;
    case kItemArrive: {
      rx_->arrived();
      const PacketId id = item.a;
      Packet& p = pool_.get(id);
      if (!p.live) throw InvariantError("delivered a packet that is no longer live (duplicate?)");
      if (p.dst != id_)
        throw InvariantError("packet " + std::to_string(p.serial) + " for endpoint " +
                             std::to_string(p.dst) + " delivered to endpoint " +
                             std::to_string(id_));
      const Ps t = item.time;  // tail arrival
      if (window_.contains(t)) {
        sink_.latency_ps.record(t - p.t_gen);
        sink_.network_latency_ps.record(t - p.t_inject);
        accepted_flits_window_ += p.flits;
        ++accepted_packets_window_;
      }
      ++delivered_;
      delivered_flits_ += p.flits;
      rx_->return_credits(p.vc, p.flits, t);
      pool_.release(id);
      break;
    }
    default:
      throw InvariantError("endpoint: unknown item kind " + std::to_string(item.kind));
  }
}

void Endpoint::check_end_of_run(Ps end) const {
  if (source_queued() > 0 && (try_at_ == kNever || try_at_ < end) &&
      !tx_->sender_will_be_woken(end))
    throw InvariantError(std::string(name()) + ": " + std::to_string(source_queued()) +
                         " packets queued but nothing will send them (lost wake-up)");
}

void Endpoint::finish(Ps end) {
  generate_until(end > 0 ? end - 1 : 0);
  tx_->finish(end);
}

}  // namespace fabricsim
