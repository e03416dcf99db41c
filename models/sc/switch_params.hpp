// The switch's constant parameters, resolved once by whoever builds the
// fabric (Fabric::Builder, from the Config of the switch's tier) and handed
// to the switch (models/sc/switch.hpp), which never sees the Config. Whether
// the switch has a reduction engine is a property of this switch, given by
// the builder's plan, not something looked up from the workload.
#pragma once
#include <cstdint>

#include "models/core/config.hpp"
#include "models/core/time.hpp"

namespace fabricsim {

struct SwitchParams {
  int ports = 0;         // link ports
  int engine_port = -1;  // first engine port (== ports) with a reduction engine, else -1
  int engine_ports = 0;  // crossbar ports of the reduction engine
  int xports = 0;        // crossbar ports: link ports (+ the engine's)
  int vcs = 0;
  Queueing queueing = Queueing::kVoq;
  int in_capacity_per_vc = 0;      // input-buffer flits per VC
  int output_buffer_flits = 0;     // per output and VC
  int max_flits = 0;               // the largest packet
  std::uint64_t stripe_bytes = 0;  // address bytes per route choice (parallel links)
  Ps flit_ps = 0;                  // a flit on a link at its nominal rate
  Ps cycle_ps = 0;                 // switch clock period (allocation edges)
  Ps pipeline_ps = 0;              // grant to output buffer
  double speedup = 1;              // crossbar rate over link rate
  bool mc_via_engine = false;      // switch.multicast=engine and an engine
  AllocatorKind allocator = AllocatorKind::kISlip;
  int iterations = 1;              // allocator iterations per edge
  std::uint64_t seed = 1;          // the allocator's random stream (PIM)

  // `ports` link ports; `has_engine`: a reduction engine sits on the crossbar
  // (the builder's SwitchPlan says which switches have one).
  static SwitchParams from(const Config& cfg, int ports, bool has_engine);

  bool has_engine() const { return engine_port >= 0; }
  bool is_engine_port(int x) const { return engine_port >= 0 && x >= engine_port; }
};

}  // namespace fabricsim
