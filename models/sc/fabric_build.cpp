// Elaboration of a Fabric, in named steps: the checks, each part's
// parameters (FabricParams), the switches, the endpoints of the workload's
// kind with the multicast groups they use, the links of the topology, the
// scale-out port groups, egress alignment, faults, the watchdog and the
// links' error models. Runs once, inside Fabric's constructor (so that
// every module made here is a child of the fabric); what runs during the
// simulation stays in fabric.cpp.
#include <fnmatch.h>

#include <array>
#include <string>

#include "models/core/address_map.hpp"
#include "models/core/errors.hpp"
#include "models/sc/fabric.hpp"

namespace fabricsim {

class Fabric::Builder {
 public:
  Builder(Fabric& f, const AluFactory& rtl_alu, const EndpointFactory& endpoints)
      : f_(f), topo_(f.topo_), rtl_alu_(rtl_alu), endpoints_(endpoints),
        kind_(endpoint_kind(f.cfg_.workload.kind)), base_(std::string(f.name()) + ".") {}

  void build() {
    check();
    f_.params_ = FabricParams(f_.cfg_, topo_);
    make_switches();
    (this->*kind_.make)();
    make_switch_links();
    make_endpoint_links();
    set_port_groups();
    set_egress_alignment();
    make_faults();
    make_watchdog();
    set_reliability();
  }

 private:
  // One kind of endpoint (workload.kind): how its endpoints are made, with
  // the state they share and the multicast groups they use, and how an
  // endpoint's link pair is handed to one of them. Picked once.
  struct EndpointKind {
    WorkloadKind workload;
    const char* prefix;  // its links are named <prefix>N.txK (N.nicK: a NIC link)
    void (Builder::*make)();
    void (Builder::*connect)(int e, int k, Link* tx, Link* rx, int peer_switch);
  };
  static const EndpointKind& endpoint_kind(WorkloadKind w);

  void check();
  void make_switches();
  void set_multicast_groups(const std::vector<std::vector<int>>& groups);
  void make_synthetic();
  void make_gpus();
  void make_tlm();
  void connect_synthetic(int e, int k, Link* tx, Link* rx, int peer_switch);
  void connect_gpu(int e, int k, Link* tx, Link* rx, int peer_switch);
  void connect_tlm(int e, int k, Link* tx, Link* rx, int peer_switch);
  std::unique_ptr<Link> make_link(const std::string& name, const LinkParams& p) const;
  void add_link(std::unique_ptr<Link> link, LinkTier tier, LinkSender sender);
  void make_switch_links();
  void make_endpoint_links();
  void set_port_groups();
  void set_egress_alignment();
  void make_faults();
  void make_watchdog();
  void set_reliability();

