// make_reduction_engine: the one place that names an engine organisation.
#include "models/sc/reduction_engine.hpp"

#include <string>
#include <utility>

#include "models/core/errors.hpp"
#include "models/sc/central_engine.hpp"
#include "models/sc/distributed_engine.hpp"
#include "models/sc/sliced_engine.hpp"

namespace fabricsim {

namespace {

// `key`'s value is too small for the organisation: what is allowed, and why.
[[noreturn]] void too_small(const std::string& key, std::int64_t value, std::int64_t least,
                            const std::string& why) {
  throw ConfigError("config key '" + key + "': value '" + std::to_string(value) +
                    "' is too small (allowed: >= " + std::to_string(least) + ", " + why + ")");
}

// The sizes the organisation divides must leave each part at least one.
void check_sizes(const Config& cfg, const EngineParams& p) {
  const ReductionConfig& r = cfg.reduction;
  if (p.organisation == EngineOrganisation::kSliced) {
    const std::string why = "reduction.organisation=sliced gives each of the reduction.ports=" +
                            std::to_string(r.ports) + " slices a part";
    if (r.table_entries < r.ports)
      too_small("reduction.table_entries", r.table_entries, r.ports, why);
    if (r.replication_slots < r.ports)
      too_small("reduction.replication_slots", r.replication_slots, r.ports, why);
  } else if (p.organisation == EngineOrganisation::kDistributed) {
    // A slice has slice_ports / chip_ports of the chip's entries and slots.
    const std::int64_t least = (r.chip_ports + r.slice_ports - 1) / r.slice_ports;
    const std::string why =
        "reduction.organisation=distributed gives each slice of "
        "reduction.slice_ports=" +
        std::to_string(r.slice_ports) +
        " ports that share of a chip of reduction.chip_ports=" + std::to_string(r.chip_ports) +
        " ports";
    if (r.table_entries < least) too_small("reduction.table_entries", r.table_entries, least, why);
    if (r.replication_slots < least)
      too_small("reduction.replication_slots", r.replication_slots, least, why);
  }
}

}  // namespace

int engine_port_count(const Config& cfg, int link_ports) {
  if (cfg.reduction.organisation != EngineOrganisation::kDistributed)
    return static_cast<int>(cfg.reduction.ports);
  const auto per = static_cast<int>(cfg.reduction.slice_ports);
  return (link_ports + per - 1) / per;
}

EngineParams EngineParams::from(const Config& cfg, int first_port) {
  EngineParams p;
  p.organisation = cfg.reduction.organisation;
  p.first_port = first_port;
  p.ports = engine_port_count(cfg, first_port);
  p.alu_ports = static_cast<int>(cfg.reduction.ports);
  p.chip_ports = static_cast<int>(cfg.reduction.chip_ports);
  p.slice_ports = static_cast<int>(cfg.reduction.slice_ports);
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
  check_sizes(cfg, p);
  return p;
}

std::unique_ptr<ReductionEngine> make_reduction_engine(const EngineParams& params, PacketPool& pool,
                                                       PayloadPool* payloads,
                                                       std::unique_ptr<AluBackend> alu,
                                                       EngineHost& host, Window window) {
  switch (params.organisation) {
    case EngineOrganisation::kCentral:
      return std::make_unique<CentralEngine>(params, pool, payloads, std::move(alu), host, window);
    case EngineOrganisation::kSliced:
      return std::make_unique<SlicedEngine>(params, pool, payloads, std::move(alu), host, window);
    case EngineOrganisation::kDistributed:
      return std::make_unique<DistributedEngine>(params, pool, payloads, std::move(alu), host,
                                                 window);
  }
  throw InvariantError("reduction engine: unknown organisation " +
                       std::to_string(static_cast<int>(params.organisation)));
}

}  // namespace fabricsim
