// NCCL's ring all-reduce plan (models/core/nccl_ring.hpp): what one rank
// sends is what the next receives, in the same order; every rank outputs
// every element once; the chunk an element belongs to is the rank that
// finishes its sum.
#include "models/core/nccl_ring.hpp"

#include "models/core/config.hpp"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace fabricsim {
namespace {

using Ops = std::vector<NcclRingPlan::Op>;

Ops ops_of(const NcclRingPlan& plan, int channel, int rank) {
  Ops out;
  for (NcclRingPlan::Cursor c(plan, channel, rank); !c.done(); c.next()) out.push_back(c.op());
  return out;
}

NcclRingShape shape(int channels, std::uint64_t chunk_bytes) {
  NcclRingShape s;
  s.channels = channels;
  s.threads = 512;
  s.chunk_bytes = chunk_bytes;
  s.min_slice_bytes = chunk_bytes / 2 / 32;
  return s;
}

// Sends of rank r and receives of rank r+1, op by op: the same slices.
void expect_consistent(const NcclRingPlan& plan) {
  const int n = plan.n();
  for (int ch = 0; ch < plan.channels(); ++ch) {
    std::vector<std::uint64_t> outputs(plan.elements(), 0);
    for (int r = 0; r < n; ++r) {
      Ops sends, recvs;
      for (const auto& op : ops_of(plan, ch, r)) {
        if (op.send) sends.push_back(op);
        if (op.final)
          for (std::uint64_t e = op.first; e < op.first + op.count; ++e) ++outputs[e];
        // Rank r finishes the sum of chunk r at step n-1.
        if (op.step == n - 1 && op.count > 0) {
          EXPECT_EQ(op.chunk, r);
          EXPECT_EQ(plan.chunk_of(op.first), r);
        }
        if (op.count > 0) {
          EXPECT_EQ(plan.chunk_of(op.first), op.chunk);
        }
      }
      for (const auto& op : ops_of(plan, ch, (r + 1) % n))
        if (op.recv) recvs.push_back(op);
      ASSERT_EQ(sends.size(), recvs.size()) << "channel " << ch << " rank " << r;
      for (std::size_t i = 0; i < sends.size(); ++i) {
        EXPECT_EQ(sends[i].first, recvs[i].first);
        EXPECT_EQ(sends[i].count, recvs[i].count);
        EXPECT_EQ(sends[i].step + 1, recvs[i].step);
      }
    }
    for (std::uint64_t e = plan.channel_begin(ch); e < plan.channel_begin(ch + 1); ++e)
      ASSERT_EQ(outputs[e], static_cast<std::uint64_t>(n)) << "element " << e;
  }
}

TEST(NcclRing, SendsMatchReceivesAndEveryRankOutputsEveryElementOnce) {
  for (const auto& [elements, n, channels] :
       std::vector<std::tuple<std::uint64_t, int, int>>{
           {256, 4, 24}, {1, 2, 24}, {5000, 3, 2}, {1 << 20, 4, 3}, {3'000'001, 6, 5}}) {
    const NcclRingPlan plan(elements, 4, n, shape(channels, 64 << 10));
    expect_consistent(plan);
  }
}

TEST(NcclRing, DropsChannelsBelowThreadsTimes64BytesEach) {
  // 24 channels x 512 threads x 64 B = 768 KiB: below, one channel fewer per 32 KiB.
  EXPECT_EQ(NcclRingPlan(1024 / 4, 4, 4, shape(24, 2 << 20)).channels(), 1);
  EXPECT_EQ(NcclRingPlan((96 << 10) / 4, 4, 4, shape(24, 2 << 20)).channels(), 3);
  EXPECT_EQ(NcclRingPlan((768 << 10) / 4, 4, 4, shape(24, 2 << 20)).channels(), 24);
  EXPECT_EQ(NcclRingPlan((256 << 20) / 4, 4, 4, shape(24, 2 << 20)).channels(), 24);
}

TEST(NcclRing, FullLoopsUseWholeChunksInHalvesAndTheLastLoopShrinks) {
  // One channel, n = 2, 2 MiB chunks: 5 MiB = one full loop (4 MiB) and a
  // last loop of 1 MiB in two chunks of 512 KiB, each in two slices of
  // 256 KiB (half a chunk, and above the 32 KiB floor).
  const NcclRingPlan plan((5 << 20) / 4, 4, 2, shape(1, 2 << 20));
  const Ops ops = ops_of(plan, 0, 0);
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops[0].count, (1u << 20) / 4);  // a slice: half of a 2 MiB chunk
  EXPECT_EQ(ops.back().count, (256u << 10) / 4);
  // Each loop: 2n - 1 = 3 steps x 2 slices.
  EXPECT_EQ(ops.size(), 12u);
  // A small last loop: slices no smaller than 1/32 of the nominal 1 MiB.
  const NcclRingPlan small((4 << 20) + (64 << 10), 1, 2, shape(1, 2 << 20));
  EXPECT_EQ(ops_of(small, 0, 0).back().count, 32u << 10);
}

