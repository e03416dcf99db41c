// NCCL's NVLS all-reduce plan (models/core/nccl_nvls.hpp): channels tile the
// elements; the heads' pieces of every step tile each channel; the chunk
// shrinks as NCCL's calcCollChunking does per channel; the reduce warps and
// their hunks follow all_reduce.h and reduceCopy.
#include "models/core/nccl_nvls.hpp"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace fabricsim {
namespace {

NcclNvlsShape shape(int channels = 16) {
  NcclNvlsShape s;
  s.channels = channels;
  return s;
}

// Every element lies in exactly one piece of one (channel, step, head),
// channel_of finds its channel, and a step's elements are its pieces'.
void expect_tiled(const NcclNvlsPlan& p) {
  std::vector<int> seen(p.elements(), 0);
  std::uint64_t next = 0;
  for (int c = 0; c < p.channels(); ++c) {
    const auto ch = p.channel(c);
    EXPECT_EQ(ch.first, next);
    next = ch.first + ch.count;
    for (std::uint64_t s = 0; s < p.steps(c); ++s) {
      std::uint64_t in_step = 0;
      for (int h = 0; h < p.heads(); ++h) {
        const auto pc = p.piece(c, s, h);
        EXPECT_LE(pc.count, p.chunk_elements(c));
        in_step += pc.count;
        for (std::uint64_t e = pc.first; e < pc.first + pc.count; ++e) {
          ASSERT_GE(e, ch.first);
          ASSERT_LT(e, ch.first + ch.count);
          ++seen[e];
        }
      }
      EXPECT_EQ(p.step_elements(c, s), in_step) << "channel " << c << " step " << s;
    }
    EXPECT_EQ(p.step_elements(c, p.steps(c)), 0u);
  }
  EXPECT_EQ(next, p.elements());
  for (std::uint64_t e = 0; e < p.elements(); ++e) {
    ASSERT_EQ(seen[e], 1) << "element " << e;
    ASSERT_EQ(p.channel(p.channel_of(e)).first <= e, true);
  }
}

// 256 MiB of fp32: 16 channels of 16 MiB. The chunk is shrunk per channel:
// 16 MiB < 64 x heads x 128 KiB for 4 and 8 GPUs (64 KiB), not for 2.
TEST(NcclNvls, LargeCallChannelsAndChunks) {
  const std::uint64_t elements = (256u << 20) / 4;
  for (const auto& [n, chunk_kib, steps] :
       std::vector<std::tuple<int, std::uint64_t, std::uint64_t>>{
           {2, 128, 64}, {4, 64, 64}, {6, 64, 43}, {8, 64, 32}}) {
    const NcclNvlsPlan p(elements, 4, n, shape());
    ASSERT_EQ(p.channels(), 16) << n;
    for (int c = 0; c < 16; ++c) {
      EXPECT_EQ(p.channel(c).count, elements / 16);
      EXPECT_EQ(p.chunk_elements(c) * 4, chunk_kib << 10) << n;
      EXPECT_EQ(p.steps(c), steps) << n;
    }
  }
}

// 1 MiB on 4 GPUs: 16 channels of 64 KiB, 16 KiB chunks, one step each, a
// piece per head.
TEST(NcclNvls, OneMebibyte) {
  const NcclNvlsPlan p((1u << 20) / 4, 4, 4, shape());
  ASSERT_EQ(p.channels(), 16);
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(p.channel(c).count * 4, 65536u);
    EXPECT_EQ(p.chunk_elements(c) * 4, 16384u);
    EXPECT_EQ(p.steps(c), 1u);
    for (int h = 0; h < 4; ++h) EXPECT_EQ(p.piece(c, 0, h).count * 4, 16384u);
  }
  expect_tiled(p);
}

// 1 KiB: one cell, one channel; the last loop's chunk is aligned to 16 KiB,
// so head 0 reduces it all and the others' pieces are empty.
TEST(NcclNvls, SmallCallIsOneChannelAndHeadZero) {
  const NcclNvlsPlan p(256, 4, 4, shape());
  ASSERT_EQ(p.channels(), 1);
  EXPECT_EQ(p.steps(0), 1u);
  EXPECT_EQ(p.piece(0, 0, 0).count, 256u);
  for (int h = 1; h < 4; ++h) EXPECT_EQ(p.piece(0, 0, h).count, 0u);
  expect_tiled(p);
}

// Odd sizes, element sizes and GPU counts: channels and pieces tile the call.
TEST(NcclNvls, PiecesTileOddSizes) {
  for (const int n : {2, 3, 5, 7})
    for (const std::uint64_t bytes : {4ull, 100ull, 49156ull, 1000004ull, 5242884ull})
      for (const std::size_t es : {std::size_t{2}, std::size_t{4}}) {
        const NcclNvlsPlan p(bytes / es, es, n, shape(n == 5 ? 3 : 16));
        expect_tiled(p);
      }
}

// The reduce warps (all_reduce.h line 396): 7 up to 6 GPUs, 5 for more; one
// posts counters. A warp's hunk: unroll x 32 x 16 B for floating-point sums
// and 16-bit min/max, 2 x unroll x 32 x 4 B for 4-byte integers.
TEST(NcclNvls, ReduceWarpsAndHunks) {
  NcclNvlsShape s = shape();
  EXPECT_EQ(s.warps(2), 7);
  EXPECT_EQ(s.warps(6), 7);
  EXPECT_EQ(s.warps(8), 5);
  EXPECT_EQ(s.data_warps(4), 6);
  EXPECT_EQ(s.data_warps(8), 4);
  EXPECT_EQ(s.hunk_bytes(DType::kFp32, RedOp::kSum), 4096u);
  EXPECT_EQ(s.hunk_bytes(DType::kBf16, RedOp::kMax), 4096u);
  EXPECT_EQ(s.hunk_bytes(DType::kInt32, RedOp::kSum), 2048u);
  s.reduce_warps = 2;
  EXPECT_EQ(s.data_warps(8), 2);
  s.unroll = 4;
  EXPECT_EQ(s.hunk_bytes(DType::kFp32, RedOp::kSum), 2048u);
}

// The scatter and gather warps that copy (all_reduce.h lines 394-398): what
// the reduce warps leave of 20, halved, the scatter taking the odd one and
// giving one to its counters (it sends: prims_simple.h line 597); at least
// one each.
TEST(NcclNvls, ScatterAndGatherWarps) {
  NcclNvlsShape s = shape();
  EXPECT_EQ(s.scatter_warps(2), 6);
  EXPECT_EQ(s.gather_warps(6), 6);
  EXPECT_EQ(s.scatter_warps(8), 7);
  EXPECT_EQ(s.gather_warps(8), 7);
  s.reduce_warps = 20;
  EXPECT_EQ(s.scatter_warps(4), 1);
  EXPECT_EQ(s.gather_warps(4), 1);
}

}  // namespace
}  // namespace fabricsim
