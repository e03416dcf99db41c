// NCCL's all-reduce on symmetric-registered buffers, RSxLDMC_AGxSTMC
// (collective.registration=symmetric, where NCCL's model picks it;
// docs/models/gpu.md, "Registered buffers"), from NVIDIA/nccl v2.29.2
// src/device/symmetric/all_reduce.cuh lines 292-372 and
// src/device/symmetric/lsa_barrier__funcs.h.
//
// The call runs on the sweep's NcclSymmetricPlan: c CTAs of 16 warps on
// every GPU. Per CTA:
//   - a barrier: the CTA multicasts an 8-byte arrival (NCCL's multimem.red on
//     the CTA's barrier counter) and starts once the arrivals of that CTA on
//     every GPU are in (it spins on its local copy of the counter);
//   - each warp reads its hunks one after another (a 4 KiB chunk: 8 loads of
//     32 x 16 B, split into multimem.ld_reduce requests of
//     collective.payload_bytes; or its lanes' share of the tail), and stores
//     a hunk with multimem.st (a multicast write per response) once all of it
//     is back; the results land straight in every GPU's output (registered
//     output: no FIFO, no flags per step, no copy);
//   - a barrier with release order: once every store of the CTA is answered
//     (gpu.write_acks; the fence), it multicasts its departure and ends when
//     the departures of that CTA on every GPU are in.
// The call is over for a GPU when every CTA has passed its second barrier
// and all of its output is in.
// Timing assumptions: polling a counter costs nothing once it is in; the
// kernel starts gpu.launch_ns (gpu.graph_launch_ns from a CUDA graph) +
// gpu.symmetric_start_ns after the call (CollectiveSweep::start_delay).
#include <algorithm>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/nccl_symmetric.hpp"
#include "models/sc/algorithms/multimem.hpp"

namespace fabricsim {

namespace {

// Barrier counters travel as 8-byte multicast stores into an area above
// every data address: 64 B per (kind, CTA, writer).
constexpr std::uint64_t kBarrierBase = std::uint64_t{1} << 56;
constexpr std::uint64_t kMaxWriters = 4096, kMaxCtas = 64;
enum BarrierKind : std::uint64_t { kArrive = 0, kDepart = 1 };

class NvlsSymmetricAlgorithm final : public MultimemAlgorithm {
 public:
  NvlsSymmetricAlgorithm(Gpu& gpu, const Config& cfg) : MultimemAlgorithm(gpu, cfg) {}

  bool reports_progress() const override { return true; }
  void begin_call() override;
  void start_work() override;
  void receive(const Packet& in) override;

 private:
  struct Warp {
    std::uint64_t next = 0, hunks = 0;  // its hunk being read, of how many
    std::uint64_t waiting = 0;          // its requests not answered yet
    std::vector<Held> held;             // the hunk's results, stored once all are in
  };
  struct Cta {
    int arrived = 0, departed = 0;  // barrier counters from every GPU
    int busy = 0;                   // its warps still reading
    std::uint64_t unacked = 0;      // its store copies not answered
    bool started = false, left = false;
  };

  const NcclSymmetricPlan& plan_of() const { return sweep().symmetric_plan(); }
  void barrier(BarrierKind kind, int cta);
  void start_cta(int cta);
  void issue(int w);
  void response(const Packet& in);
  void try_depart(int cta);
  void settle();

