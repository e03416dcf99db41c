// The choices of the configuration (config.hpp) as enums, with their names.
// A header of its own so that code needing only a choice (a training
// workload's collective op and algorithm) does not depend on the whole
// Config; the names are the schema's (config_schema.cpp).
#pragma once
#include <string>

namespace fabricsim {

enum class Queueing { kFifo, kVoq, kOutput };
enum class Multicast { kEngine, kCrossbar };
enum class Egress { kHash, kAligned };
enum class FoldOrder { kMember, kArrival };
enum class AluKind { kModel, kRtl };
// How a switch's reduction engine is organised (reduction.organisation;
// models/sc/reduction_engine.hpp, make_reduction_engine).
enum class EngineOrganisation { kCentral, kSliced, kDistributed };
enum class Pattern {
  kUniform,
  kPermutation,
  kHotspot,
  kTranspose,
  kBitReverse,
  kBitComplement,
  kShuffle,
  kNeighbor,
  kTornado
};
enum class Process { kBernoulli, kBursty };
enum class TopologyKind { kSingle, kScaleUp, kScaleOut };
enum class LinkPolicy { kStripe, kRoundRobin, kRandom };
enum class WorkloadKind { kSynthetic, kCollective, kTlm };
enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kReduce };
enum class CollectiveAlgo { kRing, kNvls, kPush, kDirect, kHierarchical, kAuto };
enum class Retry { kNone, kGoBackN };
// topology.kind=scaleout: which leaf a NIC goes to.
enum class Placement { kPacked, kRail };
// Phase 2 of the hierarchical all-reduce (across the domains).
enum class InterAlgo { kRing, kTree, kDoubleTree };
// How the GPUs run a collective (collective.protocol): kIdeal moves data at
// the links' speed from the first nanosecond, forwarded per packet; the
// others are NCCL's protocols on the GPU side (docs/models/gpu.md).
enum class Protocol { kIdeal, kSimple, kLl, kLl128, kAuto };
// How the call's buffers are registered with NCCL (collective.registration;
// nccl-tests -R 0 / 2): symmetric windows let NCCL run its symmetric kernels.
enum class Registration { kNone, kSymmetric };
// Whether long calls are fast-forwarded through their steady state
// (collective.fast_forward; models/core/fast_forward.hpp).
enum class FastForwardMode { kAuto, kOff };

std::string to_string(Queueing q);
std::string to_string(Multicast m);
std::string to_string(Pattern p);
std::string to_string(TopologyKind k);
std::string to_string(CollectiveOp op);
std::string to_string(CollectiveAlgo a);
std::string to_string(Retry r);
std::string to_string(InterAlgo a);
std::string to_string(Protocol p);
std::string to_string(Registration r);
std::string to_string(FastForwardMode m);

// Whether the collective reduces (nccl-tests prints redop "none" otherwise).
inline bool reduces(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ||
         op == CollectiveOp::kReduce;
}

}  // namespace fabricsim
