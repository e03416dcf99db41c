#include "models/core/nccl_nvls.hpp"

#include <algorithm>
#include <string>

#include "models/core/config.hpp"
#include "models/core/errors.hpp"
#include "models/core/int_math.hpp"

namespace fabricsim {

namespace {
// The planner's cells: 32 KiB of traffic, an all-reduce's traffic being
// twice its bytes (src/enqueue.cc MinTrafficPerChannel, ncclFuncTrafficPerByte).
constexpr std::uint64_t kMinTraffic = 32u << 10, kTrafficPerByte = 2;
// Chunks shrink by halves down to 16 KiB; the last loop's chunk is aligned to
// 16 KiB (src/enqueue.cc calcCollChunking, src/device/all_reduce.h).
constexpr std::uint64_t kChunkAlign = 16u << 10;
constexpr std::uint64_t kWarp = 32;
// NCCL_MAX_NTHREADS / WARP_SIZE: the NVLS kernel's warps per channel
// (NCCL_MAX_NTHREADS = 640, src/include/device.h line 90; src/device/all_reduce.h
// line 394).
constexpr int kChannelWarps = 20;
}  // namespace

NcclNvlsShape NcclNvlsShape::from(const Config& cfg) {
  NcclNvlsShape s;
  s.channels = static_cast<int>(cfg.gpu.nvls_channels);
  s.chunk_bytes = static_cast<std::uint64_t>(cfg.gpu.nvls_chunk_bytes);
  s.reduce_warps = static_cast<int>(cfg.gpu.nvls_reduce_warps);
  s.unroll = static_cast<std::uint64_t>(cfg.gpu.nvls_unroll);
  s.request_bytes = static_cast<std::uint64_t>(cfg.collective.payload_bytes);
  s.slots = static_cast<std::uint64_t>(cfg.gpu.slots);
  s.warp_copy_gbps = cfg.gpu.nvls_warp_copy_gbps;
  return s;
}

int NcclNvlsShape::warps(int n) const {
  if (reduce_warps > 0) return reduce_warps;
  return n <= 6 ? 7 : 5;  // src/device/all_reduce.h line 396
}

int NcclNvlsShape::data_warps(int n) const {
  const int w = warps(n);
  return w >= 3 ? w - 1 : w;  // NCCL_SIMPLE_EXTRA_GROUP_IF_NTHREADS_GE = 3 warps
}

// Non-registered buffers on one node, no broadcast warps: the scatter group
// has (20 - reduce + 1) / 2 warps, the gather group (20 - reduce) / 2
// (all_reduce.h lines 394-398). A group that sends (the scatter) and has 3
// warps or more gives one to posting its counters (prims_simple.h line
// 597, NCCL_SIMPLE_EXTRA_GROUP_IF_NTHREADS_GE); the gather only receives.
int NcclNvlsShape::scatter_warps(int n) const {
  const int w = std::max(1, (kChannelWarps - warps(n) + 1) / 2);
  return w >= 3 ? w - 1 : w;
}

int NcclNvlsShape::gather_warps(int n) const { return std::max(1, (kChannelWarps - warps(n)) / 2); }

std::uint64_t NcclNvlsShape::hunk_bytes(DType t, RedOp op) const {
  // LoadMultimem_BigPackSize (src/device/reduce_kernel.h): 16 B packs for
  // floating-point sums of types below 8 B and for 16-bit min/max; 4-byte
  // integers load one element, and reduceCopy then unrolls 16 / 4 / 2 = 2x.
  const std::size_t es = element_bytes(t);
  const bool floating = t != DType::kInt32;
  const bool wide = floating && (op == RedOp::kSum || es == 2);
  if (wide) return unroll * kWarp * 16;
  return unroll * (16 / es) / 2 * kWarp * es;
}

NcclNvlsPlan::NcclNvlsPlan(std::uint64_t elements, std::size_t element_bytes, int n,
                           const NcclNvlsShape& s)
    : n_(n), elements_(elements) {
  const std::uint64_t es = element_bytes;
  const std::uint64_t cell = align_up(div_up(kMinTraffic, kTrafficPerByte), 16);
  const std::uint64_t per_cell = cell / es;
  const std::uint64_t cells = std::max<std::uint64_t>(1, div_up(elements * es, cell));
  const auto nch = static_cast<std::uint64_t>(s.channels);
  const std::uint64_t traffic = std::max(kMinTraffic, elements * es * kTrafficPerByte);
  const std::uint64_t per_channel_traffic = align_up(traffic / nch, 16);
  const std::uint64_t cell_traffic = cell * kTrafficPerByte;
  std::uint64_t per = std::min(cells, div_up(per_channel_traffic, cell_traffic));
  const std::uint64_t lo = nch == 1 ? cells : per;
  std::uint64_t mid = (cells - lo) / per;
  std::uint64_t hi = (cells - lo) % per;
  const std::uint64_t used = 1 + mid + (hi != 0 ? 1 : 0);
  if (used > nch) {  // overflowed the channels: spread the rest over them
    mid = nch - 2;
    per = (cells - lo) / (mid + 1);
    hi = per + (cells - lo) % (mid + 1);
  }
  if (hi == 0 && mid != 0) {
    hi = per;
    --mid;
  }
  std::vector<std::uint64_t> counts;
  counts.push_back(lo * per_cell);
  for (std::uint64_t k = 0; k < mid; ++k) counts.push_back(per * per_cell);
  if (hi != 0) counts.push_back(hi * per_cell);
  counts.back() -= cells * per_cell - elements;  // the last channel takes the shortfall

  std::uint64_t at = 0;
  const auto heads = static_cast<std::uint64_t>(n);
  for (const std::uint64_t count : counts) {
    Channel c;
    c.range = {at, count};
    at += count;
    // calcCollChunking with nChannels = 1 and the channel's bytes.
    std::uint64_t chunk = s.chunk_bytes;
    const std::uint64_t bytes = count * es;
    if (bytes < 64 * heads * chunk && chunk > 65536) chunk = 65536;
    if (bytes < 8 * heads * chunk && chunk > 32768) chunk = 32768;
    if (bytes < 2 * heads * chunk && chunk > 16384) chunk = 16384;
    c.chunk = std::max<std::uint64_t>(1, chunk / es);
    const std::uint64_t loop = heads * c.chunk;
    const std::uint64_t rest = count % loop;
    c.last = rest == 0 ? 0 : align_up(div_up(rest, heads), kChunkAlign / es);
    c.steps = div_up(count, loop);
    ch_.push_back(c);
  }
}

NcclNvlsPlan::Range NcclNvlsPlan::piece(int c, std::uint64_t s, int h) const {
  const Channel& ch = ch_[static_cast<std::size_t>(c)];
  const std::uint64_t loop_first = s * static_cast<std::uint64_t>(n_) * ch.chunk;
  const std::uint64_t chunk = ch.range.count - loop_first < static_cast<std::uint64_t>(n_) * ch.chunk
                                  ? ch.last
                                  : ch.chunk;
  const std::uint64_t off = loop_first + static_cast<std::uint64_t>(h) * chunk;
  if (off >= ch.range.count) return {ch.range.first + ch.range.count, 0};
  return {ch.range.first + off, std::min(chunk, ch.range.count - off)};
}

std::uint64_t NcclNvlsPlan::step_elements(int c, std::uint64_t s) const {
  const Channel& ch = ch_[static_cast<std::size_t>(c)];
  const std::uint64_t loop = static_cast<std::uint64_t>(n_) * ch.chunk;
  const std::uint64_t loop_first = s * loop;
  if (loop_first >= ch.range.count) return 0;
  const std::uint64_t rest = ch.range.count - loop_first;
  // The last loop: its heads' pieces of ch.last each, the last one cut short.
  return rest < loop ? rest : loop;
}

std::uint64_t NcclNvlsPlan::removable_loops() const {
  std::uint64_t k = ~std::uint64_t{0};
  for (const Channel& c : ch_) k = std::min(k, c.steps == 0 ? 0 : c.steps - 1);
  return ch_.empty() ? 0 : k;
}

std::uint64_t NcclNvlsPlan::period_elements() const {
  std::uint64_t e = 0;
  for (const Channel& c : ch_) e += static_cast<std::uint64_t>(n_) * c.chunk;
  return e;
}

NcclNvlsPlan NcclNvlsPlan::shortened(std::uint64_t loops) const {
  if (loops > removable_loops())
    throw InvariantError("NcclNvlsPlan: " + std::to_string(loops) + " loops taken out of " +
                         std::to_string(removable_loops()) + " removable");
  NcclNvlsPlan p = *this;
  std::uint64_t at = 0;
  for (Channel& c : p.ch_) {
    c.range.first = at;
    c.range.count -= loops * static_cast<std::uint64_t>(n_) * c.chunk;
    c.steps -= loops;
    at += c.range.count;
  }
  p.elements_ = at;
  return p;
}

int NcclNvlsPlan::channel_of(std::uint64_t e) const {
  int lo = 0, hi = channels() - 1;
  while (lo < hi) {
    const int m = (lo + hi + 1) / 2;
    if (ch_[static_cast<std::size_t>(m)].range.first <= e)
      lo = m;
    else
      hi = m - 1;
  }
  return lo;
}

}  // namespace fabricsim
