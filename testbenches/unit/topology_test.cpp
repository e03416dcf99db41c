// Topology: wiring, port budgets, routes with spreading, and the errors an
// impossible wiring gives.
#include "models/core/topology.hpp"

#include <gtest/gtest.h>

#include <string>

namespace fabricsim {
namespace {

std::string error_of(const std::vector<std::string>& sets) {
  try {
    load_config("", sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

TEST(Topology, SingleSwitchOneEndpointPerPort) {
  const Topology t = build_topology(load_config("", {"switch.ports=8"}));
  EXPECT_EQ(t.endpoints, 8);
  EXPECT_EQ(t.switches, 1);
  for (int e = 0; e < 8; ++e) {
    ASSERT_EQ(t.links_of(e), 1);
    EXPECT_EQ(t.endpoint_ports[e][0].port, e);
    EXPECT_EQ(t.routes[0][e], std::vector<int>{e});
  }
}

// DGX H100: 8 GPUs, 4 NVSwitch chips, each GPU's 18 links split 5/4/4/5.
TEST(Topology, DgxH100Wiring) {
  const Topology t = build_topology(load_config(
      "", {"topology.kind=scaleup", "topology.endpoints=8", "topology.switches=4",
           "topology.links=5,4,4,5"}));
  EXPECT_EQ(t.total_endpoint_links(), 8 * 18);
  EXPECT_EQ(t.ports_of_switch(0), 40);
  EXPECT_EQ(t.ports_of_switch(1), 32);
  EXPECT_EQ(t.ports_of_switch(2), 32);
  EXPECT_EQ(t.ports_of_switch(3), 40);
  for (int e = 0; e < 8; ++e) {
    ASSERT_EQ(t.links_of(e), 18);
    // Links ordered by switch: 5 to chip 0, 4 to chip 1, 4 to chip 2, 5 to chip 3.
    EXPECT_EQ(t.endpoint_ports[e][0].id, 0);
    EXPECT_EQ(t.endpoint_ports[e][5].id, 1);
    EXPECT_EQ(t.endpoint_ports[e][9].id, 2);
    EXPECT_EQ(t.endpoint_ports[e][13].id, 3);
    EXPECT_EQ(t.endpoint_ports[e][17].id, 3);
  }
  // Chip 0 reaches GPU 3 over the 5 links wired to it; each leads back to GPU 3.
  const auto& r = t.routes[0][3];
  ASSERT_EQ(r.size(), 5u);
  for (int p : r) {
    const PortPeer& peer = t.switch_ports[0][static_cast<size_t>(p)];
    EXPECT_FALSE(peer.is_switch);
    EXPECT_EQ(peer.id, 3);
    // The peer port of the switch port is the endpoint port that points back.
    EXPECT_EQ(t.endpoint_ports[3][static_cast<size_t>(peer.port)].port, p);
  }
}

TEST(Topology, PerEndpointMatrix) {
  const Topology t = build_topology(load_config(
      "", {"topology.kind=scaleup", "topology.endpoints=2", "topology.switches=2",
           "topology.links=2,0,1,3", "topology.switch_links=0,1,1"}));
  EXPECT_EQ(t.links_of(0), 2);
  EXPECT_EQ(t.links_of(1), 4);
  EXPECT_EQ(t.ports_of_switch(0), 4);  // 2 + 1 endpoint links, 1 trunk
  EXPECT_EQ(t.ports_of_switch(1), 4);  // 3 endpoint links, 1 trunk
  // Switch 1 reaches endpoint 0 only through the trunk.
  ASSERT_EQ(t.routes[1][0].size(), 1u);
  EXPECT_TRUE(t.switch_ports[1][static_cast<size_t>(t.routes[1][0][0])].is_switch);
}

// Two leaf switches joined by two parallel links; endpoints 0,1 on leaf 0,
// 2,3 on leaf 1: cross traffic spreads over both trunk links.
TEST(Topology, SwitchLinksRoutesAndSpreading) {
  const Topology t = build_topology(load_config(
      "", {"topology.kind=scaleup", "topology.endpoints=4", "topology.switches=2",
           "topology.links=1,0,1,0,0,1,0,1", "topology.switch_links=0,1,2"}));
  EXPECT_EQ(t.ports_of_switch(0), 4);  // 2 endpoints + 2 trunk
  const auto& r = t.routes[0][2];
  ASSERT_EQ(r.size(), 2u);
  for (int p : r) EXPECT_TRUE(t.switch_ports[0][static_cast<size_t>(p)].is_switch);
  EXPECT_EQ(t.routes[0][1].size(), 1u);  // local: the direct link only
}

TEST(Topology, LongerPathsTakeTheFewestHops) {
  // A chain 0 - 1 - 2 plus a shortcut 0 - 2: endpoint on switch 2 is one hop from 0.
  const Topology t = build_topology(load_config(
      "", {"topology.kind=scaleup", "topology.endpoints=3", "topology.switches=3",
           "topology.links=1,0,0,0,1,0,0,0,1", "topology.switch_links=0,1,1,1,2,1,0,2,1"}));
  const auto& r = t.routes[0][2];
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(t.switch_ports[0][static_cast<size_t>(r[0])].id, 2);
}

TEST(Topology, ErrorsNameTheKeys) {
  std::string m = error_of({"topology.kind=scaleup", "topology.endpoints=8", "topology.switches=4",
                            "topology.links=5,4,4"});
  EXPECT_NE(m.find("topology.links has 3 values"), std::string::npos) << m;
  EXPECT_NE(m.find("needs 4 (one per switch) or 32"), std::string::npos) << m;

  m = error_of({"topology.kind=scaleup", "topology.endpoints=16", "topology.switches=1",
                "topology.links=5", "switch.ports=64"});
  EXPECT_NE(m.find("switch 0 needs 80 ports"), std::string::npos) << m;
  EXPECT_NE(m.find("switch.ports=64"), std::string::npos) << m;

  m = error_of({"topology.kind=scaleup", "topology.endpoints=2", "topology.switches=2",
                "topology.links=1,0,0,1"});
  EXPECT_NE(m.find("endpoint 0 cannot reach endpoint 1"), std::string::npos) << m;

  m = error_of({"topology.kind=scaleup", "topology.endpoints=2", "topology.switches=2",
                "topology.links=1,0,0,0"});
  EXPECT_NE(m.find("endpoint 1 has no links"), std::string::npos) << m;

  m = error_of({"topology.kind=scaleup", "topology.switches=2", "topology.links=1,1",
                "topology.switch_links=0,2,1"});
  EXPECT_NE(m.find("names switch 2"), std::string::npos) << m;
  m = error_of({"topology.kind=scaleup", "topology.switches=2", "topology.links=1,1",
                "topology.switch_links=0,1"});
  EXPECT_NE(m.find("list of triples"), std::string::npos) << m;
  m = error_of({"topology.kind=scaleup", "topology.links=1,x"});
  EXPECT_NE(m.find("item 'x' that is not an integer"), std::string::npos) << m;
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

Config scaleout(std::vector<std::string> extra) {
  std::vector<std::string> s = {"topology.kind=scaleout", "topology.endpoints=8",
                                "topology.switches=4",    "topology.links=5,4,4,5",
                                "switch.ports=64",        "switch.vcs=2",
                                "workload.kind=collective"};
  s.insert(s.end(), extra.begin(), extra.end());
  return load_config("", s);
}

// Four DGX-like domains on a fat tree: each GPU's NIC on a leaf, every leaf
// up to every spine; chips only see their own domain.
TEST(Topology, ScaleOutFatTree) {
  // 32 NICs; leaves of 16 ports at 1:1 take 8 NICs each: 4 leaves, 8 spines.
  const Topology t = build_topology(
      scaleout({"scaleout.domains=4", "scaleout.switch_ports=16", "scaleout.oversubscription=1",
                "scaleout.placement=packed"}));
  EXPECT_EQ(t.endpoints, 32);
  EXPECT_EQ(t.switches, 16 + 4 + 8);
  int leaves = 0, spines = 0;
  for (int k : t.switch_tier) {
    leaves += k == 1;
    spines += k == 2;
  }
  EXPECT_EQ(leaves, 4);
  EXPECT_EQ(spines, 8);
  for (int e = 0; e < 32; ++e) {
    ASSERT_EQ(t.links_of(e), 19);  // 18 NVLinks + a NIC
    EXPECT_EQ(t.nic_ports[e], std::vector<int>{18});
    EXPECT_EQ(t.domain_of(e), e / 8);
    EXPECT_EQ(t.endpoint_ports[e][18].id, 16 + e / 8);  // packed: a leaf per domain here
    for (int p = 0; p < 18; ++p) EXPECT_EQ(t.endpoint_ports[e][p].id / 4, e / 8);  // own chips
  }
  EXPECT_EQ(t.ports_toward(0, 7).size(), 18u);
  EXPECT_EQ(t.ports_toward(0, 8), std::vector<int>{18});
  // A chip cannot reach another domain; a leaf reaches a remote GPU through
  // any of the 8 spines; a spine goes straight down to the GPU's leaf.
  EXPECT_TRUE(t.routes[0][8].empty());
  EXPECT_EQ(t.routes[16][8].size(), 8u);
  for (int p : t.routes[16][8]) EXPECT_EQ(t.switch_tier[t.switch_ports[16][p].id], 2);
  EXPECT_EQ(t.routes[20][8].size(), 1u);
  EXPECT_EQ(t.switch_ports[20][t.routes[20][8][0]].id, 17);
}

// Rail-optimized: GPU g's NIC in every domain on leaf g; up ports per leaf
// = its NICs / oversubscription; same-rail traffic never reaches a spine.
TEST(Topology, ScaleOutRails) {
  const Topology t = build_topology(scaleout({"scaleout.domains=4", "scaleout.oversubscription=2"}));
  EXPECT_EQ(t.switches, 16 + 8 + 2);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(t.endpoint_ports[e][18].id, 16 + e % 8);
  EXPECT_EQ(t.ports_of_switch(16), 4 + 2);
  EXPECT_EQ(t.routes[16][8].size(), 1u);  // GPU 8 is on rail 0 too: straight down
  EXPECT_EQ(t.routes[16][9].size(), 2u);  // rail 1: up through either spine
}

TEST(Topology, ScaleOutOversubscriptionAndOneTier) {
  // 3:1 on 16 ports: 12 down, 4 up; 32 NICs need 3 leaves, 4 spines.
  const Topology t = build_topology(
      scaleout({"scaleout.domains=4", "scaleout.switch_ports=16", "scaleout.oversubscription=3",
                "scaleout.placement=packed"}));
  EXPECT_EQ(t.switches, 16 + 3 + 4);
  EXPECT_EQ(t.ports_of_switch(16), 12 + 4);
  EXPECT_EQ(t.ports_of_switch(18), 8 + 4);  // the last leaf is partly used
  // One tier: a single switch for every NIC, and its radix must do.
  const Topology one = build_topology(scaleout({"scaleout.tiers=1", "scaleout.nics_per_gpu=2"}));
  EXPECT_EQ(one.switches, 8 + 1);
  EXPECT_EQ(one.ports_of_switch(8), 32);
  EXPECT_EQ(one.nic_ports[3], (std::vector<int>{18, 19}));
  const std::string e = error_of({"topology.kind=scaleout", "topology.endpoints=8",
                                  "topology.switches=4", "topology.links=5,4,4,5",
                                  "workload.kind=collective", "scaleout.tiers=1",
                                  "scaleout.switch_ports=8"});
  EXPECT_NE(e.find("scaleout.switch_ports=8"), std::string::npos) << e;
  EXPECT_NE(e.find("scaleout.tiers=2"), std::string::npos) << e;
  const std::string wd = error_of({"topology.kind=scaleout", "workload.kind=collective",
                                   "topology.endpoints=8", "topology.switches=4",
                                   "topology.links=5,4,4,5", "switch.vcs=2",
                                   "scaleout.latency_ns=2000"});
  EXPECT_NE(wd.find("sim.watchdog_ns"), std::string::npos) << wd;
  const std::string w = error_of({"topology.kind=scaleout", "workload.kind=synthetic"});
  EXPECT_NE(w.find("topology.kind=scaleout"), std::string::npos) << w;
  // SHARP reduces a rank's chunk in one leaf: packed leaves would split it.
  const std::string sh = error_of({"topology.kind=scaleout", "workload.kind=collective",
                                   "topology.endpoints=8", "topology.switches=4",
                                   "topology.links=5,4,4,5", "scaleout.sharp=true",
                                   "scaleout.placement=packed"});
  EXPECT_NE(sh.find("scaleout.sharp=true"), std::string::npos) << sh;
  EXPECT_NE(sh.find("scaleout.placement=rail"), std::string::npos) << sh;
  const std::string st = error_of({"topology.kind=scaleout", "workload.kind=collective",
                                   "topology.endpoints=8", "topology.switches=4",
                                   "topology.links=5,4,4,5", "scaleout.sharp=true",
                                   "collective.inter=tree"});
  EXPECT_NE(st.find("collective.inter=tree"), std::string::npos) << st;
  const std::string sd = error_of({"topology.kind=scaleout", "workload.kind=collective",
                                   "topology.endpoints=8", "topology.switches=4",
                                   "topology.links=5,4,4,5", "scaleout.sharp=true",
                                   "collective.inter=double_tree"});
  EXPECT_NE(sd.find("collective.inter=double_tree would do it in the GPUs"), std::string::npos) << sd;
  // A scale-out replay buffer shorter than a scale-out link's ack round trip.
  const std::string rb = error_of({"topology.kind=scaleout", "workload.kind=collective",
                                   "topology.endpoints=8", "topology.switches=4",
                                   "topology.links=5,4,4,5", "scaleout.retry=go_back_n",
                                   "scaleout.replay_buffer_flits=100"});
  EXPECT_NE(rb.find("scaleout.replay_buffer_flits=100 is smaller than a scale-out link's ack "
                    "round trip"),
            std::string::npos)
      << rb;
  // A workload's group layout must tile the GPUs (the file is read with the config).
  const std::string wl = error_of({"topology.kind=scaleout", "workload.kind=collective",
                                   "topology.endpoints=8", "topology.switches=4",
                                   "topology.links=5,4,4,5",
                                   // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one path
                                   "collective.workload=" FABRICSIM_SOURCE_DIR
                                   "/traces/workloads/dense-tp8-dp4.json",
                                   "collective.groups=tp=3x1,dp=2x8"});
  EXPECT_NE(wl.find("does not tile the 16 GPUs"), std::string::npos) << wl;
  const std::string gr = error_of({"workload.kind=collective", "collective.groups=tp=8x1"});
  EXPECT_NE(gr.find("set collective.workload"), std::string::npos) << gr;
}

}  // namespace
}  // namespace fabricsim
