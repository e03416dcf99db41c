#include "models/core/wave_trace.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "models/core/errors.hpp"

namespace fabricsim {

WaveTrace::WaveTrace(Options options) : options_(std::move(options)) {}

int WaveTrace::signal(const std::string& name, int width, std::int64_t initial) {
  if (fnmatch(options_.scope.c_str(), name.c_str(), 0) != 0) return -1;
  signals_.push_back(Signal{name, width, initial, 0, false});
  return static_cast<int>(signals_.size()) - 1;
}

void WaveTrace::set(int id, Ps t, std::int64_t value) {
  if (id < 0 || t > options_.end) return;
  Signal& s = signals_[static_cast<size_t>(id)];
  if (t < options_.begin) {  // before the window: only the latest value matters
    if (t >= s.base_t) {
      s.base = value;
      s.base_t = t;
    }
    return;
  }
  changes_.push_back(Change{t, seq_++, id, value, false});
}

void WaveTrace::add(int id, Ps t, std::int64_t delta) {
  if (id < 0 || t > options_.end) return;
  Signal& s = signals_[static_cast<size_t>(id)];
  s.counter = true;
  if (t < options_.begin) {  // a sum does not care about order
    s.base += delta;
    return;
  }
  changes_.push_back(Change{t, seq_++, id, delta, true});
}

namespace {

// VCD identifiers: printable characters 33..126, little-endian digits.
std::string vcd_id(int i) {
  std::string s;
  do {
    s.push_back(static_cast<char>(33 + i % 94));
    i /= 94;
  } while (i > 0);
  return s;
}

std::string bits(std::int64_t v, int width) {
  if (width == 1) return v ? "1" : "0";
  std::string s = "b";
  bool started = false;
  for (int b = width - 1; b >= 0; --b) {
    const bool one = (static_cast<std::uint64_t>(v) >> b) & 1u;
    if (one) started = true;
    if (started) s.push_back(one ? '1' : '0');
  }
  if (!started) s.push_back('0');
  return s + " ";
}

std::vector<std::string> split(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t a = 0;
  while (true) {
    const std::size_t b = name.find('.', a);
    parts.push_back(name.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) break;
    a = b + 1;
  }
  return parts;
}

}  // namespace

void WaveTrace::write(Ps end_of_run) {
  std::ofstream f(options_.path);
  if (!f) throw std::runtime_error("cannot write the waveform file " + options_.path);
  f << "$date fabricsim $end\n$version fabricsim waveform $end\n$timescale 1ps $end\n";
  // Scopes: signals sorted by name, so each scope opens once.
  std::vector<int> order(signals_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return signals_[static_cast<size_t>(a)].name < signals_[static_cast<size_t>(b)].name;
  });
  std::vector<std::string> open;
  for (int i : order) {
    const Signal& s = signals_[static_cast<size_t>(i)];
    std::vector<std::string> parts = split(s.name);
    const std::string var = parts.back();
    parts.pop_back();
    std::size_t common = 0;
    while (common < open.size() && common < parts.size() && open[common] == parts[common]) ++common;
    for (std::size_t k = open.size(); k > common; --k) f << "$upscope $end\n";
    open.resize(common);
    for (std::size_t k = common; k < parts.size(); ++k) {
      f << "$scope module " << parts[k] << " $end\n";
      open.push_back(parts[k]);
    }
    f << "$var wire " << s.width << " " << vcd_id(i) << " " << var << " $end\n";
  }
  for (std::size_t k = open.size(); k > 0; --k) f << "$upscope $end\n";
  f << "$enddefinitions $end\n";

  std::vector<std::int64_t> value(signals_.size());
  const Ps start = options_.begin;
  f << "#" << start << "\n$dumpvars\n";
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    value[i] = signals_[i].base;
    f << bits(value[i], signals_[i].width) << vcd_id(static_cast<int>(i)) << "\n";
  }
  f << "$end\n";
  std::stable_sort(changes_.begin(), changes_.end(), [](const Change& a, const Change& b) {
    return a.t != b.t ? a.t < b.t : a.seq < b.seq;
  });
  // Per time step, apply every change, then dump the signals that moved.
  std::vector<char> moved(signals_.size(), 0);
  std::vector<int> touched;
  for (std::size_t k = 0; k < changes_.size();) {
    const Ps t = changes_[k].t;
    for (; k < changes_.size() && changes_[k].t == t; ++k) {
      const Change& c = changes_[k];
      value[static_cast<size_t>(c.id)] = c.delta ? value[static_cast<size_t>(c.id)] + c.value : c.value;
      if (!moved[static_cast<size_t>(c.id)]) {
        moved[static_cast<size_t>(c.id)] = 1;
        touched.push_back(c.id);
      }
    }
    f << "#" << t << "\n";
    for (int id : touched) {
      f << bits(value[static_cast<size_t>(id)], signals_[static_cast<size_t>(id)].width)
        << vcd_id(id) << "\n";
      moved[static_cast<size_t>(id)] = 0;
      ++written_;
    }
    touched.clear();
  }
  f << "#" << std::max(end_of_run, changes_.empty() ? start : changes_.back().t) << "\n";
  if (!f) throw std::runtime_error("error writing the waveform file " + options_.path);
}

void parse_wave_window(const std::string& text, Ps& begin, Ps& end) {
  const std::size_t colon = text.find(':');
  auto bad = [&] {
    return ConfigError("--wave-window=" + text +
                       ": expected START_NS:END_NS (numbers in ns, START < END; either may be "
                       "empty)");
  };
  if (colon == std::string::npos) throw bad();
  auto num = [&](const std::string& s, Ps fallback) -> Ps {
    if (s.empty()) return fallback;
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used != s.size() || !(v >= 0)) throw bad();
    return ns_to_ps(v);
  };
  begin = num(text.substr(0, colon), 0);
  end = num(text.substr(colon + 1), kNever);
  if (begin >= end) throw bad();
}

}  // namespace fabricsim
