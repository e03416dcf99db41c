// The switch's reduction engine (see switch.hpp and docs/models/reduction_engine.md):
// table entries and replication slots, the heads asking for them, the
// engine ports' wide grants, and folding contributions in member order.
#include "models/sc/switch.hpp"

#include <algorithm>
#include <string>

#include "models/core/errors.hpp"

namespace fabricsim {

bool Switch::engine_can_take(PacketId head) const {
  const Need n = engine_need(pool_.get(head));
  return n == kNeedNone || engine_free(n) > 0;
}

// Entries in use over time, for the occupancy statistics.
void Switch::engine_track(Ps t) {
  engine_stats_.occupancy_integral +=
      static_cast<double>(table_.size()) *
      static_cast<double>(overlap(table_changed_at_, t, window_.begin, window_.end));
  table_changed_at_ = t;
}

// A contribution has been through the ALU: fold it in member order (early
// arrivals wait in the entry), and when every member is in, send the result.
void Switch::engine_fold(PacketId id) {
  const Ps t = now();
  --engine_inflight_;
  if (pool_.get(id).kind == PacketKind::kMcStore) {
    // A multicast write through the engine: it becomes the original of its
    // copies at the engine port, its entry held until the last has left.
    pool_.get(id).t_head = t;
    replicate(id, engine_port_for(pool_.get(id).addr), t);
    return;
  }
  const Packet c = pool_.get(id);
  pool_.release(id);
  ++contributions_consumed_;
  const auto key = entry_key(c);
  ReductionTable::Entry& e = table_.at(key);
  if (c.kind == PacketKind::kLdReduceReq) {
    // Pull: read the address from every member (a multicast read request);
    // their responses come back as the contributions to fold.
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
    replicate(r, engine_port_for(c.addr), t);
    return;
  }
  if (!e.pull) e.requester = c.dst;  // push: where the result goes (-1: multicast to the group)
  if (window_.contains(t)) ++engine_stats_.contributions;
  const bool complete = table_.contribute(e, c.src, c.payload, t, [&](PayloadId acc, PayloadId in) {
    fold(e, c, payloads_->data(acc), payloads_->data(in), t);
    payloads_->release(in);
  });
  if (!complete) return;
  // Complete: the result leaves as a multicast from the engine's input.
  if (window_.contains(t)) {
    ++engine_stats_.completed;
    const double wait = ps_to_ns(t - e.first);
    engine_stats_.wait_sum_ns += wait;
    engine_stats_.wait_max_ns = std::max(engine_stats_.wait_max_ns, wait);
  }
  const PacketId r = pool_.alloc();
  Packet& res = pool_.get(r);
  // The result: to the ld_reduce's requester (pull), to the root (push
  // reduce: a plain write), or multicast to the group (push all-reduce).
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
  engine_track(t);
  table_.close(key);
  table_changed(key, false);
  if (wave_) wave_->add(w_table_, t, -1);
  ++results_made_;
  if (unicast)
    inject_from_engine(r, engine_port_for(c.addr), t);
  else
    replicate(r, engine_port_for(c.addr), t);
  if (engine_waiter_) {  // a contribution waited for a free entry
    engine_waiter_ = false;
    if (pending_total_ > 0) request_tick(t);
  }
}

void Switch::inject_from_engine(PacketId id, int port, Ps t) {
  Packet& p = pool_.get(id);
  p.out_port = route(p.dst, p.addr);
  Input& in = inputs_[static_cast<size_t>(port)];
  in.occupancy[p.vc] += p.flits;
  in.total_occ += p.flits;
  enqueue_input(port, id);
  request_tick(t);
}

void Switch::set_engine_head(Input& in, int vc, int out, PacketId head) {
  const int i = static_cast<int>(&in - inputs_.data());
  const auto k = static_cast<size_t>(vc * engine_ports_ + out - engine_port_);
  engine_head_gone(i, vc, out);  // the head it replaces, if any
  const Packet& p = pool_.get(head);
  auto& h = in.engine_heads[k];
  h = {p.kind, entry_key(p)};
  engine_class_[engine_need(h.first, h.second)][k].set(i);
  if (need_follows_table(h.first))
    heads_by_key_[h.second].push_back(static_cast<int>(k) * xports_ + i);
}

void Switch::engine_head_gone(int i, int vc, int out) {
  const auto k = static_cast<size_t>(vc * engine_ports_ + out - engine_port_);
  bool had = false;
  for (auto& c : engine_class_) {
    had = had || c[k].test(i);
    c[k].reset(i);
  }
  const auto& h = inputs_[static_cast<size_t>(i)].engine_heads[k];
  if (!had || !need_follows_table(h.first)) return;
  auto it = heads_by_key_.find(h.second);
  if (it == heads_by_key_.end()) throw InvariantError("switch: engine head missing from its key");
  std::vector<int>& v = it->second;
  const int code = static_cast<int>(k) * xports_ + i;
  for (std::size_t j = 0; j < v.size(); ++j)
    if (v[j] == code) {
      v[j] = v.back();
      v.pop_back();
      break;
    }
  if (v.empty()) heads_by_key_.erase(it);
}

void Switch::table_changed(std::uint64_t key, bool made) {
  auto it = heads_by_key_.find(key);
  if (it == heads_by_key_.end()) return;
  for (int code : it->second) {
    const auto k = static_cast<size_t>(code / xports_);
    const int i = code % xports_;
    engine_class_[made ? kNeedTable : kNeedNone][k].reset(i);
    engine_class_[made ? kNeedNone : kNeedTable][k].set(i);
  }
}

void Switch::trace_folds(FoldSink& sink) {
  fold_sink_ = &sink;
  fold_alu_.clear();
  for (int k = 0; k < engine_ports_; ++k)
    fold_alu_.push_back(
        sink.alu(std::string(name()) + ".engine.alu" + std::to_string(k), cycle_ps_));
}

void Switch::fold(const ReductionTable::Entry& e, const Packet& c, std::uint8_t* acc, const std::uint8_t* in,
                  Ps t) {
  if (!data_) return;  // timing only (collective.data=false)
  // Every contribution of an entry comes through the port its address maps to.
  const int sink_alu =
      fold_sink_ ? fold_alu_[static_cast<size_t>(engine_port_for(c.addr) - engine_port_)] : -1;
  if (sink_alu < 0 || !fold_sink_->wants(t)) {
    alu_->accumulate(e.redop, e.dtype, acc, in, c.bytes);
    return;
  }
  fold_before_.assign(acc, acc + c.bytes);
  alu_->accumulate(e.redop, e.dtype, acc, in, c.bytes);
  fold_sink_->fold(sink_alu, t, static_cast<std::uint16_t>(entry_key(c) & 0xFFFFu), e.redop,
                   e.dtype, fold_before_.data(), in, acc, c.bytes);
}

void Switch::release_slot(Ps t) {
  --slots_held_;
  if (wave_) wave_->add(w_slots_, t, -1);
  if (engine_waiter_) {
    engine_waiter_ = false;
    if (pending_total_ > 0) request_tick(t);
  }
}

// Heads that need a new table entry (or replication slot) may request the
// engine only as far as those are free. When they are fewer than the heads,
// they go one per input, round-robin from a rotating start: taken in port
// order, the low-numbered inputs would take every entry that frees and
// starve the rest (measured: ld_reduce requests waiting 35 us).
void Switch::share_engine(Need n, Ps e, Ps& wake) {
  Share& sh = share_[n];
  std::size_t free = engine_free(n);
  int last = -1;
  bool left_out = false;  // a request got nothing
  auto give = [&](int i, int o) {
    --free;
    requests_.set(i, o);
    sh.given[static_cast<size_t>(i)] = o;
    sh.given_list.push_back(i);
    last = i;
    sh.rr = (i + 1) % xports_;
  };
  // Asks in (input, VC, port) order: inputs from sh.rr on, then wrapping
  // around (from the first input when there is enough for every ask), one
  // resource per input.
  if (sh.by_bits) {
    // Bit v * engine ports + k of ask_bits[i]: input i's head on VC v asks
    // for engine port k, so ascending bits are (VC, port) order.
    std::vector<std::uint64_t>& bits = sh.ask_bits;
    std::size_t asks = 0;  // counted only as far as "more than `free`"
    for (int i = sh.askers.find_first(); i != PortSet::kNone && asks <= free;
         i = sh.askers.find_next(i + 1))
      asks += static_cast<std::size_t>(__builtin_popcountll(bits[static_cast<size_t>(i)]));
    const int start = free < asks ? sh.rr : 0;
    // An input's first ask gets a resource while any is left, its others
    // nothing; once none is left, neither does anyone after.
    auto serve = [&](int i) {
      const std::uint64_t b = bits[static_cast<size_t>(i)];
      if (free == 0) {
        left_out = true;
        return false;
      }
      give(i, engine_port_ + __builtin_ctzll(b) % engine_ports_);
      if ((b & (b - 1)) != 0) left_out = true;
      return true;
    };
    bool more = true;
    for (int i = sh.askers.find_next(start); more && i != PortSet::kNone; i = sh.askers.find_next(i + 1))
      more = serve(i);
    for (int i = sh.askers.find_first(); more && i != PortSet::kNone && i < start;
         i = sh.askers.find_next(i + 1))
      more = serve(i);
    sh.askers.for_each([&](int i) { bits[static_cast<size_t>(i)] = 0; });
    sh.askers.clear();
  } else {
    if (sh.wanted.size() > 1) std::sort(sh.wanted.begin(), sh.wanted.end());
    const int start = free < sh.wanted.size() ? sh.rr : 0;
    for (int pass = 0; pass < 2; ++pass)
      for (const Share::Ask& a : sh.wanted) {
        if ((pass == 0) != (a.in >= start)) continue;
        if (free > 0 && a.in != last)
          give(a.in, a.port);
        else
          left_out = true;
      }
    sh.wanted.clear();
  }
  if (left_out) {
    if (engine_free(n) > 0)
      // Free ones, all promised to other requests this edge: one of those
      // may lose arbitration, so look again next edge.
      wake = std::min(wake, e + cycle_ps_);
    else
      engine_waiter_ = true;  // woken when a reduction completes or a slot frees
  }
}

void Switch::wide_grants(int i, Ps e, Ps& wake) {
  Input& in = inputs_[static_cast<size_t>(i)];
  if (in.pending == 0 || queueing_ != Queueing::kVoq) return;
  // Still busy from an earlier edge:
  if (in_busy_[static_cast<size_t>(i)] > e && in.edge_at != e) return;
  if (in.edge_at != e) {
    in.edge_at = e;
    in.edge_bytes = 0;
    in.edge_parent = kNoPacket;
  }
  bool granted = false;
  const int start = in.out_ptr;
  for (int v = 0; v < vcs_; ++v) {
    scratch_.assign_andnot(in.nonempty[static_cast<size_t>(v)], matched_out_);
    scratch_ &= out_free_;
    scratch_.subtract(stalled_[static_cast<size_t>(v)]);  // no head fits there
    // Outputs from out_ptr on, then the rest: no output is always first.
    for (int pass = 0; pass < 2; ++pass) {
      scratch_.for_each([&](int o) {
        if ((pass == 0) != (o >= start) || matched_out_.test(o)) return;
        // The head, or for a lazy copy its original (same size and data).
        const PacketId parent = head_parent(in, v, o);
        const PacketQueue& q = voq(in, v, o);
        const Packet& h = pool_.get(q.empty() ? parent : q.front());
        const bool shared = parent != kNoPacket && parent == in.edge_parent;
        if (!shared && in.edge_bytes > 0 && in.edge_bytes + engine_bytes(h) > port_bytes_per_cycle_)
          return;
        if (is_engine_port(o) ? !head_fits(o, v, voq_head(in, v, o)) : !flits_fit(o, v, h.flits))
          return;
        matched_out_.set(o);
        grant(i, o, e, v);
        in.out_ptr = (o + 1) % xports_;
        granted = true;
      });
    }
  }
  if (granted && in.pending > 0) wake = std::min(wake, in_busy_[static_cast<size_t>(i)]);
}

Ps Switch::engine_port_ps(std::int64_t bytes) const {
  return std::max<Ps>(1, (bytes + port_bytes_per_cycle_ - 1) / port_bytes_per_cycle_) * cycle_ps_;
}

Ps Switch::engine_alu_ps(const Packet& p) const {
  // The ALU works on the data of contributions only; a header-only request
  // or a write passing through does not use it.
  if (p.kind != PacketKind::kReduceContrib && p.kind != PacketKind::kReadResp) return 0;
  const auto bytes = static_cast<std::int64_t>(p.bytes);
  return static_cast<Ps>((bytes + alu_bytes_per_cycle_ - 1) / alu_bytes_per_cycle_) * cycle_ps_;
}

}  // namespace fabricsim
