#include "models/core/topology.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "models/core/errors.hpp"

namespace fabricsim {

int Topology::total_endpoint_links() const {
  int n = 0;
  for (const auto& p : endpoint_ports) n += static_cast<int>(p.size());
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

// Every port of every endpoint so far leads into its domain's chips.
void set_domain_ports(Topology& t, int per_domain) {
  t.per_domain = per_domain;
  t.switch_tier.assign(static_cast<size_t>(t.switches), 0);
  t.up_ports.assign(static_cast<size_t>(t.endpoints), {});
  t.nic_ports.assign(static_cast<size_t>(t.endpoints), {});
  for (int e = 0; e < t.endpoints; ++e)
    for (int p = 0; p < t.links_of(e); ++p) t.up_ports[static_cast<size_t>(e)].push_back(p);
}

// Wires the scale-up domains, `domains` copies of topology.links /
// topology.switch_links: domain d holds endpoints d*N .. and switches d*S ..
void build_domains(Topology& t, const Config& c, int domains);
// NICs into leaves (and spines): topology.kind=scaleout.
void build_scaleout(Topology& t, const Config& c);

}  // namespace

Topology build_topology(const Config& c) {
  Topology t;
  if (c.topology.kind == TopologyKind::kSingle) {
    t.endpoints = static_cast<int>(c.sw.ports);
    t.switches = 1;
    t.endpoint_ports.resize(static_cast<size_t>(t.endpoints));
    t.switch_ports.resize(1);
    for (int e = 0; e < t.endpoints; ++e) connect_endpoint(t, e, 0);
    set_domain_ports(t, t.endpoints);
    compute_routes(t);
    return t;
  }
  const bool out = c.topology.kind == TopologyKind::kScaleOut;
  build_domains(t, c, out ? static_cast<int>(c.scaleout.domains) : 1);
  set_domain_ports(t, static_cast<int>(c.topology.endpoints));
  if (out) build_scaleout(t, c);
  const int N = t.endpoints, S = t.switches;
  for (int e = 0; e < N; ++e)
    if (t.endpoint_ports[static_cast<size_t>(e)].empty())
      fail("endpoint " + std::to_string(e) + " has no links (topology.links)");
  for (int s = 0; s < S; ++s) {
    const bool chip = t.switch_tier[static_cast<size_t>(s)] == 0;
    const auto radix = chip ? c.sw.ports : c.scaleout.switch_ports;
    if (t.ports_of_switch(s) > radix)
      fail((chip ? "switch " : "scale-out switch ") + std::to_string(s) + " needs " +
           std::to_string(t.ports_of_switch(s)) +
           (chip ? " ports (topology.links, topology.switch_links) but switch.ports="
                 : " ports but scaleout.switch_ports=") +
           std::to_string(radix));
  }
  compute_routes(t);
  // Every endpoint must reach every other from each switch it sends into
  // toward it (its domain's chips, or its NICs' leaves).
  for (int e = 0; e < N; ++e)
    for (int d = 0; d < N; ++d) {
      if (d == e) continue;
      const auto& ports = t.ports_toward(e, d);
      if (ports.empty())
        fail("endpoint " + std::to_string(e) + " has no port toward endpoint " + std::to_string(d));
      for (int p : ports) {
        const PortPeer& peer = t.endpoint_ports[static_cast<size_t>(e)][static_cast<size_t>(p)];
        if (t.routes[static_cast<size_t>(peer.id)][static_cast<size_t>(d)].empty())
          fail("endpoint " + std::to_string(e) + " cannot reach endpoint " + std::to_string(d) +
               " through switch " + std::to_string(peer.id) +
               " (no path in topology.links / topology.switch_links)");
      }
    }
  return t;
}

namespace {

void build_domains(Topology& t, const Config& c, int domains) {
  const int N = static_cast<int>(c.topology.endpoints), S = static_cast<int>(c.topology.switches);
  t.endpoints = N * domains;
  t.switches = S * domains;
  t.endpoint_ports.resize(static_cast<size_t>(t.endpoints));
  t.switch_ports.resize(static_cast<size_t>(t.switches));
  const auto& L = c.topology.links;
  const bool per_endpoint = L.size() == static_cast<size_t>(N) * static_cast<size_t>(S);
  if (L.size() != static_cast<size_t>(S) && !per_endpoint)
    fail("topology.links has " + std::to_string(L.size()) + " values; with topology.switches=" +
         std::to_string(S) + " and topology.endpoints=" + std::to_string(N) + " it needs " +
         std::to_string(S) + " (one per switch) or " + std::to_string(N * S) +
         " (a row per endpoint)");
  for (int dom = 0; dom < domains; ++dom)
    for (int e = 0; e < N; ++e)
      for (int s = 0; s < S; ++s) {
        const auto k = L[per_endpoint ? static_cast<size_t>(e * S + s) : static_cast<size_t>(s)];
        for (std::int64_t i = 0; i < k; ++i) connect_endpoint(t, dom * N + e, dom * S + s);
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
    for (int dom = 0; dom < domains; ++dom)
      for (std::int64_t j = 0; j < k; ++j)
        connect_switches(t, dom * S + static_cast<int>(a), dom * S + static_cast<int>(b));
  }
}

// Leaves and spines. Packed: NIC j (GPU-major, every domain in turn) goes
// down port j % down of leaf j / down (a leaf takes whole domains). Rail:
// NIC k of GPU g goes to leaf g x nics_per_gpu + k in every domain (one
// leaf per rail, a port per domain). Every leaf has one link up to every
// spine; a leaf has down / oversubscription up ports. With one tier, a
// single switch takes every NIC.
void build_scaleout(Topology& t, const Config& c) {
  const ScaleOutConfig& so = c.scaleout;
  const int nics = t.endpoints * static_cast<int>(so.nics_per_gpu);
  const int P = static_cast<int>(so.switch_ports);
  const bool rail = so.tiers == 2 && so.placement == Placement::kRail;
  const int rails = t.per_domain * static_cast<int>(so.nics_per_gpu);
  int down = P, leaves = 1, spines = 0;
  if (rail) {
    down = static_cast<int>(so.domains);  // a rail leaf's NICs: one per domain
    leaves = rails;
    const int up = static_cast<int>(std::ceil(static_cast<double>(down) / so.oversubscription));
    if (down + up > P)
      fail("scaleout.placement=rail puts one NIC of each of the " + std::to_string(down) +
           " domains on a leaf, plus " + std::to_string(up) +
           " up ports (scaleout.oversubscription): more than scaleout.switch_ports=" +
           std::to_string(P) + "; use scaleout.placement=packed or larger switches");
    spines = up;
    if (leaves > P)
      fail(std::to_string(leaves) + " rails (GPUs per domain x scaleout.nics_per_gpu) need as "
           "many leaves, more than a spine's scaleout.switch_ports=" + std::to_string(P) +
           " can take");
  } else if (so.tiers == 2) {
    down = static_cast<int>(static_cast<double>(P) * so.oversubscription / (so.oversubscription + 1.0));
    down = std::max(1, std::min(P - 1, down));
    const int up = P - down;
    leaves = (nics + down - 1) / down;
    spines = leaves > 1 ? up : 0;
    if (leaves > P)
      fail(std::to_string(nics) + " NICs need " + std::to_string(leaves) + " leaves of " +
           std::to_string(down) + " down ports, more than a spine's scaleout.switch_ports=" +
           std::to_string(P) + " can take: raise scaleout.switch_ports or lower "
           "scaleout.oversubscription (a third tier is not modelled)");
  } else if (nics > P) {
    fail(std::to_string(nics) + " NICs do not fit one switch of scaleout.switch_ports=" +
         std::to_string(P) + ": use scaleout.tiers=2");
  }
  const int first_leaf = t.switches;
  t.switches += leaves + spines;
  t.switch_ports.resize(static_cast<size_t>(t.switches));
  for (int k = 0; k < leaves; ++k) t.switch_tier.push_back(1);
  for (int k = 0; k < spines; ++k) t.switch_tier.push_back(2);
  int j = 0;
  for (int e = 0; e < t.endpoints; ++e)
    for (std::int64_t n = 0; n < so.nics_per_gpu; ++n, ++j) {
      t.nic_ports[static_cast<size_t>(e)].push_back(t.links_of(e));
      const int rail_of = (e % t.per_domain) * static_cast<int>(so.nics_per_gpu) + static_cast<int>(n);
      connect_endpoint(t, e, first_leaf + (rail ? rail_of : j / down));
    }
  for (int l = 0; l < leaves; ++l)
    for (int s = 0; s < spines; ++s) connect_switches(t, first_leaf + l, first_leaf + leaves + s);
}

}  // namespace

}  // namespace fabricsim
