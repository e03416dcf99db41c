#include "models/core/histogram.hpp"

#include <cmath>

namespace fabricsim {

namespace {
constexpr std::uint64_t kM = std::uint64_t{1} << Histogram::kSubBits;  // exact region
constexpr std::uint64_t kHalf = kM / 2;                                // buckets per octave
}  // namespace

std::size_t Histogram::bucket_of(std::uint64_t v) {
  if (v < kM) return static_cast<std::size_t>(v);
  const int msb = 63 - __builtin_clzll(v);
  const int k = msb - kSubBits + 1;  // bucket width 2^k
  return static_cast<std::size_t>(static_cast<std::uint64_t>(k) * kHalf + (v >> k));
}

std::uint64_t Histogram::bucket_width(std::size_t b) {
  if (b < kM) return 1;
  const std::uint64_t k = (b - kM) / kHalf + 1;
  return std::uint64_t{1} << k;
}

std::uint64_t Histogram::bucket_low(std::size_t b) {
  if (b < kM) return b;
  const std::uint64_t k = (b - kM) / kHalf + 1;
  return (b - k * kHalf) << k;
}

void Histogram::record(std::uint64_t v) {
  const std::size_t b = bucket_of(v);
  if (b >= counts_.size()) counts_.resize(b + 1, 0);
  ++counts_[b];
  if (count_ == 0 || v < min_) min_ = v;
  if (v > max_) max_ = v;
  ++count_;
  sum_ += static_cast<double>(v);
}

void Histogram::clear() { *this = Histogram(); }

void Histogram::merge(const Histogram& o) {
  if (o.count_ == 0) return;
  if (o.counts_.size() > counts_.size()) counts_.resize(o.counts_.size(), 0);
  for (std::size_t b = 0; b < o.counts_.size(); ++b) counts_[b] += o.counts_[b];
  if (count_ == 0 || o.min_ < min_) min_ = o.min_;
  if (o.max_ > max_) max_ = o.max_;
  count_ += o.count_;
  sum_ += o.sum_;
}

std::uint64_t Histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  if (p <= 0) return min_;
  if (p >= 100) return max_;
  // rank = ceil(p/100 * count), in integers (p to 1e-6 %): floating point
  // would turn 99.9% of 1000 into 1000.0000000000001 and report the maximum.
  __extension__ using U128 = unsigned __int128;
  const auto p_micro = static_cast<U128>(std::llround(p * 1e6));
  const U128 scale = 100000000;  // 100 % in units of 1e-6 %
  auto rank = static_cast<std::uint64_t>((p_micro * count_ + scale - 1) / scale);
  if (rank < 1) rank = 1;
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen >= rank) {
      std::uint64_t v = bucket_low(b) + (bucket_width(b) - 1) / 2;
      if (v < min_) v = min_;
      if (v > max_) v = max_;
      return v;
    }
  }
  return max_;
}

}  // namespace fabricsim
