// The distributed reduction engine (reduction.organisation=distributed,
// docs/models/reduction_engine.md): a slice per reduction.slice_ports link
// ports (link port i belongs to slice i / slice_ports), each an engine port
// with its own ALU, table and replication slots, so the engine's capacity
// grows with the ports the switch has. Sizes: the chip's totals (the
// reduction.ports x alu_bytes_per_cycle ALUs and x port_bytes_per_cycle
// width, table_entries, replication_slots) belong to a chip of
// reduction.chip_ports ports; a slice has slice_ports / chip_ports of each.
//
// Where an address is reduced: an ld_reduce is taken by the slice of the
// link port it came in by (the requester's), which reads the address from
// every member; their responses come back to that slice (the slice that
// holds the address's entry). So the addresses of different GPUs' shares
// are reduced in different slices, each near the port that asked. A
// multicast write passing through the engine goes to its writer's slice; a
// push contribution (no requester) to the slice its address hashes to.
// Timing: ported_engine.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "models/sc/ported_engine.hpp"

namespace fabricsim {

class DistributedEngine final : public PortedEngine {
 public:
  DistributedEngine(const EngineParams& params, PacketPool& pool, PayloadPool* payloads,
                    std::unique_ptr<AluBackend> alu, EngineHost& host, Window window);

  const char* organisation() const override { return "distributed"; }
  int port_for(const Packet& p, int in_port) const override;

  // A slice's share of the chip's totals (at least 1 of each: EngineParams::from
  // refused sizes that leave a slice nothing).
  static Shape shape(const EngineParams& p);
  // The engine port of link port `in_port`'s slice.
  int slice_port(int in_port) const { return p_.first_port + in_port / p_.slice_ports; }

 private:
  void entry_opened(std::uint64_t key, int port) override;
  void entry_closed(std::uint64_t key) override { owner_.erase(key); }

  std::unordered_map<std::uint64_t, int> owner_;  // open entry's key -> its engine port
};

}  // namespace fabricsim
