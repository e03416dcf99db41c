// make_reduction_engine: the one place that names an engine organisation.
#include "models/sc/reduction_engine.hpp"

#include <string>
#include <utility>

#include "models/core/errors.hpp"
#include "models/sc/central_engine.hpp"

namespace fabricsim {

EngineParams EngineParams::from(const Config& cfg, int first_port) {
  EngineParams p;
  p.organisation = cfg.reduction.organisation;
  p.first_port = first_port;
  p.ports = static_cast<int>(cfg.reduction.ports);
  p.stripe_bytes = fabricsim::stripe_bytes(cfg);
  p.table_entries = static_cast<std::size_t>(cfg.reduction.table_entries);
  p.replication_slots = static_cast<std::size_t>(cfg.reduction.replication_slots);
  p.alu_bytes_per_cycle = cfg.reduction.alu_bytes_per_cycle;
  p.port_bytes_per_cycle = cfg.reduction.port_bytes_per_cycle;
  p.flit_bytes = cfg.link.flit_bytes;
  p.cycle_ps = switch_cycle_ps(cfg.sw);
  p.alu_pipeline_ps = static_cast<Ps>(cfg.reduction.pipeline_cycles) * p.cycle_ps;
  p.arrival_order = cfg.reduction.order == FoldOrder::kArrival;
  p.data = cfg.collective.data;
  return p;
}

std::unique_ptr<ReductionEngine> make_reduction_engine(const EngineParams& params,
                                                       PacketPool& pool, PayloadPool* payloads,
                                                       std::unique_ptr<AluBackend> alu,
                                                       EngineHost& host, Window window) {
  switch (params.organisation) {
    case EngineOrganisation::kCentral:
      return std::make_unique<CentralEngine>(params, pool, payloads, std::move(alu), host,
                                             window);
  }
  throw InvariantError("reduction engine: unknown organisation " +
                       std::to_string(static_cast<int>(params.organisation)));
}

}  // namespace fabricsim
