#include "models/core/nccl_symmetric.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "models/core/int_math.hpp"

namespace fabricsim {

const char* nccl_name(SymKernel k) {
  switch (k) {
    case SymKernel::kAgLl:
      return "AllReduce_AGxLL_R";
    case SymKernel::kAgLlMc:
      return "AllReduce_AGxLLMC_R";
    case SymKernel::kRsLdAgSt:
      return "AllReduce_RSxLD_AGxST";
    case SymKernel::kRsLdMcAgStMc:
      return "AllReduce_RSxLDMC_AGxSTMC";
    case SymKernel::kNone:
      break;
  }
  return "none";
}

namespace {

// src/sym_kernels.cc: smooth min(x, ceiling) and max(0, x).
double softmin(double x, double ceiling, double softness) {
  return ceiling - softness * std::log1p((std::exp(ceiling / softness) - 1) * std::exp(-x / softness));
}
double softplus(double x, double softness) {
  const double z = x / softness;
  return z >= 100.0 ? x : softness * std::log1p(std::exp(z));
}

// NCCL's time (us) of kernel k on `ctas` CTAs (queryModel_lsa, Hopper).
struct Rating {
  double bus_bytes = 0, multiplier = 1, base_us = 7.8, peak = 0;
  int max_ctas = 64;  // ncclSymkMaxBlocks
  double time(int ctas) const {
    constexpr double kGiBps = static_cast<double>(1u << 30) / 1e6;  // bytes per us
    const double sm = 65 * kGiBps;  // all-reduce kernels' rate per CTA
    const double bw = softmin(ctas * sm * multiplier, peak, sm);
    return base_us + softplus(bus_bytes / bw - 1, 1);
  }
};

Rating rating(SymKernel k, double bytes, int n) {
  constexpr double kGiBps = static_cast<double>(1u << 30) / 1e6;
  constexpr double kLlBusFactor = 9;  // "2X the bytes, plus some processing, plus no unrolling"
  Rating r;
  r.peak = 320 * kGiBps;
  switch (k) {
    case SymKernel::kAgLl:
      r.bus_bytes = n * bytes * kLlBusFactor;
      r.base_us = 4.5;
      break;
    case SymKernel::kAgLlMc:
      r.bus_bytes = n * bytes * kLlBusFactor;
      r.multiplier = 1.1;  // "to beat non-MC LL"
      r.base_us = 4.5;
      break;
    case SymKernel::kRsLdAgSt:
      r.bus_bytes = 2 * bytes * (n - 1) / n;
      break;
    case SymKernel::kRsLdMcAgStMc:
      r.bus_bytes = bytes / n + bytes;
      r.multiplier = n;
      r.max_ctas = (16 + n - 1) / n;  // divUp(16, nRanks) before sm100
      r.peak = 480 * kGiBps;
      break;
    case SymKernel::kNone:
      break;
  }
  return r;
}

}  // namespace

SymPick nccl_symmetric_pick(std::uint64_t bytes, int n, DType t, RedOp op, bool multicast, int ctas) {
  SymPick best;
  if (op != RedOp::kSum || t == DType::kInt32 || n < 2) return best;  // not implemented
  const std::uint64_t cells = align_up(bytes, 1024);  // 1 KiB cells
  if (cells >= (std::uint64_t{64} << 30)) return best;  // 32-bit chunk counts
  const bool ll = cells < (std::uint64_t{2} << 30);     // 32-bit element counts
  double best_cost = 0;
  for (const SymKernel k : {SymKernel::kAgLl, SymKernel::kAgLlMc, SymKernel::kRsLdAgSt,
                            SymKernel::kRsLdMcAgStMc}) {
    const bool mc = k == SymKernel::kAgLlMc || k == SymKernel::kRsLdMcAgStMc;
    const bool is_ll = k == SymKernel::kAgLl || k == SymKernel::kAgLlMc;
    if ((mc && !multicast) || (is_ll && !ll)) continue;
    Rating r = rating(k, static_cast<double>(cells), n);
    if (ctas > 0) r.max_ctas = std::min(ctas, 64);  // NCCL_SYM_CTAS: min = max
    int used = r.max_ctas;
    double time = r.time(used);
    for (int c = ctas > 0 ? r.max_ctas : 1; c < r.max_ctas; ++c) {
      const double tc = r.time(c);
      if (tc <= 1.025 * time) {
        used = c;
        time = tc;
        break;
      }
    }
    // NCCL compares in float; the model in double (ties are not expected).
    const double cost = time * (1.0 + 0.025 * used);
    if (best.kernel == SymKernel::kNone || cost < best_cost) {
      best = SymPick{k, used, time};
      best_cost = cost;
    }
  }
  return best;
}

NcclSymmetricPlan::NcclSymmetricPlan(std::uint64_t elements, std::size_t element_bytes, int n,
                                     int ctas)
    : n_(std::max(1, n)),
      ctas_(std::max(1, ctas)),
      elements_(elements),
      chunk_(std::max<std::uint64_t>(1, kChunkBytes / element_bytes)),
      chunks_(elements / chunk_),
      all_warps_(static_cast<std::uint64_t>(n_) * static_cast<std::uint64_t>(warps())) {}

std::uint64_t NcclSymmetricPlan::global(int r, int w) const {
  const auto cta = static_cast<std::uint64_t>(w / kWarpsPerCta);
  const auto warp = static_cast<std::uint64_t>(w % kWarpsPerCta);
  return static_cast<std::uint64_t>(r) +
         static_cast<std::uint64_t>(n_) * (cta + static_cast<std::uint64_t>(ctas_) * warp);
}

std::uint64_t NcclSymmetricPlan::global_warp(std::uint64_t e) const {
  const std::uint64_t main = chunks_ * chunk_;
  if (e < main) return e / chunk_ % all_warps_;
  return (e - main) % (all_warps_ * kLanes) / kLanes;  // one element per thread
}

int NcclSymmetricPlan::warp_of(std::uint64_t e) const {
  const std::uint64_t rest = global_warp(e) / static_cast<std::uint64_t>(n_);
  const auto cta = static_cast<int>(rest % static_cast<std::uint64_t>(ctas_));
  const auto warp = static_cast<int>(rest / static_cast<std::uint64_t>(ctas_));
  return cta * kWarpsPerCta + warp;
}

std::uint64_t NcclSymmetricPlan::hunks(int r, int w) const {
  const std::uint64_t g = global(r, w);
  const std::uint64_t whole = chunks_ > g ? div_up(chunks_ - g, all_warps_) : 0;
  const std::uint64_t tail = elements_ - chunks_ * chunk_;
  const std::uint64_t lane0 = g * kLanes;
  return whole + (tail > lane0 ? div_up(tail - lane0, all_warps_ * kLanes) : 0);
}

NcclSymmetricPlan::Range NcclSymmetricPlan::hunk(int r, int w, std::uint64_t k) const {
  const std::uint64_t g = global(r, w);
  const std::uint64_t whole = chunks_ > g ? div_up(chunks_ - g, all_warps_) : 0;
  if (k < whole) return Range{(g + k * all_warps_) * chunk_, chunk_};
  const std::uint64_t main = chunks_ * chunk_, tail = elements_ - main;
  const std::uint64_t off = (k - whole) * all_warps_ * kLanes + g * kLanes;
  return Range{main + off, std::min(kLanes, tail - off)};
}

}  // namespace fabricsim
