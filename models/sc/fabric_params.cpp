#include "models/sc/fabric_params.hpp"

namespace fabricsim {

namespace {

// Whether a switch of `tier` has a reduction engine. A scale-up chip has one
// when the workload's algorithm reduces or replicates in the switches (push,
// NVLS, TLM multimem objects); a leaf or spine when scaleout.sharp
// aggregates across the domains in the tier (both tiers get one; only the
// leaves reduce with scaleout.placement=rail).
bool engine_of_tier(const Config& cfg, int tier) {
  return tier == 0 ? uses_reduction_engine(cfg) : cfg.scaleout.sharp;
}

// The link parameters of each kind of link, and the credits of each kind
// of receiver, from which every link's are picked.
struct LinkKinds {
  LinkParams up;    // scale-up, full lanes
  LinkParams slow;  // a degraded GPU's scale-up link (straggler.lanes)
  LinkParams out;   // scale-out: NIC links, links out of or into leaves and spines
  int switch_credits = 0;
  int endpoint_credits = 0;
  int straggler = -1;  // the degraded GPU, or -1

  // A scale-up link of endpoint `e` (its own or the one into it).
  LinkParams of_endpoint(int e, int credits) const {
    LinkParams l = e == straggler ? slow : up;
    l.credits_per_vc = credits;
    return l;
  }
};

LinkKinds link_kinds(const Config& cfg, const Config& tier) {
  LinkKinds k;
  const int vcs = static_cast<int>(cfg.sw.vcs);
  k.up = {flit_time_ps(cfg.link), ns_to_ps(cfg.link.latency_ns), vcs, 0,
          static_cast<int>(cfg.link.lanes), LinkTier::kScaleUp};
  k.slow = k.up;
  if (cfg.straggler.lanes > 0) {
    LinkConfig degraded = cfg.link;
    degraded.lanes = cfg.straggler.lanes;
    k.slow.flit_ps = flit_time_ps(degraded);
    k.slow.lanes = static_cast<int>(cfg.straggler.lanes);
    k.straggler = static_cast<int>(cfg.straggler.gpu);
  }
  k.switch_credits = static_cast<int>(cfg.sw.input_buffer_flits / vcs);
  k.endpoint_credits = static_cast<int>(cfg.endpoint.rx_buffer_flits / vcs);
  if (cfg.topology.kind == TopologyKind::kScaleOut)
    k.out = {flit_time_ps(tier.link), ns_to_ps(tier.link.latency_ns), vcs,
             static_cast<int>(tier.sw.input_buffer_flits / vcs), 1, LinkTier::kScaleOut};
  return k;
}

LinkReliability reliability_of(const LinkConfig& lc, std::int64_t seed) {
  LinkReliability r;
  r.ber = lc.ber;
  r.burst_bits = lc.burst_bits;
  r.fec = lc.fec;
  r.fec_ps = fec_latency_ps(lc);
  r.retry = lc.retry;
  r.replay_buffer_flits = lc.replay_buffer_flits;
  r.ack_delay_ps = ns_to_ps(lc.ack_delay_ns);
  r.flit_bytes = lc.flit_bytes;
  r.seed = static_cast<std::uint64_t>(seed);
  return r;
}

}  // namespace

FabricParams::FabricParams(const Config& cfg, const Topology& topo) : up_(cfg), tier_(cfg) {
  const bool scaled_out = cfg.topology.kind == TopologyKind::kScaleOut;
  if (scaled_out) tier_ = scaleout_tier_config(cfg);

  for (int s = 0; s < topo.switches; ++s) {
    const int tier = topo.switch_tier[static_cast<std::size_t>(s)];
    const bool engine = engine_of_tier(cfg, tier);
    // The leaves' and spines' engines compute with the model's ALU.
    switches_.push_back({tier, engine, engine && tier == 0 && cfg.reduction.alu == AluKind::kRtl});
  }

  const LinkKinds kinds = link_kinds(cfg, tier_);
  auto tier_of = [&](int s) { return switches_[static_cast<std::size_t>(s)].tier; };
  // Out of every switch port: into an endpoint (its receive buffer) or into
  // another switch's input; a scale-out link if either end is in the tier.
  for (int s = 0; s < topo.switches; ++s) {
    std::vector<LinkParams> ports;
    for (const PortPeer& peer : topo.switch_ports[static_cast<std::size_t>(s)]) {
      LinkParams l;
      if (tier_of(s) > 0 || (peer.is_switch && tier_of(peer.id) > 0)) {
        l = kinds.out;
      } else if (peer.is_switch) {
        l = kinds.up;
        l.credits_per_vc = kinds.switch_credits;
      } else {
        l = kinds.of_endpoint(peer.id, kinds.endpoint_credits);
      }
      ports.push_back(l);
    }
    switch_out_.push_back(std::move(ports));
  }
  // Out of every endpoint link: a NIC link into a leaf, or a scale-up link.
  for (int e = 0; e < topo.endpoints; ++e) {
    std::vector<LinkParams> links;
    for (int k = 0; k < topo.links_of(e); ++k) {
      LinkParams l = kinds.of_endpoint(e, kinds.switch_credits);
      if (topo.is_nic(e, k)) {
        l = kinds.out;
        l.tier = LinkTier::kNicOut;
      }
      links.push_back(l);
    }
    endpoint_out_.push_back(std::move(links));
  }

  // Each link draws its errors from its own stream of the run's seed; a
  // scale-out link has its tier's settings (scaleout.ber, .fec, .retry).
  reliability_on_ = link_reliability_on(cfg);
  up_reliability_ = reliability_of(cfg.link, cfg.sim.seed);
  out_reliability_ = scaled_out ? reliability_of(tier_.link, cfg.sim.seed) : up_reliability_;
  out_reliability_.keys = "scaleout";
}

const Config& FabricParams::switch_config(int s) const {
  return switch_plan(s).tier == 0 ? up_ : tier_;
}

LinkReliability FabricParams::reliability(LinkTier tier, std::size_t link_index) const {
  LinkReliability r = tier == LinkTier::kScaleUp ? up_reliability_ : out_reliability_;
  r.stream = 1000000u + link_index;
  return r;
}

}  // namespace fabricsim
