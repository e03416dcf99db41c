#include "models/sc/distributed_engine.hpp"

#include <string>
#include <utility>

#include "models/core/errors.hpp"

namespace fabricsim {

DistributedEngine::DistributedEngine(const EngineParams& params, PacketPool& pool,
                                     PayloadPool* payloads, std::unique_ptr<AluBackend> alu,
                                     EngineHost& host, Window window)
    : PortedEngine(params, shape(params), pool, payloads, std::move(alu), host, window) {}

PortedEngine::Shape DistributedEngine::shape(const EngineParams& p) {
  // x slice_ports / chip_ports, rounded down for what is counted (entries,
  // slots) and up for rates (a slice's ALU is at least its share).
  const auto share = [&](std::int64_t total, bool up) {
    const std::int64_t num = total * p.slice_ports;
    return up ? (num + p.chip_ports - 1) / p.chip_ports : num / p.chip_ports;
  };
  const std::int64_t chip_alu = p.alu_ports * p.alu_bytes_per_cycle;
  const std::int64_t chip_width = p.alu_ports * p.port_bytes_per_cycle;
  return {true, static_cast<std::size_t>(share(static_cast<std::int64_t>(p.table_entries), false)),
          static_cast<std::size_t>(share(static_cast<std::int64_t>(p.replication_slots), false)),
          share(chip_alu, true), share(chip_width, true)};
}

int DistributedEngine::port_for(const Packet& p, int in_port) const {
  switch (p.kind) {
    case PacketKind::kReadResp: {
      // Back to the slice that read it (its ld_reduce opened the entry first).
      const auto it = owner_.find(key(p));
      if (it == owner_.end())
        throw InvariantError("distributed reduction engine: a read response for address " +
                             std::to_string(p.addr) + " (group " + std::to_string(p.group) +
                             ") that no slice is reducing");
      return it->second;
    }
    case PacketKind::kLdReduceReq:
    case PacketKind::kMcStore:
      if (in_port >= 0 && in_port < p_.first_port) return slice_port(in_port);
      return hashed_port(p.addr);
    default:
      return hashed_port(p.addr);  // push: every member's contribution meets in one slice
  }
}

void DistributedEngine::entry_opened(std::uint64_t key, int port) {
  const auto [it, made] = owner_.emplace(key, port);
  if (!made)
    throw InvariantError(
        "distributed reduction engine: an address reduced in two slices at once "
        "(engine ports " +
        std::to_string(it->second) + " and " + std::to_string(port) +
        "): two requesters asked for the same address");
}

}  // namespace fabricsim
