#include "models/core/wave_trace.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/core/errors.hpp"
#include "models/core/fst_writer.hpp"

namespace fabricsim {

WaveTrace::WaveTrace(Options options) : options_(std::move(options)) {}

int WaveTrace::signal(const std::string& name, int width, std::int64_t initial, bool on_timeline) {
  if (fnmatch(options_.scope.c_str(), name.c_str(), 0) != 0) return -1;
  signals_.push_back(Signal{name, width, initial, 0, false, on_timeline});
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

void WaveTrace::span(const std::string& track, const std::string& lane, const std::string& name,
                     Ps begin, Ps end) {
  if (end < options_.begin || begin > options_.end) return;
  spans_.push_back(Span{track, lane, name, begin, end, false});
}

void WaveTrace::instant(const std::string& track, const std::string& name, Ps t) {
  if (t < options_.begin || t > options_.end) return;
  spans_.push_back(Span{track, "events", name, t, t, true});
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

// What write() emits, in order: the hierarchy, the values at the start,
// then time steps with the signals that changed.
class WaveSink {
 public:
  virtual ~WaveSink() = default;
  virtual void scope(const std::string& name) = 0;
  virtual void upscope() = 0;
  virtual void var(int id, const std::string& name, int width) = 0;
  virtual void start(Ps t) = 0;   // definitions done; initial values follow
  virtual void initial_done() = 0;
  virtual void time(Ps t) = 0;
  virtual void value(int id, std::int64_t v, int width) = 0;
  virtual void close(Ps end) = 0;  // throws on I/O errors
};

namespace {

// The date a VCD's header carries: now, in UTC, or SOURCE_DATE_EPOCH's
// (seconds since 1970) when it is set, for byte-reproducible files.
std::string date_text() {
  std::time_t t = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    const long long v = std::strtoll(epoch, &end, 10);
    if (end != epoch && *end == '\0' && v >= 0) t = static_cast<std::time_t>(v);
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return b;
}

class VcdSink final : public WaveSink {
 public:
  explicit VcdSink(const std::string& path) : path_(path), f_(path) {
    if (!f_) throw std::runtime_error("cannot write the waveform file " + path);
    f_ << "$date " << date_text() << " $end\n$version fabricsim waveform $end\n$timescale 1ps $end\n";
  }
  void scope(const std::string& name) override { f_ << "$scope module " << name << " $end\n"; }
  void upscope() override { f_ << "$upscope $end\n"; }
  void var(int id, const std::string& name, int width) override {
    f_ << "$var wire " << width << " " << vcd_id(id) << " " << name << " $end\n";
  }
  void start(Ps t) override { f_ << "$enddefinitions $end\n#" << t << "\n$dumpvars\n"; }
  void initial_done() override { f_ << "$end\n"; }
  void time(Ps t) override { f_ << "#" << t << "\n"; }
  void value(int id, std::int64_t v, int width) override { f_ << bits(v, width) << vcd_id(id) << "\n"; }
  void close(Ps end) override {
    f_ << "#" << end << "\n";
    f_.close();
    if (!f_) throw std::runtime_error("error writing the waveform file " + path_);
  }

 private:
  std::string path_;
  std::ofstream f_;
};

class FstSink final : public WaveSink {
 public:
  explicit FstSink(const std::string& path) : path_(path), ctx_(fst_open(path)) {
    if (!ctx_) throw std::runtime_error("cannot write the waveform file " + path);
  }
  ~FstSink() override {
    if (ctx_) fst_close(ctx_);
  }
  FstSink(const FstSink&) = delete;
  FstSink& operator=(const FstSink&) = delete;
  void scope(const std::string& name) override { fst_scope(ctx_, name); }
  void upscope() override { fst_upscope(ctx_); }
  void var(int id, const std::string& name, int width) override {
    if (handles_.size() <= static_cast<std::size_t>(id)) handles_.resize(static_cast<std::size_t>(id) + 1);
    handles_[static_cast<std::size_t>(id)] = fst_var(ctx_, name, width);
  }
  void start(Ps t) override { fst_time(ctx_, t); }
  void initial_done() override {}
  void time(Ps t) override { fst_time(ctx_, t); }
  void value(int id, std::int64_t v, int width) override {
    std::string b(static_cast<std::size_t>(width), '0');
    for (int k = 0; k < width; ++k)
      if ((static_cast<std::uint64_t>(v) >> k) & 1u) b[static_cast<std::size_t>(width - 1 - k)] = '1';
    fst_value(ctx_, handles_[static_cast<std::size_t>(id)], b.c_str());
  }
  void close(Ps end) override {
    fst_time(ctx_, end);
    fst_close(ctx_);
    ctx_ = nullptr;
  }

 private:
  std::string path_;
  void* ctx_;
  std::vector<std::uint32_t> handles_;
};

bool ends_with(const std::string& s, const char* suffix) {
  const std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

}  // namespace

void WaveTrace::write(Ps end_of_run) {
  if (!options_.timeline.empty()) write_timeline(end_of_run);
  if (options_.path.empty()) return;
  std::unique_ptr<WaveSink> sink;
  if (ends_with(options_.path, ".fst"))
    sink = std::make_unique<FstSink>(options_.path);
  else
    sink = std::make_unique<VcdSink>(options_.path);
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
    for (std::size_t k = open.size(); k > common; --k) sink->upscope();
    open.resize(common);
    for (std::size_t k = common; k < parts.size(); ++k) {
      sink->scope(parts[k]);
      open.push_back(parts[k]);
    }
    sink->var(i, var, s.width);
  }
  for (std::size_t k = open.size(); k > 0; --k) sink->upscope();

  std::vector<std::int64_t> value(signals_.size());
  const Ps start = options_.begin;
  sink->start(start);
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    value[i] = signals_[i].base;
    sink->value(static_cast<int>(i), value[i], signals_[i].width);
  }
  sink->initial_done();
  // Per time step, the signals that moved, up to the run's end.
  replay(value, end_of_run, [&](Ps t, const std::vector<int>& ids) {
    sink->time(t);
    for (int id : ids) {
      sink->value(id, value[static_cast<size_t>(id)], signals_[static_cast<size_t>(id)].width);
      ++written_;
    }
  });
  sink->close(std::max(end_of_run, start));
}

void WaveTrace::replay(std::vector<std::int64_t>& value, Ps until,
                       const std::function<void(Ps, const std::vector<int>&)>& step) {
  std::stable_sort(changes_.begin(), changes_.end(), [](const Change& a, const Change& b) {
    return a.t != b.t ? a.t < b.t : a.seq < b.seq;
  });
  std::vector<char> moved(signals_.size(), 0);
  std::vector<int> touched;
  for (std::size_t k = 0; k < changes_.size() && changes_[k].t <= until;) {
    const Ps t = changes_[k].t;
    for (; k < changes_.size() && changes_[k].t == t; ++k) {
      const Change& c = changes_[k];
      auto& v = value[static_cast<size_t>(c.id)];
      v = c.delta ? v + c.value : c.value;
      if (!moved[static_cast<size_t>(c.id)]) {
        moved[static_cast<size_t>(c.id)] = 1;
        touched.push_back(c.id);
      }
    }
    step(t, touched);
    for (int id : touched) moved[static_cast<size_t>(id)] = 0;
    touched.clear();
  }
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
