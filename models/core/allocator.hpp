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

struct RequestMatrix {
  RequestMatrix(int inputs, int outputs) : rows(static_cast<size_t>(inputs), PortSet(outputs)) {}
  int inputs() const { return static_cast<int>(rows.size()); }
  int outputs() const { return rows.empty() ? 0 : rows.front().size(); }
  void clear() {
    for (auto& r : rows) r.clear();
  }
  std::vector<PortSet> rows;  // rows[i].test(o): input i requests output o
};

struct Matching {
  Matching(int inputs, int outputs)
      : out_of_in(static_cast<size_t>(inputs), -1), in_of_out(static_cast<size_t>(outputs), -1) {}
  void reset() {
    for (auto& x : out_of_in) x = -1;
    for (auto& x : in_of_out) x = -1;
    size = 0;
  }
  void add(int in, int out) {
    out_of_in[static_cast<size_t>(in)] = out;
    in_of_out[static_cast<size_t>(out)] = in;
    ++size;
  }
  std::vector<int> out_of_in;  // -1: unmatched
  std::vector<int> in_of_out;  // -1: unmatched
  int size = 0;
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