  std::uint64_t request_ = 1;  // elements per ld_reduce request
  std::uint64_t unacked_all_ = 0;
  std::uint64_t output_ = 0;
  bool closed_ = false;
  std::vector<Warp> warps_;  // [CTA x 16 + warp]
  std::vector<Cta> ctas_;
};

void NvlsSymmetricAlgorithm::begin_call() {
  const NcclSymmetricPlan& p = plan_of();
  // (NCCL's model picks an LL kernel for small calls: an empty one never
  // comes here, and would report its output twice: Gpu::start_work.)
  if (p.elements() == 0) throw InvariantError(name() + ": the symmetric kernel got an empty call");
  if (p.ctas() > static_cast<int>(kMaxCtas) || gpus() > static_cast<int>(kMaxWriters))
    throw InvariantError(name() + ": the symmetric kernel's barrier area holds at most " +
                         std::to_string(kMaxCtas) + " CTAs of " + std::to_string(kMaxWriters) +
                         " GPUs");
  request_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(config().collective.payload_bytes) / es());
  ctas_.assign(static_cast<std::size_t>(p.ctas()), Cta{});
  warps_.resize(static_cast<std::size_t>(p.warps()));
  for (int w = 0; w < p.warps(); ++w) {
    Warp& x = warps_[static_cast<std::size_t>(w)];
    x.next = 0;
    x.waiting = 0;
    x.hunks = p.hunks(call().rank, w);
    x.held.clear();
    x.held.reserve(static_cast<std::size_t>(NcclSymmetricPlan::kChunkBytes / es() / request_ + 1));
  }
  unacked_all_ = 0;
  output_ = 0;
  closed_ = false;
}

void NvlsSymmetricAlgorithm::start_work() {
  if (call().op != CollectiveOp::kAllReduce)
    throw InvariantError(name() + ": NCCL's symmetric kernel here implements all_reduce only");
  for (int c = 0; c < static_cast<int>(ctas_.size()); ++c) barrier(kArrive, c);
  settle();
}

void NvlsSymmetricAlgorithm::barrier(BarrierKind kind, int cta) {
  multicast_counter(0, kBarrierBase + ((kind * kMaxCtas + static_cast<std::uint64_t>(cta)) * kMaxWriters +
                                       static_cast<std::uint64_t>(id())) * 64);
}

void NvlsSymmetricAlgorithm::start_cta(int cta) {
  Cta& c = ctas_[static_cast<std::size_t>(cta)];
  c.started = true;
  for (int k = 0; k < NcclSymmetricPlan::kWarpsPerCta; ++k) {
    const int w = cta * NcclSymmetricPlan::kWarpsPerCta + k;
    if (warps_[static_cast<std::size_t>(w)].hunks == 0) continue;
    ++c.busy;
    issue(w);
  }
  try_depart(cta);
}

// A warp reads its next hunk: one multimem.ld_reduce request per payload.
void NvlsSymmetricAlgorithm::issue(int w) {
  Warp& x = warps_[static_cast<std::size_t>(w)];
  const NcclSymmetricPlan::Range h = plan_of().hunk(call().rank, w, x.next);
  x.waiting = read_reduced(0, h.first, h.count, request_);
}

// A reduced payload is back: once its warp's hunk is all in, the warp stores
// it to every GPU (multimem.st) and reads its next hunk.
void NvlsSymmetricAlgorithm::response(const Packet& in) {
  const std::uint64_t first = in.addr / es();
  const NcclSymmetricPlan& p = plan_of();
  if (first >= p.elements() || p.rank_of(first) != call().rank)
    throw InvariantError(name() + ": symmetric result for element " + std::to_string(first) +
                         ", which rank " + std::to_string(call().rank) + " did not read");
  const int w = p.warp_of(first);
  const int cta = w / NcclSymmetricPlan::kWarpsPerCta;
  Warp& x = warps_[static_cast<std::size_t>(w)];
  x.held.push_back(Held{first, in.bytes / es(), in.payload, in.group});
  if (--x.waiting > 0) return;
  Cta& c = ctas_[static_cast<std::size_t>(cta)];
  const std::uint64_t answered = store(0, x.held);
  c.unacked += answered;
  unacked_all_ += answered;
  if (++x.next < x.hunks) {
    issue(w);
    return;
  }
  --c.busy;
  try_depart(cta);
}

// The second barrier: the CTA's warps are done and their stores answered.
void NvlsSymmetricAlgorithm::try_depart(int cta) {
  Cta& c = ctas_[static_cast<std::size_t>(cta)];
  if (!c.started || c.left || c.busy > 0 || c.unacked > 0) return;
  c.left = true;
  barrier(kDepart, cta);
}

void NvlsSymmetricAlgorithm::receive(const Packet& in) {
  const int n = call().size;
  switch (in.kind) {
    case PacketKind::kLdReduceResp:
      response(in);
      break;
    case PacketKind::kWrite: {  // a copy of a multimem.st
      if (in.addr >= kBarrierBase) {  // a barrier counter
        payloads().release(in.payload);
        const std::uint64_t off = (in.addr - kBarrierBase) / 64 / kMaxWriters;
        const auto kind = static_cast<BarrierKind>(off / kMaxCtas);
        const int cta = static_cast<int>(off % kMaxCtas);
        Cta& c = ctas_[static_cast<std::size_t>(cta)];
        if (kind == kArrive) {
          if (++c.arrived == n) start_cta(cta);
        } else {
          ++c.departed;
        }
        break;
      }
      // A result, straight into our output.
      const std::uint64_t got = take_result(in);
      output_ += got;
      progress(got, in.src);
      break;
    }
    case PacketKind::kWriteAck: {
      const int cta = plan_of().warp_of(in.addr / es()) / NcclSymmetricPlan::kWarpsPerCta;
      --ctas_[static_cast<std::size_t>(cta)].unacked;
      --unacked_all_;
      try_depart(cta);
      break;
    }
    default:
      throw InvariantError(name() + ": NCCL's symmetric kernel got a packet of kind " +
                           std::to_string(static_cast<int>(in.kind)));
  }
  settle();
}

// Over for us when every CTA has passed its second barrier (every GPU's
// departure in), every store of ours answered and all our output in.
void NvlsSymmetricAlgorithm::settle() {
  if (closed_ || unacked_all_ > 0 || output_ < plan_of().elements()) return;
  for (const Cta& c : ctas_)
    if (c.departed < call().size) return;
  closed_ = true;
  output_done(output_);
}

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_nvls_symmetric_algorithm(Gpu& gpu, const Config& cfg) {
  return std::make_unique<NvlsSymmetricAlgorithm>(gpu, cfg);
}

}  // namespace fabricsim
