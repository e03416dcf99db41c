// NCCL's NVLS all-reduce as the GPUs run it (collective.algorithm=nvls with
// collective.protocol=simple; docs/models/gpu.md, "NVLS"): the GPU side of
// NVLink SHARP on one node with non-registered buffers, from NVIDIA/nccl
// v2.29.7 (src/device/all_reduce.h, prims_simple.h, common_kernel.h,
// src/transport/nvls.cc; ../shared/notes/NCCL.md section 4).
//
// The sweep's NcclNvlsPlan cuts the call into gpu.nvls_channels channels
// (CTAs), each a sequence of steps (loops) of one chunk per GPU; this GPU is
// head `rank` and reduces piece `rank` of every step. Per channel, three
// stages, each NCCL's group of warps:
//   - scatter: copies the step's input to local staging (not on the fabric:
//     its bytes / (scatter warps x gpu.nvls_warp_copy_gbps), one step after
//     another; instant when that is 0) and says so with an 8-byte multicast
//     flag ('ready', NCCL's scatter tail that the heads poll with
//     multimem.ld_reduce.min); it may run gpu.slots steps ahead of the
//     slowest head's credits;
//   - reduce (this GPU's head): once every GPU's ready flag of the step is
//     in, the data warps read the piece with multimem.ld_reduce requests of
//     collective.payload_bytes, one warp's hunk (unroll x 32 x 16 B) at a
//     time each: a warp stores its hunk with multimem.st (a multicast write
//     per response) once all of its hunk is back, then reads its next hunk;
//     a step ends when all its hunks are stored (the warps' barrier): the
//     head posts its credit (an 8-byte multicast, NCCL's recv head) at once
//     and its tail (an 8-byte multicast, NCCL's send tail) once every copy
//     of the step's stores is answered (gpu.write_acks; the fence), in step
//     order; it may start a step only gpu.slots steps after the slot's last
//     use: after its own tail, and with gpu.nvls_warp_copy_gbps after every
//     GPU's gather has copied that step out ('gathered', an 8-byte multicast
//     flag: NCCL's gather head, which the heads poll);
//   - gather: copies a step's results out of the staging (locally) once every
//     head's tail of it is in: its bytes / (gather warps x
//     gpu.nvls_warp_copy_gbps), one step after another (without that rate,
//     each result is taken as it lands and no 'gathered' flag is sent); with
//     gpu.write_acks every arriving copy of a store is answered by a one-flit
//     response to its writer.
// Timing assumptions: the scatter and gather warps copy at a fixed rate each
// (no contention for HBM or the SM with the reduce warps); polling a flag
// costs nothing once it is in (NCCL polls the counters with
// multimem.ld_reduce.min, a round trip; here they are pushed); the kernel starts
// gpu.launch_ns (gpu.graph_launch_ns from a CUDA graph) + gpu.simple_start_ns
// after the call (it runs Simple's primitives: CollectiveSweep::start_delay).
#include <algorithm>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/nccl_nvls.hpp"
#include "models/sc/algorithms/multimem.hpp"

namespace fabricsim {

namespace {

// Step counters travel as 8-byte multicast stores into a credit area above
// every data address: 64 B per (kind, channel, writer), as NCCL's credit
// area has 64 B per (head, channel, direction) (src/transport/nvls.cc).
constexpr std::uint64_t kCreditBase = std::uint64_t{1} << 56;
constexpr std::uint64_t kMaxWriters = 4096, kMaxChannels = 64;
enum FlagKind : std::uint64_t { kReady = 0, kCredit = 1, kTail = 2, kGathered = 3 };
// Timer tags: the channel, and which copy ended.
constexpr std::uint32_t kScattered = 1u << 16, kGatheredOut = 1u << 17;

class NvlsNcclAlgorithm final : public MultimemAlgorithm {
 public:
  NvlsNcclAlgorithm(Gpu& gpu, const Config& cfg) : MultimemAlgorithm(gpu, cfg) {}

