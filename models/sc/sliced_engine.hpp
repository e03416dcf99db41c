// The sliced reduction engine (reduction.organisation=sliced,
// docs/models/reduction_engine.md): reduction.ports engine ports, each a
// slice with its own ALU, its own part of the table (table_entries / ports
// entries) and of the replication slots (replication_slots / ports). An
// address goes to the slice its stripe hashes to (the same hash as
// central), so an entry's contributions all meet in one slice; a slice
// whose table is full holds back only the addresses hashed to it. Timing:
// ported_engine.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>

#include "models/sc/ported_engine.hpp"

namespace fabricsim {

class SlicedEngine final : public PortedEngine {
 public:
  SlicedEngine(const EngineParams& params, PacketPool& pool, PayloadPool* payloads,
               std::unique_ptr<AluBackend> alu, EngineHost& host, Window window)
      : PortedEngine(params, shape(params), pool, payloads, std::move(alu), host, window) {}

  const char* organisation() const override { return "sliced"; }
  int port_for(const Packet& p, int /*in_port*/) const override { return hashed_port(p.addr); }

  // The table and the slots divided evenly over the slices (the remainder
  // unused); each port's ALU and width as configured, as central's.
  // EngineParams::from refused sizes smaller than the slice count.
  static Shape shape(const EngineParams& p) {
    const auto n = static_cast<std::size_t>(p.ports);
    return {true, p.table_entries / n, p.replication_slots / n, p.alu_bytes_per_cycle,
            p.port_bytes_per_cycle};
  }
};

}  // namespace fabricsim
