#pragma once
// What the configuration knows of each collective algorithm, in one table:
// its name (collective.algorithm), the operations it implements, how it uses
// the switches' reduction engines and which calls it carries across
// scale-out domains. Validation, the engine decision and the parameter
// docs read it. The model of each algorithm is a class in
// models/sc/algorithms/, registered under the same id
// (models/sc/collective_algorithm.cpp). A new algorithm: its enum value
// (config_enums.hpp), a row here, its file and its registration.
#include <vector>

#include "models/core/config_enums.hpp"

namespace fabricsim {

struct AlgorithmTraits {
  CollectiveAlgo id;
  const char* name;
  std::vector<CollectiveOp> ops;  // implemented, in the order messages list them
  // Ops for which the switches' engines reduce (their responses fold there).
  std::vector<CollectiveOp> reduces_in_switch;
  // It sends multicast stores: the engine replicates them where the switch
  // replicates at its engine (switch.multicast=engine, input queueing).
  bool multicasts = false;
  // It reads through the switch (ld_reduce requests and responses) in these
  // ops: requests and responses need separate VCs.
  std::vector<CollectiveOp> reads_through_switch;
  // Ops it carries across scale-out domains (topology.kind=scaleout).
  std::vector<CollectiveOp> across_domains;
};

const std::vector<AlgorithmTraits>& collective_algorithms();
const AlgorithmTraits& traits_of(CollectiveAlgo a);
bool has_op(const std::vector<CollectiveOp>& ops, CollectiveOp op);

}  // namespace fabricsim