  bool reports_progress() const override { return true; }
  void begin_call() override;
  void start_work() override;
  void receive(const Packet& in) override;
  void timer(std::uint32_t tag) override;

 private:
  struct Warp {
    std::uint64_t hunk = 0;     // the hunk of the running step it reads
    std::uint64_t waiting = 0;  // its requests not answered yet
    bool busy = false;
    std::vector<Held> held;  // the hunk's results, stored once all are in
  };
  struct Channel {
    std::uint64_t steps = 0;
    // Scatter.
    std::uint64_t scattered = 0;
    bool scattering = false;            // copying step `scattered` in (timed copies)
    std::vector<std::uint64_t> credit;  // [head rank] steps that head has consumed
    // Reduce (this GPU's head).
    std::uint64_t step = 0;             // the step reduced now, or next
    bool running = false;
    std::vector<std::uint64_t> ready;   // [step % slots] ready flags in
    NcclNvlsPlan::Range piece;          // the running step's
    std::uint64_t hunks = 0;
    std::uint64_t tails = 0;            // steps whose tail is posted
    std::vector<std::uint64_t> unacked;  // [step % slots] store copies not answered
    std::vector<Warp> warps;
    // Gather (timed copies): steps copied out, heads' tails in per slot, and
    // [rank] the steps each GPU's gather has copied out (the heads' view).
    std::uint64_t gathered = 0;
    bool gathering = false;
    std::vector<std::uint64_t> tails_got;
    std::vector<std::uint64_t> gathered_by;
  };

  const NcclNvlsPlan& nvls() const { return sweep().nvls_plan(); }
  // A 16-bit sequence number widened: the true one is at least `base - window`.
  std::uint64_t widen(std::uint16_t seq, std::uint64_t base) const {
    const std::uint64_t lo = base >= window_ ? base - window_ : 0;
    return lo + static_cast<std::uint16_t>(seq - static_cast<std::uint16_t>(lo));
  }
  Channel& channel(int c) { return channels_[static_cast<std::size_t>(c)]; }
  void flag(FlagKind kind, int c, std::uint64_t seq);
  void try_scatter(int c);
  void try_reduce(int c);
  void issue(int c, Warp& w);
  void response(const Packet& in);
  void end_step(int c);
  void try_tails(int c);
  void try_gather(int c);
  // The time a copy of a step's elements takes at `ps_per_byte`.
  Ps copy_time(int c, std::uint64_t step, double ps_per_byte) const;
  void settle();

