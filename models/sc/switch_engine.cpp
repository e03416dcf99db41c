// The switch's side of its reduction engine (models/sc/reduction_engine.hpp):
// the heads asking for table entries and replication slots, sharing those
// among them, the engine ports' wide grants, and what the engine sends.
#include "models/sc/switch.hpp"

#include <algorithm>
#include <string>

#include "models/core/errors.hpp"

namespace fabricsim {

EngineAccess::EngineAccess(const SwitchParams& p, const ReductionEngine* engine)
    : engine_port(p.engine_port), engine_ports(p.engine_ports), xports(p.xports) {
  for (Need n : {ReductionEngine::kNeedTable, ReductionEngine::kNeedSlot}) {
    EngineShare& sh = share[n];
    const int pools = engine ? engine->pools(n) : 1;
    sh.given.assign(static_cast<size_t>(p.xports), -1);
    sh.by_bits = p.vcs * p.engine_ports <= 64 && pools == 1;
    sh.ask_bits.assign(static_cast<size_t>(p.xports), 0);
    sh.askers = PortSet(p.xports);
    sh.budget.assign(static_cast<size_t>(pools), 0);
    sh.asks.assign(static_cast<size_t>(pools), 0);
  }
  for (auto& c : need_class)
    c.assign(static_cast<size_t>(std::max(0, p.vcs * p.engine_ports)), PortSet(p.xports));
  scratch = PortSet(p.xports);
}

void Switch::inject_from_engine(PacketId id, int port, Ps t) {
  Packet& p = pool_.get(id);
  p.out_port = static_cast<std::int16_t>(route(p.dst, p.addr));
  SwitchInput& in = inputs_[static_cast<size_t>(port)];
  in.hold(p.vc, p.flits);  // it enters without arrive()
  enqueue_input(port, id);
  request_tick(t);
}

void Switch::set_engine_head(SwitchInput& in, int vc, int out, PacketId head) {
  const int i = inputs_.index_of(in);
  const std::size_t k = eng_.slot(vc, out);
  engine_head_gone(i, vc, out);  // the head it replaces, if any
  const Packet& p = pool_.get(head);
  auto& h = in.engine_heads[k];
  h = {p.kind, entry_key(p)};
  eng_.need_class[engine_->need(h.first, h.second, out)][k].set(i);
  if (ReductionEngine::need_follows_table(h.first))
    eng_.heads_by_key[h.second].push_back(static_cast<int>(k) * params_.xports + i);
}

void Switch::engine_head_gone(int i, int vc, int out) {
  const std::size_t k = eng_.slot(vc, out);
  bool had = false;
  for (auto& c : eng_.need_class) {
    had = had || c[k].test(i);
    c[k].reset(i);
  }
  const auto& h = inputs_[static_cast<size_t>(i)].engine_heads[k];
  if (!had || !ReductionEngine::need_follows_table(h.first)) return;
  auto it = eng_.heads_by_key.find(h.second);
  if (it == eng_.heads_by_key.end())
    throw InvariantError("switch: engine head missing from its key");
  std::vector<int>& v = it->second;
  const int code = static_cast<int>(k) * params_.xports + i;
  for (std::size_t j = 0; j < v.size(); ++j)
    if (v[j] == code) {
      v[j] = v.back();
      v.pop_back();
      break;
    }
  if (v.empty()) eng_.heads_by_key.erase(it);
}

void Switch::table_changed(std::uint64_t key, bool made) {
  auto it = eng_.heads_by_key.find(key);
  if (it == eng_.heads_by_key.end()) return;
  for (int code : it->second) {
    const auto k = static_cast<size_t>(code / params_.xports);
    const int i = code % params_.xports;
    eng_.need_class[made ? kNeedTable : kNeedNone][k].reset(i);
    eng_.need_class[made ? kNeedNone : kNeedTable][k].set(i);
  }
}

void Switch::trace_folds(FoldSink& sink) {
  engine_->trace_folds(sink, name());
}

const AluBackend& Switch::alu() const {
  if (!engine_) throw InvariantError(std::string(name()) + " has no reduction engine (no ALU)");
  return engine_->alu();
}

void Switch::engine_send(PacketId id, int port, bool multicast, Ps t) {
  if (multicast)
    replicate(id, port, t);
  else
    inject_from_engine(id, port, t);
}

void Switch::engine_resource_freed(Ps t) {
  if (eng_.waiter) {  // an allocation waited for a free entry or slot
    eng_.waiter = false;
    if (inputs_.pending_total > 0) request_tick(t);
  }
}

// The free inputs waiting for engine port o on VC v: those whose head needs
// nothing request it; those needing a table entry or a slot ask for a share
// of the free ones (share_engine), or wait when there is none.
void Switch::request_engine_port(int v, int o) {
  const std::size_t k = eng_.slot(v, o);
  eng_.scratch.assign_and(eng_.need_class[kNeedNone][k], alloc_.free_in);
  if (eng_.scratch.any()) alloc_.request_col(o, v, eng_.scratch);
  for (Need n : {kNeedTable, kNeedSlot}) {
    eng_.scratch.assign_and(eng_.need_class[n][k], alloc_.free_in);
    if (!eng_.scratch.any()) continue;
    if (engine_->free(n, o) == 0)
      eng_.waiter = true;  // what share_engine would conclude
    else
      eng_.scratch.for_each([&](int i) { eng_.ask(n, i, v, o); });  // shared out below
  }
}

// Heads that need a new table entry (or replication slot) may request the
// engine only as far as those are free (in the pool their engine port draws
// on). When they are fewer than the heads, they go one per input,
// round-robin from a rotating start: taken in port order, the low-numbered
// inputs would take every entry that frees and starve the rest (measured:
// ld_reduce requests waiting 35 us).
void Switch::share_engine(Need n, Ps e, Ps& wake) {
  EngineShare& sh = eng_.share[n];
  bool left_out = false;  // a request got nothing
  bool promised = false;  // ... while its pool had free ones, all promised this edge
  // Asks in (input, VC, port) order: inputs from sh.rr on, then wrapping
  // around (from the first input when there is enough for every ask), one
  // resource per input.
  if (sh.by_bits) {
    // One pool (by_bits needs it): any engine port's free count is its.
    std::size_t free = engine_->free(n, params_.engine_port);
    share_by_bits(sh, free, left_out);
    promised = left_out && engine_->free(n, params_.engine_port) > 0;
  } else {
    share_by_list(n, sh, left_out, promised);
  }
  if (left_out) {
    if (promised)
      // Free ones, all promised to other requests this edge: one of those
      // may lose arbitration, so look again next edge.
      wake = std::min(wake, e + params_.cycle_ps);
    else
      eng_.waiter = true;  // woken when a reduction completes or a slot frees
  }
}

void Switch::give(EngineShare& sh, std::size_t& free, int i, int v, int o) {
  --free;
  alloc_.request(i, o, v);
  sh.given[static_cast<size_t>(i)] = o;
  sh.given_list.push_back(i);
  sh.rr = (i + 1) % params_.xports;
}

void Switch::share_by_bits(EngineShare& sh, std::size_t& free, bool& left_out) {
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
    const int bit = __builtin_ctzll(b);  // the first (VC, port) it asks for
    give(sh, free, i, bit / params_.engine_ports, params_.engine_port + bit % params_.engine_ports);
    if ((b & (b - 1)) != 0) left_out = true;
    return true;
  };
  bool more = true;
  for (int i = sh.askers.find_next(start); more && i != PortSet::kNone;
       i = sh.askers.find_next(i + 1))
    more = serve(i);
  for (int i = sh.askers.find_first(); more && i != PortSet::kNone && i < start;
       i = sh.askers.find_next(i + 1))
    more = serve(i);
  sh.askers.for_each([&](int i) { bits[static_cast<size_t>(i)] = 0; });
  sh.askers.clear();
}

