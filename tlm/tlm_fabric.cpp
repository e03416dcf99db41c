#include "tlm/tlm_fabric.hpp"

#include <string>

#include "models/core/errors.hpp"

namespace fabricsim {

namespace {
// The Fabric validates everything else; the address map must exist before
// the endpoints it hands out.
AddressMap map_of(const Config& cfg) {
  validate(cfg);
  if (cfg.workload.kind != WorkloadKind::kTlm)
    throw ConfigError("TlmFabric needs workload.kind=tlm (got another workload)");
  return {endpoint_count(cfg), static_cast<std::uint64_t>(cfg.tlm.window_bytes),
          static_cast<std::uint64_t>(cfg.tlm.multicast_base), cfg.tlm.multicast};
}
}  // namespace

TlmFabric::TlmFabric(const sc_core::sc_module_name& name, const Config& cfg,
                     const AluFactory& rtl_alu)
    : sc_core::sc_module(name), shared_(std::make_unique<TlmShared>(map_of(cfg))) {
  TlmShared* shared = shared_.get();
  const EndpointFactory make = [shared](int id, int links, const EndpointContext& ctx) {
    auto ep = std::make_unique<TlmEndpoint>(("gpu" + std::to_string(id)).c_str(), id, links, ctx,
                                            *shared);
    shared->endpoints.push_back(ep.get());
    return ep;
  };
  fabric_ = std::make_unique<Fabric>("fabric", cfg, rtl_alu, make);
  custom_memory_.assign(shared_->endpoints.size(), false);
  memories_.resize(shared_->endpoints.size());
}

TlmFabric::~TlmFabric() = default;

TlmEndpoint& TlmFabric::endpoint(int g) {
  if (g < 0 || g >= gpus())
    throw ConfigError("TlmFabric: no GPU " + std::to_string(g) + " (there are " +
                      std::to_string(gpus()) + ")");
  return *shared_->endpoints[static_cast<size_t>(g)];
}

void TlmFabric::bind_memory(int g, tlm::tlm_target_socket<>& mem) {
  endpoint(g).memory.bind(mem);
  custom_memory_[static_cast<size_t>(g)] = true;
}

Memory& TlmFabric::memory(int g) {
  endpoint(g);
  if (!memories_[static_cast<size_t>(g)])
    throw ConfigError("TlmFabric: GPU " + std::to_string(g) +
                      (custom_memory_[static_cast<size_t>(g)]
                           ? " has your memory, not the default one"
                           : ": the default memories exist once elaboration has ended"));
  return *memories_[static_cast<size_t>(g)];
}

void TlmFabric::before_end_of_elaboration() {
  const Config& cfg = fabric_->config();
  const auto lat = [](double ns) { return sc_core::sc_time(ns, sc_core::SC_NS); };
  for (int g = 0; g < gpus(); ++g) {
    if (custom_memory_[static_cast<size_t>(g)]) continue;
    auto m = std::make_unique<Memory>(("memory" + std::to_string(g)).c_str(),
                                      static_cast<std::uint64_t>(cfg.tlm.window_bytes),
                                      lat(cfg.tlm.memory_read_ns), lat(cfg.tlm.memory_write_ns));
    endpoint(g).memory.bind(m->socket);
    memories_[static_cast<size_t>(g)] = std::move(m);
  }
}

}  // namespace fabricsim
