// The switch's multicast state (models/sc/switch.hpp, switch_multicast.cpp):
// its group table, the egress alignment and the originals held for copies.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace fabricsim {

struct SwitchMulticast {
  std::vector<std::vector<int>> groups;  // [group] member endpoints
  // switch.egress=aligned: [endpoint] (first link here, links in all); empty: hash
  std::vector<std::pair<int, int>> align;
  std::uint64_t copies_made = 0;
  std::uint64_t originals_retired = 0;
  std::uint64_t originals = 0;  // multicast originals held in input buffers
};

}  // namespace fabricsim
