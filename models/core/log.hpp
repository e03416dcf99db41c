// Run-time logging of a fabric (`--log GLOB=LEVEL`, `--watch SERIAL`),
// through fmt to stderr. Levels are per module, chosen by glob on the
// module's full name (fabric.sw0, fabric.gpu3.tx1); a module caches its
// level when logging is enabled, so a disabled log point costs one
// comparison and no formatting. Plain C++.
//   info:  faults applied, collective calls finished
//   debug: every packet a module handles (sent on a link, arrived at a switch
//          input, granted to an output, delivered)
// `--watch N` logs packet N (its serial number; waveforms show N+1 in
// `<link>.packet`) at every hop, whatever the levels.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "models/core/packet.hpp"
#include "models/core/time.hpp"

namespace fabricsim {

enum class LogLevel { kOff = 0, kError, kWarn, kInfo, kDebug };

class Log {
 public:
  // "GLOB=LEVEL[,GLOB=LEVEL...]"; a later rule wins where both match.
  // Throws ConfigError naming the rule and the allowed levels.
  void add_rules(const std::string& text);
  LogLevel level_for(const std::string& module) const;
  void set_watch(std::int64_t serial) { watch_ = serial; }
  std::int64_t watch() const { return watch_; }
  void set_output(std::FILE* f) { out_ = f; }
  // A progress line shares the terminal: every line first clears it (the
  // progress line is redrawn after).
  void set_clear_line(bool on) { clear_line_ = on; }
  // "[   1234.567 ns] fabric.sw0: text"
  void write(Ps t, const std::string& who, const std::string& text) const;

 private:
  std::vector<std::pair<std::string, LogLevel>> rules_;
  std::int64_t watch_ = -1;
  std::FILE* out_ = stderr;
  bool clear_line_ = false;
};

// What a module keeps: the log, its level, and the packet it watches.
struct LogPoint {
  const Log* log = nullptr;
  LogLevel level = LogLevel::kOff;
  std::int64_t watch = -1;

  void enable(const Log& l, const std::string& module) {
    log = &l;
    level = l.level_for(module);
    watch = l.watch();
  }
  bool on(LogLevel at) const { return level >= at; }
  // Whether to log what happens to packet p here.
  bool packet(const Packet& p) const {
    return level >= LogLevel::kDebug || (watch >= 0 && p.serial == static_cast<std::uint64_t>(watch));
  }
};

// "#17 write 3->5 vc0 17 flits 256 B @0x1000".
std::string describe(const Packet& p);

}  // namespace fabricsim
