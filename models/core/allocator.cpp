// Separable allocators over PortSet words. Every scratch set is sized in the
// constructor and only cleared or overwritten in allocate(), so the per-cycle
// path never touches the heap: the switch calls it every allocation cycle.
#include "models/core/allocator.hpp"

#include "models/core/bit_matrix.hpp"

#include <stdexcept>
#include <string>

namespace fabricsim {
namespace {

// Distinct from the streams other users derive from the same seed, so adding
// a PIM allocator does not perturb traffic generation and vice versa.
constexpr std::uint64_t kPimStream = 0x50494D5F414C4C4FULL;  // "PIM_ALLO"

// A request matrix of the wrong shape would index past our scratch sets
// (its rows all have the width it was built with).
void check_shapes(const Allocator& a, const RequestMatrix& req, const Matching& m) {
  const bool ok = req.inputs() == a.inputs() && req.outputs() == a.outputs() &&
                  m.out_of_in.size() == static_cast<size_t>(a.inputs()) &&
                  m.in_of_out.size() == static_cast<size_t>(a.outputs());
  if (!ok) throw std::invalid_argument("allocate: request matrix or matching has the wrong shape");
}

// Shared bookkeeping of the iterative schemes: which ports are still free, and
// per-port scratch sets that are rebuilt from the request rows every call.
class IterativeAllocator : public Allocator {
 public:
  IterativeAllocator(int inputs, int outputs, int iterations)
      : Allocator(inputs, outputs, iterations),
        free_in_(inputs),
        active_(outputs),
        cols_(static_cast<size_t>(outputs), PortSet(inputs)),
        grants_(static_cast<size_t>(inputs), PortSet(outputs)),
        granted_(inputs) {}

 protected:
  // Fills cols_ (transpose of the requests) and marks every port free. Outputs
  // nobody requests are left out of active_ so iterations skip them.
  void begin(const RequestMatrix& req, Matching& m) {
    check_shapes(*this, req, m);
    m.reset();
    free_in_.fill();
    active_.clear();
    if (req.major() == RequestMatrix::Major::kCols) {  // already columns: copy them
      req.written().for_each([&](int o) {
        const PortSet& c = req.col(o);
        if (!c.any()) return;
        cols_[static_cast<size_t>(o)] = c;  // same size: reuses the words
        active_.set(o);
      });
      return;
    }
    int busy_rows = 0;
    req.written().for_each([&](int i) {
      const PortSet& row = req.row(i);
      active_ |= row;  // word-wide, instead of one bit per request
      busy_rows += row.any();
    });
    // Dense matrices transpose 64 x 64 blocks with word operations (about
    // 1300 instructions a block); sparse ones set one bit per request (about
    // 10 each; at most busy rows x requested outputs of them). A switch asks
    // only for outputs free at this edge, so even a loaded one is often
    // sparse: a few free outputs, many inputs. (No popcount per row: without
    // -mpopcnt it is a call.) Measured on the 64-port and nvl72 benchmarks.
    const int blocks = ((inputs_ + 63) / 64) * ((outputs_ + 63) / 64);
    if (2 * busy_rows > inputs_ && busy_rows * active_.count() > 130 * blocks) {
      transpose(req.rows(), cols_);
      return;
    }
    active_.for_each([&](int o) { cols_[static_cast<size_t>(o)].clear(); });  // grant reads no other
    req.written().for_each(
        [&](int i) { req.row(i).for_each([&](int o) { cols_[static_cast<size_t>(o)].set(i); }); });
  }

  // Grant phase: `pick(o, requesters)` chooses one input among the free
  // inputs requesting free output o. Returns false once no output has a
  // requester left, which means the matching is already maximal.
  template <class Pick>
  bool grant(Pick&& pick) {
    granted_.clear();
    bool any = false;
    active_.for_each([&](int o) {
      PortSet& c = cols_[static_cast<size_t>(o)];
      c &= free_in_;  // in place: cols_ is per-call scratch and inputs never become free again
      if (!c.any()) {
        active_.reset(o);  // no requester can appear later in this call
        return;
      }
      const int i = pick(o, c);
      grants_[static_cast<size_t>(i)].set(o);
      granted_.set(i);
      any = true;
    });
    return any;
  }

