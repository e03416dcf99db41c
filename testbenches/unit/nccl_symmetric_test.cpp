// NCCL's symmetric all-reduce (models/core/nccl_symmetric.hpp): the kernel
// and CTA count its model picks, and who reads what in RSxLDMC_AGxSTMC.
#include "models/core/nccl_symmetric.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace fabricsim {
namespace {

// The picks on 4 H100s as NCCL's model makes them (computed by hand from
// src/sym_kernels.cc queryModel_lsa): LL multicast up to 32 KiB (the model
// runs NCCL's normal kernels there), then RSxLDMC_AGxSTMC on 1 CTA up to
// 128 KiB, 2 up to 1 MiB and 3 from 2 MiB; between the powers of two (NCCL
// counts whole KiB), above 33 KiB, 2 CTAs above 218 KiB, 3 above 1915 KiB.
TEST(NcclSymmetric, PicksAsNcclsModelOnFourGpus) {
  const auto pick = [](std::uint64_t b) { return nccl_symmetric_pick(b, 4, DType::kFp32, RedOp::kSum, true); };
  for (std::uint64_t b = 8; b <= (32u << 10); b *= 2) {
    EXPECT_EQ(pick(b).kernel, SymKernel::kAgLlMc) << b;
    EXPECT_TRUE(pick(b).falls_back()) << b;
  }
  const std::vector<std::pair<std::uint64_t, int>> ctas = {
      {64u << 10, 1}, {128u << 10, 1}, {256u << 10, 2}, {1u << 20, 2}, {2u << 20, 3}, {16u << 20, 3},
      {std::uint64_t{8} << 30, 3}};
  for (const auto& [b, c] : ctas) {
    const SymPick p = pick(b);
    EXPECT_EQ(p.kernel, SymKernel::kRsLdMcAgStMc) << b;
    EXPECT_FALSE(p.falls_back()) << b;
    EXPECT_EQ(p.ctas, c) << b;
  }
  EXPECT_EQ(pick(33u << 10).kernel, SymKernel::kAgLlMc);
  EXPECT_EQ(pick((33u << 10) + 1).kernel, SymKernel::kRsLdMcAgStMc);
  EXPECT_EQ(pick(34u << 10).kernel, SymKernel::kRsLdMcAgStMc);
  EXPECT_EQ(pick(218u << 10).ctas, 1);
  EXPECT_EQ(pick(219u << 10).ctas, 2);
  EXPECT_EQ(pick(1915u << 10).ctas, 2);
  EXPECT_EQ(pick(1916u << 10).ctas, 3);
  // NCCL_SYM_CTAS forces the count, beyond multimem's cap too.
  EXPECT_EQ(nccl_symmetric_pick(1u << 30, 8, DType::kFp32, RedOp::kSum, true, 6).ctas, 6);
  EXPECT_EQ(nccl_symmetric_pick(64u << 10, 4, DType::kFp32, RedOp::kSum, true, 3).ctas, 3);
  EXPECT_EQ(nccl_symmetric_pick(1u << 30, 8, DType::kFp32, RedOp::kSum, true, 100).ctas, 64);
  // At most ceil(16 / n) CTAs with multimem: 2 on 8 GPUs, 8 on 2.
  EXPECT_EQ(nccl_symmetric_pick(1u << 30, 8, DType::kFp32, RedOp::kSum, true).ctas, 2);
  EXPECT_LE(nccl_symmetric_pick(1u << 30, 2, DType::kFp32, RedOp::kSum, true).ctas, 8);
}

TEST(NcclSymmetric, NoKernelWhereNcclHasNone) {
  EXPECT_EQ(nccl_symmetric_pick(1u << 20, 4, DType::kInt32, RedOp::kSum, true).kernel, SymKernel::kNone);
  EXPECT_EQ(nccl_symmetric_pick(1u << 20, 4, DType::kFp32, RedOp::kMax, true).kernel, SymKernel::kNone);
  // Without multicast the multimem kernels are out: the loads-and-stores one.
  EXPECT_EQ(nccl_symmetric_pick(16u << 20, 4, DType::kFp32, RedOp::kSum, false).kernel,
            SymKernel::kRsLdAgSt);
  EXPECT_STREQ(nccl_name(SymKernel::kRsLdMcAgStMc), "AllReduce_RSxLDMC_AGxSTMC");
}

// Every element is read by exactly one warp of one rank, the one rank_of and
// warp_of name; a warp's whole chunks come before its share of the tail.
void expect_tiled(std::uint64_t elements, std::size_t es, int n, int ctas) {
  const NcclSymmetricPlan p(elements, es, n, ctas);
  std::vector<int> seen(elements, 0);
  for (int r = 0; r < n; ++r)
    for (int w = 0; w < p.warps(); ++w)
      for (std::uint64_t k = 0; k < p.hunks(r, w); ++k) {
        const auto h = p.hunk(r, w, k);
        ASSERT_GT(h.count, 0u);
        ASSERT_LE(h.count * es, NcclSymmetricPlan::kChunkBytes);
        for (std::uint64_t e = h.first; e < h.first + h.count; ++e) {
          ASSERT_LT(e, elements);
          ++seen[e];
          ASSERT_EQ(p.rank_of(e), r) << e;
          ASSERT_EQ(p.warp_of(e), w) << e;
        }
      }
  for (std::uint64_t e = 0; e < elements; ++e) ASSERT_EQ(seen[e], 1) << "element " << e;
}

TEST(NcclSymmetric, PlanTilesTheElements) {
  expect_tiled(1u << 18, 4, 4, 3);             // 1 MiB: whole chunks only
  expect_tiled((1u << 18) + 777, 4, 4, 3);     // and a tail
  expect_tiled(5000, 2, 2, 1);                 // fp16, the tail wraps the threads
  expect_tiled(100, 4, 8, 2);                  // less than a chunk
}

// Chunk k goes to global warp k mod W, numbered rank, CTA, warp: rank 0's
// CTA 0 warp 0 reads chunk 0, rank 1's chunk 1, rank 0's CTA 1 chunk n.
TEST(NcclSymmetric, ChunksRoundRobinOverRanksThenCtasThenWarps) {
  const NcclSymmetricPlan p(std::uint64_t{1} << 20, 4, 4, 3);
  const std::uint64_t chunk = NcclSymmetricPlan::kChunkBytes / 4;
  EXPECT_EQ(p.hunk(0, 0, 0).first, 0u);
  EXPECT_EQ(p.hunk(1, 0, 0).first, chunk);
  EXPECT_EQ(p.hunk(0, NcclSymmetricPlan::kWarpsPerCta, 0).first, 4u * chunk);  // CTA 1, warp 0
  EXPECT_EQ(p.hunk(0, 1, 0).first, 12u * chunk);                              // CTA 0, warp 1
  EXPECT_EQ(p.hunk(0, 0, 1).first, chunk * 4 * 3 * 16);                      // its next: W on
  EXPECT_EQ(p.hunk(0, 0, 1).count, chunk);
}

}  // namespace
}  // namespace fabricsim
