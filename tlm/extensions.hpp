// The extensions of fabricsim's TLM faces (docs/tlm.md): multimem
// operations, atomics and fences.
//
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

#include <cstdint>

#include "models/core/reduction_alu.hpp"

namespace fabricsim {

class MultimemExtension : public tlm::tlm_extension<MultimemExtension> {
 public:
  enum class Op { kStore, kLdReduce };

  MultimemExtension() = default;
  MultimemExtension(Op o, RedOp r, DType d, int g = -1) : op(o), redop(r), dtype(d), group(g) {}

  tlm::tlm_extension_base* clone() const override { return new MultimemExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-static-cast-downcast): TLM copies like to like
    *this = static_cast<const MultimemExtension&>(other);
  }

  Op op = Op::kStore;
  RedOp redop = RedOp::kSum;
  DType dtype = DType::kFp32;
  int group = -1;
};

// An atomic read-modify-write at the target GPU's memory (one element): a
// TLM_WRITE_COMMAND whose data is the operand (for kCas: the compare value,
// then the new value) and is overwritten with the element's old value when
// the transaction completes. kAdd / kMin / kMax use the reduction ALU's
// arithmetic on `dtype`; kExch and kCas compare and copy bits. The
// operation runs at the target when the request arrives, between the
// fabric's other accesses to that memory.
class AtomicExtension : public tlm::tlm_extension<AtomicExtension> {
 public:
  enum class Op : std::uint8_t { kAdd, kMin, kMax, kExch, kCas };

  AtomicExtension() = default;
  AtomicExtension(Op o, DType d) : op(o), dtype(d) {}

  tlm::tlm_extension_base* clone() const override { return new AtomicExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-static-cast-downcast): TLM copies like to like
    *this = static_cast<const AtomicExtension&>(other);
  }

  Op op = Op::kAdd;
  DType dtype = DType::kInt32;
};

// A fence: a TLM_IGNORE_COMMAND carrying this extension completes once no
// write or multimem.st of its endpoint is still on its way (writes are
// posted: they complete when accepted, long before they land). Its address
// and length are not used. Assumption: the fence learns of a landing at
// once; the acknowledgement's trip back is not modelled.
class FenceExtension : public tlm::tlm_extension<FenceExtension> {
 public:
  tlm::tlm_extension_base* clone() const override { return new FenceExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& /*other*/) override {}
};

}  // namespace fabricsim
