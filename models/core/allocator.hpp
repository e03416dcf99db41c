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

// Which inputs request which outputs at one allocation, stored by rows
// (input -> outputs) or by columns (output -> inputs), whichever the caller
// builds more cheaply: a switch with VOQs sees its requests per output and
// writes whole columns with word operations. Lines (rows or columns) are
// written through mutable_row() / mutable_col() or set(), which note the
// line: clear() and the allocators visit only the lines written since the
// last clear(), so an allocation with few requests costs little on a wide
// switch. row()/rows()/mutable_row() are for a row-major matrix,
// col()/mutable_col() for a column-major one.
class RequestMatrix {
 public:
  enum class Major { kRows, kCols };
  RequestMatrix(int inputs, int outputs, Major major = Major::kRows)
      : major_(major),
        inputs_(inputs),
        outputs_(outputs),
        lines_(static_cast<size_t>(major == Major::kRows ? inputs : outputs),
               PortSet(major == Major::kRows ? outputs : inputs)),
        written_(major == Major::kRows ? inputs : outputs) {}
  Major major() const { return major_; }
  int inputs() const { return inputs_; }
  int outputs() const { return outputs_; }
  // row(i).test(o): input i requests output o.
  const PortSet& row(int i) const { return lines_[static_cast<size_t>(i)]; }
  PortSet& mutable_row(int i) { return mutable_line(i); }
  const std::vector<PortSet>& rows() const { return lines_; }
  // col(o).test(i): input i requests output o.
  const PortSet& col(int o) const { return lines_[static_cast<size_t>(o)]; }
  PortSet& mutable_col(int o) { return mutable_line(o); }
  void set(int i, int o) {
    if (major_ == Major::kRows)
      mutable_line(i).set(o);
    else
      mutable_line(o).set(i);
  }
  bool test(int i, int o) const { return major_ == Major::kRows ? row(i).test(o) : col(o).test(i); }
  // Lines written since the last clear() (the others are empty): rows or columns.
  const PortSet& written() const { return written_; }
  void clear() {
    written_.for_each([&](int k) { lines_[static_cast<size_t>(k)].clear(); });
    written_.clear();
  }

 private:
  PortSet& mutable_line(int k) {
    written_.set(k);
    return lines_[static_cast<size_t>(k)];
  }
  Major major_;
  int inputs_;
  int outputs_;
  std::vector<PortSet> lines_;
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
