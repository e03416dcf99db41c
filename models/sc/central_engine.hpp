// The central reduction engine (reduction.organisation=central,
// docs/models/reduction_engine.md): `ports` crossbar ports of its own (after
// the switch's link ports), each `port_bytes_per_cycle` wide with an ALU of
// `alu_bytes_per_cycle`, one table of entries and one pool of replication
// slots shared by every port. An address always maps to the same engine
// port (address hash), so an entry's contributions all meet there. The
// port a query names does not matter: every port draws on the one table
// and the one slot pool. Timing: ported_engine.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>

#include "models/sc/ported_engine.hpp"

namespace fabricsim {

class CentralEngine final : public PortedEngine {
 public:
  using Params = EngineParams;

  CentralEngine(const Params& params, PacketPool& pool, PayloadPool* payloads,
                std::unique_ptr<AluBackend> alu, EngineHost& host, Window window)
      : PortedEngine(params, shape(params), pool, payloads, std::move(alu), host, window) {}

  const char* organisation() const override { return "central"; }
  int port_for(const Packet& p, int /*in_port*/) const override { return hashed_port(p.addr); }

  // One table and one slot pool of the configured sizes; every port's ALU
  // and width as configured.
  static Shape shape(const Params& p) {
    return {false, p.table_entries, p.replication_slots, p.alu_bytes_per_cycle,
            p.port_bytes_per_cycle};
  }
};

}  // namespace fabricsim