  // Accept phase: `pick(i, grants)` chooses one output among those granting i.
  // `on_match(i, o)` lets the scheme move its pointers.
  template <class Pick, class OnMatch>
  void accept(Matching& m, Pick&& pick, OnMatch&& on_match) {
    granted_.for_each([&](int i) {
      PortSet& g = grants_[static_cast<size_t>(i)];
      const int o = pick(i, g);
      g.clear();  // ready for the next iteration without a full sweep
      m.add(i, o);
      free_in_.reset(i);
      active_.reset(o);  // doubles as the set of free outputs
      on_match(i, o);
    });
  }

  PortSet free_in_;
  PortSet active_;               // free outputs that may still have requesters
  std::vector<PortSet> cols_;    // cols_[o]: free inputs requesting o
  std::vector<PortSet> grants_;  // grants_[i]: outputs granting i this iteration
  PortSet granted_;              // inputs holding at least one grant
};

class ISlipAllocator final : public IterativeAllocator {
 public:
  ISlipAllocator(int inputs, int outputs, int iterations)
      : IterativeAllocator(inputs, outputs, iterations),
        grant_ptr_(static_cast<size_t>(outputs), 0),
        accept_ptr_(static_cast<size_t>(inputs), 0) {}

  void allocate(const RequestMatrix& req, Matching& m) override {
    begin(req, m);
    for (int it = 0; it < iterations_; ++it) {
      // No grant means no free input requests a free output: the matching is
      // maximal and further rounds could only burn time.
      if (!grant([&](int o, const PortSet& c) {
            return c.find_cyclic(grant_ptr_[static_cast<size_t>(o)]);
          })) {
        break;
      }
      accept(
          m,
          [&](int i, const PortSet& g) {
            return g.find_cyclic(accept_ptr_[static_cast<size_t>(i)]);
          },
          [&](int i, int o) {
            // Moving only on first-iteration accepts is what desynchronises
            // the pointers and gives iSLIP its no-starvation guarantee; an
            // unaccepted grant must not move, or outputs chase each other.
            if (it != 0) return;
            accept_ptr_[static_cast<size_t>(i)] = o + 1 == outputs_ ? 0 : o + 1;
            grant_ptr_[static_cast<size_t>(o)] = i + 1 == inputs_ ? 0 : i + 1;
          });
    }
  }

 private:
  std::vector<int> grant_ptr_;
  std::vector<int> accept_ptr_;
};

class PimAllocator final : public IterativeAllocator {
 public:
  PimAllocator(int inputs, int outputs, int iterations, std::uint64_t seed)
      : IterativeAllocator(inputs, outputs, iterations), rng_(seed, kPimStream) {}

  void allocate(const RequestMatrix& req, Matching& m) override {
    begin(req, m);
    for (int it = 0; it < iterations_; ++it) {
      if (!grant([&](int, const PortSet& c) { return pick(c); })) break;
      accept(
          m, [&](int, const PortSet& g) { return pick(g); }, [](int, int) {});
    }
  }

 private:
  // A lone candidate needs no draw; skipping it keeps sparse loads cheap and
  // is still deterministic for a given seed.
  int pick(const PortSet& s) {
    const int n = s.count();
    return n == 1 ? s.find_first()
                  : s.nth(static_cast<int>(rng_.below(static_cast<std::uint64_t>(n))));
  }

  Rng rng_;
};

// Input-first separable allocator: inputs pick, outputs arbitrate among the
// inputs that picked them. Shares no scratch layout with the others because
// the first phase runs over rows, not columns.
class RoundRobinAllocator final : public Allocator {
 public:
  RoundRobinAllocator(int inputs, int outputs, int iterations)
      : Allocator(inputs, outputs, iterations),
        rows_(static_cast<size_t>(inputs), PortSet(outputs)),
        free_out_(outputs),
        active_(inputs),
        picked_by_(static_cast<size_t>(outputs), PortSet(inputs)),
        picked_(outputs),
        in_ptr_(static_cast<size_t>(inputs), 0),
        out_ptr_(static_cast<size_t>(outputs), 0) {}

