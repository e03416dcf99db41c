// The multimem extension: what turns a generic payload on a multicast
// object's address into an NVLS operation (PTX multimem.*):
//   kStore      multimem.st: a TLM_WRITE_COMMAND whose data the switch
//               writes to every member's copy of the object;
//   kLdReduce   multimem.ld_reduce: a TLM_READ_COMMAND answered with the
//               reduction (redop over dtype elements) of every member's copy,
//               computed by the switch's reduction engine.
// `group` may name the multicast group (object index) the address must fall
// in; -1 takes it from the address. Without this extension a write to a
// multicast address is a kStore; a read is refused (TLM_COMMAND_ERROR_RESPONSE).
#pragma once
#include <tlm>

#include "models/core/reduction_alu.hpp"

namespace fabricsim {

class MultimemExtension : public tlm::tlm_extension<MultimemExtension> {
 public:
  enum class Op { kStore, kLdReduce };

  MultimemExtension() = default;
  MultimemExtension(Op o, RedOp r, DType d, int g = -1) : op(o), redop(r), dtype(d), group(g) {}

  tlm::tlm_extension_base* clone() const override { return new MultimemExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const MultimemExtension&>(other);
  }

  Op op = Op::kStore;
  RedOp redop = RedOp::kSum;
  DType dtype = DType::kFp32;
  int group = -1;
};

// A fence: a TLM_IGNORE_COMMAND carrying this extension completes once no
// write or multimem.st of its endpoint is still on its way (writes are
// posted: they complete when accepted, long before they land). Its address
// and length are not used. Assumption: the fence learns of a landing at
// once; the acknowledgement's trip back is not modelled.
class FenceExtension : public tlm::tlm_extension<FenceExtension> {
 public:
  tlm::tlm_extension_base* clone() const override { return new FenceExtension(*this); }
  void copy_from(const tlm::tlm_extension_base&) override {}
};

}  // namespace fabricsim
