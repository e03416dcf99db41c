#include "models/sc/fabric.hpp"

#include "models/core/errors.hpp"

namespace fabricsim {

Fabric::Fabric(const sc_core::sc_module_name& name, const Config& cfg)
    : sc_core::sc_module(name),
      cfg_(cfg),
      window_{ns_to_ps(cfg.sim.warmup_ns), ns_to_ps(cfg.sim.warmup_ns) + ns_to_ps(cfg.sim.duration_ns)},
      scheduler_("kernel"),
      pattern_(cfg.traffic, static_cast<int>(cfg.sw.ports), static_cast<std::uint64_t>(cfg.sim.seed)) {
  validate(cfg_);
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    throw InvariantError("fabricsim needs the SystemC time resolution to be 1 ps");
  const int n = static_cast<int>(cfg.sw.ports);
  const int vcs = static_cast<int>(cfg.sw.vcs);
  const Ps flit = flit_time_ps(cfg.link);
  const Ps lat = ns_to_ps(cfg.link.latency_ns);
  const std::string base = std::string(this->name()) + ".";

  switch_ = std::make_unique<Switch>("sw0", scheduler_, cfg_, pool_, window_);
  for (int i = 0; i < n; ++i) {
    const std::string ep = "ep" + std::to_string(i);
    endpoints_.push_back(
        std::make_unique<Endpoint>(ep.c_str(), scheduler_, i, cfg_, pattern_, pool_, sink_, window_));
    Endpoint& e = *endpoints_.back();
    auto up = std::make_unique<Link>(base + ep + ".tx", flit, lat, vcs,
                                     static_cast<int>(cfg.sw.input_buffer_flits / vcs), window_);
    auto down = std::make_unique<Link>(base + "sw0.out" + std::to_string(i), flit, lat, vcs,
                                       static_cast<int>(cfg.endpoint.rx_buffer_flits / vcs),
                                       window_);
    up->bind_tx(&e, 0);
    up->bind_rx(switch_.get(), static_cast<std::uint32_t>(i), /*deliver_at_tail=*/false);
    down->bind_tx(switch_.get(), static_cast<std::uint32_t>(i));
    down->bind_rx(&e, 0, /*deliver_at_tail=*/true);
    e.connect(up.get(), down.get());
    switch_->connect_input(i, up.get());
    switch_->connect_output(i, down.get());
    links_.push_back(std::move(up));
    links_.push_back(std::move(down));
  }
}

Fabric::~Fabric() = default;

std::uint64_t Fabric::delivered_flits_total() const {
  std::uint64_t n = 0;
  for (auto& e : endpoints_) n += e->delivered_flits();
  return n;
}

std::uint64_t Fabric::events() const {
  std::uint64_t n = switch_->events();
  for (auto& e : endpoints_) n += e->events();
  return n;
}

bool Fabric::run() {
  sc_core::sc_start(sc_core::sc_time::from_value(window_.end));
  return finish();
}

bool Fabric::finish() {
  if (finished_) return error_.empty();  // the checks add to statistics: once only
  finished_ = true;
  if (scheduler_.errors().failed()) {
    error_ = scheduler_.errors().message();
    return false;
  }
  try {
    check_end_of_run();
  } catch (const InvariantError& e) {
    error_ = std::string("end-of-run check failed: ") + e.what();
    return false;
  }
  checked_ = true;
  return true;
}

void Fabric::check_end_of_run() {
  const Ps end = window_.end;
  cons_ = Conservation{};
  for (auto& e : endpoints_) {
    e->finish(end);
    cons_.generated += e->generated();
    cons_.source_queued += e->source_queued();
    cons_.injected += e->injected();
    cons_.delivered += e->delivered();
  }
  for (auto& l : links_) {
    l->finish(end);
    cons_.on_links += l->in_flight();
    l->check_credit_conservation();
  }
  switch_->finish(end);
  switch_->check_end_of_run(end);
  for (auto& e : endpoints_) e->check_end_of_run(end);
  cons_.in_switch_inputs = switch_->packets_in_inputs();
  cons_.in_switch_outputs = switch_->packets_in_outputs();

  // Two independent counts must agree: what the components hold, and what
  // the packet pool still has alive.
  if (cons_.lost() != 0)
    throw InvariantError(std::to_string(cons_.lost()) + " packets lost: injected " +
                         std::to_string(cons_.injected) + ", delivered " +
                         std::to_string(cons_.delivered) + ", in flight " +
                         std::to_string(cons_.in_flight()));
  if (pool_.live() != cons_.in_flight())
    throw InvariantError("packet pool holds " + std::to_string(pool_.live()) +
                         " live packets but the fabric accounts for " +
                         std::to_string(cons_.in_flight()));
  if (cons_.generated != cons_.injected + cons_.source_queued)
    throw InvariantError("sources: generated != injected + queued");
  // Per switch input: flits of packets not yet granted plus flits still on
  // the wire must equal the credits the upstream link counts as outstanding
  // (granted packets have had their credit return scheduled).
  for (int i = 0; i < switch_->ports(); ++i) {
    const Link& up = *links_[static_cast<size_t>(2 * i)];
    std::int64_t on_wire = 0;
    switch_->for_each_pending([&](const Item& it) {
      if (it.kind == kItemArrive && it.b == static_cast<std::uint32_t>(i))
        on_wire += pool_.get(it.a).flits;
    });
    std::int64_t outstanding = 0;
    for (int v = 0; v < up.vcs(); ++v) outstanding += up.flits_outstanding(v);
    const std::int64_t queued = switch_->queued_input_flits(i);
    if (queued + on_wire != outstanding)
      throw InvariantError(up.name() + ": " + std::to_string(queued) + " flits queued at the input and " +
                           std::to_string(on_wire) + " on the wire, but " +
                           std::to_string(outstanding) + " credits outstanding");
  }
}

}  // namespace fabricsim
