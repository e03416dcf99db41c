// NCCL's all-reduce on symmetric-registered buffers (collective.registration=
// symmetric; nccl-tests -R 2: ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC))
// as plain logic (no SystemC): which of NCCL's symmetric kernels a call runs,
// on how many CTAs, and which warp of which GPU reads each element
// (docs/models/gpu.md, "Registered buffers"). The SystemC side
// (models/sc/algorithms/nvls_symmetric.cpp) moves them in time.
//
// From NVIDIA/nccl v2.29.2-1:
//   - the pick: every symmetric all-reduce kernel the call allows is rated by
//     NCCL's own model, time = base latency + softplus(bus bytes / bandwidth - 1),
//     bandwidth = softmin(CTAs x SM rate x multiplier, peak), and the least
//     time x (1 + 2.5% per CTA) wins; each kernel runs on the fewest CTAs
//     within 2.5% of its time on the most (src/sym_kernels.cc queryModel_lsa,
//     ncclSymkPickKernel; Hopper constants: base 4.5 us LL, 7.8 us else;
//     65 GiB/s per CTA; peak 480 GiB/s multimem, 320 else; at most 64 CTAs,
//     ceil(16 / n) with multimem). Sizes count in 1 KiB cells
//     (src/scheduler/symmetric_sched.cc line 79);
//   - the symmetric kernels are for sums of floating-point types (not fp64),
//     with every GPU on NVLink (src/sym_kernels.cc ncclSymkImplemented);
//   - an LL pick falls back to NCCL's normal kernels when several GPUs share
//     a process, as in nccl-tests -g (src/scheduler/symmetric_sched.cc
//     lines 94-114); the model always falls back for them (their LL kernels
//     are not modelled);
//   - RSxLDMC_AGxSTMC (src/device/symmetric/all_reduce.cuh lines 292-372):
//     16 warps per CTA; every thread of every GPU is numbered lane, rank, CTA,
//     warp (fastest first) and global warp g reads 4 KiB chunks g, g + W, ...
//     (W warps in all) with multimem.ld_reduce, 8 loads of 32 x 16 B, then
//     stores them with multimem.st; the bytes after the last whole chunk go
//     one element per thread; a barrier (multimem) before and after.
#pragma once
#include <cstddef>
#include <cstdint>

#include "models/core/reduction_alu.hpp"

namespace fabricsim {

// NCCL's symmetric all-reduce kernels (src/include/sym_kernels.h).
enum class SymKernel : std::uint8_t { kNone, kAgLl, kAgLlMc, kRsLdAgSt, kRsLdMcAgStMc };
const char* nccl_name(SymKernel k);

struct SymPick {
  SymKernel kernel = SymKernel::kNone;  // kNone: no symmetric kernel runs it
  int ctas = 0;
  double time_us = 0;  // NCCL's estimate
  // NCCL runs its normal kernels instead (the fallback above).
  bool falls_back() const { return kernel == SymKernel::kNone || kernel == SymKernel::kAgLl ||
                                   kernel == SymKernel::kAgLlMc; }
};

// NCCL's choice for an all-reduce of `bytes` per GPU on n GPUs; `multicast`:
// the fabric has NVLink SHARP (multimem); `ctas` > 0 forces every kernel's
// CTA count, as NCCL_SYM_CTAS does (at most 64).
SymPick nccl_symmetric_pick(std::uint64_t bytes, int n, DType t, RedOp op, bool multicast, int ctas = 0);

// Who reads what in RSxLDMC_AGxSTMC.
class NcclSymmetricPlan {
 public:
  static constexpr std::uint64_t kChunkBytes = 4096;  // a warp's 8 x 32 x 16 B
  static constexpr int kWarpsPerCta = 16;
  static constexpr std::uint64_t kLanes = 32;

  struct Range {
    std::uint64_t first = 0, count = 0;
  };

  NcclSymmetricPlan() = default;
  NcclSymmetricPlan(std::uint64_t elements, std::size_t element_bytes, int n, int ctas);

  std::uint64_t elements() const { return elements_; }
  int ctas() const { return ctas_; }
  int warps() const { return ctas_ * kWarpsPerCta; }  // per GPU
  // Local warp w (CTA w / 16, warp w % 16) of rank r: its hunks, read one
  // after another: its whole chunks, then its lanes' share of the tail.
  std::uint64_t hunks(int r, int w) const;
  Range hunk(int r, int w, std::uint64_t k) const;
  // The rank and local warp that read element e.
  int rank_of(std::uint64_t e) const { return static_cast<int>(global_warp(e) % n_); }
  int warp_of(std::uint64_t e) const;
  // Fast-forward (models/core/fast_forward.hpp): a round gives every warp
  // of every GPU one more chunk; the rounds that can be taken out keep the
  // last whole round and the tail (the plan of elements() - k x period).
  std::uint64_t period_elements() const { return all_warps_ * chunk_; }
  std::uint64_t removable_rounds() const {
    const std::uint64_t rounds = chunks_ / all_warps_;
    return rounds > 0 ? rounds - 1 : 0;
  }

 private:
  std::uint64_t global(int r, int w) const;  // global warp number
  std::uint64_t global_warp(std::uint64_t e) const;
  int n_ = 1, ctas_ = 1;
  std::uint64_t elements_ = 0;
  std::uint64_t chunk_ = 1;       // elements per chunk
  std::uint64_t chunks_ = 0;      // whole chunks
  std::uint64_t all_warps_ = 1;   // W: over every GPU
};

}  // namespace fabricsim
