// Log-linear histogram of non-negative integers (latencies in ps).
// Values below 2^kSubBits are counted exactly; above, each power-of-two
// octave is split into 2^(kSubBits-1) equal buckets, so any reported
// percentile is within 1/2^(kSubBits-1) (0.4%) of a value that was recorded.
// Recording is O(1) and never allocates once the largest value has been seen.
#pragma once
#include <cstdint>
#include <vector>

namespace fabricsim {

class Histogram {
 public:
  static constexpr int kSubBits = 9;

  void record(std::uint64_t v);
  void clear();
  void merge(const Histogram& other);  // as if other's values were recorded here

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  // p in [0, 100]: the smallest recorded bucket holding at least p% of the
  // samples, reported as that bucket's midpoint clamped to [min, max].
  std::uint64_t percentile(double p) const;

  // Bucket geometry (exposed for tests).
  static std::size_t bucket_of(std::uint64_t v);
  static std::uint64_t bucket_low(std::size_t b);
  static std::uint64_t bucket_width(std::size_t b);

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  std::uint64_t min_ = 0;
  std::uint64_t max_ = 0;
  double sum_ = 0;  // double: exact to 2^53 ps (104 days) per sample sum, good enough for a mean
};

}  // namespace fabricsim
