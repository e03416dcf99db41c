// Applies the configured faults (models/core/faults.hpp) at their times and
// keeps the log stats.json reports. The targets are resolved when the fabric
// is built, so a fault that names nothing is a configuration error before
// anything is simulated, not a silent no-op.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "models/core/faults.hpp"
#include "models/sc/timed_module.hpp"

namespace fabricsim {

class FaultInjector : public TimedModule {
 public:
  struct Applied {
    Ps t;
    std::string fault;                 // as written
    std::vector<std::string> targets;  // what it hit
  };
  // `apply(f, k)` does fault f to its k-th target, named `targets[f][k]`.
  FaultInjector(const sc_core::sc_module_name& name, Scheduler& scheduler, std::vector<Fault> faults,
                std::vector<std::vector<std::string>> targets,
                std::function<void(std::size_t fault, std::size_t target)> apply);
  const std::vector<Applied>& applied() const { return applied_; }

 protected:
  void handle(const Item& item) override;

 private:
  std::vector<Fault> faults_;
  std::vector<std::vector<std::string>> targets_;
  std::function<void(std::size_t, std::size_t)> apply_;
  std::vector<Applied> applied_;
};

}  // namespace fabricsim
