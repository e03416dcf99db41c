// The engine ports, tables and folds every organisation shares (ported_engine.hpp).
#include "models/sc/ported_engine.hpp"

#include <algorithm>
#include <utility>

#include "models/core/errors.hpp"

namespace fabricsim {

PortedEngine::PortedEngine(const EngineParams& params, const Shape& shape, PacketPool& pool,
                           PayloadPool* payloads, std::unique_ptr<AluBackend> alu, EngineHost& host,
                           Window window)
    : p_(params),
      shape_(shape),
      pool_(pool),
      payloads_(payloads),
      alu_(alu ? std::move(alu) : std::make_unique<ModelAlu>()),
      host_(host),
      window_(window) {
  const int n = shape.slice_per_port ? params.ports : 1;
  if (n < 1 || shape.entries < 1 || shape.slots < 1 || shape.alu_bytes_per_cycle < 1 ||
      shape.port_bytes_per_cycle < 1)
    throw InvariantError("reduction engine: a part with nothing in it (" + std::to_string(n) +
                         " slices of " + std::to_string(shape.entries) + " entries, " +
                         std::to_string(shape.slots) + " slots)");
  slices_.reserve(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) slices_.emplace_back(shape.entries, params.arrival_order);
}

Ps PortedEngine::alu_ps(const Packet& p) const {
  // The ALU works on the data of contributions only; a header-only request
  // or a write passing through does not use it.
  if (p.kind != PacketKind::kReduceContrib && p.kind != PacketKind::kReadResp) return 0;
  const auto bytes = static_cast<std::int64_t>(p.bytes);
  return static_cast<Ps>((bytes + shape_.alu_bytes_per_cycle - 1) / shape_.alu_bytes_per_cycle) *
         p_.cycle_ps;
}

void PortedEngine::track(Ps t) {
  stats_.occupancy_integral +=
      static_cast<double>(entries_) *
      static_cast<double>(overlap(table_changed_at_, t, window_.begin, window_.end));
  table_changed_at_ = t;
}

Ps PortedEngine::accept(Packet& p, int port, Ps e, Need n) {
  const Ps alu = alu_ps(p);
  const Ps alu_end = e + std::max(alu, port_ps(port, bytes_of(p)));
  stats_.alu_busy += overlap(e, e + alu, window_.begin, window_.end);
  if (wave_) {  // the engine port takes the packet: valid for its port time
    const auto k = static_cast<std::size_t>(port - p_.first_port);
    wave_->set(w_valid_[k], e, 1);
    wave_->set(w_valid_[k], alu_end, 0);
    wave_->set(w_tag_[k], e, static_cast<std::int64_t>(key(p) & 0xFFFFu));
  }
  // Reserve what it needs now (allocation made sure there was room).
  if (n == kNeedSlot) {
    ++slots_held_;
    ++slice(port).slots_held;
    p.engine_slot = true;
    if (window_.contains(e))
      stats_.max_slots = std::max(stats_.max_slots, static_cast<int>(slots_held_));
    if (wave_) wave_->add(w_slots_, e, 1);
  } else if (n == kNeedTable) {
    if (wave_) wave_->add(w_table_, e, 1);
    track(e);
    ReductionTable::Entry& entry = slice(port).table.open(key(p));
    ++entries_;
    entry_opened(key(p), port);
    entry.group = p.group;
    entry.bytes = p.bytes;
    entry.vc = p.vc;
    entry.redop = p.redop;
    entry.dtype = p.dtype;
    if (window_.contains(e))
      stats_.max_occupancy = std::max(stats_.max_occupancy, static_cast<int>(entries_));
  }
  ++inflight_;
  return alu_end;
}

// A contribution has been through the ALU: fold it in member order (early
// arrivals wait in the entry), and when every member is in, send the result.
void PortedEngine::fold(PacketId id, Ps t) {
  --inflight_;
  if (pool_.get(id).kind == PacketKind::kMcStore) {
    // A multicast write through the engine: it becomes the original of its
    // copies at the engine port, its slot held until the last has left.
    pool_.get(id).t_head = t;
    host_.engine_send(id, pool_.get(id).out_port, true, t);
    return;
  }
  const Packet c = pool_.get(id);
  pool_.release(id);
  ++contributions_consumed_;
  ReductionTable& table = slice(c.out_port).table;
  ReductionTable::Entry& e = table.at(key(c));
  if (c.kind == PacketKind::kLdReduceReq) {
    pull(c, e, t);
    return;
  }
  if (!e.pull) e.requester = c.dst;  // push: where the result goes (-1: multicast to the group)
  if (window_.contains(t)) ++stats_.contributions;
  const bool done = table.contribute(e, c.src, c.payload, t, [&](PayloadId acc, PayloadId in) {
    fold_data(e, c, payloads_->data(acc), payloads_->data(in), t);
    payloads_->release(in);
  });
  if (done) complete(c, e, t);
}

// Pull (ld_reduce): read the address from every member (a multicast read
// request); their responses come back as the contributions to fold.
void PortedEngine::pull(const Packet& c, ReductionTable::Entry& e, Ps t) {
  e.pull = true;
  e.requester = c.src;
  const PacketId r = pool_.alloc();
  Packet& rd = pool_.get(r);
  rd.kind = PacketKind::kReadReq;
  rd.t_gen = rd.t_inject = rd.t_head = t;
  rd.src = c.src;
  rd.addr = c.addr;
  rd.bytes = c.bytes;
  rd.flits = 1;
  rd.vc = 0;
  rd.step = c.step;
  rd.group = c.group;
  ++results_made_;
  host_.engine_send(r, c.out_port, true, t);
}

// Every member is in: the result leaves from the engine port's input, to
// the ld_reduce's requester (pull), to the root (push reduce: a plain
// write), or multicast to the group (push all-reduce).
void PortedEngine::complete(const Packet& c, ReductionTable::Entry& e, Ps t) {
  if (window_.contains(t)) {
    ++stats_.completed;
    const double wait = ps_to_ns(t - e.first);
    stats_.wait_sum_ns += wait;
    stats_.wait_max_ns = std::max(stats_.wait_max_ns, wait);
  }
  const PacketId r = pool_.alloc();
  Packet& res = pool_.get(r);
  const bool unicast = e.pull || e.requester >= 0;
  res.kind = e.pull    ? PacketKind::kLdReduceResp
             : unicast ? PacketKind::kWrite
                       : PacketKind::kMcStore;
  res.t_gen = res.t_inject = res.t_head = t;
  res.src = c.src;
  res.dst = e.requester;
  res.addr = c.addr;
  res.bytes = c.bytes;
  res.flits = c.flits;
  res.vc = c.vc;
  res.step = c.step;
  res.group = c.group;
  res.payload = e.acc;
  track(t);
  const std::uint64_t k = key(c);
  slice(c.out_port).table.close(k);  // (e is gone)
  --entries_;
  entry_closed(k);
  host_.engine_entry_closed(k);
  if (wave_) wave_->add(w_table_, t, -1);
  ++results_made_;
  host_.engine_send(r, c.out_port, !unicast, t);
  host_.engine_resource_freed(t);  // an allocation may wait for a free entry
}

void PortedEngine::release_slot(const Packet& original, Ps t) {
  --slots_held_;
  --slice(original.out_port).slots_held;
  if (wave_) wave_->add(w_slots_, t, -1);
  host_.engine_resource_freed(t);
}

void PortedEngine::fold_data(const ReductionTable::Entry& e, const Packet& c, std::uint8_t* acc,
                             const std::uint8_t* in, Ps t) {
  if (!p_.data) return;  // timing only (collective.data=false)
  // Every contribution of an entry comes through the port of the slice holding it.
  const int sink_alu =
      fold_sink_ ? fold_alu_[static_cast<std::size_t>(c.out_port - p_.first_port)] : -1;
  if (sink_alu < 0 || !fold_sink_->wants(t)) {
    alu_->accumulate(e.redop, e.dtype, acc, in, c.bytes);
    return;
  }
  fold_before_.assign(acc, acc + c.bytes);
  alu_->accumulate(e.redop, e.dtype, acc, in, c.bytes);
  fold_sink_->fold(sink_alu, t, static_cast<std::uint16_t>(key(c) & 0xFFFFu), e.redop, e.dtype,
                   fold_before_.data(), in, acc, c.bytes);
}

void PortedEngine::trace(WaveTrace& w, const std::string& base) {
  wave_ = &w;
  w_table_ = w.signal(base + ".engine.table", 24);
  w_slots_ = w.signal(base + ".engine.slots", 24);
  for (int k = 0; k < p_.ports; ++k) {
    const std::string port = base + ".engine.port" + std::to_string(k);
    w_valid_.push_back(w.signal(port + ".valid", 1));
    w_tag_.push_back(w.signal(port + ".tag", 16, 0, false));
  }
}

void PortedEngine::trace_folds(FoldSink& sink, const std::string& base) {
  fold_sink_ = &sink;
  fold_alu_.clear();
  for (int k = 0; k < p_.ports; ++k)
    fold_alu_.push_back(sink.alu(base + ".engine.alu" + std::to_string(k), p_.cycle_ps));
}

}  // namespace fabricsim