// Per pool: its free ones, shared among the asks drawing on it; the
// rotating start applies when any pool has fewer than its asks.
void Switch::share_by_list(Need n, EngineShare& sh, bool& left_out, bool& promised) {
  if (sh.wanted.size() > 1) std::sort(sh.wanted.begin(), sh.wanted.end());
  std::fill(sh.asks.begin(), sh.asks.end(), 0);
  for (const EngineShare::Ask& a : sh.wanted) {
    const auto k = static_cast<size_t>(engine_->pool(n, a.port));
    if (sh.asks[k]++ == 0) sh.budget[k] = engine_->free(n, a.port);
  }
  int start = 0;
  for (std::size_t k = 0; k < sh.asks.size(); ++k)
    if (sh.asks[k] > 0 && sh.budget[k] < sh.asks[k]) start = sh.rr;
  int last = -1;  // the input given something last
  for (int pass = 0; pass < 2; ++pass)
    for (const EngineShare::Ask& a : sh.wanted) {
      if ((pass == 0) != (a.in >= start)) continue;
      std::size_t& free = sh.budget[static_cast<size_t>(engine_->pool(n, a.port))];
      if (free > 0 && a.in != last) {
        give(sh, free, a.in, a.vc, a.port);
        last = a.in;
      } else {
        left_out = true;
        promised = promised || engine_->free(n, a.port) > 0;
      }
    }
  sh.wanted.clear();
}

