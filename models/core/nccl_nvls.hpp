// NCCL's NVLS all-reduce on one node as plain logic (no SystemC): how one
// call's elements are cut into channels, loops and the heads' pieces, and how
// many multimem.ld_reduce bytes a channel's reduce warps keep in flight
// (docs/models/gpu.md, "NVLS"). The SystemC side
// (models/sc/algorithms/nvls_nccl.cpp) moves them in time.
//
// From NVIDIA/nccl v2.29.7 (../shared/notes/NCCL.md section 4):
//   - channels: gpu.nvls_channels (16 on sm90, src/transport/nvls.cc), all
//     of them used whatever the size; the planner gives each a contiguous
//     share in cells of 16 KiB (32 KiB of all-reduce traffic):
//     src/enqueue.cc scheduleCollTasksToPlan, lines 651-700;
//   - chunk: gpu.nvls_chunk_bytes (128 KiB), shrunk to 64 / 32 / 16 KiB while
//     the channel's bytes are below 64 / 8 / 2 x heads x chunk (calcCollChunking
//     is called per channel, nChannels = 1: src/enqueue.cc lines 711-720,
//     2153-2166);
//   - a channel runs loops of heads x chunk; head h reduces piece h of every
//     loop; the last loop's chunk is ceil(rest / heads) aligned to 16 KiB
//     (src/device/all_reduce.h lines 408-453);
//   - the reduce warps: 7 up to 6 GPUs, else 5 (all_reduce.h line 396); one
//     of them posts counters and moves no data (prims_simple.h line 597); each
//     data warp reads a hunk of unroll x 32 threads x its pack (16 B for
//     floating-point sums and 16-bit min/max, else 2 x unroll x 4 B) before it
//     stores it, and takes every (warps-1)-th hunk of the piece
//     (src/device/common_kernel.h reduceCopyPacks).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/core/config_enums.hpp"
#include "models/core/reduction_alu.hpp"

namespace fabricsim {

struct Config;

// The sizes a plan is cut with, resolved once from the configuration.
struct NcclNvlsShape {
  int channels = 16;                        // gpu.nvls_channels
  std::uint64_t chunk_bytes = 128u << 10;   // gpu.nvls_chunk_bytes
  int reduce_warps = 0;                     // gpu.nvls_reduce_warps (0: NCCL's rule)
  std::uint64_t unroll = 8;                 // gpu.nvls_unroll
  std::uint64_t request_bytes = 128;        // collective.payload_bytes: one ld_reduce
  std::uint64_t slots = 8;                  // gpu.slots: steps a stage may run ahead
  double warp_copy_gbps = 0;                // gpu.nvls_warp_copy_gbps (0: copies instant)
  static NcclNvlsShape from(const Config& cfg);
  // The reduce warps on n GPUs (NCCL's rule unless set).
  int warps(int n) const;
  // Warps that move data: one posts the step counters (when there are >= 3).
  int data_warps(int n) const;
  // The scatter and gather groups' warps that copy, on n GPUs: what the
  // reduce warps leave of a channel's 20, halved (at least one each), less
  // the scatter's counter warp.
  int scatter_warps(int n) const;
  int gather_warps(int n) const;
  // Bytes one data warp reads before it stores them (its hunk).
  std::uint64_t hunk_bytes(DType t, RedOp op) const;
};

class NcclNvlsPlan {
 public:
  // Elements [first, first + count) (count may be 0).
  struct Range {
    std::uint64_t first = 0, count = 0;
  };

  NcclNvlsPlan() = default;
  // `elements` of `element_bytes` each, over n GPUs (heads).
  NcclNvlsPlan(std::uint64_t elements, std::size_t element_bytes, int n, const NcclNvlsShape& s);

  int heads() const { return n_; }
  int channels() const { return static_cast<int>(ch_.size()); }
  std::uint64_t elements() const { return elements_; }
  // Channel c's elements.
  Range channel(int c) const { return ch_[static_cast<std::size_t>(c)].range; }
  // Channel c's nominal chunk (elements), after NCCL's shrinking.
  std::uint64_t chunk_elements(int c) const { return ch_[static_cast<std::size_t>(c)].chunk; }
  // Loops (steps) of channel c.
  std::uint64_t steps(int c) const { return ch_[static_cast<std::size_t>(c)].steps; }
  // Head h's piece of step s of channel c.
  Range piece(int c, std::uint64_t s, int h) const;
  // The elements of step s of channel c (all heads' pieces): what a GPU's
  // scatter copies in and its gather copies out.
  std::uint64_t step_elements(int c, std::uint64_t s) const;
  // The channel holding element e.
  int channel_of(std::uint64_t e) const;
  // Fast-forward (models/core/fast_forward.hpp): the loops every channel
  // has beyond its last, the elements one loop of every channel holds, and
  // the same plan with `loops` whole loops taken out of every channel (its
  // channels, chunks and last loops unchanged).
  std::uint64_t removable_loops() const;
  std::uint64_t period_elements() const;
  NcclNvlsPlan shortened(std::uint64_t loops) const;

 private:
  struct Channel {
    Range range;
    std::uint64_t chunk = 0;  // nominal chunk, elements
    std::uint64_t last = 0;   // the last (partial) loop's chunk; 0 when none
    std::uint64_t steps = 0;
  };
  int n_ = 1;
  std::uint64_t elements_ = 0;
  std::vector<Channel> ch_;
};

}  // namespace fabricsim
