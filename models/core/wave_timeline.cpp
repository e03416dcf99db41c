// WaveTrace's timeline output: Chrome trace-event JSON ("JSON Array
// Format" with a traceEvents object), as ui.perfetto.dev and
// chrome://tracing read it. Each module (the first two components of a
// name: fabric.sw0, fabric.gpu3.tx1 -> fabric.gpu3) is a process; each of
// its signals a counter track (C events: its value from the window's start,
// then at every change); spans are complete events (X) and instants i
// events on a named lane (a thread) of their module. Times are in µs with
// ps resolution.
#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

#include "models/core/wave_trace.hpp"

namespace fabricsim {

namespace {

// "fabric.sw0.in3.occupancy" -> {"fabric.sw0", "in3.occupancy"}.
std::pair<std::string, std::string> module_of(const std::string& name) {
  const std::size_t a = name.find('.');
  const std::size_t b = a == std::string::npos ? a : name.find('.', a + 1);
  if (b == std::string::npos) {
    const std::size_t last = name.rfind('.');
    if (last == std::string::npos) return {name, name};
    return {name.substr(0, last), name.substr(last + 1)};
  }
  return {name.substr(0, b), name.substr(b + 1)};
}

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) continue;
    q.push_back(c);
  }
  return q + "\"";
}

std::string us(Ps t) {
  char b[40];
  std::snprintf(b, sizeof b, "%.6f", static_cast<double>(t) / 1e6);
  return b;
}

}  // namespace

void WaveTrace::write_timeline(Ps end_of_run) {
  const std::string& path = options_.timeline;
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write the timeline file " + path);
  std::map<std::string, int> pids;                      // module -> pid
  std::map<std::pair<int, std::string>, int> tids;      // (pid, lane) -> tid
  std::string meta;
  auto pid_of = [&](const std::string& module) {
    auto it = pids.find(module);
    if (it != pids.end()) return it->second;
    const int p = static_cast<int>(pids.size()) + 1;
    pids.emplace(module, p);
    meta += ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(p) +
            ",\"args\":{\"name\":" + quoted(module) + "}}";
    return p;
  };
  auto tid_of = [&](int pid, const std::string& lane) {
    auto it = tids.find({pid, lane});
    if (it != tids.end()) return it->second;
    const int t = static_cast<int>(tids.size()) + 1;
    tids.emplace(std::make_pair(pid, lane), t);
    meta += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) +
            ",\"tid\":" + std::to_string(t) + ",\"args\":{\"name\":" + quoted(lane) + "}}";
    return t;
  };
  std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"fabricsim\","
                  "\"window_begin_ps\":%lld,\"end_ps\":%lld},\n\"traceEvents\":[\n",
               static_cast<long long>(options_.begin), static_cast<long long>(end_of_run));
  bool first = true;
  auto event = [&](const std::string& e) {
    std::fputs(first ? "" : ",\n", f);
    std::fputs(e.c_str(), f);
    first = false;
  };
  // Counters: the value at the window's start, then every change.
  std::vector<int> pid(signals_.size());
  std::vector<std::string> counter(signals_.size());
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    if (!signals_[i].timeline) continue;
    auto [module, leaf] = module_of(signals_[i].name);
    pid[i] = pid_of(module);
    counter[i] = quoted(leaf);
  }
  auto value_event = [&](std::size_t i, Ps t, std::int64_t v) {
    if (!signals_[i].timeline) return;
    event("{\"ph\":\"C\",\"name\":" + counter[i] + ",\"pid\":" + std::to_string(pid[i]) +
          ",\"ts\":" + us(t) + ",\"args\":{\"value\":" + std::to_string(v) + "}}");
  };
  std::vector<std::int64_t> value(signals_.size());
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    value[i] = signals_[i].base;
    value_event(i, options_.begin, value[i]);
  }
  replay(value, end_of_run, [&](Ps t, const std::vector<int>& ids) {
    for (int id : ids) value_event(static_cast<size_t>(id), t, value[static_cast<size_t>(id)]);
  });
  // Spans and instants, clipped to the window and the run.
  for (const Span& s : spans_) {
    if (s.begin > end_of_run) continue;
    const int p = pid_of(s.track);
    const int t = tid_of(p, s.lane);
    const Ps b = std::max(s.begin, options_.begin);
    const Ps e = std::min(s.end, std::min(options_.end, end_of_run));
    const std::string head = "{\"name\":" + quoted(s.name) + ",\"pid\":" + std::to_string(p) +
                             ",\"tid\":" + std::to_string(t) + ",\"ts\":" + us(b);
    if (s.instant)
      event(head + ",\"ph\":\"i\",\"s\":\"t\"}");
    else
      event(head + ",\"ph\":\"X\",\"dur\":" + us(e - b) + "}");
  }
  std::fputs(first ? meta.substr(2).c_str() : meta.c_str(), f);
  std::fputs("\n]}\n", f);
  if (std::fclose(f) != 0) throw std::runtime_error("error writing the timeline file " + path);
}

}  // namespace fabricsim