  Fabric& f_;
  const Topology& topo_;
  const AluFactory& rtl_alu_;
  const EndpointFactory& endpoints_;
  const EndpointKind& kind_;
  const std::string base_;                // "<the fabric's name>."
  std::vector<TimedModule*> ep_modules_;  // [endpoint], whatever their kind
  std::vector<std::vector<Link*>> out_;   // [switch][port] its output link
};

const Fabric::Builder::EndpointKind& Fabric::Builder::endpoint_kind(WorkloadKind w) {
  static const std::array<EndpointKind, 3> kinds = {{
      {WorkloadKind::kSynthetic, "ep", &Builder::make_synthetic, &Builder::connect_synthetic},
      {WorkloadKind::kCollective, "gpu", &Builder::make_gpus, &Builder::connect_gpu},
      {WorkloadKind::kTlm, "gpu", &Builder::make_tlm, &Builder::connect_tlm},
  }};
  for (const EndpointKind& k : kinds)
    if (k.workload == w) return k;
  throw InvariantError("the fabric builds no endpoints of workload.kind " +
                       std::to_string(static_cast<int>(w)));
}

void Fabric::Builder::check() {
  if (!f_.cfg_.collective.data) f_.payloads_.set_timing_only();
  validate(f_.cfg_);
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    throw InvariantError("fabricsim needs the SystemC time resolution to be 1 ps");
  if (f_.cfg_.reduction.alu == AluKind::kRtl && uses_reduction_engine(f_.cfg_) && !rtl_alu_)
    throw ConfigError("reduction.alu=rtl: this program was built without the RTL co-simulation "
                      "(pass an AluFactory to Fabric; the fabricsim command does)");
}

void Fabric::Builder::make_switches() {
  const FabricParams& params = f_.params_;
  for (int s = 0; s < topo_.switches; ++s) {
    const SwitchPlan& plan = params.switch_plan(s);
    const Config& cfg = params.switch_config(s);
    const SwitchParams sp = SwitchParams::from(cfg, topo_.ports_of_switch(s), plan.engine);
    const EngineParams ep = EngineParams::from(cfg, sp.engine_port);
    f_.switches_.push_back(std::make_unique<Switch>(
        ("sw" + std::to_string(s)).c_str(), f_.scheduler_, sp, plan.engine ? &ep : nullptr,
        f_.pool_, f_.window_, topo_.routes[static_cast<size_t>(s)], &f_.payloads_,
        plan.rtl_alu ? rtl_alu_() : nullptr));
  }
}

void Fabric::Builder::set_multicast_groups(const std::vector<std::vector<int>>& groups) {
  for (auto& sw : f_.switches_) sw->set_multicast_groups(groups);
}

// workload.kind=synthetic: sources and sinks of the traffic pattern.
void Fabric::Builder::make_synthetic() {
  for (int e = 0; e < topo_.endpoints; ++e) {
    f_.endpoints_.push_back(std::make_unique<Endpoint>(("ep" + std::to_string(e)).c_str(), f_.scheduler_,
                                                       e, f_.cfg_, f_.pattern_, f_.pool_, f_.sink_,
                                                       f_.window_, topo_.links_of(e)));
    ep_modules_.push_back(f_.endpoints_.back().get());
  }
}

// workload.kind=collective: GPUs running the sweep of calls.
void Fabric::Builder::make_gpus() {
  Fabric* fabric = &f_;
  f_.sweep_ = std::make_unique<CollectiveSweep>(f_.cfg_, topo_.endpoints, topo_.per_domain);
  f_.sweep_->set_on_call_end([fabric](CollectiveCall& c) { fabric->call_ended(c); });
  f_.sweep_->set_on_ff_round([fabric](const CollectiveCall& c) { fabric->ff_round(c); });
  // Multicast group 0: every GPU (the collective's communicator).
  std::vector<int> all(static_cast<size_t>(topo_.endpoints));
  for (int e = 0; e < topo_.endpoints; ++e) all[static_cast<size_t>(e)] = e;
  // scaleout.sharp: group 1 + r holds the GPUs of rank r of every domain
  // (the leaves' engines reduce across the domains).
  std::vector<std::vector<int>> groups = {all};
  if (f_.cfg_.topology.kind == TopologyKind::kScaleOut && f_.cfg_.scaleout.sharp)
    for (int r = 0; r < topo_.per_domain; ++r) {
      groups.emplace_back();
      for (int e = r; e < topo_.endpoints; e += topo_.per_domain) groups.back().push_back(e);
    }
  set_multicast_groups(groups);
  for (int e = 0; e < topo_.endpoints; ++e) {
    f_.gpus_.push_back(std::make_unique<Gpu>(("gpu" + std::to_string(e)).c_str(), f_.scheduler_, e,
                                             f_.cfg_, f_.pool_, f_.payloads_, *f_.sweep_,
                                             topo_.links_of(e)));
    ep_modules_.push_back(f_.gpus_.back().get());
  }
  f_.sweep_->set_start_call([fabric](Ps t) {
    for (auto& g : fabric->gpus_) g->begin_call(t);
  });
}

// workload.kind=tlm: endpoints the caller's factory makes (TLM targets).
void Fabric::Builder::make_tlm() {
  if (!endpoints_)
    throw ConfigError("workload.kind=tlm: the endpoints are TLM-2.0 targets for your SystemC "
                      "initiators; build a program with tlm/tlm_fabric.hpp (docs/tlm.md) "
                      "instead of running the fabricsim command");
  // Multicast group k: the members of object k of tlm.multicast.
  const TlmConfig& t = f_.cfg_.tlm;
  const AddressMap map(topo_.endpoints, static_cast<std::uint64_t>(t.window_bytes),
                       static_cast<std::uint64_t>(t.multicast_base), t.multicast);
  std::vector<std::vector<int>> groups;
  for (std::size_t k = 0; k < map.objects().size(); ++k) groups.push_back(map.members(static_cast<int>(k)));
  if (!groups.empty()) set_multicast_groups(groups);
  const EndpointContext ctx{f_.scheduler_, f_.cfg_, f_.pool_, f_.payloads_};
  for (int e = 0; e < topo_.endpoints; ++e) {
    f_.external_.push_back(endpoints_(e, topo_.links_of(e), ctx));
    ep_modules_.push_back(f_.external_.back().get());
  }
}

void Fabric::Builder::connect_synthetic(int e, int k, Link* tx, Link* rx, int /*peer_switch*/) {
  f_.endpoints_[static_cast<size_t>(e)]->connect(k, tx, rx);
}

void Fabric::Builder::connect_gpu(int e, int k, Link* tx, Link* rx, int peer_switch) {
  f_.gpus_[static_cast<size_t>(e)]->connect(k, tx, rx, peer_switch);
}

void Fabric::Builder::connect_tlm(int e, int k, Link* tx, Link* rx, int peer_switch) {
  f_.external_[static_cast<size_t>(e)]->connect(k, tx, rx, peer_switch);
}

std::unique_ptr<Link> Fabric::Builder::make_link(const std::string& name, const LinkParams& p) const {
  return std::make_unique<Link>(base_ + name, p.flit_ps, p.latency_ps, p.vcs, p.credits_per_vc,
                                f_.window_, p.lanes);
}

void Fabric::Builder::add_link(std::unique_ptr<Link> link, LinkTier tier, LinkSender sender) {
  f_.links_.push_back(std::move(link));
  f_.link_tier_.push_back(tier);
  f_.senders_.push_back(sender);
}

// Every switch output drives a link into its peer: an endpoint (delivered
// at the tail) or another switch's input (cut-through at the head).
void Fabric::Builder::make_switch_links() {
  out_.resize(static_cast<size_t>(topo_.switches));
  for (int s = 0; s < topo_.switches; ++s) {
    Switch& sw = *f_.switches_[static_cast<size_t>(s)];
    for (int p = 0; p < topo_.ports_of_switch(s); ++p) {
      const PortPeer& peer = topo_.switch_ports[static_cast<size_t>(s)][static_cast<size_t>(p)];
      const LinkParams& lp = f_.params_.switch_output(s, p);
      auto link = make_link("sw" + std::to_string(s) + ".out" + std::to_string(p), lp);
      link->bind_tx(&sw, static_cast<std::uint32_t>(p));
      if (peer.is_switch) {
        Switch& to = *f_.switches_[static_cast<size_t>(peer.id)];
        link->bind_rx(&to, static_cast<std::uint32_t>(peer.port), /*deliver_at_tail=*/false);
        to.connect_input(peer.port, link.get());
      } else {
        link->bind_rx(ep_modules_[static_cast<size_t>(peer.id)], static_cast<std::uint32_t>(peer.port),
                      /*deliver_at_tail=*/true);
      }
      sw.connect_output(p, link.get());
      out_[static_cast<size_t>(s)].push_back(link.get());
      add_link(std::move(link), lp.tier, {&sw, nullptr, p});
    }
  }
}

// Every endpoint link drives its switch's input; the endpoint receives on
// that switch port's output link.
void Fabric::Builder::make_endpoint_links() {
  for (int e = 0; e < topo_.endpoints; ++e) {
    TimedModule& ep = *ep_modules_[static_cast<size_t>(e)];
    Gpu* gpu = f_.gpus_.empty() ? nullptr : f_.gpus_[static_cast<size_t>(e)].get();
    for (int k = 0; k < topo_.links_of(e); ++k) {
      const PortPeer& peer = topo_.endpoint_ports[static_cast<size_t>(e)][static_cast<size_t>(k)];
      Switch& to = *f_.switches_[static_cast<size_t>(peer.id)];
      const LinkParams& lp = f_.params_.endpoint_link(e, k);
      auto link = make_link(kind_.prefix + std::to_string(e) + (topo_.is_nic(e, k) ? ".nic" : ".tx") +
                                std::to_string(k),
                            lp);
      link->bind_tx(&ep, static_cast<std::uint32_t>(k));
      link->bind_rx(&to, static_cast<std::uint32_t>(peer.port), /*deliver_at_tail=*/false);
      to.connect_input(peer.port, link.get());
      (this->*kind_.connect)(e, k, link.get(),
                             out_[static_cast<size_t>(peer.id)][static_cast<size_t>(peer.port)], peer.id);
      add_link(std::move(link), lp.tier, {nullptr, gpu, k});
    }
  }
}

// Scale-out: each GPU's ports into its domain and its NIC ports, and the
// flit size of each.
void Fabric::Builder::set_port_groups() {
  if (f_.cfg_.topology.kind != TopologyKind::kScaleOut) return;
  const std::int64_t nic_flit = f_.params_.tier_config().link.flit_bytes;
  for (int e = 0; e < static_cast<int>(f_.gpus_.size()); ++e) {
    std::vector<std::int64_t> fb;
    fb.reserve(static_cast<size_t>(topo_.links_of(e)));
    for (int k = 0; k < topo_.links_of(e); ++k)
      fb.push_back(topo_.is_nic(e, k) ? nic_flit : f_.cfg_.link.flit_bytes);
    f_.gpus_[static_cast<size_t>(e)]->set_port_groups(topo_.up_ports[static_cast<size_t>(e)],
                                                      topo_.nic_ports[static_cast<size_t>(e)],
                                                      topo_.per_domain, std::move(fb));
  }
}

// switch.egress=aligned: endpoint d's links are numbered switch by switch
// (topology order): its links into switch s start at the count of its links
// into earlier ones.
void Fabric::Builder::set_egress_alignment() {
  if (f_.cfg_.sw.egress != Egress::kAligned) return;
  for (int s = 0; s < topo_.switches; ++s) {
    std::vector<std::pair<int, int>> align(static_cast<size_t>(topo_.endpoints), {0, 1});
    for (int d = 0; d < topo_.endpoints; ++d) {
      const auto& ports = topo_.endpoint_ports[static_cast<size_t>(d)];
      int first = -1;
      for (int k = 0; k < static_cast<int>(ports.size()); ++k)
        if (ports[static_cast<size_t>(k)].id == s && first < 0) first = k;
      align[static_cast<size_t>(d)] = {first < 0 ? 0 : first, static_cast<int>(ports.size())};
    }
    f_.switches_[static_cast<size_t>(s)]->set_egress_alignment(std::move(align));
  }
}

// faults: each fault's targets (links or GPUs matching its glob), and the
// injector that applies them at their times.
void Fabric::Builder::make_faults() {
  const auto& list = f_.cfg_.faults.list;
  if (list.empty()) return;
  // Targets may name this fabric's instance or, as the CLI does, "fabric".
  const std::string& own = base_;
  std::vector<std::vector<std::string>> names;
  for (const Fault& fault : list) {
    std::vector<int> hits;
    std::vector<std::string> hit_names;
    const bool gpu = fault.kind == FaultKind::kSlow;
    const std::size_t n = gpu ? f_.gpus_.size() : f_.links_.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::string nm = gpu ? std::string(f_.gpus_[i]->name()) : f_.links_[i]->name();
      const std::string canonical =
          nm.compare(0, own.size(), own) == 0 ? "fabric." + nm.substr(own.size()) : nm;
      if (fnmatch(fault.target.c_str(), nm.c_str(), 0) != 0 &&
          fnmatch(fault.target.c_str(), canonical.c_str(), 0) != 0)
        continue;
      if (fault.kind == FaultKind::kLinkDown && !f_.senders_[i].sw && !f_.senders_[i].gpu)
        throw ConfigError("faults: '" + fault.text + "' takes down " + nm +
                          ", a synthetic endpoint's link: link_down is modelled on switch links "
                          "and GPU links (collective workloads) only");
      hits.push_back(static_cast<int>(i));
      hit_names.push_back(nm);
    }
    if (hits.empty())
      throw ConfigError("faults: '" + fault.text + "' matches no " + (gpu ? "GPU" : "link") + ": " +
                        (gpu ? "GPUs are named " + std::string(f_.name()) + ".gpuN"
                             : "links are named " + f_.links_.front()->name() + " ... " +
                                   f_.links_.back()->name()) +
                        " (a glob: * ? [..])");
    f_.fault_hits_.push_back(std::move(hits));
    names.push_back(std::move(hit_names));
  }
  Fabric* fabric = &f_;
  f_.faults_ = std::make_unique<FaultInjector>(
      "faults", f_.scheduler_, list, std::move(names),
      [fabric](std::size_t fi, std::size_t k) { fabric->apply_fault(fi, k); });
}

