// Faults injected at a simulated time (the `faults` configuration key):
// plain C++ parsing and checking; the fabric applies them (models/sc/fabric.cpp).
//
// One fault is written KIND@AT_NS:TARGET[=VALUE]; a list separates them with
// ',' (a YAML sequence of such strings arrives joined by ','). TARGET is a
// glob (fnmatch: * ? [..]) on hierarchical names: links are
// `fabric.gpu3.tx7` / `fabric.ep3.tx0` / `fabric.sw1.out12`, GPUs `fabric.gpu3`.
//   lane_down@T:LINK=N   the link runs on N lanes from T on (rate x N/lanes)
//   link_down@T:LINK     the link takes no new packet from T on; senders use
//                        their other links (same switch first)
//   ber@T:LINK=B         the link's bit error rate becomes B
//   port_stall@T:LINK=D  the link sends nothing during [T, T + D ns)
//   slow@T:GPU=F         the GPU issues at F (0 < F <= 1) of its link rate
#pragma once
#include <string>
#include <vector>

namespace fabricsim {

enum class FaultKind { kLaneDown, kLinkDown, kBer, kPortStall, kSlow };

struct Fault {
  FaultKind kind = FaultKind::kLinkDown;
  double at_ns = 0;
  std::string target;
  double value = 0;
  std::string text;  // as written, for messages and the log
};

std::string to_string(FaultKind k);
// Throws ConfigError naming `key`, the item and what is allowed.
std::vector<Fault> parse_faults(const std::string& key, const std::string& text);
std::string format_faults(const std::vector<Fault>& faults);
// The grammar, for `fabricsim params` and error messages.
std::string faults_allowed();

}  // namespace fabricsim
