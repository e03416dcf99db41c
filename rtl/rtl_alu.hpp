// The reduction engine's arithmetic done by the Verilated RTL
// (rtl/reduction_alu.sv, LANES=64: 256 B per beat, STAGES=1, one model per
// dtype with only that dtype's logic). It is clocked only while it has
// work: accumulate() streams the payload through in beats and clocks until
// the last result is at the output (it leaves at the next fold's first
// edge), then the ALU sits idle (no SystemC clock, no events). The engine's
// timing is the model's (reduction.pipeline_cycles); this backend supplies
// the bits.
#pragma once
#include <cstdint>
#include <memory>

#include "models/core/alu_backend.hpp"

namespace fabricsim {

class RtlAlu final : public AluBackend {
 public:
  RtlAlu();
  ~RtlAlu() override;
  RtlAlu(const RtlAlu&) = delete;
  RtlAlu& operator=(const RtlAlu&) = delete;
  void accumulate(RedOp op, DType t, std::uint8_t* acc, const std::uint8_t* in,
                  std::size_t bytes) override;
  std::uint64_t beats() const override { return beats_; }

  static AluFactory factory();

  struct Impl;  // one Verilated ALU (keeps Verilator's headers out of our callers)

 private:
  std::unique_ptr<Impl> impls_[4];  // [dtype], made on first use
  std::uint64_t beats_ = 0;
};

}  // namespace fabricsim
