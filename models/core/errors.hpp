// Error types shared by every layer.
#pragma once
#include <stdexcept>
#include <string>

namespace fabricsim {

// Bad user input: a config key, value or combination. The CLI exits with
// status 2 and nothing is simulated.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model invariant broke (credit overflow, buffer overrun, lost packet...).
// Always a bug or an inconsistent model; never swallowed. The CLI exits with 1.
class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace fabricsim
