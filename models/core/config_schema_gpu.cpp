// The schema's GPU-side section: how the GPUs run a collective
// (collective.protocol, collective.channels) and the GPU's own parameters
// (gpu.*), each with its source (docs/models/gpu.md, docs/presets.md).
#include <string>
#include <utility>
#include <vector>

#include "models/core/config.hpp"

namespace fabricsim {

namespace {
const std::vector<std::pair<std::string, Protocol>> kProtocols = {{"ideal", Protocol::kIdeal},
                                                                  {"simple", Protocol::kSimple}};
}  // namespace

std::string to_string(Protocol p) {
  for (const auto& n : kProtocols)
    if (n.second == p) return n.first;
  return "?";
}

void add_gpu_keys(Schema<Config>& s) {
  using C = Config;
  s.add_choice(
      "collective.protocol", &C::collective, &CollectiveConfig::protocol, kProtocols,
      "how the GPUs run the collective: ideal (the fabric alone: data leaves at the links' speed "
      "from the first nanosecond and every packet is forwarded as it arrives) or simple (NCCL's "
      "Simple protocol, collective.algorithm=ring, all_reduce: collective.channels rings, each "
      "moving its share in slices through a FIFO of gpu.slots steps per peer; a slice is "
      "forwarded once its flag has arrived, the flag follows the slice's write responses, and "
      "the receiver returns a credit per slice; docs/models/gpu.md)");
  s.add_int("collective.channels", &C::collective, &CollectiveConfig::channels, "channels", 1, 64,
            "NCCL channels (CTAs, each its own ring) for collective.protocol=simple; fewer are "
            "used below gpu.threads x 64 B per channel, as NCCL does. 24 is NCCL's ring count on "
            "8 x H100: 12 from its topology search, doubled (NVIDIA/nccl issue 1367)");
  s.add_int("gpu.buffer_bytes", &C::gpu, &GpuConfig::buffer_bytes, "B", 4096, std::int64_t{1} << 30,
            "staging buffer per connection and channel (NCCL_BUFFSIZE, 4 MiB by default: "
            "NVIDIA/nccl src/init.cc); a step is buffer_bytes / gpu.slots, a ring all_reduce "
            "chunk 4 steps and its slice 2 (src/include/collectives.h)");
  s.add_int("gpu.slots", &C::gpu, &GpuConfig::slots, "steps", 6, 64,
            "steps of a connection's staging buffer a sender may run ahead of its receiver "
            "(NCCL_STEPS = 8: NVIDIA/nccl src/include/device.h). A slice takes 2, and a ring "
            "op reads the slice sent two sends before its own, so fewer than 3 slices (6 steps) "
            "would deadlock the ring");
  s.add_int("gpu.threads", &C::gpu, &GpuConfig::threads, "threads", 32, 1024,
            "threads per channel for the ring's Simple protocol (512: NVIDIA/nccl "
            "src/graph/tuning.cc); NCCL drops channels while the message is below channels x "
            "threads x 64 B");
  s.add_bool("gpu.write_acks", &C::gpu, &GpuConfig::write_acks,
             "collective.protocol=simple: every data write is answered by a one-flit response "
             "to its writer on the response VC (non-posted writes; NVIDIA's patent 'Techniques "
             "for reducing the overhead of providing responses in a computing network', 2021, "
             "describes them and their load). The flag after a slice waits for its responses "
             "(the system-scope fence). ASSUMPTION: one response per write, none collapsed");
  s.add_real("gpu.launch_ns", &C::gpu, &GpuConfig::launch_ns, "ns", 0, 1e9,
             "collective.protocol=simple: time from a call's start to its kernels' start "
             "(host launch and kernel start; nccl-tests times back-to-back calls from the host)");
}

}  // namespace fabricsim
