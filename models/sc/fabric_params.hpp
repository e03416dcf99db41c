// Per-instance parameters of a fabric's parts (issue 26, part 4), resolved
// once at elaboration from the Config and the Topology: each link gets its
// own timing, credits, lanes and error model, each switch the Config it is
// built with and whether it has a reduction engine. The fabric builder
// (fabric_build.cpp) hands each part only its own; nothing here is read
// after elaboration.
#pragma once
#include <cstdint>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/time.hpp"
#include "models/core/topology.hpp"
#include "models/sc/link.hpp"

namespace fabricsim {

// Where a link sits, for the statistics by tier: in a scale-up domain, a
// GPU's NIC link into its leaf (the boundary), or another scale-out link.
enum class LinkTier : std::uint8_t { kScaleUp, kNicOut, kScaleOut };

// One link's parameters (Link's constructor arguments, its tier).
struct LinkParams {
  Ps flit_ps = 0;          // serialisation time of one flit
  Ps latency_ps = 0;       // flight time
  int vcs = 1;
  int credits_per_vc = 0;  // the receiver's buffer per VC
  int lanes = 1;
  LinkTier tier = LinkTier::kScaleUp;
};

// One switch's.
struct SwitchPlan {
  int tier = 0;          // 0 a scale-up chip, 1 a leaf, 2 a spine
  bool engine = false;   // it has a reduction engine
  bool rtl_alu = false;  // its engine computes with the RTL ALU (reduction.alu=rtl)
};

class FabricParams {
 public:
  FabricParams() = default;
  // `cfg` has been validated; `topo` was built from it.
  FabricParams(const Config& cfg, const Topology& topo);

  // The scale-out tier's link.* and switch.* (scaleout_tier_config); the
  // scale-up Config where there is no such tier.
  const Config& tier_config() const { return tier_; }
  const SwitchPlan& switch_plan(int s) const { return switches_[static_cast<std::size_t>(s)]; }
  // The Config switch `s` is built with (SwitchParams::from resolves it,
  // with the plan's engine flag): the scale-up one, or its tier's.
  const Config& switch_config(int s) const;
  // The link out of port `p` of switch `s`, and endpoint `e`'s link `k`.
  const LinkParams& switch_output(int s, int p) const {
    return switch_out_[static_cast<std::size_t>(s)][static_cast<std::size_t>(p)];
  }
  const LinkParams& endpoint_link(int e, int k) const {
    return endpoint_out_[static_cast<std::size_t>(e)][static_cast<std::size_t>(k)];
  }
  // Whether any link models errors, FEC or retry; then each link's model
  // (its stream of the run's seed: 1000000 + its index among the links).
  bool reliability_on() const { return reliability_on_; }
  LinkReliability reliability(LinkTier tier, std::size_t link_index) const;

 private:
  Config up_;            // the fabric's own
  Config tier_;          // its scale-out tier's
  std::vector<SwitchPlan> switches_;
  std::vector<std::vector<LinkParams>> switch_out_;    // [switch][port]
  std::vector<std::vector<LinkParams>> endpoint_out_;  // [endpoint][link]
  bool reliability_on_ = false;
  LinkReliability up_reliability_;
  LinkReliability out_reliability_;
};

}  // namespace fabricsim
