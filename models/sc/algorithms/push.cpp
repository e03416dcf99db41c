// Push through the switches' reduction engines: every GPU sends its whole
// buffer as reduction contributions; the engine folds the members' slices
// and multicasts the sum to the group (all-reduce) or sends it to the root
// (reduce). The multicast includes the sender.
#include "models/core/errors.hpp"
#include "models/sc/collective_algorithm.hpp"

namespace fabricsim {

namespace {

class PushAlgorithm final : public CollectiveAlgorithm {
 public:
  using CollectiveAlgorithm::CollectiveAlgorithm;

  bool through_switch() const override { return true; }

  void start_work() override {
    if (call().op != CollectiveOp::kAllReduce && call().op != CollectiveOp::kReduce)
      throw InvariantError(name() + ": collective.algorithm=push does not implement " +
                           to_string(call().op));
    send_all();  // everyone contributes
  }

  int first_step_dst(std::uint64_t /*entry*/) const override { return -1; }

  PacketId make_first_step(Port& port) override {
    const PacketId pk = take_first_step(port, kMcStep, true);
    Packet& p = pool().get(pk);
    p.kind = PacketKind::kReduceContrib;
    p.group = 0;
    // Where its result goes: the root (reduce), or nobody (-1: multicast to
    // the group).
    p.dst = call().op == CollectiveOp::kReduce ? call().root : -1;
    return pk;
  }

  // The engine's result: a multicast copy, or the root's sum.
  void receive(const Packet& in) override { final_from_switch(in); }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_push_algorithm(Gpu& gpu, const Config& /*cfg*/,
                                                         const CollectiveSweep& /*sweep*/) {
  return std::make_unique<PushAlgorithm>(gpu);
}

}  // namespace fabricsim
