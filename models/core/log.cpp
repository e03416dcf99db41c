#include "models/core/log.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/params.hpp"

namespace fabricsim {

namespace {
const std::vector<std::pair<std::string, LogLevel>> kLevels = {
    {"off", LogLevel::kOff},   {"error", LogLevel::kError}, {"warn", LogLevel::kWarn},
    {"info", LogLevel::kInfo}, {"debug", LogLevel::kDebug}};

const char* kind_name(PacketKind k) {
  switch (k) {
    case PacketKind::kSynthetic: return "synthetic";
    case PacketKind::kMemRead: return "read";
    case PacketKind::kMemReadData: return "read-data";
    case PacketKind::kWrite: return "write";
    case PacketKind::kMcStore: return "multimem.st";
    case PacketKind::kReduceContrib: return "contribution";
    case PacketKind::kLdReduceReq: return "multimem.ld_reduce";
    case PacketKind::kReadReq: return "engine-read";
    case PacketKind::kReadResp: return "engine-read-data";
    case PacketKind::kLdReduceResp: return "ld_reduce-result";
    case PacketKind::kAtomic: return "atomic";
    case PacketKind::kAtomicResp: return "atomic-result";
    case PacketKind::kStepFlag: return "step-flag";
    case PacketKind::kStepAck: return "step-credit";
    case PacketKind::kWriteAck: return "write-response";
  }
  return "?";
}
}  // namespace

void Log::add_rules(const std::string& text) {
  std::stringstream ss(text);
  std::string rule;
  while (std::getline(ss, rule, ',')) {
    rule = trim_blanks(rule);
    if (rule.empty()) continue;
    const auto eq = rule.rfind('=');
    const std::string glob = eq == std::string::npos ? "*" : trim_blanks(rule.substr(0, eq));
    const std::string name = trim_blanks(eq == std::string::npos ? rule : rule.substr(eq + 1));
    bool found = false;
    for (const auto& [n, level] : kLevels)
      if (n == name) {
        rules_.emplace_back(glob.empty() ? "*" : glob, level);
        found = true;
      }
    if (!found)
      throw ConfigError("--log " + rule + ": level '" + name +
                        "' is not one of off, error, warn, info, debug (rules are "
                        "GLOB=LEVEL, e.g. 'fabric.sw0*=debug')");
  }
}

LogLevel Log::level_for(const std::string& module) const {
  LogLevel l = LogLevel::kWarn;  // problems are always worth a line
  for (const auto& [glob, level] : rules_)
    if (fnmatch(glob.c_str(), module.c_str(), 0) == 0) l = level;
  return l;
}

void Log::write(Ps t, const std::string& who, const std::string& text) const {
  fmt::print(out_, "{}[{:>14.3f} ns] {}: {}\n", clear_line_ ? "\r\033[K" : "", ps_to_ns(t), who, text);
}

std::string describe(const Packet& p) {
  std::string s = fmt::format("#{} {} {}->{} vc{} {} flits", p.serial, kind_name(p.kind), p.src,
                              p.dst, static_cast<int>(p.vc), p.flits);
  if (p.bytes > 0) s += fmt::format(" {} B @0x{:x}", p.bytes, p.addr);
  return s;
}

}  // namespace fabricsim
