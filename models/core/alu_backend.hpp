// Where a switch's reduction engine does its arithmetic: the C++ model of
// reduction_alu.hpp, or a simulation of the RTL (rtl/rtl_alu.hpp) plugged in
// by the caller. Both must produce the same bits; timing is the engine's and
// does not depend on the backend.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "models/core/reduction_alu.hpp"

namespace fabricsim {

class AluBackend {
 public:
  virtual ~AluBackend() = default;
  // acc[i] = acc[i] op in[i] over `bytes` bytes of elements of type t.
  virtual void accumulate(RedOp op, DType t, std::uint8_t* acc, const std::uint8_t* in,
                          std::size_t bytes) = 0;
  // Beats (ALU cycles with work) so far, for statistics; 0 for the model.
  virtual std::uint64_t beats() const { return 0; }
};

class ModelAlu final : public AluBackend {
 public:
  void accumulate(RedOp op, DType t, std::uint8_t* acc, const std::uint8_t* in,
                  std::size_t bytes) override {
    alu_accumulate(op, t, acc, in, bytes);
  }
};

// Makes one backend per switch (reduction.alu=rtl needs the caller to pass one).
using AluFactory = std::function<std::unique_ptr<AluBackend>()>;

}  // namespace fabricsim
