#include "models/sc/link.hpp"

#include "models/core/errors.hpp"

namespace fabricsim {

Link::Link(std::string name, Ps flit_ps, Ps latency_ps, int vcs, int credits_per_vc,
           Window window)
    : name_(std::move(name)),
      flit_ps_(flit_ps),
      latency_ps_(latency_ps),
      window_(window),
      returning_(static_cast<size_t>(vcs), 0),
      flits_outstanding_(static_cast<size_t>(vcs), 0) {
  if (latency_ps_ == 0) throw InvariantError(name_ + ": link latency must be positive");
  for (int v = 0; v < vcs; ++v)
    credits_.emplace_back(name_ + ".vc" + std::to_string(v), credits_per_vc);
}

void Link::bind_tx(TimedModule* module, std::uint32_t port) {
  tx_ = module;
  tx_port_ = port;
}

void Link::bind_rx(TimedModule* module, std::uint32_t port, bool deliver_at_tail) {
  rx_ = module;
  rx_port_ = port;
  deliver_at_tail_ = deliver_at_tail;
}

void Link::send(PacketId id, Packet& p, Ps start) {
  if (start < free_at_)
    throw InvariantError(name_ + ": packet sent while the link is still serialising");
  if (p.vc >= credits_.size()) throw InvariantError(name_ + ": packet on a VC the link lacks");
  credits_[p.vc].take(p.flits);
  const Ps ser = serialization_ps(p.flits);
  free_at_ = start + ser;
  busy_in_window_ += overlap(start, free_at_, window_.begin, window_.end);
  if (window_.contains(start)) {
    ++packets_sent_;
    flits_sent_ += p.flits;
  }
  ++in_flight_;
  flits_outstanding_[p.vc] += p.flits;
  if (wave_) {
    wave_->set(w_valid_, start, 1);
    wave_->set(w_valid_, free_at_, 0);
    wave_->set(w_vc_, start, p.vc);
    wave_->set(w_packet_, start, static_cast<std::int64_t>((p.serial + 1) & 0xFFFFFFFFu));
    wave_->add(w_credits_[p.vc], start, -p.flits);
  }
  p.t_head = start + latency_ps_ + flit_ps_;
  const Ps tail = start + latency_ps_ + ser;
  rx_->schedule(deliver_at_tail_ ? tail : p.t_head, kItemArrive, id, rx_port_);
}

void Link::return_credits(int vc, int flits, Ps when) {
  const auto v = static_cast<size_t>(vc);
  flits_outstanding_[v] -= flits;
  if (flits_outstanding_[v] < 0)
    throw InvariantError(name_ + ": receiver returned credits for flits that never crossed");
  returning_[v] += flits;
  const Ps t = when + latency_ps_;
  if (wave_) wave_->add(w_credits_[v], t, flits);
  if (returns_.empty() || t >= returns_.back().t) {
    returns_.push_back(Return{t, vc, flits});
  } else {
    // Out of order (a receiver freeing buffers out of order): deliver this
    // one as an event of its own so the FIFO stays sorted.
    tx_->schedule(t, kItemCredit, tx_port_, static_cast<std::uint32_t>(vc),
                  static_cast<std::uint32_t>(flits));
  }
  if (tx_waiting_) {
    tx_waiting_ = false;
    wake_sent_for_ = t;
    tx_->schedule(t, kItemCreditWake, tx_port_);
  }
}

void HeldCredits::release(Ps t) const { link->return_credits(vc, flits, t); }

void Link::absorb(Ps now) {
  while (!returns_.empty() && returns_.front().t <= now) {
    const Return& r = returns_.front();
    credits_arrived(r.vc, r.flits);
    returns_.pop_front();
  }
}

void Link::wait_for_credits() {
  if (returns_.empty()) {
    tx_waiting_ = true;
  } else if (returns_.front().t != wake_sent_for_) {  // one wake per landing time
    wake_sent_for_ = returns_.front().t;
    tx_->schedule(wake_sent_for_, kItemCreditWake, tx_port_);
  }
}

void Link::credits_arrived(int vc, int flits) {
  returning_[static_cast<size_t>(vc)] -= flits;
  credits_[static_cast<size_t>(vc)].give(flits);
}

void Link::set_stalled(Ps t, bool stalled) {
  if (stalled && stall_since_ == kNever) {
    stall_since_ = t;
  } else if (!stalled && stall_since_ != kNever) {
    stall_in_window_ += overlap(stall_since_, t, window_.begin, window_.end);
    stall_since_ = kNever;
  }
}

void Link::finish(Ps end) { set_stalled(end, false); }

void Link::trace(WaveTrace& w) {
  wave_ = &w;
  w_valid_ = w.signal(name_ + ".valid", 1);
  w_vc_ = w.signal(name_ + ".vc", 4);
  w_packet_ = w.signal(name_ + ".packet", 32);
  w_credits_.clear();
  for (std::size_t v = 0; v < credits_.size(); ++v)
    w_credits_.push_back(w.signal(name_ + ".credits_vc" + std::to_string(v), 16,
                                  credits_[v].available()));
}

double Link::utilization() const {
  return window_.length() ? static_cast<double>(busy_in_window_) /
                                static_cast<double>(window_.length())
                          : 0.0;
}

Ps Link::credit_stall_ps() const { return stall_in_window_; }

}  // namespace fabricsim

namespace fabricsim {

void Link::check_credit_conservation() const {
  for (size_t v = 0; v < credits_.size(); ++v) {
    const int sum = credits_[v].available() + returning_[v] + flits_outstanding_[v];
    if (sum != credits_[v].capacity())
      throw InvariantError(name_ + ".vc" + std::to_string(v) + ": credits not conserved: " +
                           std::to_string(credits_[v].available()) + " available + " +
                           std::to_string(returning_[v]) + " returning + " +
                           std::to_string(flits_outstanding_[v]) + " outstanding != pool " +
                           std::to_string(credits_[v].capacity()));
  }
}

}  // namespace fabricsim