  std::uint64_t window_ = 8;    // gpu.slots
  std::uint64_t hunk_ = 1;      // elements per warp hunk
  std::uint64_t request_ = 1;   // elements per ld_reduce request
  std::uint64_t expect_flags_ = 0;  // of each kind, over the call: n x steps
  std::uint64_t ready_in_ = 0, credits_in_ = 0, tails_in_ = 0, gathered_in_ = 0;
  // gpu.nvls_warp_copy_gbps over the scatter and gather warps; 0: instant.
  double scatter_ps_per_byte_ = 0, gather_ps_per_byte_ = 0;
  std::uint64_t unacked_all_ = 0;
  std::uint64_t output_ = 0;
  bool closed_ = false;
  std::vector<int> rank_of_;  // [GPU] its rank in the call
  std::vector<Channel> channels_;
};

void NvlsNcclAlgorithm::begin_call() {
  const NcclNvlsPlan& p = nvls();
  const NcclNvlsShape& s = sweep().nvls_shape();
  const int n = call().size;
  window_ = s.slots;
  hunk_ = std::max<std::uint64_t>(1, s.hunk_bytes(config().collective.dtype,
                                                  config().collective.redop) / es());
  request_ = std::max<std::uint64_t>(1, s.request_bytes / es());
  scatter_ps_per_byte_ = s.warp_copy_gbps > 0 ? 1000.0 / (s.warp_copy_gbps * s.scatter_warps(n)) : 0;
  gather_ps_per_byte_ = s.warp_copy_gbps > 0 ? 1000.0 / (s.warp_copy_gbps * s.gather_warps(n)) : 0;
  const auto warps = static_cast<std::size_t>(s.data_warps(n));
  rank_of_.assign(static_cast<std::size_t>(gpus()), -1);
  for (int r = 0; r < n; ++r) rank_of_[static_cast<std::size_t>(member(r))] = r;
  channels_.assign(static_cast<std::size_t>(p.channels()), Channel{});
  expect_flags_ = 0;
  for (int c = 0; c < p.channels(); ++c) {
    Channel& ch = channel(c);
    ch.steps = p.steps(c);
    ch.credit.assign(static_cast<std::size_t>(n), 0);
    ch.ready.assign(window_, 0);
    ch.unacked.assign(window_, 0);
    ch.tails_got.assign(window_, 0);
    ch.gathered_by.assign(static_cast<std::size_t>(n), 0);
    ch.warps.resize(warps);
    for (Warp& w : ch.warps) w.held.reserve(static_cast<std::size_t>(hunk_ / request_ + 1));
    expect_flags_ += ch.steps * static_cast<std::uint64_t>(n);
  }
  ready_in_ = credits_in_ = tails_in_ = gathered_in_ = 0;
  unacked_all_ = 0;
  output_ = 0;
  closed_ = false;
}

void NvlsNcclAlgorithm::start_work() {
  if (call().op != CollectiveOp::kAllReduce)
    throw InvariantError(name() + ": NCCL's NVLS here implements all_reduce only");
  for (int c = 0; c < static_cast<int>(channels_.size()); ++c) {
    try_scatter(c);
    try_reduce(c);
  }
  settle();
}

void NvlsNcclAlgorithm::flag(FlagKind kind, int c, std::uint64_t seq) {
  multicast_counter(static_cast<std::uint16_t>(seq),
                    kCreditBase + ((kind * kMaxChannels + static_cast<std::uint64_t>(c)) * kMaxWriters +
                                   static_cast<std::uint64_t>(id())) * 64);
}

// Scatter: a step's input is staged (locally) once every head has freed its
// slot; the ready flag tells the heads.
void NvlsNcclAlgorithm::try_scatter(int c) {
  Channel& ch = channel(c);
  const std::uint64_t least = *std::min_element(ch.credit.begin(), ch.credit.end());
  if (scatter_ps_per_byte_ == 0) {
    while (ch.scattered < ch.steps && ch.scattered < least + window_) flag(kReady, c, ch.scattered++);
    return;
  }
  if (ch.scattering || ch.scattered >= ch.steps || ch.scattered >= least + window_) return;
  ch.scattering = true;
  wake_at(now() + copy_time(c, ch.scattered, scatter_ps_per_byte_),
          kScattered | static_cast<std::uint32_t>(c));
}

Ps NvlsNcclAlgorithm::copy_time(int c, std::uint64_t step, double ps_per_byte) const {
  const auto bytes = static_cast<double>(nvls().step_elements(c, step) * es());
  // At least 1 ps: a copy is never done at the instant it starts.
  return std::max<Ps>(1, static_cast<Ps>(std::llround(bytes * ps_per_byte)));
}

// Gather (timed copies): a step is copied out once every head's tail of it
// is in, one step after another; the heads learn it from a 'gathered' flag.
void NvlsNcclAlgorithm::try_gather(int c) {
  Channel& ch = channel(c);
  const auto n = static_cast<std::uint64_t>(call().size);
  if (ch.gathering || ch.gathered >= ch.steps || ch.tails_got[ch.gathered % window_] < n) return;
  ch.gathering = true;
  wake_at(now() + copy_time(c, ch.gathered, gather_ps_per_byte_),
          kGatheredOut | static_cast<std::uint32_t>(c));
}

void NvlsNcclAlgorithm::timer(std::uint32_t tag) {
  const int c = static_cast<int>(tag & 0xffffu);
  Channel& ch = channel(c);
  if ((tag & kScattered) != 0) {
    ch.scattering = false;
    flag(kReady, c, ch.scattered++);
    try_scatter(c);
  } else {
    ch.gathering = false;
    ch.tails_got[ch.gathered % window_] = 0;
    // The step's results are in the output now: each head's piece is its
    // sender's progress (the fast-forward's lanes).
    for (int h = 0; h < call().size; ++h)
      if (const std::uint64_t k = nvls().piece(c, ch.gathered, h).count; k > 0) progress(k, member(h));
    flag(kGathered, c, ch.gathered++);
    try_gather(c);
  }
  settle();
}

// Reduce: the next step starts when every GPU's ready flag for it is in and
// the gathers' slot of it is free (its tail `slots` steps back was posted).
void NvlsNcclAlgorithm::try_reduce(int c) {
  Channel& ch = channel(c);
  const auto n = static_cast<std::uint64_t>(call().size);
  if (ch.running || ch.step >= ch.steps || ch.ready[ch.step % window_] < n ||
      ch.step >= ch.tails + window_)
    return;
  if (gather_ps_per_byte_ > 0 &&
      ch.step >= *std::min_element(ch.gathered_by.begin(), ch.gathered_by.end()) + window_)
    return;
  ch.running = true;
  ch.ready[ch.step % window_] = 0;
  ch.piece = nvls().piece(c, ch.step, call().rank);
  ch.hunks = (ch.piece.count + hunk_ - 1) / hunk_;
  for (std::size_t w = 0; w < ch.warps.size() && w < ch.hunks; ++w) {
    ch.warps[w].hunk = w;
    issue(c, ch.warps[w]);
  }
  if (ch.hunks == 0) end_step(c);
}

// A warp reads its hunk: one multimem.ld_reduce request per payload.
void NvlsNcclAlgorithm::issue(int c, Warp& w) {
  Channel& ch = channel(c);
  const std::uint64_t begin = ch.piece.first + w.hunk * hunk_;
  const std::uint64_t end = std::min(begin + hunk_, ch.piece.first + ch.piece.count);
  w.busy = true;
  w.waiting = read_reduced(static_cast<std::uint16_t>(ch.step), begin, end - begin, request_);
}

// A reduced payload is back: once its warp's hunk is all in, the warp stores
// it to every GPU (multimem.st) and reads its next hunk.
void NvlsNcclAlgorithm::response(const Packet& in) {
  const std::uint64_t first = in.addr / es();
  const int c = nvls().channel_of(first);
  Channel& ch = channel(c);
  if (!ch.running || first < ch.piece.first || first >= ch.piece.first + ch.piece.count)
    throw InvariantError(name() + ": NVLS result for element " + std::to_string(first) +
                         " outside channel " + std::to_string(c) + "'s running piece");
  const std::uint64_t hunk = (first - ch.piece.first) / hunk_;
  Warp& w = ch.warps[static_cast<std::size_t>(hunk % ch.warps.size())];
  w.held.push_back(Held{first, in.bytes / es(), in.payload, in.group});
  if (--w.waiting > 0) return;
  const std::uint64_t answered = store(static_cast<std::uint16_t>(ch.step), w.held);
  ch.unacked[ch.step % window_] += answered;
  unacked_all_ += answered;
  w.hunk += ch.warps.size();
  if (w.hunk < ch.hunks) {
    issue(c, w);
    return;
  }
  w.busy = false;
  if (std::none_of(ch.warps.begin(), ch.warps.end(), [](const Warp& x) { return x.busy; }))
    end_step(c);
}

// The step's stores are all made: its slot of the scatters' staging is free
// (credit, at once); its tail follows the stores' responses.
void NvlsNcclAlgorithm::end_step(int c) {
  Channel& ch = channel(c);
  ch.running = false;
  flag(kCredit, c, ch.step);
  ++ch.step;  // (the steps before it are reduced)
  try_tails(c);
  try_reduce(c);
}

void NvlsNcclAlgorithm::try_tails(int c) {
  Channel& ch = channel(c);
  bool any = false;
  while (ch.tails < ch.step && ch.unacked[ch.tails % window_] == 0) {
    flag(kTail, c, ch.tails++);
    any = true;
  }
  if (any) try_reduce(c);
}

void NvlsNcclAlgorithm::receive(const Packet& in) {
  switch (in.kind) {
    case PacketKind::kLdReduceResp:
      response(in);
      break;
    case PacketKind::kWrite: {  // a copy of a multimem.st
      if (in.addr >= kCreditBase) {  // a step counter
        payloads().release(in.payload);
        const std::uint64_t off = (in.addr - kCreditBase) / 64 / kMaxWriters;
        const auto kind = static_cast<FlagKind>(off / kMaxChannels);
        const int c = static_cast<int>(off % kMaxChannels);
        Channel& ch = channel(c);
        if (kind == kReady) {
          ++ch.ready[widen(in.step, ch.step + window_) % window_];
          ++ready_in_;
          try_reduce(c);
        } else if (kind == kCredit) {
          std::uint64_t& got = ch.credit[static_cast<std::size_t>(rank_of_[static_cast<std::size_t>(in.src)])];
          got = std::max(got, widen(in.step, got) + 1);
          ++credits_in_;
          try_scatter(c);
        } else if (kind == kTail) {
          ++tails_in_;  // the gather copies the head's piece out (locally)
          if (gather_ps_per_byte_ > 0) {
            ++ch.tails_got[widen(in.step, ch.gathered + window_) % window_];
            try_gather(c);
          }
        } else {
          std::uint64_t& got =
              ch.gathered_by[static_cast<std::size_t>(rank_of_[static_cast<std::size_t>(in.src)])];
          got = std::max(got, widen(in.step, got) + 1);
          ++gathered_in_;
          try_reduce(c);
        }
        break;
      }
      // A head's result: the gather copies it to the output (as it lands,
      // or with timed copies once the step is all in: timer()).
      const std::uint64_t got = take_result(in);
      output_ += got;
      if (gather_ps_per_byte_ == 0) progress(got, in.src);
      break;
    }
    case PacketKind::kWriteAck: {
      const int c = nvls().channel_of(in.addr / es());
      Channel& ch = channel(c);
      --ch.unacked[widen(in.step, ch.tails + window_) % window_];
      --unacked_all_;
      try_tails(c);
      break;
    }
    default:
      throw InvariantError(name() + ": NCCL's NVLS got a packet of kind " +
                           std::to_string(static_cast<int>(in.kind)));
  }
  settle();
}

// The call is over for us when every step is reduced and its tail posted,
// every store answered, every flag of every GPU in and all our output in
// (with timed copies, copied out): nothing of ours is left on the fabric.
void NvlsNcclAlgorithm::settle() {
  if (closed_ || unacked_all_ > 0 || ready_in_ < expect_flags_ || credits_in_ < expect_flags_ ||
      tails_in_ < expect_flags_ || output_ < nvls().elements())
    return;
  if (gather_ps_per_byte_ > 0 && gathered_in_ < expect_flags_) return;
  for (const Channel& ch : channels_)
    if (ch.tails < ch.steps || (gather_ps_per_byte_ > 0 && ch.gathered < ch.steps)) return;
  closed_ = true;
  output_done(output_);
}

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_nvls_nccl_algorithm(Gpu& gpu, const Config& cfg) {
  return std::make_unique<NvlsNcclAlgorithm>(gpu, cfg);
}

}  // namespace fabricsim
