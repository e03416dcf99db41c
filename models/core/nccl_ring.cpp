#include "models/core/nccl_ring.hpp"

#include <algorithm>
#include <string>

#include "models/core/config.hpp"
#include "models/core/errors.hpp"
#include "models/core/int_math.hpp"
#include "models/core/time.hpp"

namespace fabricsim {

namespace {
// Per-thread thresholds: NCCL drops a channel while the message is below
// channels x threads x 64 B (Simple), 8 B (LL128), 8 B x ranks (ring LL)
// (NVIDIA/nccl src/enqueue.cc, src/graph/tuning.cc).
constexpr std::uint64_t kSimpleThreadBytes = 64, kLlThreadBytes = 8;
// A ring all-reduce chunk is 4 steps, its slice 2 with Simple; one step with
// LL and LL128 (src/include/collectives.h, src/enqueue.cc calcCollChunking).
constexpr std::uint64_t kChunkSteps = 4, kSliceSteps = 2;
}  // namespace

NcclRingShape NcclRingShape::from(const Config& cfg, Protocol p) {
  NcclRingShape s;
  s.channels = static_cast<int>(cfg.collective.channels);
  s.threads = static_cast<int>(cfg.gpu.threads);
  s.ps_per_byte = cfg.gpu.channel_gbps > 0 ? 1000.0 / cfg.gpu.channel_gbps : 0;
  const auto slots = static_cast<std::uint64_t>(cfg.gpu.slots);
  if (p == Protocol::kLl || p == Protocol::kLl128) {
    const bool ll = p == Protocol::kLl;
    // A line of 16 B carries 8 of data (LL); one of 128 B carries 120 (LL128).
    s.data_num = ll ? 1 : 120;
    s.data_den = ll ? 2 : 128;
    const auto buffer =
        static_cast<std::uint64_t>(ll ? cfg.gpu.ll_buffer_bytes : cfg.gpu.ll128_buffer_bytes);
    s.chunk_bytes = buffer / slots * s.data_num / s.data_den;
    s.slices_per_chunk = 1;
    s.min_slice_bytes = 0;
    s.thread_bytes = kLlThreadBytes;
    s.thread_bytes_per_rank = ll;
    if (!ll) s.threads = static_cast<int>(cfg.gpu.ll128_threads);
    if (ll && cfg.gpu.ll_trip_ns > 0) {  // a thread moves one line (8 B of data) per trip
      s.trip_ps = ns_to_ps(cfg.gpu.ll_trip_ns);
      s.ps_per_byte = std::max(s.ps_per_byte, static_cast<double>(s.trip_ps) /
                                                  (static_cast<double>(s.threads) * 8.0));
    }
    s.start_ps = ll ? 0 : ns_to_ps(cfg.gpu.ll128_start_ns);
    s.window = slots;
    s.per_line = true;
    return s;
  }
  const auto step = static_cast<std::uint64_t>(cfg.gpu.buffer_bytes) / slots;
  s.chunk_bytes = step * kChunkSteps;
  s.slices_per_chunk = kChunkSteps / kSliceSteps;
  s.thread_bytes = kSimpleThreadBytes;
  s.min_slice_bytes = step * kSliceSteps / 32;  // 1/32 of the nominal slice
  s.window = slots / kSliceSteps;
  s.start_ps = ns_to_ps(cfg.gpu.simple_start_ns);
  return s;
}

NcclRingPlan::NcclRingPlan(std::uint64_t elements, std::size_t element_bytes, int n,
                           const NcclRingShape& s)
    : n_(n),
      align_(std::max<std::uint64_t>(1, 16 / element_bytes)),
      chunk_(std::max<std::uint64_t>(1, s.chunk_bytes / element_bytes)),
      slices_per_chunk_(s.slices_per_chunk),
      // Simple: a slice is at least 1/32 of the nominal one (src/device/prims_simple.h).
      min_slice_(std::max<std::uint64_t>(1, s.min_slice_bytes / element_bytes)) {
  const std::uint64_t bytes = elements * element_bytes;
  const std::uint64_t per_thread =
      s.thread_bytes * (s.thread_bytes_per_rank ? static_cast<std::uint64_t>(n) : 1);
  auto c = static_cast<std::uint64_t>(s.channels);
  while (c > 1 && bytes < c * static_cast<std::uint64_t>(s.threads) * per_thread) --c;
  const std::uint64_t per = align_up(div_up(std::max<std::uint64_t>(1, elements), c), align_);
  const std::uint64_t used = std::max<std::uint64_t>(1, div_up(elements, per));
  begin_.assign(used + 1, 0);
  for (std::uint64_t k = 0; k <= used; ++k) begin_[k] = std::min(k * per, elements);
}

std::uint64_t NcclRingPlan::removable_loops() const {
  const std::uint64_t loop = static_cast<std::uint64_t>(n_) * chunk_;
  std::uint64_t k = ~std::uint64_t{0};
  for (int c = 0; c < channels(); ++c) {
    const std::uint64_t size = channel_begin(c + 1) - channel_begin(c);
    k = std::min(k, size == 0 ? 0 : (size - 1) / loop);  // keep the last loop
  }
  return channels() > 0 ? k : 0;
}

NcclRingPlan NcclRingPlan::shortened(std::uint64_t loops) const {
  if (loops > removable_loops())
    throw InvariantError("NcclRingPlan: " + std::to_string(loops) + " loops taken out of " +
                         std::to_string(removable_loops()) + " removable");
  NcclRingPlan p = *this;
  const std::uint64_t cut = loops * static_cast<std::uint64_t>(n_) * chunk_;
  for (std::size_t c = 1; c < begin_.size(); ++c)
    p.begin_[c] = p.begin_[c - 1] + (begin_[c] - begin_[c - 1]) - cut;
  return p;
}

int NcclRingPlan::channel_of(std::uint64_t e) const {
  const auto it = std::upper_bound(begin_.begin(), begin_.end() - 1, e);
  return static_cast<int>(it - begin_.begin()) - 1;
}

std::uint64_t NcclRingPlan::loop_chunk(std::uint64_t loop, std::uint64_t end) const {
  const std::uint64_t rest = end - loop;
  const auto n = static_cast<std::uint64_t>(n_);
  if (rest >= n * chunk_) return chunk_;
  return std::min(chunk_, align_up(div_up(rest, n), align_));
}

std::uint64_t NcclRingPlan::loop_slice(std::uint64_t chunk) const {
  return std::max(align_up(div_up(chunk, slices_per_chunk_), align_), min_slice_);
}

int NcclRingPlan::chunk_of(std::uint64_t e) const {
  const int c = channel_of(e);
  const std::uint64_t b = channel_begin(c), end = channel_begin(c + 1);
  const std::uint64_t loop_size = static_cast<std::uint64_t>(n_) * chunk_;
  const std::uint64_t loop = b + (e - b) / loop_size * loop_size;
  return static_cast<int>((e - loop) / loop_chunk(loop, end));
}

NcclRingPlan::Cursor::Cursor(const NcclRingPlan& plan, int channel, int rank)
    : plan_(&plan),
      rank_(rank),
      begin_(plan.channel_begin(channel)),
      end_(plan.channel_begin(channel + 1)),
      loop_(begin_),
      done_(plan.n() < 2 || begin_ == end_) {
  if (!done_) enter_loop();
}

void NcclRingPlan::Cursor::enter_loop() {
  chunk_ = plan_->loop_chunk(loop_, end_);
  slice_ = plan_->loop_slice(chunk_);
  step_ = 0;
  enter_step();
}

void NcclRingPlan::Cursor::enter_step() {
  const int n = plan_->n();
  int k = 0;
  if (step_ <= n - 2)
    k = rank_ - step_ - 1;  // reduce-scatter
  else if (step_ <= 2 * n - 3)
    k = rank_ - (step_ - n + 1);  // all-gather
  else
    k = rank_ + 1;  // the last receive
  k = ((k % n) + n) % n;
  op_.chunk = k;
  cbegin_ = std::min(loop_ + static_cast<std::uint64_t>(k) * chunk_, end_);
  cend_ = std::min(cbegin_ + chunk_, end_);
  at_ = cbegin_;
  set_op();
}

void NcclRingPlan::Cursor::set_op() {
  const int n = plan_->n();
  op_.step = step_;
  op_.first = at_;
  op_.count = std::min(slice_, cend_ - at_);
  op_.recv = step_ >= 1;
  op_.send = step_ <= 2 * n - 3;
  op_.final = step_ >= n - 1;
}

void NcclRingPlan::Cursor::next() {
  at_ += slice_;
  if (at_ < cend_) {
    set_op();
    return;
  }
  if (++step_ <= 2 * plan_->n() - 2) {
    enter_step();
    return;
  }
  loop_ += static_cast<std::uint64_t>(plan_->n()) * chunk_;
  if (loop_ >= end_) {
    done_ = true;
    return;
  }
  enter_loop();
}

}  // namespace fabricsim
