#include "models/sc/endpoint.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/errors.hpp"

namespace fabricsim {

Endpoint::Endpoint(const sc_core::sc_module_name& name, Scheduler& scheduler, int id,
                   const Config& cfg, const TrafficPattern& pattern, PacketPool& pool,
                   SinkStats& sink, Window window, int links)
    : TimedModule(name, scheduler),
      id_(id),
      flits_(static_cast<int>(cfg.traffic.packet_flits)),
      vcs_(static_cast<int>(cfg.sw.vcs)),
      read_fraction_(cfg.traffic.read_fraction),
      request_vcs_(cfg.traffic.read_fraction > 0 ? static_cast<int>(cfg.sw.vcs) - 1
                                                 : static_cast<int>(cfg.sw.vcs)),
      outstanding_reads_(static_cast<std::uint64_t>(cfg.traffic.outstanding_reads)),
      process_(cfg.traffic.process),
      load_(cfg.traffic.load),
      burst_packets_(cfg.traffic.burst_packets),
      flit_ps_(flit_time_ps(cfg.link)),
      policy_(cfg.endpoint.link_policy),
      stripe_bytes_(stripe_bytes(cfg)),
      packet_bytes_(static_cast<std::uint64_t>(std::max<std::int64_t>(1, cfg.traffic.packet_flits - 1)) *
                    static_cast<std::uint64_t>(cfg.link.flit_bytes)),
      window_(window),
      pattern_(pattern),
      pool_(pool),
      sink_(sink),
      rng_(static_cast<std::uint64_t>(cfg.sim.seed), 1000u + static_cast<std::uint64_t>(id)),
      ports_(static_cast<size_t>(links)),
      next_addr_(links > 1 || cfg.topology.kind != TopologyKind::kSingle
                     ? static_cast<size_t>(endpoint_count(cfg))
                     : 0,
                 0),
      idle_empty_links_(links) {
  for (auto& p : ports_) p.source.resize(static_cast<size_t>(vcs_));
  if (load_ <= 0.0) {
    exhausted_ = true;
  } else if (process_ == Process::kBernoulli) {
    const double p = load_ / flits_;  // a packet starts in a flit slot with this probability
    log1p_p_ = p < 1.0 ? std::log1p(-p) : 0.0;
    next_slot_ = rng_.geometric(p);
    if (next_slot_ > kNever / flit_ps_ / 2) exhausted_ = true;
  } else {
    // Start in an idle gap so the endpoints' bursts are not aligned.
    burst_left_ = 0;
    next_slot_ = 0;
    draw_next();
  }
}

void Endpoint::connect(int port, Link* tx, Link* rx) {
  ports_[static_cast<size_t>(port)].tx.link = tx;
  ports_[static_cast<size_t>(port)].rx.attach(rx);
}

void Endpoint::start_of_simulation() { ensure_generation_wake(); }

void Endpoint::draw_next() {
  advance_slot();
  // A load so small that the next packet lies beyond representable time.
  if (next_slot_ > kNever / flit_ps_ / 2) exhausted_ = true;
}

void Endpoint::advance_slot() {
  if (process_ == Process::kBernoulli) {
    // The same draws as rng_.geometric(p), bit for bit, with log1p(-p) from
    // the constructor instead of once per packet (0: p = 1, no gap).
    next_slot_ += 1 + (log1p_p_ == 0.0 ? 0 : rng_.geometric_log(log1p_p_));
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

int Endpoint::pick_link(std::uint64_t addr) {
  const auto k = static_cast<std::uint64_t>(ports_.size());
  if (k == 1) return 0;
  switch (policy_) {
    case LinkPolicy::kStripe:
      return static_cast<int>((addr / stripe_bytes_) % k);
    case LinkPolicy::kRoundRobin:
      rr_link_ = (rr_link_ + 1) % static_cast<int>(k);
      return rr_link_;
    case LinkPolicy::kRandom:
      return static_cast<int>(rng_.below(k));
  }
  return 0;
}

void Endpoint::generate_until(Ps t, int trying, Wake wake) {
  if (exhausted_) return;
  while (slot_time(next_slot_) <= t) {
    const Ps t_gen = slot_time(next_slot_);
    const int dst = pattern_.destination(id_, rng_);
    const int vc = request_vcs_ > 1
                       ? static_cast<int>(rng_.below(static_cast<std::uint64_t>(request_vcs_)))
                       : 0;
    const bool read = read_fraction_ > 0 && rng_.bernoulli(read_fraction_);
    // Addresses only steer striping: a single-switch endpoint with one link
    // (every route unique) skips the per-destination stream.
    std::uint64_t addr = 0;
    if (!next_addr_.empty()) {
      std::uint64_t& next = next_addr_[static_cast<size_t>(dst)];
      addr = next;
      next += packet_bytes_;
    }
    const int l = pick_link(addr);
    Port& port = ports_[static_cast<size_t>(l)];
    port.source[static_cast<size_t>(vc)].push_back(Queued{t_gen, addr, dst, read});
    if (port.queued++ == 0) {
      --idle_empty_links_;
      if (wake != Wake::kNone && l != trying) {
        if (port.tx.link->free_at() > t)
          schedule_try(l, port.tx.link->free_at());
        else if (wake == Wake::kAll)
          schedule_try(l, t);
      }
    }
    ++generated_;
    // A read puts its request and its data on the network.
    if (window_.contains(t_gen)) offered_flits_window_ += static_cast<std::uint64_t>(flits_ + (read ? 1 : 0));
    draw_next();
    if (exhausted_) return;
  }
}

// Generation needs its own wake-up only while some link has nothing queued
// (or VCs could unblock one another); backlogged links draw new packets
// lazily when they free up.
void Endpoint::ensure_generation_wake() {
  if (exhausted_ || (idle_empty_links_ == 0 && vcs_ == 1)) return;
  const Ps t = slot_time(next_slot_);
  if (gen_at_ != kNever && gen_at_ <= t) return;
  gen_at_ = t;
  schedule(t, kItemGen);
}

std::uint64_t Endpoint::source_queued() const {
  std::uint64_t n = 0;
  for (const auto& p : ports_) n += p.queued;
  return n;
}

void Endpoint::schedule_try(int port, Ps t) {
  Port& p = ports_[static_cast<size_t>(port)];
  if (p.try_at != kNever && p.try_at <= t) return;
  p.try_at = t;
  schedule(t, kItemTry, static_cast<std::uint32_t>(port));
}

void Endpoint::try_link(int l) {
  Port& port = ports_[static_cast<size_t>(l)];
  const Ps t = now();
  if (port.tx.link->free_at() > t) {
    if (port.queued > 0 || !port.answers.empty()) schedule_try(l, port.tx.link->free_at());
    return;
  }
  generate_until(t, l, Wake::kAll);
  const Transmitter::Outcome sent = port.tx.offer(
      t, vcs_,
      [&](int vc) {
        if (vc == request_vcs_)  // the response VC (reads only)
          return port.answers.empty() ? 0 : flits_;
        const auto& q = port.source[static_cast<size_t>(vc)];
        if (q.empty() || !can_send_head(q.front())) return 0;  // a read waits for a slot
        return q.front().read ? 1 : flits_;
      },
      [&](int vc) {
        if (vc == request_vcs_) {
          answer(port, t);
          return true;
        }
        auto& q = port.source[static_cast<size_t>(vc)];
        const Queued head = q.front();
        q.pop_front();
        if (--port.queued == 0) ++idle_empty_links_;
        if (head.read) ++reads_in_flight_;
        send(port, head.read ? PacketKind::kMemRead : PacketKind::kSynthetic, head.t_gen,
             head.addr, head.dst, head.read ? 1 : flits_, vc, t);
        return true;
      });
  // Backlogged: look again when the link frees; else generation wakes us
  // (credits short: the link wakes us when they return).
  if (sent == Transmitter::Outcome::kSent && (port.queued > 0 || !port.answers.empty()))
    schedule_try(l, port.tx.link->free_at());
  ensure_generation_wake();
}

void Endpoint::answer(Port& port, Ps t) {
  const Answer a = port.answers.front();
  port.answers.pop_front();
  a.held.release(t);  // the request leaves our buffer
  ++generated_;  // made here, sent at once
  send(port, PacketKind::kMemReadData, a.t_gen, a.addr, a.requester, flits_, request_vcs_, t);
}

void Endpoint::send(Port& port, PacketKind kind, Ps t_gen, std::uint64_t addr, int dst, int flits,
                    int vc, Ps t) {
  const PacketId id = pool_.alloc();
  Packet& p = pool_.get(id);
  p.kind = kind;
  p.t_gen = t_gen;
  p.t_inject = t;
  p.addr = addr;
  p.src = id_;
  p.dst = dst;
  p.flits = static_cast<std::uint16_t>(flits);
  p.vc = static_cast<std::uint8_t>(vc);
  port.tx.link->send(id, p, t);
  ++injected_;
}

void Endpoint::handle(const Item& item) {
  switch (item.kind) {
    case kItemTry: {
      Port& p = ports_[item.a];
      if (item.time == p.try_at) p.try_at = kNever;
      try_link(static_cast<int>(item.a));
      break;
    }
    case kItemGen:
      if (item.time == gen_at_) gen_at_ = kNever;
      generate_until(item.time, -1, Wake::kCallerTries);
      // Send on every idle link that has work, in this wake-up.
      for (std::size_t l = 0; l < ports_.size(); ++l)
        if (ports_[l].queued > 0 && ports_[l].tx.link->free_at() <= item.time)
          try_link(static_cast<int>(l));
      ensure_generation_wake();
      break;
    case kItemCredit:
      ports_[item.a].tx.link->credits_arrived(static_cast<int>(item.b), static_cast<int>(item.c));
      try_link(static_cast<int>(item.a));
      break;
    case kItemCreditWake:
      try_link(static_cast<int>(item.a));
      break;
    case kItemArrive: {
      Receiver& rx = ports_[item.b].rx;
      rx.arrived();
      const PacketId id = item.a;
      Packet& p = pool_.get(id);
      check_delivery(p, id_);
      if (log_.packet(p)) log("receives " + describe(p) + " on port " + std::to_string(item.b));
      const Ps t = item.time;  // tail arrival
      if (window_.contains(t)) {
        // A read request is not an operation's end: its data coming back is.
        if (p.kind != PacketKind::kMemRead) sink_.latency_ps.record(t - p.t_gen);
        if (p.kind == PacketKind::kMemReadData) sink_.read_latency_ps.record(t - p.t_gen);
        sink_.network_latency_ps.record(t - p.t_inject);
        accepted_flits_window_ += p.flits;
        ++accepted_packets_window_;
        if (p.kind != PacketKind::kMemRead) ++accepted_data_packets_window_;
      }
      ++delivered_;
      delivered_flits_ += p.flits;
      if (p.kind == PacketKind::kMemRead) {
        // Answer on the link the address picks, when it can send; the
        // request keeps its buffer space until then.
        const int l = pick_link(p.addr);
        ports_[static_cast<size_t>(l)].answers.push_back(
            Answer{p.t_gen, p.addr, p.src, rx.hold(p)});
        pool_.release(id);
        try_link(l);
        break;
      }
      // The last slot freeing: a read that waited for it may go now (only
      // then: trying every link per response would cost O(links) each).
      const bool freed_last_slot =
          p.kind == PacketKind::kMemReadData && reads_in_flight_-- == outstanding_reads_;
      if (p.kind == PacketKind::kMemReadData) ++reads_completed_;
      rx.free(p, t);
      pool_.release(id);
      if (freed_last_slot)
        for (std::size_t l = 0; l < ports_.size(); ++l) try_link(static_cast<int>(l));
      break;
    }
    default:
      throw InvariantError("endpoint: unknown item kind " + std::to_string(item.kind));
  }
}

void Endpoint::check_end_of_run(Ps end) const {
  for (std::size_t l = 0; l < ports_.size(); ++l) {
    const Port& p = ports_[l];
    // (A read waiting for a slot is woken by a response: reads are in flight.)
    const bool answers_wait = !p.answers.empty();
    const bool sends_wait = p.queued > 0 && reads_in_flight_ == 0;
    if (p.tx.link->sender_stranded(answers_wait || sends_wait, p.try_at, end))
      throw InvariantError(std::string(name()) + " link " + std::to_string(l) + ": " +
                           std::to_string(p.queued) +
                           " packets queued but nothing will send them (lost wake-up)");
  }
}

void Endpoint::finish(Ps end) {
  generate_until(end > 0 ? end - 1 : 0, -1, Wake::kNone);
  for (auto& p : ports_) p.tx.link->finish(end);
}

}  // namespace fabricsim