  void allocate(const RequestMatrix& req, Matching& m) override {
    check_shapes(*this, req, m);
    m.reset();
    free_out_.fill();
    active_.clear();
    if (req.major() == RequestMatrix::Major::kCols) {  // rows from the columns, bit by bit
      for (PortSet& r : rows_) r.clear();
      req.written().for_each([&](int o) {
        req.col(o).for_each([&](int i) {
          rows_[static_cast<size_t>(i)].set(o);
          active_.set(i);
        });
      });
    } else {
      req.written().for_each([&](int i) {
        // Same-size copy-assignment reuses the existing words: no allocation.
        rows_[static_cast<size_t>(i)] = req.row(i);
        if (rows_[static_cast<size_t>(i)].any()) active_.set(i);
      });
    }
    for (int it = 0; it < iterations_; ++it) {
      picked_.clear();
      active_.for_each([&](int i) {
        PortSet& r = rows_[static_cast<size_t>(i)];
        r &= free_out_;  // outputs never become free again within a call
        if (!r.any()) {
          active_.reset(i);
          return;
        }
        const int o = r.find_cyclic(in_ptr_[static_cast<size_t>(i)]);
        picked_by_[static_cast<size_t>(o)].set(i);
        picked_.set(o);
      });
      // Every picked output matches someone, so no pick means nothing is left.
      if (!picked_.any()) break;
      picked_.for_each([&](int o) {
        PortSet& p = picked_by_[static_cast<size_t>(o)];
        const int i = p.find_cyclic(out_ptr_[static_cast<size_t>(o)]);
        p.clear();
        m.add(i, o);
        free_out_.reset(o);
        active_.reset(i);
        // Unlike iSLIP both arbiters move on every match: that is what makes
        // each arbiter individually fair under persistent contention.
        in_ptr_[static_cast<size_t>(i)] = o + 1 == outputs_ ? 0 : o + 1;
        out_ptr_[static_cast<size_t>(o)] = i + 1 == inputs_ ? 0 : i + 1;
      });
    }
  }

 private:
  std::vector<PortSet> rows_;  // rows_[i]: free outputs input i requests
  PortSet free_out_;
  PortSet active_;                  // unmatched inputs that may still have requests
  std::vector<PortSet> picked_by_;  // picked_by_[o]: inputs that picked o this iteration
  PortSet picked_;                  // outputs picked by at least one input
  std::vector<int> in_ptr_;
  std::vector<int> out_ptr_;
};

}  // namespace

std::unique_ptr<Allocator> make_allocator(AllocatorKind kind, int inputs, int outputs,
                                          int iterations, std::uint64_t seed) {
  // Fail at construction: a zero-sized allocator would otherwise index empty
  // vectors on the first allocate(), far from the bad config value.
  if (inputs < 1) throw std::invalid_argument("make_allocator: inputs must be >= 1");
  if (outputs < 1) throw std::invalid_argument("make_allocator: outputs must be >= 1");
  if (iterations < 1) throw std::invalid_argument("make_allocator: iterations must be >= 1");
  switch (kind) {
    case AllocatorKind::kISlip:
      return std::make_unique<ISlipAllocator>(inputs, outputs, iterations);
    case AllocatorKind::kPim:
      return std::make_unique<PimAllocator>(inputs, outputs, iterations, seed);
    case AllocatorKind::kRoundRobin:
      return std::make_unique<RoundRobinAllocator>(inputs, outputs, iterations);
  }
  throw std::invalid_argument("make_allocator: unknown allocator kind " +
                              std::to_string(static_cast<int>(kind)));
}

}  // namespace fabricsim
