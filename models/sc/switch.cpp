#include "models/sc/switch.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "models/core/errors.hpp"

namespace fabricsim {

namespace {
// The switch's allocators (SwitchAlloc::allocators): one per VC with
// several VCs (PIM's streams differ per VC), else one.
std::vector<std::unique_ptr<Allocator>> allocators(const SwitchParams& p) {
  std::vector<std::unique_ptr<Allocator>> a;
  if (p.vcs > 1 && p.queueing != Queueing::kOutput)
    for (int v = 0; v < p.vcs; ++v)
      a.push_back(make_allocator(p.allocator, p.xports, p.xports, p.iterations,
                                 p.seed + static_cast<std::uint64_t>(v) + 1));
  else
    a.push_back(make_allocator(p.allocator, p.xports, p.xports, p.iterations, p.seed));
  return a;
}
}  // namespace

Switch::Switch(const sc_core::sc_module_name& name, Scheduler& scheduler,
               const SwitchParams& params, const EngineParams* engine, PacketPool& pool,
               Window window, std::vector<std::vector<int>> routes, PayloadPool* payloads,
               std::unique_ptr<AluBackend> alu)
    : TimedModule(name, scheduler),
      params_(params),
      routes_(std::move(routes)),
      payloads_(payloads),
      pool_(pool),
      window_(window),
      inputs_(params_),
      outputs_(params_),
      alloc_(params_, allocators(params_)),
      engine_(engine != nullptr ? make_reduction_engine(*engine, pool, payloads, std::move(alu),
                                                        static_cast<EngineHost&>(*this), window)
                                : nullptr),
      eng_(params_, engine_.get()) {
  if ((engine != nullptr) != params_.has_engine() ||
      (engine != nullptr && engine->first_port != params_.engine_port))
    throw InvariantError(std::string(this->name()) +
                         ": the engine's parameters and the switch's disagree on its engine");
  for (int o = 0; o < params_.xports; ++o)
    for (int v = 0; v < params_.vcs; ++v) update_fits(o, v);
}

void Switch::set_multicast_groups(std::vector<std::vector<int>> groups) {
  mc_.groups = std::move(groups);
  if (engine_) engine_->set_groups(mc_.groups, routes_.size());
}

void Switch::connect_input(int port, Link* in) {
  inputs_[static_cast<size_t>(port)].rx.attach(in);
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
      if (item.time == alloc_.tick_at) {
        alloc_.tick_at = kNever;
        alloc_.due = true;
      }
      break;
    case kItemEngine:
      engine_->fold(item.a, now());
      break;
    case kItemOutTry: {
      SwitchOutput& o = outputs_[item.a];
      if (item.time == o.try_at) o.try_at = kNever;
      out_try(static_cast<int>(item.a));
      break;
    }
    default:
      throw InvariantError("switch: unknown item kind " + std::to_string(item.kind));
  }
}

void Switch::after_items() {
  if (alloc_.due) {
    alloc_.due = false;
    allocate(now());
  }
}

void Switch::trace(WaveTrace& w) {
  wave_ = &w;
  const std::string base = name();
  for (int i = 0; i < params_.ports; ++i)
    inputs_[static_cast<size_t>(i)].w_occupancy =
        w.signal(base + ".in" + std::to_string(i) + ".occupancy", 24);
  if (engine_) engine_->trace(w, base);
}

int Switch::route(int dst, std::uint64_t addr) const {
  const std::vector<int>& r = routes_[static_cast<size_t>(dst)];
  int o = r.size() == 1 ? r[0] : r[(addr / params_.stripe_bytes) % r.size()];
  if (r.size() > 1 && !mc_.align.empty()) {
    // The link the destination would pick for this address, if it is one of ours.
    const auto [first, total] = mc_.align[static_cast<size_t>(dst)];
    const auto l =
        static_cast<int>((addr / params_.stripe_bytes) % static_cast<std::uint64_t>(total)) - first;
    if (l >= 0 && l < static_cast<int>(r.size())) o = r[static_cast<size_t>(l)];
  }
  if (!any_down_ || !outputs_[static_cast<size_t>(o)].tx.link->down()) return o;
  return route_around(dst, addr);
}

// The chosen link is down: another route to the destination (same address,
// same choice).
int Switch::route_around(int dst, std::uint64_t addr) const {
  const std::vector<int>& r = routes_[static_cast<size_t>(dst)];
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
  return alive[static_cast<size_t>((addr / params_.stripe_bytes) % alive.size())];
}

bool Switch::can_reach(int dst) const {
  const std::vector<int>& r = routes_[static_cast<size_t>(dst)];
  return std::any_of(r.begin(), r.end(),
                     [&](int k) { return !outputs_[static_cast<size_t>(k)].tx.link->down(); });
}

void Switch::output_down(int o) {
  any_down_ = true;
  // Packets still waiting for allocation toward `o` take another route;
  // those already past the crossbar (its output queue) still cross.
  for (int i = 0; i < params_.xports; ++i) reroute_input(i, o);
  if (inputs_.pending_total > 0) request_tick(now());
}

void Switch::reroute_input(int i, int o) {
  SwitchInput& in = inputs_[static_cast<size_t>(i)];
  // Copies not yet made are made now (rare: a fault), so every queue
  // holds only packets and moved ones keep their order behind them.
  for (int k = 0; k < static_cast<int>(in.queues.size()); ++k)
    while (!in.queues[static_cast<size_t>(k)].lazy.empty())
      make_lazy_copy(in, k / params_.xports, k % params_.xports);
  if (params_.queueing == Queueing::kFifo) {
    for (SwitchInput::Queue& x : in.queues)
      for (PacketId id = x.q.front(); id != kNoPacket; id = pool_.get(id).next) {
        Packet& p = pool_.get(id);
        if (p.out_port == o) p.out_port = static_cast<std::int16_t>(route(p.dst, p.addr));
      }
    return;
  }
  if (params_.queueing != Queueing::kVoq) return;
  for (int v = 0; v < params_.vcs; ++v) {
    PacketQueue& q = inputs_.voq(in, v, o);
    if (q.empty()) continue;
    std::vector<PacketId> moved;
    while (!q.empty()) moved.push_back(q.pop(pool_));
    alloc_.col_min(v, o) = 0;
    alloc_.stalled[static_cast<size_t>(v)].reset(o);
    voq_emptied(i, v, o);
    for (PacketId id : moved) {
      Packet& p = pool_.get(id);
      p.out_port = static_cast<std::int16_t>(route(p.dst, p.addr));
      inputs_.voq(in, v, p.out_port).push(pool_, id);
      voq_filled(i, v, p.out_port, p.flits);
    }
  }
}

}  // namespace fabricsim
