#include "models/sc/collective_algorithm.hpp"

#include "models/core/errors.hpp"

namespace fabricsim {

void CollectiveAlgorithm::final_from_switch(const Packet& in) const {
  const std::uint64_t first = in.addr / es();
  const std::uint64_t count = in.bytes / es();
  // A reduce's result reaches the root alone; a multicast every member.
  const int uses = call().op == CollectiveOp::kReduce ? 1 : call().size;
  sweep().check(first, count, payloads().data(in.payload), uses, call().group);
  output_done(count, in.src);
  payloads().release(in.payload);
}

namespace {
struct Entry {
  CollectiveAlgo algorithm;  // the collective.algorithm value
  AlgorithmFactory make;
};

// collective.algorithm=auto has no model of its own: the sweep gives each
// call the algorithm NCCL's tuner picks (CollectiveSweep).
std::unique_ptr<CollectiveAlgorithm> make_unresolved_auto(Gpu& /*gpu*/, const Config& /*cfg*/,
                                                          const CollectiveSweep& /*sweep*/) {
  throw InvariantError("collective.algorithm=auto reached a GPU unresolved: the sweep picks ring or nvls per call");
}

// Built once from constant data on first use; never changed.
const std::vector<Entry>& registry() {
  static const std::vector<Entry> table = {
      {CollectiveAlgo::kRing, make_ring_algorithm},
      {CollectiveAlgo::kNvls, make_nvls_algorithm},
      {CollectiveAlgo::kPush, make_push_algorithm},
      {CollectiveAlgo::kDirect, make_direct_algorithm},
      {CollectiveAlgo::kHierarchical, make_hierarchical_algorithm},
      {CollectiveAlgo::kAuto, make_unresolved_auto},
  };
  return table;
}
}  // namespace

std::vector<std::string> collective_algorithm_names() {
  std::vector<std::string> names;
  for (const Entry& r : registry()) names.push_back(to_string(r.algorithm));
  return names;
}

std::unique_ptr<CollectiveAlgorithm> make_collective_algorithm(CollectiveAlgo a, Gpu& gpu,
                                                               const Config& cfg,
                                                               const CollectiveSweep& sweep) {
  for (const Entry& r : registry())
    if (r.algorithm == a) return r.make(gpu, cfg, sweep);
  std::string names;
  for (const std::string& n : collective_algorithm_names())
    names += (names.empty() ? "" : ", ") + n;
  throw ConfigError("collective.algorithm=" + to_string(a) +
                    ": no such algorithm is implemented (allowed: " + names + ")");
}

}  // namespace fabricsim
