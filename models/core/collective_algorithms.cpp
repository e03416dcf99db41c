// The table of collective algorithms (collective_algorithms.hpp). Each row
// says what models/sc/algorithms/NAME.cpp implements; the two must agree
// (CollectiveAlgorithms.EveryRowIsRegistered checks the names).
#include "models/core/collective_algorithms.hpp"

#include <algorithm>

#include "models/core/errors.hpp"

namespace fabricsim {

namespace {
using Op = CollectiveOp;
}  // namespace

const std::vector<AlgorithmTraits>& collective_algorithms() {
  static const std::vector<AlgorithmTraits> table = {
      {CollectiveAlgo::kRing,
       "ring",
       {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather, Op::kBroadcast, Op::kReduce},
       {},
       false,
       {},
       {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather, Op::kBroadcast, Op::kReduce}},
      {CollectiveAlgo::kNvls,
       "nvls",
       {Op::kAllReduce, Op::kAllGather, Op::kBroadcast},
       {Op::kAllReduce},
       true,
       {Op::kAllReduce},
       {}},
      {CollectiveAlgo::kPush, "push", {Op::kAllReduce, Op::kReduce}, {Op::kAllReduce, Op::kReduce},
       false, {}, {}},
      {CollectiveAlgo::kDirect, "direct", {Op::kAllReduce, Op::kAllToAll}, {}, false, {},
       {Op::kAllToAll}},
      {CollectiveAlgo::kHierarchical, "hierarchical", {Op::kAllReduce}, {}, false, {},
       {Op::kAllReduce}},
      // NCCL's choice per call between ring and NVLS (NcclTuner::all_reduce;
      // the sweep resolves it): what either may need, the switches' engines too.
      {CollectiveAlgo::kAuto, "auto", {Op::kAllReduce}, {Op::kAllReduce}, true, {Op::kAllReduce}, {}},
  };
  return table;
}

const AlgorithmTraits& traits_of(CollectiveAlgo a) {
  for (const AlgorithmTraits& t : collective_algorithms())
    if (t.id == a) return t;
  throw InvariantError("collective algorithm " + std::to_string(static_cast<int>(a)) +
                       " has no row in collective_algorithms()");
}

bool has_op(const std::vector<CollectiveOp>& ops, CollectiveOp op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace fabricsim
