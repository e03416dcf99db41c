// What a reduction engine folded, and when: the hook behind --wave-rtl.
// A switch that has a FoldSink reports every fold of its engine (the two
// operands, the result, the engine port and the time), and the sink replays
// the folds it keeps through a traced RTL ALU (rtl/rtl_wave.hpp). Plain C++:
// the models do not know what the sink does with the folds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/core/reduction_alu.hpp"
#include "models/core/time.hpp"

namespace fabricsim {

class FoldSink {
 public:
  virtual ~FoldSink() = default;
  // Registers one engine port's ALU by hierarchical name, clocked every
  // `cycle_ps`; returns an id, or -1 when the sink leaves it out (then the
  // switch does not copy operands for it).
  virtual int alu(const std::string& name, Ps cycle_ps) = 0;
  // Whether a fold at time t would be kept (the window); lets the switch
  // skip the operand copy outside it.
  virtual bool wants(Ps t) const = 0;
  // acc_before op in = acc_after, `bytes` bytes of type t, folded at time
  // `t` for the engine entry whose low tag bits are `tag`.
  virtual void fold(int alu, Ps t, std::uint16_t tag, RedOp op, DType type,
                    const std::uint8_t* acc_before, const std::uint8_t* in,
                    const std::uint8_t* acc_after, std::size_t bytes) = 0;
  // End of run: write what was kept (throws on a write failure or when the
  // replayed RTL disagrees with the fold's result).
  virtual void finish(Ps end_of_run) = 0;
};

}  // namespace fabricsim
