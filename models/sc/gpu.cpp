#include "models/sc/gpu.hpp"

#include <algorithm>

#include "models/core/errors.hpp"
#include "models/sc/collective_algorithm.hpp"

namespace fabricsim {

Gpu::Gpu(const sc_core::sc_module_name& name, Scheduler& scheduler, int id, const Config& cfg,
         PacketPool& pool, PayloadPool& payloads, CollectiveSweep& sweep, int links)
    : TimedModule(name, scheduler),
      id_(id),
      n_(sweep.gpus()),
      cfg_(cfg),
      pool_(pool),
      payloads_(payloads),
      sweep_(sweep),
      es_(element_bytes(cfg.collective.dtype)),
      stripe_bytes_(stripe_bytes(cfg)),
      ports_(static_cast<size_t>(links)),
      domain_end_(n_),
      own_(static_cast<size_t>(cfg.collective.payload_bytes)),
      vcs_(static_cast<int>(cfg.sw.vcs)) {
  for (auto& p : ports_) {
    p.ready.resize(static_cast<size_t>(vcs_));
    p.flit_bytes = cfg.link.flit_bytes;
  }
  call_.members = sweep.partition(0).groups.data();  // until a call names its group
  call_.size = n_;
  call_.rank = id;
  for (int k = 0; k < links; ++k) up_ports_.push_back(k);
  if (cfg.straggler.gpu == id) issue_factor_ = cfg.straggler.issue_factor;
  data_ = cfg.collective.data;
  // One instance of each algorithm the calls use (the registry throws
  // ConfigError for a value no algorithm implements).
  for (const CollectiveCall& c : sweep.calls()) {
    const auto a = static_cast<std::size_t>(c.algorithm);
    if (algorithms_.size() <= a) algorithms_.resize(a + 1);
    if (!algorithms_[a]) algorithms_[a] = make_collective_algorithm(c.algorithm, *this, cfg, sweep);
    if (c.symmetric && !symmetric_) symmetric_ = make_nvls_symmetric_algorithm(*this, cfg);
  }
  if (!sweep.calls().empty()) {
    algo_id_ = sweep.calls().front().algorithm;
    algo_ = sweep.calls().front().symmetric ? symmetric_.get() : algorithm(algo_id_);
  }
}

Gpu::~Gpu() = default;

void Gpu::connect(int port, Link* tx, Link* rx, int peer_switch) {
  ports_[static_cast<size_t>(port)].tx.link = tx;
  ports_[static_cast<size_t>(port)].rx.attach(rx);
  if (port_switch_.size() < ports_.size()) port_switch_.resize(ports_.size(), -1);
  port_switch_[static_cast<size_t>(port)] = peer_switch;
}

void Gpu::set_port_groups(std::vector<int> up, std::vector<int> nic, int per_domain,
                          std::vector<std::int64_t> flit_bytes) {
  up_ports_ = std::move(up);
  nic_ports_ = std::move(nic);
  domain_begin_ = id_ / per_domain * per_domain;
  domain_end_ = domain_begin_ + per_domain;
  for (std::size_t k = 0; k < ports_.size(); ++k) ports_[k].flit_bytes = flit_bytes[k];
}

int Gpu::detour(int l, std::uint64_t addr, int dst) const {
  std::vector<int> same, other;
  for (int k : toward(dst)) {
    if (!usable(k, dst)) continue;
    (port_switch_[static_cast<size_t>(k)] == port_switch_[static_cast<size_t>(l)] ? same : other)
        .push_back(k);
  }
  const auto pick = [&](const std::vector<int>& v) {
    return v[static_cast<size_t>((addr / stripe_bytes_) % v.size())];
  };
  if (!same.empty()) return pick(same);
  const std::string sw = "switch " + std::to_string(port_switch_[static_cast<size_t>(l)]);
  if (algo_->through_switch())
    throw InvariantError(std::string(name()) + ": no path: every link to " + sw +
                         " is down, and address " + std::to_string(addr) +
                         " is reduced or multicast by that switch's engine "
                         "(collective.algorithm=" + to_string(algo_id_) + ")");
  if (other.empty())
    throw InvariantError(std::string(name()) + ": no path" +
                         (dst >= 0 ? " to GPU " + std::to_string(dst) : std::string()) +
                         ": every link that leads toward it is down");
  return pick(other);
}

void Gpu::link_down(int l) {
  any_down_ = true;
  Port& p = ports_[static_cast<size_t>(l)];
  // Slices not started: each to the link its address picks now. A direct
  // all-reduce slice already sent to some peers stays (it is under way).
  Ring<std::uint64_t> keep;
  if (p.dest_k > 0 && !p.first_step.empty()) {
    keep.push_back(p.first_step.front());
    p.first_step.pop_front();
  }
  while (!p.first_step.empty()) {
    const std::uint64_t e = p.first_step.front();
    p.first_step.pop_front();
    ports_[static_cast<size_t>(first_step_link(e))].first_step.push_back(e);
  }
  p.first_step = std::move(keep);
  for (auto& q : p.ready)
    while (!q.empty()) {
      const PacketId id = q.front();
      q.pop_front();
      const Packet& pk = pool_.get(id);
      ports_[static_cast<size_t>(pick_link(pk.addr, pk.kind == PacketKind::kMcStore ? -1 : pk.dst))]
          .ready[pk.vc].push_back(id);
    }
  // Read responses go back to the switch that asked: another link to it.
  std::vector<int> same;
  for (int k = 0; k < static_cast<int>(ports_.size()); ++k)
    if (!ports_[static_cast<size_t>(k)].tx.link->down() &&
        port_switch_[static_cast<size_t>(k)] == port_switch_[static_cast<size_t>(l)])
      same.push_back(k);
  if (!p.reads.empty() && same.empty())
    throw InvariantError(std::string(name()) + ": no path: every link to switch " +
                         std::to_string(port_switch_[static_cast<size_t>(l)]) +
                         " is down and it waits for our answer to its read");
  while (!p.reads.empty()) {
    const ReadReq r = p.reads.front();
    p.reads.pop_front();
    ports_[static_cast<size_t>(same[static_cast<size_t>(r.first % same.size())])].reads.push_back(r);
  }
  // Its work has gone elsewhere: it no longer waits for credits.
  if (!has_work(p)) p.tx.link->set_stalled(now(), false);
  for (int k = 0; k < static_cast<int>(ports_.size()); ++k)
    if (has_work(ports_[static_cast<size_t>(k)])) try_link(k);
}

void Gpu::begin_call(Ps t) { schedule(t, kItemBegin); }

int Gpu::pick_link(std::uint64_t addr, int dst) const {
  const std::vector<int>& ports = toward(dst);
  const int l = ports[static_cast<size_t>((addr / stripe_bytes_) % ports.size())];
  if (!any_down_ || usable(l, dst)) return l;
  return detour(l, addr, dst);
}

PacketId Gpu::make_packet(int step, std::uint64_t first, std::uint64_t count) {
  const PacketId id = pool_.alloc();
  Packet& p = pool_.get(id);
  p.kind = PacketKind::kWrite;
  p.t_gen = p.t_inject = now();
  p.src = id_;
  p.dst = call_.member(call_.rank + 1);  // the ring's next GPU
  p.addr = first * es_;
  p.bytes = static_cast<std::uint32_t>(count * es_);
  // p.flits: sized by the port it takes (flits_on), or 1 for a request.
  p.vc = 0;
  p.step = static_cast<std::uint16_t>(step);
  p.redop = cfg_.collective.redop;
  p.dtype = cfg_.collective.dtype;
  return id;
}

void Gpu::schedule_try(int l, Ps t) {
  Port& p = ports_[static_cast<size_t>(l)];
  if (p.try_at != kNever && p.try_at <= t) return;
  p.try_at = t;
  schedule(t, kItemTry, static_cast<std::uint32_t>(l));
}

bool Gpu::has_work(const Port& port) const {
  if (!port.first_step.empty() && may_issue()) return true;
  if (!port.reads.empty()) return true;
  return std::any_of(port.ready.begin(), port.ready.end(), [](const auto& q) { return !q.empty(); });
}

PacketId Gpu::make_read_response(Port& port) {
  const ReadReq r = port.reads.front();
  port.reads.pop_front();
  // The request leaves our receive buffer now: its credit goes back.
  r.held.release(now());
  const PacketId id = make_packet(0, r.first, r.count);
  Packet& p = pool_.get(id);
  p.flits = static_cast<std::uint16_t>(flits_on(port, p.bytes));
  p.kind = PacketKind::kReadResp;
  p.vc = 1;
  p.group = r.group;
  p.payload = payloads_.alloc();
  input(r.first, r.count, payloads_.data(p.payload));
  return id;
}

// Per VC, round-robin: what arrival made first (forwards, read responses,
// multicast stores: they keep collectives flowing), then the next
// first-step packet (VC 0), made only when the link can take it.
void Gpu::try_link(int l) {
  Port& port = ports_[static_cast<size_t>(l)];
  const Ps t = now();
  if (!has_work(port)) return;
  const Ps ready_at = std::max(port.tx.link->free_at(), port.not_before);
  if (ready_at > t) {
    schedule_try(l, ready_at);
    return;
  }
  enum From { kQueue, kFirst, kReads } from = kQueue;  // where head(v) found VC v's packet
  bool reads_resume = false;
  const Transmitter::Outcome sent = port.tx.offer(
      t, vcs_,
      [&](int v) {
        const auto& q = port.ready[static_cast<size_t>(v)];
        // Requests (NVLS reads) are one flit: they go before queued 17-flit
        // stores, or the stores of finished reads would starve the next reads.
        const bool read_first = requests_ && v == 0 && !port.first_step.empty() && may_issue();
        if (!q.empty() && !read_first) {
          from = kQueue;
          return static_cast<int>(pool_.get(q.front()).flits);
        }
        if (v == 1 && !port.reads.empty()) {
          from = kReads;
          return flits_on(port, port.reads.front().count * es_);
        }
        if (v == 0 && !port.first_step.empty() && may_issue()) {
          from = kFirst;
          return requests_ ? 1 : flits_on(port, algo_->first_step_wire_bytes(port.first_step.front()));
        }
        return 0;
      },
      [&](int v) {  // (right after head(v): `from` is VC v's)
        PacketId id = kNoPacket;
        if (from == kFirst) {
          id = algo_->make_first_step(port);
        } else if (from == kReads) {
          id = make_read_response(port);
        } else {
          auto& q = port.ready[static_cast<size_t>(v)];
          id = q.front();
          q.pop_front();
        }
        Packet& p = pool_.get(id);
        if (any_down_ && from != kReads && p.kind != PacketKind::kMcStore && !usable(l, p.dst)) {
          // A fault cut this link's way to the destination: the packet takes another.
          queue(id);
          if (has_work(port)) schedule_try(l, t);
          return false;
        }
        p.t_inject = t;
        reads_resume = requests_ && algo_->sent(p);
        port.tx.link->send(id, p, t);
        ++injected_;
        return true;
      });
  if (sent != Transmitter::Outcome::kSent) return;
  if (issue_factor_ < 1.0)  // a throttled GPU leaves the link idle in between
    port.not_before =
        t + static_cast<Ps>(static_cast<double>(port.tx.link->free_at() - t) / issue_factor_);
  if (has_work(port)) schedule_try(l, std::max(port.tx.link->free_at(), port.not_before));
  if (reads_resume)  // links that stopped for the window may issue again
    for (int m = 0; m < links(); ++m)
      if (m != l && !ports_[static_cast<size_t>(m)].first_step.empty()) schedule_try(m, t);
}

int Gpu::place(PacketId id) {
  const Packet& p = pool_.get(id);
  const int l = pick_link(p.addr, p.kind == PacketKind::kMcStore ? -1 : p.dst);
  Port& port = ports_[static_cast<size_t>(l)];
  // Sized for the link it takes (a request stays one header flit).
  if (p.kind != PacketKind::kLdReduceReq)
    pool_.get(id).flits = static_cast<std::uint16_t>(flits_on(port, p.bytes));
  port.ready[p.vc].push_back(id);
  return l;
}

void Gpu::queue(PacketId id) { try_link(place(id)); }

void Gpu::queue_deferred(PacketId id) { schedule_try(place(id), now()); }

void Gpu::wake_links() {
  for (int l = 0; l < links(); ++l)
    if (has_work(ports_[static_cast<size_t>(l)])) schedule_try(l, now());
}

void Gpu::output_done(std::uint64_t elements, int lane) {
  received_ += elements;
  if (!own_progress_) sweep_.output(elements, now(), lane < 0 ? id_ : lane);
  if (!active_ || received_ < expected_) return;
  active_ = false;
  // The sweep's call barrier starts the next call when we are the last.
  if (sweep_.gpu_finished(id_, now()) && sweep_.stop_kernel_when_done()) stop_kernel();
}

void Gpu::handle(const Item& item) {
  switch (item.kind) {
    case kItemBegin:
      start_call();
      break;
    case kItemStart:
      start_work();
      break;
    case kItemAlgo:
      algo_->timer(item.a);
      break;
    case kItemTry: {
      Port& p = ports_[item.a];
      if (item.time == p.try_at) p.try_at = kNever;
      try_link(static_cast<int>(item.a));
      break;
    }
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
      Packet& p = pool_.get(item.a);
      check_delivery(p, id_);
      if (log_.packet(p)) log("receives " + describe(p) + " on port " + std::to_string(item.b));
      ++delivered_;
      delivered_flits_ += p.flits;
      // A read request keeps its buffer space until it is answered.
      if (p.kind != PacketKind::kReadReq) rx.free(p, item.time);
      if (p.kind == PacketKind::kWrite && p.payload == kNoPayload)
        throw InvariantError("GPU received a write without data");
      Packet in = p;  // a copy: receive() may grow the packet pool
      in.out_port = static_cast<std::int16_t>(item.b);  // the link it came on
      pool_.release(item.a);
      if (started_)
        receive(in);
      else
        stash_.push_back(in);  // our kernel has not started: the data waits
      break;
    }
    default:
      throw InvariantError("gpu: unknown item kind " + std::to_string(item.kind));
  }
}

void Gpu::finish(Ps end) {
  for (auto& p : ports_) p.tx.link->finish(end);
}

std::uint64_t Gpu::packets_waiting() const {
  std::uint64_t n = 0;
  for (const Port& p : ports_)
    for (const auto& q : p.ready) n += q.size();
  return n;
}

void Gpu::check_end_of_run(Ps end) const {
  for (std::size_t l = 0; l < ports_.size(); ++l) {
    const Port& p = ports_[l];
    if (p.tx.link->sender_stranded(has_work(p), p.try_at, end))
      throw InvariantError(std::string(name()) + " link " + std::to_string(l) +
                           ": data waits but nothing will send it (lost wake-up)");
  }
}

}  // namespace fabricsim
