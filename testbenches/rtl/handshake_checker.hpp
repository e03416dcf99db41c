// A passive checker of a valid/ready interface, sampled once per clock edge:
// once valid is up and the beat not taken (ready low), valid must stay up
// and the payload must not change until the beat is taken. It only watches;
// the first violation is kept with its cycle.
#pragma once
#include <cstdint>
#include <string>

namespace fabricsim {

class HandshakeChecker {
 public:
  explicit HandshakeChecker(std::string name) : name_(std::move(name)) {}

  // One sample at a rising edge: what valid, ready and the payload (any
  // digest of data and tag) were just before it.
  void sample(std::uint64_t cycle, bool valid, bool ready, std::uint64_t payload) {
    if (pending_ && error_.empty()) {
      if (!valid)
        error_ = name_ + ": valid dropped at cycle " + std::to_string(cycle) +
                 " before the beat offered at cycle " + std::to_string(since_) + " was taken";
      else if (payload != payload_)
        error_ = name_ + ": payload changed at cycle " + std::to_string(cycle) +
                 " while the beat offered at cycle " + std::to_string(since_) + " waited";
    }
    if (valid && !ready) {
      if (!pending_) since_ = cycle;
      pending_ = true;
      payload_ = payload;
    } else {
      pending_ = false;
    }
    if (valid && ready) ++beats_;
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::uint64_t beats() const { return beats_; }

 private:
  std::string name_;
  std::string error_;
  bool pending_ = false;
  std::uint64_t since_ = 0;
  std::uint64_t payload_ = 0;
  std::uint64_t beats_ = 0;
};

}  // namespace fabricsim
