// The wiring of a fabric, derived from the configuration: which endpoint port
// connects to which switch port, switch-to-switch links, and the routes each
// switch uses. Plain C++ (no SystemC), so it is unit-tested on its own and
// the SystemC fabric only instantiates what it describes.
#pragma once
#include <string>
#include <vector>

#include "models/core/config.hpp"

namespace fabricsim {

// The far end of a port.
struct PortPeer {
  bool is_switch = false;  // else an endpoint
  int id = 0;              // switch or endpoint index
  int port = 0;            // port index on that switch / endpoint
};

struct Topology {
  int endpoints = 0;
  int switches = 0;
  std::vector<std::vector<PortPeer>> endpoint_ports;  // [endpoint][port] -> switch port
  std::vector<std::vector<PortPeer>> switch_ports;    // [switch][port] -> peer
  // routes[s][d]: output ports of switch s that lead to endpoint d on a
  // shortest path (fewest switch hops); several = spread over them.
  std::vector<std::vector<std::vector<int>>> routes;

  // Scale-out (topology.kind=scaleout; otherwise one domain, no NICs):
  int per_domain = 0;                           // endpoints per scale-up domain
  std::vector<int> switch_tier;                 // [switch] 0 scale-up chip, 1 leaf, 2 spine
  std::vector<std::vector<int>> up_ports;       // [endpoint] ports into its domain's chips
  std::vector<std::vector<int>> nic_ports;      // [endpoint] NIC ports into the leaves
  int domain_of(int endpoint) const { return endpoint / per_domain; }
  // The ports endpoint e sends on toward d: its domain's chips, or its NICs.
  const std::vector<int>& ports_toward(int e, int d) const {
    return d < 0 || domain_of(d) == domain_of(e) ? up_ports[static_cast<size_t>(e)]
                                                 : nic_ports[static_cast<size_t>(e)];
  }
  bool is_nic(int e, int port) const {
    const auto& n = nic_ports[static_cast<size_t>(e)];
    return !n.empty() && port >= n.front();
  }

  int links_of(int endpoint) const {
    return static_cast<int>(endpoint_ports[static_cast<size_t>(endpoint)].size());
  }
  int ports_of_switch(int s) const {
    return static_cast<int>(switch_ports[static_cast<size_t>(s)].size());
  }
  int total_endpoint_links() const;
};

// Throws ConfigError naming the keys for an impossible wiring: wrong list
// sizes, a switch needing more than switch.ports ports, an endpoint without
// links, an endpoint that cannot reach another.
Topology build_topology(const Config& c);

}  // namespace fabricsim
