// make_reduction_engine: the one place that names an engine organisation.
#include "models/sc/reduction_engine.hpp"

#include <string>
#include <utility>

#include "models/core/errors.hpp"
#include "models/sc/central_engine.hpp"

namespace fabricsim {

std::unique_ptr<ReductionEngine> make_reduction_engine(const Config& cfg, int first_port,
                                                       PacketPool& pool, PayloadPool* payloads,
                                                       std::unique_ptr<AluBackend> alu,
                                                       EngineHost& host, Window window) {
  switch (cfg.reduction.organisation) {
    case EngineOrganisation::kCentral:
      return std::make_unique<CentralEngine>(CentralEngine::Params::from(cfg, first_port), pool,
                                             payloads, std::move(alu), host, window);
  }
  throw InvariantError("reduction engine: unknown organisation " +
                       std::to_string(static_cast<int>(cfg.reduction.organisation)));
}

}  // namespace fabricsim
