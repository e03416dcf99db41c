// The fabric builder's per-instance parameters (FabricParams): whether each
// switch has a reduction engine follows from its tier, each link's rate,
// credits and lanes from its two ends. No kernel runs; these live with the
// scenarios because FabricParams is part of the SystemC models library.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/topology.hpp"
#include "models/sc/fabric_params.hpp"

namespace fabricsim {
namespace {

Config four_dgx(const std::vector<std::string>& extra) {
  return load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100-x4-ib.yaml", extra);
}

// scaleout.sharp: the leaves and spines get engines, the NVSwitch chips do
// not (the hierarchical algorithm reduces in the GPUs inside a domain). The
// builder hands each switch its plan's flag (SwitchParams::from).
TEST(FabricParams, SharpGivesTheScaleOutTierEnginesOnly) {
  for (const bool sharp : {true, false}) {
    const Config c = four_dgx({"collective.algorithm=hierarchical",
                               std::string("scaleout.sharp=") + (sharp ? "true" : "false")});
    const Topology t = build_topology(c);
    const FabricParams p(c, t);
    int leaves = 0, spines = 0;
    for (int s = 0; s < t.switches; ++s) {
      const SwitchPlan& plan = p.switch_plan(s);
      EXPECT_EQ(plan.tier, t.switch_tier[static_cast<std::size_t>(s)]);
      EXPECT_EQ(plan.engine, sharp && plan.tier > 0) << "switch " << s;
      EXPECT_FALSE(plan.rtl_alu);
      leaves += plan.tier == 1 ? 1 : 0;
      spines += plan.tier == 2 ? 1 : 0;
    }
    EXPECT_EQ(leaves, 8);  // rail-optimized: a leaf per GPU of a domain
    EXPECT_GT(spines, 0);
  }
}

// NVLS in one DGX: every chip reduces, with the RTL ALU when asked.
TEST(FabricParams, NvlsGivesEveryChipAnEngine) {
  for (const char* alu : {"model", "rtl"}) {
    const Config c = load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100-allreduce.yaml",
                                 {"collective.algorithm=nvls", std::string("reduction.alu=") + alu});
    const Topology t = build_topology(c);
    const FabricParams p(c, t);
    ASSERT_EQ(t.switches, 4);
    for (int s = 0; s < t.switches; ++s) {
      EXPECT_TRUE(p.switch_plan(s).engine);
      EXPECT_EQ(p.switch_plan(s).rtl_alu, std::string(alu) == "rtl");
    }
  }
}

// NIC links run at the tier's rate into the leaves' buffers, one lane; the
// scale-up links at link.*, the straggler's with straggler.lanes, both ways.
TEST(FabricParams, LinksTakeTheirTierAndTheStragglersLanes) {
  const Config c = four_dgx({"straggler.gpu=1", "straggler.lanes=1"});
  const Config tier = scaleout_tier_config(c);
  const Topology t = build_topology(c);
  const FabricParams p(c, t);
  const int vcs = static_cast<int>(c.sw.vcs);
  LinkConfig slow = c.link;
  slow.lanes = 1;
  int nics = 0;
  for (int e = 0; e < t.endpoints; ++e)
    for (int k = 0; k < t.links_of(e); ++k) {
      const LinkParams& l = p.endpoint_link(e, k);
      EXPECT_EQ(l.vcs, vcs);
      if (t.is_nic(e, k)) {
        ++nics;
        EXPECT_EQ(l.tier, LinkTier::kNicOut);
        EXPECT_EQ(l.flit_ps, flit_time_ps(tier.link));
        EXPECT_EQ(l.latency_ps, ns_to_ps(c.scaleout.latency_ns));
        EXPECT_EQ(l.credits_per_vc, static_cast<int>(c.scaleout.buffer_flits) / vcs);
        EXPECT_EQ(l.lanes, 1);
      } else {
        EXPECT_EQ(l.tier, LinkTier::kScaleUp);
        EXPECT_EQ(l.flit_ps, flit_time_ps(e == 1 ? slow : c.link)) << "GPU " << e;
        EXPECT_EQ(l.lanes, e == 1 ? 1 : static_cast<int>(c.link.lanes)) << "GPU " << e;
        EXPECT_EQ(l.credits_per_vc, static_cast<int>(c.sw.input_buffer_flits) / vcs);
      }
    }
  EXPECT_EQ(nics, 32);
  for (int s = 0; s < t.switches; ++s)
    for (int q = 0; q < t.ports_of_switch(s); ++q) {
      const PortPeer& peer = t.switch_ports[static_cast<std::size_t>(s)][static_cast<std::size_t>(q)];
      const LinkParams& l = p.switch_output(s, q);
      if (p.switch_plan(s).tier > 0) {
        EXPECT_EQ(l.tier, LinkTier::kScaleOut);
        EXPECT_EQ(l.flit_ps, flit_time_ps(tier.link));
      } else if (!peer.is_switch) {
        EXPECT_EQ(l.tier, LinkTier::kScaleUp);
        EXPECT_EQ(l.lanes, peer.id == 1 ? 1 : static_cast<int>(c.link.lanes));
        EXPECT_EQ(l.credits_per_vc, static_cast<int>(c.endpoint.rx_buffer_flits) / vcs);
      }
    }
}

}  // namespace
}  // namespace fabricsim
