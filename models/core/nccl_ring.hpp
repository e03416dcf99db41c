// NCCL's ring all-reduce as plain logic (no SystemC): how one call's
// elements are cut into channels, loops, chunks and slices, and the order in
// which a rank works through them (docs/models/gpu.md). The SystemC side
// (models/sc/algorithms/ring_nccl.cpp) moves the slices in time.
//
// From NVIDIA/nccl v2.29 (../shared/notes/NCCL.md sections 1 and 5):
//   - channels: collective.channels, fewer while the message is below
//     channels x threads x 64 B (Simple's per-thread threshold);
//   - each channel gets a contiguous share of the elements and runs the ring
//     over it in loops of n chunks; a chunk is 4 steps of the staging buffer
//     (2 MiB by default), the last loop's chunk shrinks to ceil(rest / n);
//   - Simple: a chunk moves as slices of half a chunk, at least 1/32 of the
//     nominal slice (32 KiB by default); LL and LL128: a chunk is one step
//     of their buffer's data (32 KiB, 576000 B) and moves as one slice;
//   - per loop, rank r: step 0 sends chunk r-1; steps 1 .. n-2 receive, add
//     and send chunk r-1-t; step n-1 receives chunk r, adds (it is final) and
//     sends it; steps n .. 2n-3 receive and send on; step 2n-2 receives the
//     last chunk. Every step of a chunk is done slice by slice, and a step
//     with an empty chunk still passes one empty slice (its flag).
// Sizes are aligned to 16 B, as NCCL aligns them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/core/config_enums.hpp"

namespace fabricsim {

struct Config;

// The sizes a plan is cut with, resolved once from the configuration, for
// one protocol (Simple, LL, LL128). Bytes are data bytes.
struct NcclRingShape {
  int channels = 24;                     // collective.channels
  int threads = 512;                     // gpu.threads (LL128: gpu.ll128_threads)
  std::uint64_t chunk_bytes = 2u << 20;  // Simple: 4 steps of gpu.buffer_bytes / gpu.slots
  std::uint64_t slices_per_chunk = 2;    // Simple 2, LL and LL128 1
  std::uint64_t min_slice_bytes = 32u << 10;  // Simple: 1/32 of the nominal slice
  std::uint64_t thread_bytes = 64;  // a channel is dropped below channels x threads x this
  bool thread_bytes_per_rank = false;  // LL on a ring: x the ranks
  std::uint64_t window = 4;            // slices a sender may be ahead of its receiver
  // Data bytes per write of collective.payload_bytes: num / den of it.
  std::uint64_t data_num = 1, data_den = 1;
  // Simple waits for a whole slice and its flag; LL and LL128 pass each
  // line on as it arrives (its flags are in the data).
  bool per_line = false;
  // A channel's CTA: its copy cost per data byte (gpu.channel_gbps; LL: at
  // least gpu.ll_trip_ns per gpu.threads x 8 B), 0 unbounded; LL: the time
  // from a line's arrival to the earliest it is passed on (a trip, in ps).
  double ps_per_byte = 0;
  std::uint64_t trip_ps = 0;
  // The kernel's start beyond an LL kernel's (gpu.simple_start_ns,
  // gpu.ll128_start_ns), in ps.
  std::uint64_t start_ps = 0;
  static NcclRingShape from(const Config& cfg, Protocol p);
};

class NcclRingPlan {
 public:
  // One rank's unit of work in a channel: the slice it receives at `step`
  // (step >= 1) and the slice it sends (step <= 2n-3): both the same
  // elements, [first, first + count) (count may be 0).
  struct Op {
    int step = 0;  // 0 .. 2n-2 within its loop
    int chunk = 0;  // the ring chunk (0 .. n-1) its elements belong to
    std::uint64_t first = 0, count = 0;
    bool recv = false, send = false;
    bool final = false;  // the received data, after this rank's part, is output
  };
  // Walks one rank's ops in one channel, in order.
  class Cursor {
   public:
    Cursor() = default;
    Cursor(const NcclRingPlan& plan, int channel, int rank);
    bool done() const { return done_; }
    const Op& op() const { return op_; }
    void next();

   private:
    void enter_loop();
    void enter_step();
    void set_op();
    const NcclRingPlan* plan_ = nullptr;
    int rank_ = 0;
    std::uint64_t begin_ = 0, end_ = 0;  // the channel's elements
    std::uint64_t loop_ = 0;             // the loop's first element
    std::uint64_t chunk_ = 0, slice_ = 0;
    std::uint64_t cbegin_ = 0, cend_ = 0;  // the current chunk
    int step_ = 0;
    std::uint64_t at_ = 0;  // the current slice's first element
    Op op_;
    bool done_ = true;
  };

  NcclRingPlan() = default;
  // `elements` of `element_bytes` each, over a ring of n ranks.
  NcclRingPlan(std::uint64_t elements, std::size_t element_bytes, int n, const NcclRingShape& s);

  int n() const { return n_; }
  int channels() const { return static_cast<int>(begin_.size()) - 1; }
  std::uint64_t elements() const { return begin_.back(); }
  std::uint64_t channel_begin(int c) const { return begin_[static_cast<std::size_t>(c)]; }
  // The channel holding element e.
  int channel_of(std::uint64_t e) const;
  // The ring chunk (0 .. n-1) element e belongs to: rank k finishes its sum.
  int chunk_of(std::uint64_t e) const;
  std::uint64_t chunk_elements() const { return chunk_; }  // nominal
  // The largest slice of the call (every channel's first loop has it).
  std::uint64_t max_slice_elements() const {
    return loop_slice(loop_chunk(begin_[0], begin_[1]));
  }
  // Fast-forward (models/core/fast_forward.hpp): the whole loops every
  // channel has beyond its last, the elements one loop of every channel
  // holds, and the same plan with `loops` whole loops taken out of every
  // channel (its shares, channel count, chunks and last loops unchanged).
  std::uint64_t removable_loops() const;
  std::uint64_t period_elements() const {
    return static_cast<std::uint64_t>(channels()) * static_cast<std::uint64_t>(n_) * chunk_;
  }
  NcclRingPlan shortened(std::uint64_t loops) const;

 private:
  // A loop at `loop` (its channel ending at `end`): its chunk and slice.
  std::uint64_t loop_chunk(std::uint64_t loop, std::uint64_t end) const;
  std::uint64_t loop_slice(std::uint64_t chunk) const;

  int n_ = 1;
  std::uint64_t align_ = 1;  // elements in 16 B
  std::uint64_t chunk_ = 1;  // nominal chunk, elements
  std::uint64_t slices_per_chunk_ = 2;
  std::uint64_t min_slice_ = 1;
  std::vector<std::uint64_t> begin_{0};  // [c] first element of channel c; back(): the end
};

}  // namespace fabricsim
