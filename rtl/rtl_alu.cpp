#include "rtl/rtl_alu.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "Vreduction_alu64.h"
#include "verilated.h"

namespace fabricsim {

namespace {
constexpr std::size_t kLanes = 64;
constexpr std::size_t kBeatBytes = kLanes * 4;
}  // namespace

struct RtlAlu::Impl {
  VerilatedContext ctx;
  Vreduction_alu64 top{&ctx};
  bool stale = false;  // a result already read still sits at the output
  Impl() {
    top.rst_n = 0;
    top.in_valid = 0;
    top.out_ready = 1;
    for (int i = 0; i < 2; ++i) edge();
    top.rst_n = 1;
    edge();
  }
  ~Impl() { top.final(); }
  void edge() {
    top.clk = 0;
    top.eval();
    top.clk = 1;
    top.eval();
  }
};

RtlAlu::RtlAlu() : impl_(std::make_unique<Impl>()) {}
RtlAlu::~RtlAlu() = default;

// Streams the payload in 256-B beats (the tail beat zero-padded: padding
// lanes are computed and dropped), one beat offered per cycle, results
// collected as they come out; little-endian bytes map to lanes directly.
void RtlAlu::accumulate(RedOp op, DType t, std::uint8_t* acc, const std::uint8_t* in,
                        std::size_t bytes) {
  if (bytes % element_bytes(t) != 0)
    throw std::invalid_argument("RtlAlu::accumulate: " + std::to_string(bytes) +
                                " bytes is not a whole number of " + to_string(t) + " elements");
  auto& top = impl_->top;
  const std::size_t n_beats = (bytes + kBeatBytes - 1) / kBeatBytes;
  std::size_t sent = 0, got = 0;
  top.in_dtype = static_cast<std::uint8_t>(t);
  top.in_op = static_cast<std::uint8_t>(op);
  top.out_ready = 1;
  std::uint32_t words[kLanes];
  // The previous call read its last result without clocking it out (one
  // clock saved per fold): that stale result leaves at our first edge.
  bool stale = impl_->stale;
  while (got < n_beats) {
    top.in_valid = sent < n_beats;
    if (sent < n_beats) {
      const std::size_t off = sent * kBeatBytes, len = std::min(kBeatBytes, bytes - off);
      std::memset(words, 0, sizeof words);
      std::memcpy(words, acc + off, len);
      for (std::size_t l = 0; l < kLanes; ++l) top.in_a[l] = words[l];
      std::memset(words, 0, sizeof words);
      std::memcpy(words, in + off, len);
      for (std::size_t l = 0; l < kLanes; ++l) top.in_b[l] = words[l];
      top.in_tag = static_cast<std::uint16_t>(sent);
    }
    top.clk = 0;
    top.eval();
    const bool took = top.in_valid && top.in_ready;
    if (top.out_valid && top.out_ready && !stale) {
      if (top.out_tag != static_cast<std::uint16_t>(got))
        throw std::logic_error("RtlAlu: beat " + std::to_string(top.out_tag) +
                               " came out in place of " + std::to_string(got));
      for (std::size_t l = 0; l < kLanes; ++l) words[l] = top.out_y[l];
      const std::size_t off = got * kBeatBytes;
      std::memcpy(acc + off, words, std::min(kBeatBytes, bytes - off));
      if (++got == n_beats) break;  // leave it in the ALU: the next call clocks it out
    }
    stale = false;
    top.clk = 1;
    top.eval();
    ++cycles_;
    if (took) {
      ++sent;
      ++beats_;
    }
  }
  impl_->stale = true;
  top.in_valid = 0;
}

AluFactory RtlAlu::factory() {
  return [] { return std::make_unique<RtlAlu>(); };
}

}  // namespace fabricsim
