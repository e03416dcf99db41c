#include "models/sc/fault_injector.hpp"

namespace fabricsim {

namespace {
constexpr std::uint16_t kItemFault = 16;
}

FaultInjector::FaultInjector(const sc_core::sc_module_name& name, Scheduler& scheduler,
                             std::vector<Fault> faults, std::vector<std::vector<std::string>> targets,
                             std::function<void(std::size_t, std::size_t)> apply)
    : TimedModule(name, scheduler),
      faults_(std::move(faults)),
      targets_(std::move(targets)),
      apply_(std::move(apply)) {
  // Faults of one time apply in the order they were written.
  for (std::size_t i = 0; i < faults_.size(); ++i)
    schedule(ns_to_ps(faults_[i].at_ns), kItemFault, static_cast<std::uint32_t>(i));
}

void FaultInjector::handle(const Item& item) {
  const Fault& f = faults_[item.a];
  for (std::size_t k = 0; k < targets_[item.a].size(); ++k) apply_(item.a, k);
  applied_.push_back({item.time, f.text, targets_[item.a]});
  if (log_.on(LogLevel::kInfo)) {
    std::string hit;
    for (const auto& t : targets_[item.a]) hit += (hit.empty() ? "" : ", ") + t;
    log("applies " + f.text + " to " + hit);
  }
}

}  // namespace fabricsim
