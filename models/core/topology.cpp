#include "models/core/topology.hpp"

#include <deque>
#include <limits>

#include "models/core/errors.hpp"

namespace fabricsim {

int Topology::total_endpoint_links() const {
  int n = 0;
  for (auto& p : endpoint_ports) n += static_cast<int>(p.size());
  return n;
}

namespace {

[[noreturn]] void fail(const std::string& m) { throw ConfigError("inconsistent topology: " + m); }

void connect_endpoint(Topology& t, int e, int s) {
  const int ep = static_cast<int>(t.endpoint_ports[static_cast<size_t>(e)].size());
  const int sp = static_cast<int>(t.switch_ports[static_cast<size_t>(s)].size());
  t.endpoint_ports[static_cast<size_t>(e)].push_back(PortPeer{true, s, sp});
  t.switch_ports[static_cast<size_t>(s)].push_back(PortPeer{false, e, ep});
}

void connect_switches(Topology& t, int a, int b) {
  const int pa = static_cast<int>(t.switch_ports[static_cast<size_t>(a)].size());
  const int pb = static_cast<int>(t.switch_ports[static_cast<size_t>(b)].size());
  t.switch_ports[static_cast<size_t>(a)].push_back(PortPeer{true, b, pb});
  t.switch_ports[static_cast<size_t>(b)].push_back(PortPeer{true, a, pa});
}

void compute_routes(Topology& t) {
  const int S = t.switches, N = t.endpoints;
  constexpr int kInf = std::numeric_limits<int>::max() / 2;
  // dist[s][d]: switch hops from switch s to endpoint d (1 = directly attached).
  std::vector<std::vector<int>> dist(static_cast<size_t>(S), std::vector<int>(static_cast<size_t>(N), kInf));
  for (int d = 0; d < N; ++d) {
    std::deque<int> q;
    for (auto& p : t.endpoint_ports[static_cast<size_t>(d)])
      if (dist[static_cast<size_t>(p.id)][static_cast<size_t>(d)] == kInf) {
        dist[static_cast<size_t>(p.id)][static_cast<size_t>(d)] = 1;
        q.push_back(p.id);
      }
    while (!q.empty()) {
      const int s = q.front();
      q.pop_front();
      for (auto& p : t.switch_ports[static_cast<size_t>(s)])
        if (p.is_switch && dist[static_cast<size_t>(p.id)][static_cast<size_t>(d)] == kInf) {
          dist[static_cast<size_t>(p.id)][static_cast<size_t>(d)] =
              dist[static_cast<size_t>(s)][static_cast<size_t>(d)] + 1;
          q.push_back(p.id);
        }
    }
  }
  t.routes.assign(static_cast<size_t>(S), std::vector<std::vector<int>>(static_cast<size_t>(N)));
  for (int s = 0; s < S; ++s)
    for (int d = 0; d < N; ++d) {
      const int ds = dist[static_cast<size_t>(s)][static_cast<size_t>(d)];
      if (ds == kInf) continue;
      auto& r = t.routes[static_cast<size_t>(s)][static_cast<size_t>(d)];
      const auto& ports = t.switch_ports[static_cast<size_t>(s)];
      for (int p = 0; p < static_cast<int>(ports.size()); ++p) {
        const PortPeer& peer = ports[static_cast<size_t>(p)];
        if (ds == 1 ? (!peer.is_switch && peer.id == d)
                    : (peer.is_switch &&
                       dist[static_cast<size_t>(peer.id)][static_cast<size_t>(d)] == ds - 1))
          r.push_back(p);
      }
    }
}

}  // namespace

Topology build_topology(const Config& c) {
  Topology t;
  if (c.topology.kind == TopologyKind::kSingle) {
    t.endpoints = static_cast<int>(c.sw.ports);
    t.switches = 1;
    t.endpoint_ports.resize(static_cast<size_t>(t.endpoints));
    t.switch_ports.resize(1);
    for (int e = 0; e < t.endpoints; ++e) connect_endpoint(t, e, 0);
    compute_routes(t);
    return t;
  }

  const int N = static_cast<int>(c.topology.endpoints), S = static_cast<int>(c.topology.switches);
  t.endpoints = N;
  t.switches = S;
  t.endpoint_ports.resize(static_cast<size_t>(N));
  t.switch_ports.resize(static_cast<size_t>(S));
  const auto& L = c.topology.links;
  const bool per_endpoint = L.size() == static_cast<size_t>(N) * static_cast<size_t>(S);
  if (L.size() != static_cast<size_t>(S) && !per_endpoint)
    fail("topology.links has " + std::to_string(L.size()) + " values; with topology.switches=" +
         std::to_string(S) + " and topology.endpoints=" + std::to_string(N) + " it needs " +
         std::to_string(S) + " (one per switch) or " + std::to_string(N * S) +
         " (a row per endpoint)");
  for (int e = 0; e < N; ++e)
    for (int s = 0; s < S; ++s) {
      const auto k = L[per_endpoint ? static_cast<size_t>(e * S + s) : static_cast<size_t>(s)];
      for (std::int64_t i = 0; i < k; ++i) connect_endpoint(t, e, s);
    }
  const auto& X = c.topology.switch_links;
  if (X.size() % 3 != 0)
    fail("topology.switch_links has " + std::to_string(X.size()) +
         " values; it is a list of triples (switch a, switch b, count)");
  for (size_t i = 0; i < X.size(); i += 3) {
    const auto a = X[i], b = X[i + 1], k = X[i + 2];
    if (a >= S || b >= S)
      fail("topology.switch_links names switch " + std::to_string(a >= S ? a : b) +
           " but topology.switches=" + std::to_string(S) + " (allowed 0.." +
           std::to_string(S - 1) + ")");
    if (a == b) fail("topology.switch_links links switch " + std::to_string(a) + " to itself");
    for (std::int64_t j = 0; j < k; ++j) connect_switches(t, static_cast<int>(a), static_cast<int>(b));
  }
  for (int e = 0; e < N; ++e)
    if (t.endpoint_ports[static_cast<size_t>(e)].empty())
      fail("endpoint " + std::to_string(e) + " has no links (topology.links)");
  for (int s = 0; s < S; ++s)
    if (t.ports_of_switch(s) > c.sw.ports)
      fail("switch " + std::to_string(s) + " needs " + std::to_string(t.ports_of_switch(s)) +
           " ports (topology.links, topology.switch_links) but switch.ports=" +
           std::to_string(c.sw.ports));
  compute_routes(t);
  // Every endpoint must reach every other from each switch it sends into.
  for (int e = 0; e < N; ++e)
    for (auto& p : t.endpoint_ports[static_cast<size_t>(e)])
      for (int d = 0; d < N; ++d)
        if (t.routes[static_cast<size_t>(p.id)][static_cast<size_t>(d)].empty())
          fail("endpoint " + std::to_string(e) + " cannot reach endpoint " + std::to_string(d) +
               " through switch " + std::to_string(p.id) +
               " (no path in topology.links / topology.switch_links)");
  return t;
}

}  // namespace fabricsim
