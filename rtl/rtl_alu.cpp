#include "rtl/rtl_alu.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "Vreduction_alu64_bf16.h"
#include "Vreduction_alu64_fp16.h"
#include "Vreduction_alu64_fp32.h"
#include "Vreduction_alu64_int32.h"
#include "verilated.h"

namespace fabricsim {

namespace {
constexpr std::size_t kLanes = 64;
constexpr std::size_t kBeatBytes = kLanes * 4;
}  // namespace

// One Verilated 64-lane ALU built for one dtype. Made when a fold of that
// dtype first comes (a run reduces one dtype).
struct RtlAlu::Impl {
  virtual ~Impl() = default;
  // Streams `bytes` through the ALU, counting the beats it took.
  virtual void run(RedOp op, DType t, std::uint8_t* acc, const std::uint8_t* in,
                            std::size_t bytes, std::uint64_t& beats) = 0;
};

namespace {

template <class Model>
class Alu final : public RtlAlu::Impl {
 public:
  Alu() {
    top_.rst_n = 0;
    top_.in_valid = 0;
    top_.out_ready = 1;
    for (int i = 0; i < 2; ++i) edge();
    top_.rst_n = 1;
    edge();
  }
  ~Alu() override { top_.final(); }
  Alu(const Alu&) = delete;
  Alu& operator=(const Alu&) = delete;

  // Streams the payload in 256-B beats (the tail beat zero-padded: padding
  // lanes are computed and dropped), one beat offered per cycle, results
  // collected as they come out; little-endian bytes map to lanes directly.
  void run(RedOp op, DType t, std::uint8_t* acc, const std::uint8_t* in, std::size_t bytes,
           std::uint64_t& beats) override {
    auto& top = top_;
    const std::size_t n_beats = (bytes + kBeatBytes - 1) / kBeatBytes;
    std::size_t sent = 0, got = 0;
    top.in_dtype = static_cast<std::uint8_t>(t);
    top.in_op = static_cast<std::uint8_t>(op);
    top.out_ready = 1;
    std::uint32_t words[kLanes];
    // The previous call read its last result without clocking it out (one
    // clock saved per fold): that stale result leaves at our first edge.
    bool stale = stale_;
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
      if (took) {
        ++sent;
        ++beats;
      }
    }
    stale_ = true;
    top.in_valid = 0;
  }

 private:
  void edge() {
    top_.clk = 0;
    top_.eval();
    top_.clk = 1;
    top_.eval();
  }
  VerilatedContext ctx_;
  Model top_{&ctx_};
  bool stale_ = false;  // a result already read still sits at the output
};

}  // namespace

RtlAlu::RtlAlu() = default;
RtlAlu::~RtlAlu() = default;

void RtlAlu::accumulate(RedOp op, DType t, std::uint8_t* acc, const std::uint8_t* in,
                        std::size_t bytes) {
  if (bytes % element_bytes(t) != 0)
    throw std::invalid_argument("RtlAlu::accumulate: " + std::to_string(bytes) +
                                " bytes is not a whole number of " + to_string(t) + " elements");
  auto& impl = impls_[static_cast<std::size_t>(t)];
  if (!impl) {
    switch (t) {
      case DType::kFp32: impl = std::make_unique<Alu<Vreduction_alu64_fp32>>(); break;
      case DType::kFp16: impl = std::make_unique<Alu<Vreduction_alu64_fp16>>(); break;
      case DType::kBf16: impl = std::make_unique<Alu<Vreduction_alu64_bf16>>(); break;
      case DType::kInt32: impl = std::make_unique<Alu<Vreduction_alu64_int32>>(); break;
    }
  }
  impl->run(op, t, acc, in, bytes, beats_);
}

AluFactory RtlAlu::factory() {
  return [] { return std::make_unique<RtlAlu>(); };
}

}  // namespace fabricsim
