// Waveforms of a run, written as VCD (every waveform viewer reads it) or,
// for a path ending in .fst, as GTKWave's FST; and/or a timeline: Chrome
// trace-event JSON (ui.perfetto.dev, chrome://tracing) with every signal as
// a counter track plus spans (a GPU's phases of a collective) and instants
// (faults, late starts). Plain C++: the models register signals by hierarchical
// name (dots become VCD scopes, so `fabric.sw0.in3.occupancy` is found under
// fabric > sw0 > in3) and report changes with their simulated time.
//
// Changes may be reported out of time order (a link books a packet's end
// when it starts it), so they are kept and sorted when the file is written.
// A signal is either set (absolute values) or counted (deltas: credits and
// occupancies are reported as +n / -n where they happen). Only signals whose
// name matches the scope pattern are kept, and only changes inside the
// window: earlier ones fold into the value shown at the window's start, so
// memory follows what is dumped, not the run.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/core/time.hpp"

namespace fabricsim {

class WaveTrace {
 public:
  struct Options {
    std::string path;         // .vcd / .fst, or empty
    std::string scope = "*";  // glob on full signal names (fnmatch: * ? [..])
    Ps begin = 0;
    Ps end = kNever;
    std::string timeline;     // .json (Chrome trace events), or empty
  };
  explicit WaveTrace(Options options);

  // Registers a signal of `width` bits; returns an id, or -1 when the scope
  // pattern leaves it out (then set/add ignore it).
  // `on_timeline`: false for identifiers (packet numbers, tags) that mean
  // nothing as a counter track.
  int signal(const std::string& name, int width, std::int64_t initial = 0, bool on_timeline = true);
  void set(int id, Ps t, std::int64_t value);
  void add(int id, Ps t, std::int64_t delta);
  // Timeline only: an interval or an instant named `name` on `track` (a
  // module's name like fabric.gpu3), kept when it overlaps the window,
  // whatever the scope (there are few: a handful per GPU and call). `lane`
  // names the module's track it goes on.
  void span(const std::string& track, const std::string& lane, const std::string& name, Ps begin,
            Ps end);
  void instant(const std::string& track, const std::string& name, Ps t);

  // Writes the file (throws std::runtime_error naming the path on failure).
  void write(Ps end_of_run);
  std::uint64_t changes_written() const { return written_; }
  const Options& options() const { return options_; }

 private:
  struct Signal {
    std::string name;
    int width;
    std::int64_t base;   // value at the window's start
    Ps base_t = 0;       // time of the latest `set` folded into base
    bool counter = false;
    bool timeline = true;
  };
  struct Change {
    Ps t;
    std::uint32_t seq;  // report order: ties keep it
    int id;
    std::int64_t value;
    bool delta;
  };
  struct Span {
    std::string track, lane, name;
    Ps begin, end;  // end == begin: an instant
    bool instant;
  };
  void write_timeline(Ps end_of_run);
  // Sorts the changes and applies those at or before `until` a time step at
  // a time to `value` (each signal's value at the window's start on entry):
  // `step(t, ids)` gets the signals that moved at t, `value` holding where
  // they are now. The models book some changes ahead of time (a departure, a
  // credit's return); those after the run's end did not happen in the run.
  void replay(std::vector<std::int64_t>& value, Ps until,
              const std::function<void(Ps, const std::vector<int>&)>& step);
  Options options_;
  std::vector<Signal> signals_;
  std::vector<Span> spans_;
  std::vector<Change> changes_;
  std::uint32_t seq_ = 0;
  std::uint64_t written_ = 0;
};

// Parses "START_NS:END_NS" (either side may be empty) into a window; throws
// ConfigError naming the option and the value.
void parse_wave_window(const std::string& text, Ps& begin, Ps& end);

}  // namespace fabricsim
