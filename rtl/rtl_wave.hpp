// --wave-rtl: the reduction ALU's internals in an FST file, written by
// Verilator's own tracing (--trace-fst) next to the fabric's waveforms.
//
// The engines report their folds during the run (models/core/fold_trace.hpp);
// at the end, the folds inside the window are replayed in time order through
// one traced Verilated ALU per engine port (the hardware has one ALU per
// port), each beat on the switch clock from the first edge at or after the
// fold's simulated time. A fold that finds its ALU still busy (member-order
// folds that the engine applies together) starts on the next free cycle, so
// an RTL timestamp can trail the fabric's by a few cycles; the fabric's own
// trace (--wave) carries the engine's timing. Every replayed result is
// compared bit for bit with what the engine computed (the RTL co-simulation
// or the C++ model): a difference stops the run with the lane and values.
//
// Why replay instead of tracing the co-simulated ALU in place: one trace file
// needs time in order, and the engine folds at instants that interleave
// across ports and switches; the replay puts every ALU on one time axis.
// Memory: three copies of each traced payload until the end of the run, so
// limit a long run with --wave-window and --wave-scope.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/fold_trace.hpp"

namespace fabricsim {

class RtlWave final : public FoldSink {
 public:
  struct Options {
    std::string path;         // must end in .fst
    std::string scope = "*";  // glob: an ALU is traced when it matches the
                              // ALU's name or a signal below it
    Ps begin = 0;
    Ps end = kNever;
  };
  explicit RtlWave(Options options);
  ~RtlWave() override;
  RtlWave(const RtlWave&) = delete;
  RtlWave& operator=(const RtlWave&) = delete;

  int alu(const std::string& name, Ps cycle_ps) override;
  bool wants(Ps t) const override { return t >= options_.begin && t <= options_.end; }
  void fold(int alu, Ps t, std::uint16_t tag, RedOp op, DType type, const std::uint8_t* acc_before,
            const std::uint8_t* in, const std::uint8_t* acc_after, std::size_t bytes) override;
  void finish(Ps end_of_run) override;

  std::uint64_t folds() const { return folds_.size(); }
  std::uint64_t beats_checked() const { return beats_checked_; }
  std::size_t alus_traced() const { return alus_traced_; }

  struct Alu {
    std::string name;
    Ps cycle_ps;
  };
  struct Fold {
    int alu;
    Ps t;
    std::uint16_t tag;
    RedOp op;
    DType type;
    std::uint32_t bytes;
    std::size_t data;  // offset in data_: acc_before, in, acc_after
  };

 private:
  Options options_;
  std::vector<Alu> alus_;
  std::vector<Fold> folds_;
  std::vector<std::uint8_t> data_;
  std::uint64_t beats_checked_ = 0;
  std::size_t alus_traced_ = 0;
};

}  // namespace fabricsim