// sim.watchdog_ns: a check every period that the fabric still moves.
void Fabric::Builder::make_watchdog() {
  if (f_.cfg_.sim.watchdog_ns <= 0) return;
  Fabric* fabric = &f_;
  f_.watchdog_ = std::make_unique<Watchdog>(ns_to_ps(f_.cfg_.sim.watchdog_ns), f_.watchdog_probes());
  f_.scheduler_.set_watch(base_ + "watchdog", f_.watchdog_->period(),
                          [fabric](Ps t) { fabric->watchdog_->check(t); },
                          [fabric](Ps t) { fabric->watchdog_->drained(t); });
}

// link.ber / fec / retry (scaleout.* on the tier's links), faults of kind ber.
void Fabric::Builder::set_reliability() {
  if (!f_.params_.reliability_on()) return;
  for (std::size_t i = 0; i < f_.links_.size(); ++i)
    f_.links_[i]->set_reliability(f_.params_.reliability(f_.link_tier_[i], i));
}

Fabric::Fabric(const sc_core::sc_module_name& name, const Config& cfg, const AluFactory& rtl_alu,
               const EndpointFactory& endpoints)
    : sc_core::sc_module(name),
      cfg_(cfg),
      // TLM initiators decide how long a run lasts (sc_start): statistics
      // cover all of it, and finish() closes the window where it stopped.
      window_{cfg.workload.kind == WorkloadKind::kTlm ? Window{0, kNever / 2}
                                                      : Window{ns_to_ps(cfg.sim.warmup_ns),
                                                               ns_to_ps(cfg.sim.warmup_ns) +
                                                                   ns_to_ps(cfg.sim.duration_ns)}},
      scheduler_("kernel"),
      topo_(build_topology(cfg)),
      pattern_(cfg.traffic, topo_.endpoints, static_cast<std::uint64_t>(cfg.sim.seed)),
      payloads_(static_cast<std::size_t>(cfg.collective.payload_bytes)) {
  Builder(*this, rtl_alu, endpoints).build();
}

}  // namespace fabricsim
