// A fabric whose GPUs are TLM-2.0 targets (docs/tlm.md): build it from a
// config with workload.kind=tlm, bind your initiators to target(g), and
// optionally your own memory models with bind_memory(g, ...); every GPU
// left without one gets the default Memory. Run with sc_start as usual,
// then call finish() for the end-of-run checks and stats().
#pragma once
#include <systemc>
#include <tlm>

#include <memory>
#include <vector>

#include "models/core/alu_backend.hpp"
#include "models/sc/fabric.hpp"
#include "tlm/memory.hpp"
#include "tlm/tlm_endpoint.hpp"

namespace fabricsim {

class TlmFabric : public sc_core::sc_module {
 public:
  // Throws ConfigError if cfg is not a valid workload.kind=tlm config.
  TlmFabric(const sc_core::sc_module_name& name, const Config& cfg, const AluFactory& rtl_alu = {});
  ~TlmFabric() override;
  TlmFabric(const TlmFabric&) = delete;
  TlmFabric& operator=(const TlmFabric&) = delete;

  // GPU g's NVLink ports as a target socket: bind any number of initiators.
  tlm_utils::multi_passthrough_target_socket_optional<TlmEndpoint>& target(int g) {
    return endpoint(g).socket;
  }
  // GPU g's memory is `mem` instead of the default model (during elaboration).
  void bind_memory(int g, tlm::tlm_target_socket<>& mem);
  // The default memory of GPU g (after elaboration; throws if replaced).
  Memory& memory(int g);

  const AddressMap& address_map() const { return shared_->map; }
  Fabric& fabric() { return *fabric_; }
  TlmEndpoint& endpoint(int g);
  int gpus() const { return static_cast<int>(shared_->endpoints.size()); }

  // End-of-run checks (conservation, credits, lost wake-ups) once the
  // simulation has stopped: false, with error(), if one failed.
  bool finish() { return fabric_->finish(); }
  const std::string& error() const { return fabric_->error(); }
  nlohmann::json stats() const { return fabric_->stats(); }

 protected:
  void before_end_of_elaboration() override;

 private:
  std::unique_ptr<TlmShared> shared_;
  std::unique_ptr<Fabric> fabric_;
  std::vector<bool> custom_memory_;
  std::vector<std::unique_ptr<Memory>> memories_;
};

}  // namespace fabricsim
