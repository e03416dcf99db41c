// The face a Fabric needs of an endpoint built outside the models (the TLM
// adapters in tlm/ build theirs: workload.kind=tlm). The Fabric wires its
// links, counts its packets in the conservation checks and asks it, at the
// end, whether anything it holds was left without a wake-up.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "models/core/config.hpp"
#include "models/core/packet.hpp"
#include "models/sc/link.hpp"
#include "models/sc/timed_module.hpp"

namespace fabricsim {

class FabricEndpoint : public TimedModule {
 public:
  using TimedModule::TimedModule;
  // Port `port`'s links, and the switch they lead to.
  virtual void connect(int port, Link* tx, Link* rx, int peer_switch) = 0;
  // Closes open statistics intervals at the end of the run.
  virtual void finish(Ps end) = 0;
  // Throws InvariantError if work it holds has nothing scheduled to move it.
  virtual void check_end_of_run(Ps end) const = 0;
  virtual std::uint64_t injected() const = 0;   // packets it sent
  virtual std::uint64_t delivered() const = 0;  // packets it received
  virtual std::uint64_t delivered_flits() const = 0;
  virtual nlohmann::json stats() const = 0;     // its part of stats.json
  // Payload slots it holds outside packets (data waiting to be sent or
  // stored): the end-of-run data-leak check counts them.
  virtual std::uint64_t payload_slots_held() const = 0;
  // Work in progress outside the fabric's scheduler (e.g. a memory access
  // in another SystemC process): the watchdog must not call it stuck.
  virtual bool busy() const = 0;
};

// What a factory gets to build endpoint `id` with `links` links; the
// references live as long as the Fabric.
struct EndpointContext {
  Scheduler& scheduler;
  const Config& cfg;
  PacketPool& pool;
  PayloadPool& payloads;
};
using EndpointFactory =
    std::function<std::unique_ptr<FabricEndpoint>(int id, int links, const EndpointContext& ctx)>;

}  // namespace fabricsim
