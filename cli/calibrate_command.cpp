#include "cli/calibrate_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/compare_command.hpp"
#include "cli/interrupt.hpp"
#include "models/core/config.hpp"
#include "models/core/errors.hpp"
#include "models/core/fit_search.hpp"

namespace fabricsim {

namespace {

namespace fs = std::filesystem;

// A parameter to fit: its range and its type (an integer fits on whole steps).
struct Fitted {
  FitParam param;
  bool integer = false;
  std::string unit;
  double start = 0;  // the configuration's value (with --set)
};

// Errors of one log at one point, as compare computes them.
struct Errors {
  int sizes = 0, busbw_sizes = 0;
  double time_mean = 0, time_max = 0, busbw_mean = 0, busbw_max = 0;
  double time_sum = 0;  // sum of |time error|: the objective pools these

  static Errors of(const CompareResult& r) {
    Errors e;
    for (const ComparedSize& s : r.sizes) {
      ++e.sizes;
      e.time_sum += std::fabs(s.time_error);
      e.time_max = std::max(e.time_max, std::fabs(s.time_error));
      if (!s.busbw_resolved) continue;
      ++e.busbw_sizes;
      e.busbw_mean += std::fabs(s.busbw_error);
      e.busbw_max = std::max(e.busbw_max, std::fabs(s.busbw_error));
    }
    e.time_mean = e.sizes ? e.time_sum / e.sizes : 0;
    e.busbw_mean = e.busbw_sizes ? e.busbw_mean / e.busbw_sizes : 0;
    return e;
  }
  // "time 5.4 / 38.0%, busbw 8.4 / 27.5%": mean / max |error|.
  std::string text() const {
    std::string t = fmt::format("time {:.1f} / {:.1f}%", 100 * time_mean, 100 * time_max);
    t += busbw_sizes ? fmt::format(", busbw {:.1f} / {:.1f}%", 100 * busbw_mean, 100 * busbw_max)
                     : std::string(", busbw -");
    return t;
  }
  nlohmann::json json() const {
    const auto opt = [](int n, double v) { return n ? nlohmann::json(v) : nlohmann::json(); };
    return {{"sizes", sizes},
            {"time_mean_abs", opt(sizes, time_mean)},
            {"time_max_abs", opt(sizes, time_max)},
            {"busbw_sizes", busbw_sizes},
            {"busbw_mean_abs", opt(busbw_sizes, busbw_mean)},
            {"busbw_max_abs", opt(busbw_sizes, busbw_max)}};
  }
};

// Why the search stopped before its end: a simulation failed, an input was
// refused, or a signal arrived.
struct Stop : std::runtime_error {
  int status;
  Stop(int st, const std::string& what) : std::runtime_error(what), status(st) {}
};

const ParamInfo& info_of(const Schema<Config>& schema, const std::string& key) {
  for (const auto& e : schema.entries())
    if (e.info.key == key) return e.info;
  throw ConfigError(fmt::format("--fit: unknown parameter '{}' (fabricsim params lists them)", key));
}

double number(const std::string& spec, const std::string& text, const char* what) {
  double v = 0;
  if (!parse_finite(text, v))
    throw ConfigError(fmt::format("--fit {}: {} '{}' is not a number", spec, what, text));
  return v;
}

// KEY=LO:HI[:STEP]: a numeric parameter of the schema, a range inside the
// parameter's own, and the step of the values tried (an integer's: whole).
Fitted parse_fit(const Schema<Config>& schema, const std::string& spec) {
  const auto eq = spec.find('=');
  const std::string key = spec.substr(0, eq);
  const ParamInfo& info = info_of(schema, key);
  if (info.type != ParamType::kInt && info.type != ParamType::kReal)
    throw ConfigError(fmt::format("--fit {}: {} is a {}; calibrate fits numbers (integer or real parameters)",
                                  spec, key, info.type_name()));
  if (eq == std::string::npos)
    throw ConfigError(fmt::format("--fit {}: give the range to search, {}=LO:HI[:STEP] ({} allows {}{})", spec,
                                  key, key, info.allowed(), info.unit.empty() ? "" : " " + info.unit));
  std::vector<std::string> parts;
  for (std::size_t at = eq + 1;;) {
    const auto colon = spec.find(':', at);
    parts.push_back(spec.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 3)
    throw ConfigError(fmt::format("--fit {}: the range is LO:HI or LO:HI:STEP", spec));
  Fitted f;
  f.integer = info.type == ParamType::kInt;
  f.unit = info.unit;
  f.param.key = key;
  f.param.lo = number(spec, parts[0], "LO");
  f.param.hi = number(spec, parts[1], "HI");
  f.param.step = parts.size() == 3 ? number(spec, parts[2], "STEP") : 0;
  const double lo_allowed = f.integer ? static_cast<double>(info.imin) : info.min;
  const double hi_allowed = f.integer ? static_cast<double>(info.imax) : info.max;
  if (!(f.param.lo < f.param.hi))
    throw ConfigError(fmt::format("--fit {}: LO must be below HI", spec));
  if (f.param.lo < lo_allowed || f.param.hi > hi_allowed || (info.min_exclusive && f.param.lo <= lo_allowed))
    throw ConfigError(fmt::format("--fit {}: the range must lie inside what {} allows: {}", spec, key,
                                  info.allowed()));
  if (f.integer) {
    if (f.param.lo != std::floor(f.param.lo) || f.param.hi != std::floor(f.param.hi))
      throw ConfigError(fmt::format("--fit {}: {} is an integer; LO and HI must be whole", spec, key));
    f.param.step = std::max(1.0, std::round(f.param.step));
  } else if (f.param.step == 0) {
    f.param.step = (f.param.hi - f.param.lo) / 1000;  // 0.1% of the range: values that print short
  }
  if (f.param.step < 0 || f.param.step > f.param.hi - f.param.lo)
    throw ConfigError(fmt::format("--fit {}: STEP must be positive and at most HI - LO", spec));
  return f;
}

std::string value_text(const Fitted& f, double v) {
  return f.integer ? std::to_string(std::llround(v)) : format_real(v);
}

std::string setting(const Fitted& f, double v) { return f.param.key + "=" + value_text(f, v); }

// The files a name may stand for once only, in both lists together.
void check_logs(const CalibrateOptions& opts) {
  if (opts.logs.empty()) throw ConfigError("give the measured logs to fit on");
  if (opts.hold_out.empty())
    throw ConfigError(
        "--hold-out: give at least one measured log not to fit on: a calibration is reported with its "
        "error on measurements it was not fitted on (docs/validation.md)");
  std::set<std::string> seen;
  for (const auto* list : {&opts.logs, &opts.hold_out})
    for (const std::string& l : *list) {
      std::error_code ec;
      const fs::path canon = fs::weakly_canonical(l, ec);
      if (!fs::is_regular_file(l)) throw ConfigError(fmt::format("cannot read nccl-tests output '{}'", l));
      if (!seen.insert(ec ? l : canon.string()).second)
        throw ConfigError(fmt::format(
            "'{}' is given twice: a log is either fitted on or held out, once", l));
    }
}

// The configuration's value of each key, with the user's --set.
std::vector<double> start_values(const CalibrateOptions& opts, std::vector<Fitted>& fitted) {
  const Config base = load_config(opts.config_path, opts.overrides);
  std::vector<double> start;
  for (Fitted& f : fitted) {
    for (const auto& [k, v] : config_values(base))
      if (k == f.param.key) f.start = std::stod(v);
    start.push_back(f.start);
  }
  return start;
}

class Calibration {
 public:
  Calibration(const CalibrateOptions& opts, std::vector<Fitted> fitted, const Interrupts& interrupts)
      : opts_(opts), fitted_(std::move(fitted)), interrupts_(interrupts) {}

  // One log compared with the fitted keys at x, its outputs in `dir`.
  CompareResult compare(const std::string& log, const std::vector<double>& x, const std::string& dir) const {
    CompareOptions c;
    c.log_path = log;
    c.config_path = opts_.config_path;
    c.overrides = opts_.overrides;
    for (std::size_t i = 0; i < fitted_.size(); ++i) c.overrides.push_back(setting(fitted_[i], x[i]));
    c.op = opts_.op;
    c.max_bytes = opts_.max_bytes;
    if (std::find(opts_.logs.begin(), opts_.logs.end(), log) != opts_.logs.end())
      c.only_protocol = opts_.only_protocol;  // held-out logs are compared whole
    c.out_dir = dir;
    CompareResult r = compare_log(c, interrupts_);
    if (Interrupts::requested()) throw Stop(Interrupts::exit_status(), "stopped by " + Interrupts::signal_name());
    if (r.status == 2) throw Stop(2, log + ": " + r.error);
    if (r.status != 0) throw Stop(r.status, fmt::format("{}: a simulation failed at {}", log, point_text(x)));
    if (r.sizes.empty())
      throw Stop(2, fmt::format("{}: no size was simulated{} (see {}/compare.json)", log,
                                c.only_protocol.empty() ? "" : " with --only-protocol " + c.only_protocol, dir));
    return r;
  }

  std::string dir_of(const std::string& what, const std::string& log) const {
    return (fs::path(opts_.out_dir) / what / fs::path(log).stem()).string();
  }

  std::string point_text(const std::vector<double>& x) const {
    std::string t;
    for (std::size_t i = 0; i < fitted_.size(); ++i) t += (t.empty() ? "" : " ") + setting(fitted_[i], x[i]);
    return t;
  }

  // The objective at x: the mean |time error| over the fitted logs' sizes.
  double objective(const std::vector<double>& x) {
    nlohmann::json files = nlohmann::json::array();
    double sum = 0, max = 0;
    int sizes = 0;
    for (const std::string& log : opts_.logs) {
      const Errors e = Errors::of(compare(log, x, dir_of("fit", log)));
      sum += e.time_sum;
      sizes += e.sizes;
      max = std::max(max, e.time_max);
      files.push_back({{"log", log}, {"errors", e.json()}});
    }
    const double v = sum / sizes;
    std::string cols;
    for (std::size_t i = 0; i < fitted_.size(); ++i) cols += fmt::format(" {:>16}", value_text(fitted_[i], x[i]));
    fmt::print("  {:>4}{} {:>16.2f}% {:>7.1f}% {:>6}\n", evaluations_.size() + 1, cols, 100 * v, 100 * max, sizes);
    std::fflush(stdout);
    nlohmann::json values;
    for (std::size_t i = 0; i < fitted_.size(); ++i) values[fitted_[i].param.key] = x[i];
    evaluations_.push_back({{"values", values}, {"time_mean_abs", v}, {"time_max_abs", max},
                            {"sizes", sizes}, {"logs", files}});
    return v;
  }

  void print_header() const {
    std::string ranges, cols;
    for (const Fitted& f : fitted_) {
      ranges += fmt::format("{}{} in [{}, {}]{} (step {}, configured {})", ranges.empty() ? "" : ", ",
                            f.param.key, value_text(f, f.param.lo), value_text(f, f.param.hi),
                            f.unit.empty() ? "" : " " + f.unit, value_text(f, f.param.step),
                            value_text(f, f.start));
      cols += fmt::format(" {:>16}", f.param.key);
    }
    fmt::print("# fabricsim calibrate: {} on {}, fitted on {} log(s), {} held out\n", ranges, opts_.config_path,
               opts_.logs.size(), opts_.hold_out.size());
    fmt::print("# objective: mean |time error| over every size simulated in the fitted logs{}\n",
               opts_.only_protocol.empty() ? "" : " (those measured with protocol " + opts_.only_protocol + ")");
    fmt::print("# {:>4}{} {:>17} {:>8} {:>6}\n", "eval", cols, "mean |time err|", "max", "sizes");
  }

  const nlohmann::json& evaluations() const { return evaluations_; }

 private:
  const CalibrateOptions& opts_;
  std::vector<Fitted> fitted_;
  const Interrupts& interrupts_;
  nlohmann::json evaluations_ = nlohmann::json::array();
};

// Each log at the configured values and at the fit, side by side.
nlohmann::json report(const Calibration& cal, const CalibrateOptions& opts, const std::vector<double>& start,
                      const std::vector<double>& best) {
  fmt::print("#\n# mean / max |error| of each log, at the configured values -> at the fit\n");
  fmt::print("# {:<56} {:<9} {:>5}  {}\n", "log", "role", "sizes", "configured -> fitted");
  nlohmann::json logs = nlohmann::json::array();
  double held_sum[2] = {0, 0};
  int held_sizes = 0;
  for (const auto* list : {&opts.logs, &opts.hold_out}) {
    const bool held = list == &opts.hold_out;
    for (const std::string& log : *list) {
      const Errors before = Errors::of(cal.compare(log, start, cal.dir_of("configured", log)));
      const Errors after = Errors::of(cal.compare(log, best, cal.dir_of("fitted", log)));
      fmt::print("  {:<56} {:<9} {:>5}  {} -> {}\n", fs::path(log).filename().string(),
                 held ? "held out" : "fitted", after.sizes, before.text(), after.text());
      if (held) {
        held_sum[0] += before.time_sum;
        held_sum[1] += after.time_sum;
        held_sizes += after.sizes;
      }
      logs.push_back({{"log", log}, {"role", held ? "held_out" : "fitted"}, {"configured", before.json()},
                      {"fitted", after.json()}});
    }
  }
  fmt::print("# held out: mean |time error| {:.1f}% at the fit ({:.1f}% configured) over {} sizes of {} log(s)\n",
             100 * held_sum[1] / held_sizes, 100 * held_sum[0] / held_sizes, held_sizes, opts.hold_out.size());
  return logs;
}

int run(const CalibrateOptions& opts) {
  const Schema<Config> schema = config_schema();
  std::vector<Fitted> fitted;
  std::set<std::string> user_keys;
  for (const auto& o : opts.overrides) user_keys.insert(o.substr(0, o.find('=')));
  for (const std::string& spec : opts.fit) {
    Fitted f = parse_fit(schema, spec);
    if (user_keys.count(f.param.key))
      throw ConfigError(fmt::format("--fit {}: --set gives {} too; a parameter is fitted or set, not both", spec,
                                    f.param.key));
    for (const Fitted& g : fitted)
      if (g.param.key == f.param.key) throw ConfigError(fmt::format("--fit: {} is given twice", f.param.key));
    fitted.push_back(f);
  }
  if (fitted.empty()) throw ConfigError("--fit: name at least one parameter, KEY=LO:HI[:STEP]");
  if (opts.grid < 3) throw ConfigError(fmt::format("--grid {}: at least 3 points", opts.grid));
  check_logs(opts);
  const std::string only = only_protocol_of(opts.only_protocol);
  const std::vector<double> start = start_values(opts, fitted);

  const Interrupts interrupts;
  Calibration cal(opts, fitted, interrupts);
  cal.print_header();
  std::vector<FitParam> params;
  params.reserve(fitted.size());
  for (const Fitted& f : fitted) params.push_back(f.param);
  FitOptions fo;
  fo.grid = opts.grid;
  nlohmann::json out = {{"config", opts.config_path}, {"overrides", opts.overrides}, {"logs", opts.logs},
                        {"hold_out", opts.hold_out}, {"objective", "mean |time error| over the fitted logs' sizes"},
                        {"max_bytes", opts.max_bytes ? nlohmann::json(opts.max_bytes) : nlohmann::json()},
                        {"only_protocol", only.empty() ? nlohmann::json() : nlohmann::json(only)}};
  const auto write = [&] {
    out["evaluations"] = cal.evaluations();
    std::error_code ec;
    fs::create_directories(opts.out_dir, ec);
    std::ofstream(fs::path(opts.out_dir) / "calibrate.json") << out.dump(2) << "\n";
  };
  try {
    const FitResult r =
        fit_minimise(params, start, [&](const std::vector<double>& x) { return cal.objective(x); }, fo);
    std::size_t at = 0;
    while (r.evaluations[at].x != r.best.x) ++at;
    fmt::print("# fitted: {} (evaluation {} of {}): mean |time error| {:.2f}% on the fitted logs\n",
               cal.point_text(r.best.x), at + 1, r.evaluations.size(), 100 * r.best.value);
    for (std::size_t i = 0; i < fitted.size(); ++i) {
      const Fitted& f = fitted[i];
      const double v = r.best.x[i];
      if (v - f.param.lo < f.param.step / 2 || f.param.hi - v < f.param.step / 2)
        fmt::print("# note: {} is at the edge of its range: the best value may lie outside it\n",
                   setting(f, v));
    }
    out["logs_report"] = report(cal, opts, start, r.best.x);
    nlohmann::json fit = nlohmann::json::array();
    for (std::size_t i = 0; i < fitted.size(); ++i)
      fit.push_back({{"key", fitted[i].param.key}, {"lo", fitted[i].param.lo}, {"hi", fitted[i].param.hi},
                     {"step", fitted[i].param.step}, {"configured", start[i]}, {"fitted", r.best.x[i]},
                     {"setting", setting(fitted[i], r.best.x[i])}});
    out["fit"] = fit;
    write();
    fmt::print("# use it with --set {}: a calibration, listed in docs/validation.md with the logs it was "
               "fitted on and its held-out error; details in {}\n",
               cal.point_text(r.best.x), (fs::path(opts.out_dir) / "calibrate.json").string());
  } catch (const Stop& s) {
    write();
    fmt::print(stderr, "fabricsim: calibrate {}: {}\n",
               s.status == 2 ? "error" : s.status == 1 ? "FAILED" : "stopped", s.what());
    return s.status;
  }
  return 0;
}

}  // namespace

int calibrate_command(const CalibrateOptions& opts) {
  try {
    return run(opts);
  } catch (const ConfigError& e) {
    fmt::print(stderr, "fabricsim: error: {}\n", e.what());
    return 2;
  }
}

}  // namespace fabricsim
