// Separable switch allocators: plain C++, no SystemC.
//
// The switch builds a request matrix once per allocation cycle (rows: inputs,
// bits: outputs an input has an eligible packet for) and asks the allocator
// for a matching. Requests only name ports that are free this cycle, so every
// allocator returns a matching over the whole request matrix. Pointers and
// random streams live in the allocator object: nothing is global.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/core/port_set.hpp"
#include "models/core/rng.hpp"

namespace fabricsim {

enum class AllocatorKind {
  kISlip,       // McKeown 1999: request-grant-accept, pointers move on accept in iteration 1
  kPim,         // Anderson et al. 1993: random grant, random accept
  kRoundRobin,  // separable input-first, round-robin arbiters that move on every match
};

// Which inputs request which outputs at one allocation. Rows are written
// through mutable_row(), which notes the row: clear() and the allocators
// visit only the rows written since the last clear(), so an allocation with
// few requesting inputs costs little on a wide switch.
class RequestMatrix {
 public:
  RequestMatrix(int inputs, int outputs)
      : rows_(static_cast<size_t>(inputs), PortSet(outputs)), written_(inputs) {}
  int inputs() const { return static_cast<int>(rows_.size()); }
  int outputs() const { return rows_.empty() ? 0 : rows_.front().size(); }
  // row(i).test(o): input i requests output o.
  const PortSet& row(int i) const { return rows_[static_cast<size_t>(i)]; }
  PortSet& mutable_row(int i) {
    written_.set(i);
    return rows_[static_cast<size_t>(i)];
  }
  const std::vector<PortSet>& rows() const { return rows_; }
  // Rows written since the last clear() (the others are empty).
  const PortSet& written() const { return written_; }
  void clear() {
    written_.for_each([&](int i) { rows_[static_cast<size_t>(i)].clear(); });
    written_.clear();
  }

 private:
  std::vector<PortSet> rows_;
  PortSet written_;
};

struct Matching {
  Matching(int inputs, int outputs)
      : out_of_in(static_cast<size_t>(inputs), -1), in_of_out(static_cast<size_t>(outputs), -1) {
    matched_inputs.reserve(static_cast<size_t>(inputs));  // no allocation per call
  }
  void reset() {
    for (auto& x : out_of_in) x = -1;
    for (auto& x : in_of_out) x = -1;
    matched_inputs.clear();
  }
  void add(int in, int out) {
    out_of_in[static_cast<size_t>(in)] = out;
    in_of_out[static_cast<size_t>(out)] = in;
    matched_inputs.push_back(in);
  }
  int size() const { return static_cast<int>(matched_inputs.size()); }
  std::vector<int> out_of_in;  // -1: unmatched
  std::vector<int> in_of_out;  // -1: unmatched
  std::vector<int> matched_inputs;  // in the order they were matched (a wide switch matches few)
};

class Allocator {
 public:
  Allocator(int inputs, int outputs, int iterations)
      : inputs_(inputs), outputs_(outputs), iterations_(iterations) {}
  virtual ~Allocator() = default;
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // Resets `m` and fills it with a matching of `req`: every matched pair was
  // requested; no input or output is matched twice. Allocates no memory.
  virtual void allocate(const RequestMatrix& req, Matching& m) = 0;

  int inputs() const { return inputs_; }
  int outputs() const { return outputs_; }
  int iterations() const { return iterations_; }

 protected:
  int inputs_;
  int outputs_;
  int iterations_;
};

// `seed` feeds the random choices of PIM; the others ignore it.
std::unique_ptr<Allocator> make_allocator(AllocatorKind kind, int inputs, int outputs,
                                          int iterations, std::uint64_t seed);

}  // namespace fabricsim
