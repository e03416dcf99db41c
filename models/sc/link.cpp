#include "models/sc/link.hpp"

#include "models/core/errors.hpp"

#include <algorithm>
#include <cmath>

namespace fabricsim {

Link::Link(std::string name, Ps flit_ps, Ps latency_ps, int vcs, int credits_per_vc,
           Window window, int lanes)
    : flit_ps_(flit_ps),
      wire_ps_(latency_ps),
      nvcs_(vcs),
      window_(window),
      name_(std::move(name)),
      latency_ps_(latency_ps) {
  if (latency_ps_ == 0) throw InvariantError(name_ + ": link latency must be positive");
  if (vcs < 1 || vcs > kMaxVcs)
    throw InvariantError(name_ + ": " + std::to_string(vcs) + " VCs (a link has 1 to " +
                         std::to_string(kMaxVcs) + ")");
  lanes_total_ = lanes_ = lanes;
  flit_ps_full_ = flit_ps_;
  // All names first: the counters keep pointers to them.
  vc_names_.reserve(static_cast<size_t>(vcs));
  for (int v = 0; v < vcs; ++v) vc_names_.push_back(name_ + ".vc" + std::to_string(v));
  for (int v = 0; v < vcs; ++v)
    vc_[static_cast<size_t>(v)].pool =
        CreditCounter(vc_names_[static_cast<size_t>(v)].c_str(), credits_per_vc);
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
  if (p.vc >= nvcs_) throw InvariantError(name_ + ": packet on a VC the link lacks");
  vc_[p.vc].pool.take(p.flits);
  const Ps ser = serialization_ps(p.flits);
  // With errors, the packet may need several transmissions: `s` is the
  // start of the one that arrives intact.
  const Ps s = errors_ ? transmit_reliably(p, start, ser) : start;
  ++transmissions_;
  free_at_ = s + ser;
  busy_in_window_ += overlap(s, free_at_, window_.begin, window_.end);
  if (window_.contains(start)) {
    ++packets_sent_;
    flits_sent_ += p.flits;
  }
  vc_[p.vc].outstanding += p.flits;
  if (wave_) {
    wave_->set(w_valid_, s, 1);
    wave_->set(w_valid_, free_at_, 0);
    wave_->set(w_vc_, s, p.vc);
    wave_->set(w_packet_, s, static_cast<std::int64_t>((p.serial + 1) & 0xFFFFFFFFu));
    wave_->add(w_credits_[p.vc], start, -p.flits);
  }
  p.t_head = s + wire_ps_ + flit_ps_;
  const Ps tail = s + wire_ps_ + ser;
  rx_->schedule(deliver_at_tail_ ? tail : p.t_head, kItemArrive, id, rx_port_);
  if (log_.packet(p))
    log_.log->write(start, name_,
                    "sends " + describe(p) + (s > start ? " (retransmitted until " +
                                                             format_real(ps_to_ns(s)) + " ns)"
                                                       : std::string()) +
                        ": head in at " + format_real(ps_to_ns(p.t_head)) + " ns, tail at " +
                        format_real(ps_to_ns(tail)) + " ns");
  if (!errors_) return;  // an ideal link: nothing more to book
  if (go_back_n_) {
    // Held until its ack (sent ack_delay after the tail, over the reverse
    // link) is back; acks come back in order, as the packets went.
    replay_held_ += p.flits;
    rel_stats_.replay_buffer_max = std::max(rel_stats_.replay_buffer_max, replay_held_);
    acks_.push_back(Return{tail + rel_.ack_delay_ps + wire_ps_, -1, p.flits});
    next_landing_ = std::min(next_landing_, acks_.back().t);
  }
  if (window_.contains(start)) {
    rel_stats_.added_ps.record(s - start);
    rel_stats_.delivered_bytes +=
        static_cast<std::uint64_t>(p.flits) * static_cast<std::uint64_t>(rel_.flit_bytes);
  }
}

void Link::set_lanes(int lanes) {
  if (lanes < 1 || lanes > lanes_total_)
    throw InvariantError(name_ + ": cannot run on " + std::to_string(lanes) + " of its " +
                         std::to_string(lanes_total_) + " lanes");
  lanes_ = lanes;
  // Same rounding as flit_time_ps(): the serial rate scales with the lanes.
  flit_ps_ = static_cast<Ps>(std::llround(static_cast<double>(flit_ps_full_) * lanes_total_ / lanes));
}

void Link::set_ber(double ber) {
  if (!errors_) throw InvariantError(name_ + ": a BER change needs the link's error model");
  errors_->set_ber(ber);
}

void Link::set_reliability(const LinkReliability& r) {
  rel_ = r;
  wire_ps_ = latency_ps_ + rel_.fec_ps;
  go_back_n_ = rel_.retry == Retry::kGoBackN;
  errors_ = std::make_unique<LinkErrors>(r.ber, r.burst_bits, r.fec, Rng(r.seed, r.stream));
}

Ps Link::transmit_reliably(const Packet& p, Ps start, Ps ser) {
  const std::uint64_t bits = static_cast<std::uint64_t>(p.flits) *
                             static_cast<std::uint64_t>(rel_.flit_bytes) * 8u;
  bool idle = !sent_any_ || start > free_at_;
  sent_any_ = true;
  const bool counted = window_.contains(start);
  Ps t = start;
  for (;;) {
    const std::uint64_t cw = errors_->codewords(), fixed = errors_->corrected_codewords(),
                        lost = errors_->uncorrectable_codewords();
    const bool bad = errors_->transmit(bits, idle);
    if (counted) {
      rel_stats_.codewords += errors_->codewords() - cw;
      rel_stats_.corrected_codewords += errors_->corrected_codewords() - fixed;
      rel_stats_.uncorrectable_codewords += errors_->uncorrectable_codewords() - lost;
    }
    if (!bad) break;
    if (counted) ++rel_stats_.crc_errors;
    if (rel_.retry == Retry::kNone)
      throw InvariantError(
          name_ + ": packet " + std::to_string(p.serial) + " (" + std::to_string(p.flits) +
          " flits) arrived corrupted at " + std::to_string(ps_to_ns(t + wire_ps_ + ser)) +
          " ns (" +
          (rel_.fec != Fec::kNone ? std::string("an uncorrectable FEC codeword")
               : std::string("bit errors, no FEC")) +
          "); its CRC caught it, and with " + rel_.keys + ".retry=none nothing can resend it: the "
          "data is lost. Set " + rel_.keys + ".retry=go_back_n, a lower " + rel_.keys +
          ".ber, or " + rel_.keys + ".fec=rs544");
    // Go-back-N: the receiver nacks after the tail (and FEC); the nack
    // crosses the reverse link; the sender rewinds to this packet. The
    // packets go-back-N would send meanwhile are discarded by the receiver
    // and resent after this one: the link carries nothing useful until the
    // nack, which the model shows as the sender held off the link.
    busy_in_window_ += overlap(t, t + ser, window_.begin, window_.end);
    if (wave_) {
      wave_->set(w_valid_, t, 1);
      wave_->set(w_valid_, t + ser, 0);
      wave_->set(w_vc_, t, p.vc);
      wave_->set(w_packet_, t, static_cast<std::int64_t>((p.serial + 1) & 0xFFFFFFFFu));
    }
    const Ps nack = t + ser + wire_ps_ + rel_.ack_delay_ps + wire_ps_;
    if (counted) {
      ++rel_stats_.replays;
      ++rel_stats_.retransmitted_packets;
      rel_stats_.retransmitted_bytes += bits / 8u;
    }
    rel_stats_.replay_stall_ps += overlap(t + ser, nack, window_.begin, window_.end);
    t = nack;
    replaying_until_ = std::max(replaying_until_, t + ser);
    idle = true;  // the link idled until the nack: the next codeword is new
  }
  return t;
}

void Link::return_credits(int vc, int flits, Ps when) {
  const auto v = static_cast<size_t>(vc);
  VcCredits& c = vc_[v];
  c.outstanding -= flits;
  if (c.outstanding < 0)
    throw InvariantError(name_ + ": receiver returned credits for flits that never crossed");
  c.returning += flits;
  last_freed_ = std::max(last_freed_, when);
  const Ps t = when + wire_ps_;  // credits ride the reverse link (FEC too)
  if (wave_) wave_->add(w_credits_[v], t, flits);
  if (returns_.empty() || t >= last_return_) {
    returns_.push_back(Return{t, vc, flits});
    last_return_ = t;
    next_landing_ = std::min(next_landing_, t);
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
  if (now < next_landing_) return;  // nothing has landed yet
  while (!returns_.empty() && returns_.front().t <= now) {
    const Return& r = returns_.front();
    credits_arrived(r.vc, r.flits);
    returns_.pop_front();
  }
  while (!acks_.empty() && acks_.front().t <= now) {
    replay_held_ -= acks_.front().flits;
    acks_.pop_front();
  }
  next_landing_ = returns_.empty() ? kNever : returns_.front().t;
  if (!acks_.empty()) next_landing_ = std::min(next_landing_, acks_.front().t);
}

void Link::wait_for_credits() {
  // Wake at the next credit return or ack, whichever lands first.
  const Ps next = next_landing_;
  if (next == kNever) {
    tx_waiting_ = true;
  } else if (next != wake_sent_for_) {  // one wake per landing time
    wake_sent_for_ = next;
    tx_->schedule(wake_sent_for_, kItemCreditWake, tx_port_);
  }
}

void Link::credits_arrived(int vc, int flits) {
  VcCredits& c = vc_[static_cast<size_t>(vc)];
  c.returning -= flits;
  c.pool.give(flits);
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
  w_vc_ = w.signal(name_ + ".vc", 4, 0, false);
  w_packet_ = w.signal(name_ + ".packet", 32, 0, false);
  w_credits_.clear();
  for (std::size_t v = 0; v < static_cast<size_t>(nvcs_); ++v)
    w_credits_.push_back(w.signal(name_ + ".credits_vc" + std::to_string(v), 16,
                                  vc_[v].pool.available()));
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
  for (size_t v = 0; v < static_cast<size_t>(nvcs_); ++v) {
    const VcCredits& c = vc_[v];
    const int sum = c.pool.available() + c.returning + c.outstanding;
    if (sum != c.pool.capacity())
      throw InvariantError(name_ + ".vc" + std::to_string(v) + ": credits not conserved: " +
                           std::to_string(c.pool.available()) + " available + " +
                           std::to_string(c.returning) + " returning + " +
                           std::to_string(c.outstanding) + " outstanding != pool " +
                           std::to_string(c.pool.capacity()));
  }
}

}  // namespace fabricsim