TEST(NcclRing, AnEmptyChunkStillPassesOneEmptySlice) {
  // 5 elements over 4 ranks: chunks of 4 elements (16 B aligned), the rest empty.
  const NcclRingPlan plan(5, 4, 4, shape(1, 2 << 20));
  const Ops ops = ops_of(plan, 0, 0);
  EXPECT_EQ(ops.size(), 7u);  // 2n - 1 steps, one slice each
  int empty = 0;
  for (const auto& op : ops) empty += op.count == 0;
  EXPECT_GT(empty, 0);
  expect_consistent(plan);
}

// NCCL's defaults, per protocol (NVIDIA/nccl src/init.cc, device.h,
// collectives.h): Simple chunks of 4 steps of 512 KiB in 2 slices; LL one
// step of 64 KiB, half of it data; LL128 one step of 614400 B, 120/128 data.
TEST(NcclRing, ShapesPerProtocolFromTheDefaults) {
  const Config cfg = load_config("", {});
  const NcclRingShape simple = NcclRingShape::from(cfg, Protocol::kSimple);
  EXPECT_EQ(simple.chunk_bytes, 2u << 20);
  EXPECT_EQ(simple.slices_per_chunk, 2u);
  EXPECT_EQ(simple.min_slice_bytes, 32u << 10);
  EXPECT_EQ(simple.window, 4u);
  EXPECT_FALSE(simple.per_line);
  const NcclRingShape ll = NcclRingShape::from(cfg, Protocol::kLl);
  EXPECT_EQ(ll.chunk_bytes, 32u << 10);
  EXPECT_EQ(ll.window, 8u);
  EXPECT_EQ(ll.data_num * 2, ll.data_den);
  EXPECT_TRUE(ll.per_line);
  const NcclRingShape ll128 = NcclRingShape::from(cfg, Protocol::kLl128);
  EXPECT_EQ(ll128.chunk_bytes, 576000u);
  EXPECT_EQ(ll128.threads, 640);
  // Channels: LL's threshold is 8 B per thread x the ranks (24 x 512 x 8 x 4
  // = 384 KiB on 4 GPUs), LL128's 8 B per thread (24 x 640 x 8 = 120 KiB).
  EXPECT_EQ(NcclRingPlan((384u << 10) / 4, 4, 4, ll).channels(), 24);
  EXPECT_EQ(NcclRingPlan((384u << 10) / 4 - 4, 4, 4, ll).channels(), 23);
  EXPECT_EQ(NcclRingPlan((120u << 10) / 4, 4, 4, ll128).channels(), 24);
  // One slice per chunk.
  const NcclRingPlan plan((1u << 20) / 4, 4, 4, ll);
  expect_consistent(plan);
}

// A CTA's copy cost and a kernel's start per protocol: gpu.channel_gbps for
// every protocol; with LL the trip's bound (512 threads x 8 B per trip) when
// it is the slower, and the trip itself; each protocol its own start (LL
// none: the launch is an LL kernel's).
TEST(NcclRing, CopyCostTripAndStartPerProtocol) {
  const Config none = load_config("", {});
  for (const Protocol p : {Protocol::kSimple, Protocol::kLl, Protocol::kLl128}) {
    const NcclRingShape s = NcclRingShape::from(none, p);
    EXPECT_EQ(s.ps_per_byte, 0.0);
    EXPECT_EQ(s.trip_ps, 0u);
    EXPECT_EQ(s.start_ps, 0u);
  }
  // 4096 ns per trip of 4 KiB: 1 GB/s, slower than the CTA's 2 GB/s.
  const Config slow_trip = load_config("", {"gpu.channel_gbps=2", "gpu.ll_trip_ns=4096",
                                            "gpu.simple_start_ns=3000", "gpu.ll128_start_ns=4000"});
  const NcclRingShape simple = NcclRingShape::from(slow_trip, Protocol::kSimple);
  const NcclRingShape ll = NcclRingShape::from(slow_trip, Protocol::kLl);
  const NcclRingShape ll128 = NcclRingShape::from(slow_trip, Protocol::kLl128);
  EXPECT_DOUBLE_EQ(simple.ps_per_byte, 500.0);
  EXPECT_DOUBLE_EQ(ll.ps_per_byte, 1000.0);
  EXPECT_DOUBLE_EQ(ll128.ps_per_byte, 500.0);
  EXPECT_EQ(simple.trip_ps, 0u);
  EXPECT_EQ(ll.trip_ps, 4096000u);
  EXPECT_EQ(ll128.trip_ps, 0u);
  EXPECT_EQ(simple.start_ps, 3000000u);
  EXPECT_EQ(ll.start_ps, 0u);
  EXPECT_EQ(ll128.start_ps, 4000000u);
  // 512 ns per trip: 8 GB/s, faster than the CTA's 2 GB/s, which binds.
  const Config fast_trip = load_config("", {"gpu.channel_gbps=2", "gpu.ll_trip_ns=512"});
  const NcclRingShape ll_fast = NcclRingShape::from(fast_trip, Protocol::kLl);
  EXPECT_DOUBLE_EQ(ll_fast.ps_per_byte, 500.0);
  EXPECT_EQ(ll_fast.trip_ps, 512000u);
}

}  // namespace
}  // namespace fabricsim