void Switch::wide_grants(int i, Ps e, Ps& wake) {
  SwitchInput& in = inputs_[static_cast<size_t>(i)];
  if (in.pending == 0 || params_.queueing != Queueing::kVoq) return;
  // Still busy from an earlier edge:
  if (inputs_.busy[static_cast<size_t>(i)] > e && in.edge_at != e) return;
  if (in.edge_at != e) {
    in.edge_at = e;
    in.edge_bytes = 0;
    in.edge_parent = kNoPacket;
  }
  bool granted = false;
  const int start = in.out_ptr;
  for (int v = 0; v < params_.vcs; ++v) {
    alloc_.scratch.assign_andnot(in.nonempty[static_cast<size_t>(v)], alloc_.matched_out);
    alloc_.scratch &= alloc_.out_free;
    alloc_.scratch.subtract(alloc_.stalled[static_cast<size_t>(v)]);  // no head fits there
    // Outputs from out_ptr on, then the rest: no output is always first.
    for (int pass = 0; pass < 2; ++pass) {
      alloc_.scratch.for_each([&](int o) {
        if ((pass == 0) != (o >= start) || alloc_.matched_out.test(o)) return;
        if (!wide_grant_fits(in, i, v, o)) return;
        alloc_.matched_out.set(o);
        grant(i, o, e, v);
        in.out_ptr = (o + 1) % params_.xports;
        granted = true;
      });
    }
  }
  if (granted && in.pending > 0) wake = std::min(wake, inputs_.busy[static_cast<size_t>(i)]);
}

// The head of (v, o) fits this edge's remaining width of the engine input
// (copies of an original already sent this edge share its data) and the
// output's buffer or the engine.
bool Switch::wide_grant_fits(SwitchInput& in, int i, int v, int o) {
  // The head, or for a lazy copy its original (same size and data).
  const PacketId parent = head_parent(in, v, o);
  const PacketQueue& q = inputs_.voq(in, v, o);
  const Packet& h = pool_.get(q.empty() ? parent : q.front());
  const bool shared = parent != kNoPacket && parent == in.edge_parent;
  if (!shared && in.edge_bytes > 0 &&
      in.edge_bytes + engine_->bytes_of(h) > engine_->port_bytes_per_cycle(i))
    return false;
  return is_engine_port(o) ? head_fits(o, v, voq_head(in, v, o)) : flits_fit(o, v, h.flits);
}

}  // namespace fabricsim
