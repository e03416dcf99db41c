#include "models/core/faults.hpp"

#include <cmath>
#include <cstdlib>

#include "models/core/errors.hpp"
#include "models/core/params.hpp"

namespace fabricsim {

namespace {

struct KindInfo {
  const char* name;
  FaultKind kind;
  bool needs_value;
};
constexpr KindInfo kKinds[] = {{"lane_down", FaultKind::kLaneDown, true},
                               {"link_down", FaultKind::kLinkDown, false},
                               {"ber", FaultKind::kBer, true},
                               {"port_stall", FaultKind::kPortStall, true},
                               {"slow", FaultKind::kSlow, true}};


}  // namespace

std::string to_string(FaultKind k) {
  for (const auto& i : kKinds)
    if (i.kind == k) return i.name;
  return "?";
}

std::string faults_allowed() {
  return "list of KIND@AT_NS:TARGET[=VALUE] with KIND lane_down (=lanes left) | link_down | "
         "ber (=rate) | port_stall (=ns) | slow (=issue fraction); TARGET a glob on link or GPU "
         "names";
}

std::vector<Fault> parse_faults(const std::string& key, const std::string& text) {
  std::vector<Fault> out;
  std::size_t start = 0;
  int index = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = trim_blanks(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) {
      if (comma == text.size()) break;
      continue;
    }
    auto bad = [&](const std::string& why) {
      throw ConfigError("config key '" + key + "': fault " + std::to_string(index) + " '" + item +
                        "' " + why + "; allowed: " + faults_allowed());
    };
    const auto at = item.find('@'), colon = item.find(':');
    if (at == std::string::npos || colon == std::string::npos || colon < at)
      bad("is not KIND@AT_NS:TARGET[=VALUE]");
    Fault f;
    f.text = item;
    const std::string kind = item.substr(0, at);
    const KindInfo* info = nullptr;
    for (const auto& k : kKinds)
      if (kind == k.name) info = &k;
    if (!info) bad("has an unknown kind '" + kind + "'");
    f.kind = info->kind;
    if (!parse_finite(item.substr(at + 1, colon - at - 1), f.at_ns) || f.at_ns < 0 || f.at_ns > 1e12)
      bad("has a time that is not a number of ns in [0, 1e12]");
    std::string target = item.substr(colon + 1);
    const auto eq = target.find('=');
    const bool has_value = eq != std::string::npos;
    if (has_value) {
      if (!parse_finite(target.substr(eq + 1), f.value)) bad("has a value that is not a number");
      target = target.substr(0, eq);
    }
    f.target = trim_blanks(target);
    if (f.target.empty()) bad("names no target");
    if (has_value != info->needs_value)
      bad(info->needs_value ? "needs =VALUE" : "takes no value");
    switch (f.kind) {
      case FaultKind::kLaneDown:
        if (f.value < 1 || f.value != std::floor(f.value) || f.value > 64)
          bad("needs a whole number of lanes left, 1 .. 64 (for no lanes: link_down)");
        break;
      case FaultKind::kBer:
        if (f.value < 0 || f.value > 0.1) bad("needs a bit error rate in [0, 0.1]");
        break;
      case FaultKind::kPortStall:
        if (f.value <= 0 || f.value > 1e12) bad("needs a stall in ns, > 0");
        break;
      case FaultKind::kSlow:
        if (f.value <= 0 || f.value > 1) bad("needs an issue fraction in (0, 1]");
        break;
      case FaultKind::kLinkDown:
        break;
    }
    out.push_back(f);
    ++index;
    if (comma == text.size()) break;
  }
  return out;
}

std::string format_faults(const std::vector<Fault>& faults) {
  std::string s;
  for (const auto& f : faults) s += (s.empty() ? "" : ",") + f.text;
  return s;
}

}  // namespace fabricsim
