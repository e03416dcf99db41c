#include "models/sc/switch_params.hpp"

#include "models/sc/reduction_engine.hpp"

namespace fabricsim {

SwitchParams SwitchParams::from(const Config& cfg, int ports, bool has_engine) {
  SwitchParams p;
  p.ports = ports;
  p.engine_port = has_engine ? ports : -1;
  p.engine_ports = has_engine ? engine_port_count(cfg, ports) : 0;
  p.xports = ports + p.engine_ports;
  p.vcs = static_cast<int>(cfg.sw.vcs);
  p.queueing = cfg.sw.queueing;
  p.in_capacity_per_vc = static_cast<int>(cfg.sw.input_buffer_flits / cfg.sw.vcs);
  p.output_buffer_flits = static_cast<int>(cfg.sw.output_buffer_flits);
  p.max_flits = max_packet_flits(cfg);
  p.stripe_bytes = fabricsim::stripe_bytes(cfg);
  p.flit_ps = flit_time_ps(cfg.link);
  p.cycle_ps = switch_cycle_ps(cfg.sw);
  p.pipeline_ps = static_cast<Ps>(cfg.sw.pipeline_cycles) * p.cycle_ps;
  p.speedup = cfg.sw.speedup;
  p.mc_via_engine = has_engine && cfg.sw.multicast == Multicast::kEngine;
  p.allocator = cfg.sw.allocator;
  p.iterations = static_cast<int>(cfg.sw.iterations);
  p.seed = static_cast<std::uint64_t>(cfg.sim.seed);
  return p;
}

}  // namespace fabricsim
