// Credit counter of one virtual channel at a link's transmitter. Its pool is
// the receiver's buffer for that VC. Taking more credits than are available,
// or getting back more than the pool holds, is a model bug: both throw
// InvariantError instead of wrapping silently.
//
// The owner's name (for those messages) is borrowed, not copied: it must
// outlive the counter (a literal, or a string its link keeps). A link checks
// its counters at every send and credit return, thousands of links apart:
// without a string inside, a VC's counter is 16 bytes, and the
// credit state of a link's VCs in use fits a line or two.
#pragma once
#include <string>

#include "models/core/errors.hpp"

namespace fabricsim {

class CreditCounter {
 public:
  CreditCounter() = default;
  CreditCounter(const char* owner, int capacity)
      : owner_(owner), capacity_(capacity), available_(capacity) {
    if (capacity <= 0) throw InvariantError(std::string(owner_) + ": credit pool must be positive");
  }

  int capacity() const { return capacity_; }
  int available() const { return available_; }
  bool can_take(int n) const { return n <= available_; }

  void take(int n) {
    if (n <= 0 || n > available_)
      throw InvariantError(std::string(owner_) + ": credit underflow: taking " + std::to_string(n) +
                           " with " + std::to_string(available_) + " available");
    available_ -= n;
  }

  void give(int n) {
    if (n <= 0 || available_ + n > capacity_)
      throw InvariantError(std::string(owner_) + ": credit overflow: returning " +
                           std::to_string(n) + " with " + std::to_string(available_) + " of " +
                           std::to_string(capacity_) + " already available");
    available_ += n;
  }

 private:
  const char* owner_ = "";
  int capacity_ = 0;
  int available_ = 0;
};

}  // namespace fabricsim
