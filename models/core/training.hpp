// A training step as a workload: the collectives one step of a model's
// training makes, each on its group of GPUs (tensor-parallel groups inside
// a domain, data-parallel groups across, ...), with the compute time before
// it. Read from a JSON file (traces/workloads/README.md); plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/core/config_enums.hpp"

namespace fabricsim {

// GPUs split into equal groups. A group is named by a layout of
// (size, stride) dimensions: "8x1" = 8 consecutive GPUs; "4x8" = GPUs g,
// g+8, g+16, g+24; "4x1+2x8" = {g..g+3, g+8..g+11}. Groups are made from
// the lowest GPU not yet in one, so the layout must tile the GPUs.
struct Partition {
  std::string name;
  std::string layout;
  std::vector<std::vector<int>> groups;  // members in ring order
  std::vector<int> group_of;             // [gpu]
  std::vector<int> rank_of;              // [gpu] its place in its group
  int size() const { return groups.empty() ? 0 : static_cast<int>(groups[0].size()); }
};

// Throws ConfigError naming `what` (where the layout came from) and the
// GPU that does not fit.
Partition make_partition(const std::string& name, const std::string& layout, int gpus,
                         const std::string& what);
// Every GPU in one group.
Partition whole_fabric(int gpus);

struct TrainingCall {
  std::string name;
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgo algorithm = CollectiveAlgo::kRing;
  std::uint64_t bytes = 0;   // per GPU
  std::string group;         // a partition's name, or "all"
  double compute_ns = 0;     // before it: the compute it waits for
};

struct TrainingWorkload {
  std::string path;
  std::string name;
  std::vector<std::pair<std::string, std::string>> groups;  // name -> layout
  std::vector<TrainingCall> calls;                           // in order: a chain
};

// Reads and checks the file (ConfigError naming the file, the call and the
// field). `overrides` ("tp=8x1,dp=4x8", collective.groups) replace layouts.
TrainingWorkload load_training(const std::string& path, const std::string& overrides);
// The partitions of `w` on `gpus` GPUs, "all" first; throws ConfigError
// when a layout does not tile them.
std::vector<Partition> training_partitions(const TrainingWorkload& w, int gpus);

}  // namespace fabricsim
