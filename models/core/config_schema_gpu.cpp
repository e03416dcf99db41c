// The schema's GPU-side section: how the GPUs run a collective
// (collective.protocol, collective.channels) and the GPU's own parameters
// (gpu.*), each with its source (docs/models/gpu.md, docs/presets.md).
#include <string>
#include <utility>
#include <vector>

#include "models/core/config.hpp"

namespace fabricsim {

namespace {
const std::vector<std::pair<std::string, Protocol>> kProtocols = {
    {"ideal", Protocol::kIdeal}, {"simple", Protocol::kSimple}, {"ll", Protocol::kLl},
    {"ll128", Protocol::kLl128}, {"auto", Protocol::kAuto}};
}  // namespace

const std::vector<std::pair<std::string, Registration>> kRegistrations = {
    {"none", Registration::kNone}, {"symmetric", Registration::kSymmetric}};

std::string to_string(Protocol p) { return name_of(kProtocols, p); }
std::string to_string(Registration r) { return name_of(kRegistrations, r); }

void add_gpu_keys(Schema<Config>& s) {
  using C = Config;
  s.add_choice(
      "collective.protocol", &C::collective, &CollectiveConfig::protocol, kProtocols,
      "how the GPUs run the collective: ideal (the fabric alone: data leaves at the links' speed "
      "from the first nanosecond and every packet is forwarded as it arrives), or one of NCCL's "
      "protocols for collective.algorithm=ring all_reduce, with collective.channels rings each "
      "moving its share in slices through a FIFO of gpu.slots steps per peer "
      "(docs/models/gpu.md): simple (a slice is passed on once its flag has arrived, the flag "
      "follows the slice's write responses), ll (8-byte lines of 4 B data and a 4 B flag: half "
      "of every write is flags, each line passed on as it arrives), ll128 (128-byte lines of "
      "120 B data and a flag word), or auto (per size, the one NCCL's tuning model predicts "
      "fastest: models/core/nccl_tuner.hpp, gpu.tuner_graph_gbps). With collective.algorithm=nvls "
      "all_reduce: simple (or auto, which is simple: NCCL runs NVLS with Simple only) is NCCL's "
      "NVLS kernel, gpu.nvls_channels CTAs each reading its heads' pieces with bounded "
      "multimem.ld_reduce (docs/models/gpu.md, 'NVLS'); ll and ll128 are refused");
  s.add_choice(
      "collective.registration", &C::collective, &CollectiveConfig::registration, kRegistrations,
      "collective.protocol other than ideal: how the buffers are registered with NCCL. none "
      "(nccl-tests -R 0): NCCL's normal kernels. symmetric (-R 2, ncclCommWindowRegister with "
      "NCCL_WIN_COLL_SYMMETRIC): per all_reduce call NCCL rates its symmetric kernels by its own "
      "model and, where it picks RSxLDMC_AGxSTMC (on 4 H100s above 33 KiB: from 64 KiB in a "
      "sweep by powers of two), runs it instead of "
      "collective.algorithm and collective.protocol: 1 to ceil(16/n) CTAs of 16 warps, each "
      "reading 4 KiB chunks with multimem.ld_reduce and storing them with multimem.st, between "
      "two barriers; no FIFO and no copies (NVIDIA/nccl v2.29.2 src/sym_kernels.cc, "
      "src/device/symmetric/all_reduce.cuh; models/core/nccl_symmetric.hpp). Where it picks an "
      "LL kernel the call runs the normal kernels, as NCCL does with several GPUs per process "
      "(nccl-tests -g). fabricsim compare sets it from the log's '-R' flag. -R 1 (local "
      "registration) is not modelled");
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
            "threads per channel for the ring's Simple and LL protocols (512: NVIDIA/nccl "
            "src/graph/tuning.cc); NCCL drops channels while the message is below channels x "
            "threads x 64 B (Simple) or x 8 B x the ranks (LL)");
  s.add_int("gpu.ll_buffer_bytes", &C::gpu, &GpuConfig::ll_buffer_bytes, "B", 4096,
            std::int64_t{1} << 30,
            "staging buffer per connection and channel with collective.protocol=ll: 8 lines x 512 "
            "threads x 8 steps x 16 B = 512 KiB (NCCL_LL_BUFFSIZE: NVIDIA/nccl src/init.cc, "
            "src/include/device.h); a chunk and a slice are one step, half of it data");
  s.add_int("gpu.ll128_buffer_bytes", &C::gpu, &GpuConfig::ll128_buffer_bytes, "B", 4096,
            std::int64_t{1} << 30,
            "staging buffer per connection and channel with collective.protocol=ll128: 120 words x "
            "640 threads x 8 steps x 8 B = 4915200 B (NCCL_LL128_BUFFSIZE: NVIDIA/nccl "
            "src/init.cc); a chunk and a slice are one step, 120 of every 128 B data");
  s.add_int("gpu.ll128_threads", &C::gpu, &GpuConfig::ll128_threads, "threads", 32, 1024,
            "threads per channel with collective.protocol=ll128 (640: NVIDIA/nccl "
            "src/graph/tuning.cc); NCCL drops channels while the message is below channels x "
            "threads x 8 B");
  s.add_bool("gpu.write_acks", &C::gpu, &GpuConfig::write_acks,
             "collective.protocol other than ideal: every data write (with nvls: every copy of a "
             "multimem.st, ASSUMPTION) is answered by a one-flit response "
             "to its writer on the response VC (non-posted writes; NVIDIA's patent 'Techniques "
             "for reducing the overhead of providing responses in a computing network', 2021, "
             "describes them and their load). The flag after a slice waits for its responses "
             "(the system-scope fence) with simple. ASSUMPTION: one response per write, none collapsed");
  s.add_real("gpu.tuner_graph_gbps", &C::gpu, &GpuConfig::tuner_graph_gbps, "GB/s", 1, 1e6,
             "collective.protocol=auto: the ring graph's bandwidth NCCL's tuner starts from "
             "(channels found by its topology search x their bandwidth): 12 x 30 GB/s = 360 on "
             "8 x H100 (NVIDIA/nccl issue 1367)");
  s.add_real("gpu.tuner_nvlink_gbps", &C::gpu, &GpuConfig::tuner_nvlink_gbps, "GB/s", 1, 1e6,
             "collective.algorithm=auto: a GPU's NVLink bandwidth as NCCL's topology sees it, "
             "from which its tuner sizes the NVLS graph (sm90 speeds 60, 50, 40 ... GB/s per "
             "head, NVIDIA/nccl src/graph/search.cc): 18 links x SM90_NVLINK_BW 20.6 = 370.8 "
             "on H100 (src/graph/topo.h)");
  s.add_int("gpu.nvls_channels", &C::gpu, &GpuConfig::nvls_channels, "channels", 1, 64,
            "collective.algorithm=nvls with collective.protocol=simple: NVLS channels (CTAs), "
            "each with a contiguous share of the elements cut into loops of one chunk per GPU "
            "(head). 16 on sm90: NVLS_NCHANNELS_SM90 (NVIDIA/nccl v2.29.7 src/transport/nvls.cc "
            "line 149); NVLS always uses all of them (src/enqueue.cc)");
  s.add_int("gpu.nvls_chunk_bytes", &C::gpu, &GpuConfig::nvls_chunk_bytes, "B", 16384,
            std::int64_t{1} << 30,
            "collective.algorithm=nvls with collective.protocol=simple: a step's chunk, what one "
            "head reduces per loop (NCCL_NVLS_CHUNKSIZE, 128 KiB: NVIDIA/nccl v2.29.7 "
            "src/transport/nvls.cc line 154); shrunk to 64, 32, 16 KiB while a channel's bytes "
            "are below 64, 8, 2 x heads x chunk (src/enqueue.cc lines 2160-2165, called per "
            "channel); a multiple of 16 KiB");
  s.add_int("gpu.nvls_unroll", &C::gpu, &GpuConfig::nvls_unroll, "loads", 1, 64,
            "collective.algorithm=nvls with collective.protocol=simple: multimem.ld_reduce loads "
            "each reduce thread issues before it stores (ncclCollUnroll = 8 on sm90: NVIDIA/nccl "
            "v2.29.7 src/include/device.h line 524; the reduce warps' ProtoSimple<1, 1, "
            "COLL_UNROLL, 1, 1>, src/device/all_reduce.h line 442, and reduceCopyPacks, "
            "src/device/common_kernel.h). A warp's hunk is unroll x 32 threads x 16 B (fp32, "
            "fp16, bf16 sums; 4 B elements: 2 x unroll x 4 B) = 4 KiB, read in full before it is "
            "stored");
  s.add_int("gpu.nvls_reduce_warps", &C::gpu, &GpuConfig::nvls_reduce_warps, "warps", 0, 20,
            "collective.algorithm=nvls with collective.protocol=simple: warps of a channel that "
            "reduce (non-registered buffers); 0 = NCCL's rule, 7 up to 6 GPUs, else 5 "
            "(NVIDIA/nccl v2.29.7 src/device/all_reduce.h line 396). One of them posts the step "
            "counters and moves no data (src/device/prims_simple.h line 597), so warps - 1 "
            "hunks are in flight per channel");
  s.add_real("gpu.nvls_warp_copy_gbps", &C::gpu, &GpuConfig::nvls_warp_copy_gbps, "GB/s", 0, 1e5,
             "collective.algorithm=nvls with collective.protocol=simple: the rate at which one warp "
             "of a channel's scatter and gather groups copies between the user's buffers and the "
             "local staging (GB/s of data). NCCL's NVLS kernel has 20 warps per channel "
             "(NCCL_MAX_NTHREADS = 640): after the reduce warps, (21 - reduce) / 2 scatter and "
             "(20 - reduce) / 2 gather, of which the scatter gives one to posting its counters "
             "(6 and 6 copying up to 6 GPUs, 7 and 7 on more; NVIDIA/nccl v2.29.7 "
             "src/device/all_reduce.h lines 394-398, prims_simple.h line 597). A channel's "
             "scatter copies a step's input (heads x chunk) in its bytes / (warps x this) before "
             "its ready flag goes, one step after another; its gather copies a step's results "
             "out once every head's tail is in, and the heads start a step only when every "
             "GPU's gather has freed its slot (gpu.slots). No published figure: 0 (copies "
             "instant, the heads wait for their own tails only) by default; "
             "configs/dgx-h100-nccl.yaml holds an assumption");
  s.add_real("gpu.launch_ns", &C::gpu, &GpuConfig::launch_ns, "ns", 0, 1e9,
             "collective.protocol other than ideal: time from a call's start to its kernels' start "
             "(the GPU's time between back-to-back kernels of nccl-tests' calls). No published "
             "figure: 0 (not modelled) by default; configs/dgx-h100-nccl.yaml holds a calibration "
             "(fabricsim calibrate; docs/validation.md, \"Calibrations\")");
  s.add_real("gpu.host_call_ns", &C::gpu, &GpuConfig::host_call_ns, "ns", 0, 1e9,
             "collective.protocol other than ideal, calls not launched from a CUDA graph: the "
             "host's time to issue one call. nccl-tests issues its calls back to back without "
             "waiting for the GPU, so a call whose kernels end sooner still takes this long "
             "(call time = max(this, gpu.launch_ns + kernels)). No published figure: 0 (no "
             "floor) by default; configs/dgx-h100-nccl.yaml holds a calibration "
             "(docs/validation.md, \"Calibrations\")");
  s.add_bool("gpu.cuda_graph", &C::gpu, &GpuConfig::cuda_graph,
             "collective.protocol other than ideal: the calls are launched from a CUDA graph "
             "(nccl-tests -G 1, its banner's 'graph: 1'; fabricsim compare sets it from the log), so "
             "each kernel starts gpu.graph_launch_ns after its call instead of gpu.launch_ns, "
             "and gpu.host_call_ns does not apply (the host launches the graph once)");
  s.add_real("gpu.slice_sync_ns", &C::gpu, &GpuConfig::slice_sync_ns, "ns", 0, 1e6,
             "collective.algorithm=ring with collective.protocol=simple: time from the moment a "
             "slice's op may start (its flag and data in, a slot free, the previous op ended) to "
             "its first write: the CTA's two barriers per slice and the first dependent load of "
             "the slice's data before any store (NVIDIA/nccl src/device/prims_simple.h "
             "genericOp: waitPeer, subBarrier, reduceCopy, barrier, postPeer). No published "
             "figure: 0 (not modelled) by default; configs/dgx-h100-nccl.yaml holds a "
             "calibration (docs/validation.md, \"Calibrations\")");
  s.add_real("gpu.channel_gbps", &C::gpu, &GpuConfig::channel_gbps, "GB/s", 0, 1e5,
             "collective.algorithm=ring with a protocol other than ideal: the rate at which one "
             "channel's CTA copies and reduces the data it sends (GB/s of data): each write of an "
             "op is made once the CTA has spent its bytes / this on it, one write after another "
             "(the SMs, not only the links, bound a channel), and the last step's slice is "
             "output once the CTA has copied it out of the FIFO at the same rate. NCCL's tuner "
             "caps a Hopper channel at 36.7 GB/s (ring, LL128: perChMaxRingLL128Bws) and "
             "38.7 GB/s (tree, Simple, one node: perChMaxTreeBws; NVIDIA/nccl "
             "src/graph/tuning.cc). 0 (unlimited: the links alone bound the copy, and the last "
             "slice is output as it lands) by default; configs/dgx-h100-nccl.yaml holds a "
             "calibration (docs/validation.md, \"Calibrations\")");
  s.add_real("gpu.ll_trip_ns", &C::gpu, &GpuConfig::ll_trip_ns, "ns", 0, 1e6,
             "the ring with the LL protocol (collective.protocol=ll, or auto where it picks LL): one "
             "trip of an LL thread. "
             "Each thread moves one 16 B line (8 B of data) per trip: it loads its input, polls "
             "its line in the FIFO until both flags are in, and stores the line on (NVIDIA/nccl "
             "src/device/prims_ll.h LLGenericOp). So a line is passed on (or output) no sooner "
             "than one trip after it may be, and a channel's CTA moves at most gpu.threads x 8 B "
             "of data per trip (with gpu.channel_gbps, whichever is slower). NCCL's tuner caps "
             "LL's bus bandwidth on Hopper at 141 GB/s whatever the channels (llMaxBw) and "
             "charges it 0.6 us per NVLink step (hwLat; src/graph/tuning.cc). No published "
             "figure for the trip: 0 (not bounded) by default; configs/dgx-h100-nccl.yaml holds "
             "a calibration (docs/validation.md, \"Calibrations\")");
  s.add_real("gpu.simple_start_ns", &C::gpu, &GpuConfig::simple_start_ns, "ns", 0, 1e6,
             "kernels with the Simple protocol (collective.protocol=simple, or auto where it picks "
             "Simple; the ring, and NVLS, whose kernel runs Simple's primitives: ASSUMPTION): time from the kernel's start (gpu.launch_ns or gpu.graph_launch_ns "
             "after the call) to its first write, beyond an LL kernel's. NCCL's tuning model "
             "gives each protocol its own base latency (ring: LL 6.6, LL128 14.0, Simple 8.4 "
             "us; NVLS 25 us; src/graph/tuning.cc); the launch keys are an LL kernel's. No "
             "published figure: 0 by default; configs/dgx-h100-nccl.yaml holds a calibration "
             "(docs/validation.md, \"Calibrations\")");
  s.add_real("gpu.ll128_start_ns", &C::gpu, &GpuConfig::ll128_start_ns, "ns", 0, 1e6,
             "the ring with the LL128 protocol (collective.protocol=ll128, or auto where it picks "
             "LL128): time from the kernel's start to the ring's first write, beyond an LL kernel's (as gpu.simple_start_ns). "
             "No published figure: 0 by default; configs/dgx-h100-nccl.yaml holds a calibration "
             "(docs/validation.md, \"Calibrations\")");
  s.add_int("gpu.symmetric_ctas", &C::gpu, &GpuConfig::symmetric_ctas, "CTAs", 0, 64,
            "collective.registration=symmetric: the CTAs of every symmetric kernel, as NCCL_SYM_CTAS "
            "sets them (NVIDIA/nccl v2.29.2 src/sym_kernels.cc: it overrides the model's count, "
            "multimem's ceil(16 / n) cap included); 0 = NCCL's model picks per size");
  s.add_real("gpu.symmetric_start_ns", &C::gpu, &GpuConfig::symmetric_start_ns, "ns", 0, 1e6,
             "collective.registration=symmetric: time from the symmetric kernel's start (gpu.launch_ns "
             "or gpu.graph_launch_ns after the call) to its first barrier, beyond an LL kernel's (as "
             "gpu.simple_start_ns). No published figure: 0 by default; configs/dgx-h100-nccl.yaml "
             "holds a calibration (docs/validation.md, \"Calibrations\")");
  s.add_real("gpu.graph_launch_ns", &C::gpu, &GpuConfig::graph_launch_ns, "ns", 0, 1e9,
             "gpu.launch_ns for calls launched from a CUDA graph (gpu.cuda_graph). No published "
             "figure: 0 (not modelled) by default; configs/dgx-h100-nccl.yaml holds a calibration "
             "(docs/validation.md, \"Calibrations\")");
}

}  // namespace fabricsim
