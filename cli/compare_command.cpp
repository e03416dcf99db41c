#include "cli/compare_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "cli/compare_run.hpp"
#include "cli/fast_forward_note.hpp"
#include "cli/interrupt.hpp"
#include "models/core/config.hpp"
#include "models/core/config_effect.hpp"
#include "models/core/errors.hpp"
#include "models/core/log.hpp"
#include "models/core/nccl_log.hpp"

namespace fabricsim {

namespace {

// nccl-tests prints busbw with two decimals: below 1 GB/s that is fewer than
// three significant digits (0.00 at 8 B), too coarse for a relative error.
constexpr double kBusbwResolvedGBps = 1.0;

// What became of one measured size.
enum class Status { kPending, kSimulated, kNotInModel, kBeyondReach, kLeftOut, kNotReached, kFailed };

const char* status_key(Status s) {
  switch (s) {
    case Status::kSimulated:
      return "simulated";
    case Status::kNotInModel:
      return "not_in_model";
    case Status::kBeyondReach:
      return "beyond_reach";
    case Status::kLeftOut:
      return "left_out";
    case Status::kNotReached:
      return "not_reached";
    case Status::kFailed:
      return "failed";
    case Status::kPending:
      break;
  }
  return "pending";
}

// What the model can be told, read from the configuration schema when the
// command runs (collective.protocol exists only once the GPU-side model has it).
struct ModelKeys {
  std::vector<std::string> algorithms;  // collective.algorithm's choices
  bool has_protocol = false;
  std::vector<std::string> protocols;  // collective.protocol's (empty: any)
  bool has_cuda_graph = false;         // gpu.cuda_graph: launches from a CUDA graph
  bool has_registration = false;       // collective.registration: NCCL's registered buffers
};

ModelKeys model_keys() {
  ModelKeys m;
  const Schema<Config> schema = config_schema();
  for (const auto& e : schema.entries()) {
    if (e.info.key == "collective.algorithm") m.algorithms = e.info.choices;
    if (e.info.key == "gpu.cuda_graph") m.has_cuda_graph = true;
    if (e.info.key == "collective.registration") m.has_registration = true;
    if (e.info.key == "collective.protocol") {
      m.has_protocol = true;
      m.protocols = e.info.choices;
    }
  }
  return m;
}

bool allows(const std::vector<std::string>& choices, const std::string& v) {
  return choices.empty() || std::find(choices.begin(), choices.end(), v) != choices.end();
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string value_of(const Config& c, const std::string& key) {
  for (const auto& [k, v] : config_values(c))
    if (k == key) return v;
  return "-";
}

struct Row {
  const NcclRow* m = nullptr;
  std::vector<std::string> sets;  // what this size needs: endpoints, algorithm, protocol
  Status status = Status::kPending;
  std::string why;  // kNotInModel: what the model lacks; kLeftOut: why
  int run = -1;
};

// One simulation: rows with the same settings, sizes a geometric series.
struct Run {
  std::vector<std::string> sets;
  std::vector<std::uint64_t> sizes;
  std::uint64_t factor = 2;
  Config cfg;
  std::string dir;
  bool started = false;
  RunOutcome outcome;
};

struct Plan {
  NcclLog log;
  CollectiveOp op = CollectiveOp::kAllReduce;
  ModelKeys model;
  std::set<std::string> user_keys;  // keys the user's --set gives
  Config base;                      // the configuration with the user's settings only
  std::vector<Row> rows;
  std::vector<Run> runs;
  std::vector<std::string> warnings;
  std::map<std::string, int> protocol_fallbacks;  // what settle_protocols did -> sizes
};

// The log's test: --op, else the log's own "# Collective test starting" line.
CollectiveOp op_of(const CompareOptions& opts, const NcclLog& log) {
  if (!opts.op.empty()) return nccl_test_op(opts.op + "_perf", "--op " + opts.op);
  if (!log.test.empty()) return nccl_test_op(log.test, opts.log_path);
  throw ConfigError(opts.log_path +
                    ": the log does not say which test ran (no '# Collective test starting' "
                    "line): give --op (all_reduce, all_gather, reduce_scatter, alltoall, "
                    "broadcast, reduce)");
}

// The log says how its buffers were registered and the model runs NCCL's
// kernels (the fabric alone, protocol ideal, has no kernels to pick).
bool registers(const Plan& p) {
  return p.model.has_registration && p.log.registration >= 0 &&
         !p.user_keys.count("collective.registration") &&
         value_of(p.base, "collective.protocol") != "ideal";
}

// What every simulation of the log sets: the workload, its type and reduction.
std::vector<std::string> common_sets(const Plan& p) {
  const NcclRow& r0 = p.log.rows.front();
  for (const auto& x : p.log.rows)
    if (x.type != r0.type || x.redop != r0.redop)
      throw ConfigError(fmt::format("{}:{}: {} {} after {} {}: one data type and reduction per log",
                                    p.log.origin, x.line, x.type, x.redop, r0.type, r0.redop));
  // The run lasts as long as the sweep (a cap, as in dgx-h100-allreduce.yaml).
  std::vector<std::string> sets = {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9",
                                   "collective.op=" + to_string(p.op),
                                   "collective.dtype=" + to_string(nccl_type(r0.type, p.log.origin, r0.line)),
                                   "collective.redop=" + to_string(nccl_redop(r0.redop, p.log.origin, r0.line))};
  // How nccl-tests launched its calls ('graph: 1': from a CUDA graph).
  if (p.model.has_cuda_graph && p.log.graph >= 0 && !p.user_keys.count("gpu.cuda_graph"))
    sets.push_back(std::string("gpu.cuda_graph=") + (p.log.graph > 0 ? "true" : "false"));
  return sets;
}

// One key the log decides (unless --set gives it): the name the log
// measured, in the model's terms; the configuration's when the log does
// not say, said outright so that sizes of a known and an unknown choice
// that are the same simulation share it; a name the model lacks makes the
// size 'not in the model'.
void plan_key(const Plan& p, Row& row, const std::string& key, const std::string& measured,
              const std::vector<std::string>& choices, const std::string& what) {
  if (p.user_keys.count(key)) return;
  if (measured.empty()) {
    row.sets.push_back(key + "=" + value_of(p.base, key));
  } else if (allows(choices, lower(measured))) {
    row.sets.push_back(key + "=" + lower(measured));
  } else if (row.status == Status::kPending) {
    row.status = Status::kNotInModel;
    row.why = what + measured;
  }
}

// The settings one size needs, or why it is not simulated.
void plan_row(const Plan& p, const CompareOptions& opts, Row& row) {
  const NcclRow& m = *row.m;
  if (m.ranks > 0 && !p.user_keys.count("topology.endpoints"))
    row.sets.push_back("topology.endpoints=" + std::to_string(m.ranks));
  plan_key(p, row, "collective.algorithm", m.algorithm, p.model.algorithms, "");
  if (p.model.has_protocol) plan_key(p, row, "collective.protocol", m.protocol, p.model.protocols, "protocol ");
  if (row.status == Status::kPending && registers(p) && p.log.registration == 1) {
    row.status = Status::kNotInModel;
    row.why = "-R 1 buffers";
  }
  if (row.status == Status::kPending && opts.max_bytes > 0 && m.size > opts.max_bytes)
    row.status = Status::kBeyondReach;
  if (row.status == Status::kPending && !opts.only_protocol.empty() &&
      lower(m.protocol) != lower(opts.only_protocol)) {
    row.status = Status::kLeftOut;
    row.why = fmt::format("measured with protocol {} (--only-protocol {})",
                          m.protocol.empty() ? "'?'" : m.protocol, lower(opts.only_protocol));
  }
}

// Sizes in geometric series (nccl-tests -b -e -f): each a run of the sweep.
std::vector<std::pair<std::vector<std::uint64_t>, std::uint64_t>> series_of(std::vector<std::uint64_t> s) {
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  std::vector<std::pair<std::vector<std::uint64_t>, std::uint64_t>> out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t j = i;
    std::uint64_t f = 2;
    if (i + 1 < s.size() && s[i + 1] % s[i] == 0 && s[i + 1] / s[i] <= 1024) {
      f = s[i + 1] / s[i];
      for (j = i + 1; j + 1 < s.size() && s[j + 1] % s[j] == 0 && s[j + 1] / s[j] == f;) ++j;
    }
    out.emplace_back(std::vector<std::uint64_t>(s.begin() + static_cast<std::ptrdiff_t>(i),
                                                s.begin() + static_cast<std::ptrdiff_t>(j) + 1),
                     f);
    i = j + 1;
  }
  return out;
}

// Everything one simulation sets: the log's workload, the sizes' settings,
// the sweep first .. last (x factor), and the user's --set last.
std::vector<std::string> settings_of(const CompareOptions& opts, const std::vector<std::string>& common,
                                     const std::vector<std::string>& sets, std::uint64_t first,
                                     std::uint64_t last, std::uint64_t factor) {
  std::vector<std::string> all = common;
  all.insert(all.end(), sets.begin(), sets.end());
  all.push_back("collective.min_bytes=" + std::to_string(first));
  all.push_back("collective.max_bytes=" + std::to_string(last));
  all.push_back("collective.step_factor=" + std::to_string(factor));
  all.insert(all.end(), opts.overrides.begin(), opts.overrides.end());
  return all;
}

// A protocol the log measured that the configuration refuses with the
// size's other settings (a GPU-side protocol the model has for some
// algorithms only) is simulated with the configuration's own protocol, or,
// when the configuration refuses that too (its GPU side runs the ring only),
// with `ideal`, the fabric alone: the simulated column shows it and the
// footer says why.
void settle_protocols(Plan& p, const CompareOptions& opts, const std::vector<std::string>& common) {
  if (!p.model.has_protocol) return;
  const std::string key = "collective.protocol=";
  const std::string own = key + value_of(p.base, "collective.protocol");
  const auto setting = [&](std::vector<std::string>& sets) {
    return std::find_if(sets.begin(), sets.end(),
                        [&](const std::string& x) { return x.rfind(key, 0) == 0; });
  };
  std::map<std::vector<std::string>, std::string> refused;  // settings -> why ("": accepted)
  const auto why = [&](const Row& r, const std::vector<std::string>& sets) -> const std::string& {
    auto t = refused.find(sets);
    if (t != refused.end()) return t->second;
    std::string text;
    try {
      load_config(opts.config_path, settings_of(opts, common, sets, r.m->size, r.m->size, 2));
    } catch (const ConfigError& e) {
      text = e.what();
    }
    return refused.emplace(sets, text).first->second;
  };
  for (Row& r : p.rows) {
    if (r.status != Status::kPending) continue;
    const auto it = setting(r.sets);
    const std::string asked = it == r.sets.end() ? own : *it;
    const std::string& reason = why(r, r.sets);  // (a std::map entry: it stays put)
    if (reason.empty()) continue;
    for (const std::string& alt : {own, key + "ideal"}) {
      if (alt == asked) continue;
      std::vector<std::string> sets = r.sets;
      const auto at = setting(sets);
      if (at == sets.end())
        sets.push_back(alt);
      else
        *at = alt;
      if (!why(r, sets).empty()) continue;
      ++p.protocol_fallbacks[fmt::format(
          "{}/{} on {} GPUs simulated with {}: the configuration refuses {} there ({})",
          r.m->algorithm.empty() ? "?" : r.m->algorithm, r.m->protocol.empty() ? "?" : r.m->protocol,
          r.m->ranks, alt, asked, reason)];
      r.sets = std::move(sets);
      break;
    }
  }
}

// Groups the sizes to simulate by their settings; loads each run's
// configuration (ConfigError if one does not fit).
void plan_runs(Plan& p, const CompareOptions& opts, const std::vector<std::string>& common) {
  std::map<std::vector<std::string>, std::vector<std::uint64_t>> groups;
  for (const Row& r : p.rows)
    if (r.status == Status::kPending) groups[r.sets].push_back(r.m->size);
  for (const auto& [sets, sizes] : groups)
    for (const auto& [series, factor] : series_of(sizes)) {
      Run run;
      run.sets = sets;
      run.sizes = series;
      run.factor = factor;
      run.cfg = load_config(opts.config_path, settings_of(opts, common, sets, series.front(), series.back(), factor));
      p.runs.push_back(std::move(run));
    }
  const bool several = p.runs.size() > 1;
  for (std::size_t k = 0; k < p.runs.size(); ++k)
    p.runs[k].dir = several ? (std::filesystem::path(opts.out_dir) / fmt::format("run-{}", k + 1)).string()
                            : opts.out_dir;
  for (Row& r : p.rows) {
    if (r.status != Status::kPending) continue;
    for (std::size_t k = 0; k < p.runs.size(); ++k) {
      const Run& run = p.runs[k];
      if (run.sets == r.sets && std::count(run.sizes.begin(), run.sizes.end(), r.m->size))
        r.run = static_cast<int>(k);
    }
    const int sim_n = endpoint_count(p.runs[static_cast<std::size_t>(r.run)].cfg);
    if (r.m->ranks > 0 && r.m->ranks != sim_n) {
      if (!p.user_keys.count("topology.endpoints"))
        throw ConfigError(fmt::format("{} ran on {} GPUs; the configuration has {} (topology.endpoints)",
                                      opts.log_path, r.m->ranks, sim_n));
      const std::string w = fmt::format("{} ran on {} GPUs; simulating {} as --set topology.endpoints says",
                                        opts.log_path, r.m->ranks, sim_n);
      if (std::find(p.warnings.begin(), p.warnings.end(), w) == p.warnings.end()) p.warnings.push_back(w);
    }
  }
}

// Parses the log and plans the simulations; ConfigError if anything does not fit.
Plan prepare(const CompareOptions& opts, const std::string& text) {
  only_protocol_of(opts.only_protocol);
  Plan p;
  p.log = parse_nccl_log(text, opts.log_path);
  p.op = op_of(opts, p.log);
  p.model = model_keys();
  for (const auto& o : opts.overrides) p.user_keys.insert(o.substr(0, o.find('=')));
  std::vector<std::string> common = common_sets(p);
  const auto load_base = [&] {
    std::vector<std::string> base = common;
    base.push_back("collective.min_bytes=" + std::to_string(p.log.rows.front().size));
    base.push_back("collective.max_bytes=" + std::to_string(p.log.rows.front().size));
    base.insert(base.end(), opts.overrides.begin(), opts.overrides.end());
    p.base = load_config(opts.config_path, base);
  };
  load_base();
  // How the buffers were registered (nccl-tests -R: 0 none, 2 symmetric
  // windows; 1 is not in the model: plan_row), once the configuration says
  // it runs NCCL's kernels.
  if (registers(p) && p.log.registration != 1) {
    common.push_back(std::string("collective.registration=") +
                     (p.log.registration == 2 ? "symmetric" : "none"));
    load_base();
  }
  for (const NcclRow& m : p.log.rows) {
    Row r;
    r.m = &m;
    plan_row(p, opts, r);
    p.rows.push_back(r);
  }
  settle_protocols(p, opts, common);
  plan_runs(p, opts, common);
  return p;
}

// Runs every simulation in turn; after a signal, the rest are not started.
// Returns the worst status: 2 a configuration refused, else 1 a failure.
int execute(const CompareOptions& opts, Plan& p, const Interrupts& interrupts) {
  int worst = 0;
  ChildView view{opts.log, opts.progress, ""};
  for (Run& run : p.runs) {
    if (Interrupts::requested()) break;
    run.started = true;
    view.label = fmt::format("fabricsim: simulation {} of {}: ", &run - p.runs.data() + 1, p.runs.size());
    run.outcome = simulate_in_child(run.cfg, run.dir, interrupts, view);
    const int st = run.outcome.status;
    if (st == 1 || st == 2) {
      fmt::print(stderr, "fabricsim: {}: {}\n", st == 2 ? "error" : "simulation FAILED", run.outcome.error);
      worst = std::max(worst, st);
    }
  }
  for (Row& r : p.rows) {
    if (r.status != Status::kPending) continue;
    const Run& run = p.runs[static_cast<std::size_t>(r.run)];
    const int st = run.outcome.status;
    if (!run.started) r.status = Status::kNotReached;
    else if (st == 1 || st == 2) r.status = Status::kFailed;
    else r.status = Status::kSimulated;
  }
  return worst;
}

const nlohmann::json* simulated_row(const nlohmann::json& s, std::uint64_t size) {
  if (!s.is_object() || !s.contains("collectives")) return nullptr;  // (a run that failed early)
  const nlohmann::json* sim = nullptr;
  for (const auto& x : s["collectives"]["rows"])
    if (x["size_bytes"].get<std::uint64_t>() == size && x["iterations"].get<int>() > 0)
      sim = &x;  // (none: a size an interrupted run did not reach)
  return sim;
}

const nlohmann::json* sim_of(const Plan& p, const Row& r) {
  if (r.run < 0) return nullptr;
  const auto& stats = p.runs[static_cast<std::size_t>(r.run)].outcome.stats;
  return stats ? simulated_row(*stats, r.m->size) : nullptr;
}

// Relative errors of one measured quantity, simulated against measured.
struct ErrorSum {
  double sum = 0, max = 0;
  int n = 0;
  void add(double e) {
    sum += std::fabs(e);
    max = std::max(max, std::fabs(e));
    ++n;
  }
  std::string text(const char* what) const {
    return n == 0 ? fmt::format("{}: none", what)
                  : fmt::format("{} mean |error| {:.1f}%, max {:.1f}% over {} sizes", what,
                                100.0 * sum / n, 100.0 * max, n);
  }
  nlohmann::json json() const {
    return {{"sizes", n}, {"mean_abs", n ? nlohmann::json(sum / n) : nlohmann::json()},
            {"max_abs", n ? nlohmann::json(max) : nlohmann::json()}};
  }
};

// nccl-tests runs each size twice, out of place and in place: the same
// algorithm and kernel, so the two times differ mostly by the machine's
// run-to-run spread.
// Where they are further apart than the largest busbw error issue 27 allows
// (15%), the row cannot test that bound: it is compared as every row is
// (against the out-of-place run) and flagged unsteady, and the summary also
// gives the errors over the steady rows.
constexpr double kUnsteadySpread = 0.15;

// max / min - 1 of the two runs; negative when the log has no in-place time.
double run_spread(const NcclRow& m) {
  if (m.in_place_time_us <= 0) return -1;
  return std::max(m.time_us, m.in_place_time_us) / std::min(m.time_us, m.in_place_time_us) - 1;
}
bool unsteady(const NcclRow& m) { return run_spread(m) > kUnsteadySpread; }

// One size compared: the measured and simulated values and their errors.
struct Cell {
  const nlohmann::json* sim = nullptr;
  double time_err = 0, busbw_err = 0;
  bool busbw_resolved = false;  // measured busbw printed with enough digits
};

Cell cell_of(const Plan& p, const Row& r) {
  Cell c;
  c.sim = sim_of(p, r);
  if (!c.sim) return c;
  c.time_err = ((*c.sim)["time_us"].get<double>() - r.m->time_us) / r.m->time_us;
  c.busbw_resolved = r.m->busbw >= kBusbwResolvedGBps;
  if (c.busbw_resolved) c.busbw_err = ((*c.sim)["busbw_GBps"].get<double>() - r.m->busbw) / r.m->busbw;
  return c;
}

std::string measured_choice(const NcclRow& m) {
  return (m.algorithm.empty() ? "?" : m.algorithm) + "/" + (m.protocol.empty() ? "?" : m.protocol);
}

std::string sim_algorithm(const Run& run) {
  return to_string(run.cfg.collective.algorithm);
}

// The algorithm one size ran with: the stats row's (auto resolved per size),
// else the configuration's.
std::string sim_algorithm(const Run& run, const nlohmann::json* sim) {
  if (sim && sim->contains("algorithm")) return (*sim)["algorithm"].get<std::string>();
  return sim_algorithm(run);
}

std::string sim_protocol(const Plan& p, const Run& run) {
  return p.model.has_protocol ? value_of(run.cfg, "collective.protocol") : "-";
}

// The protocol one size ran with: the stats row's (auto resolved per size),
// else the configuration's.
std::string sim_protocol(const Plan& p, const Run& run, const nlohmann::json* sim) {
  if (sim && sim->contains("protocol")) return (*sim)["protocol"].get<std::string>();
  return sim_protocol(p, run);
}

// The last column: what was simulated, or why nothing was.
std::string outcome_text(const Plan& p, const Row& r) {
  switch (r.status) {
    case Status::kNotInModel:
      return "not in the model: " + r.why;
    case Status::kBeyondReach:
      return "not simulated: beyond host-time reach (issue 28)";
    case Status::kLeftOut:
      return "left out: " + r.why;
    case Status::kNotReached:
      return fmt::format("not reached ({})", Interrupts::signal_name());
    case Status::kFailed:
      return "the simulation failed";
    default:
      break;
  }
  const Run& run = p.runs[static_cast<std::size_t>(r.run)];
  const nlohmann::json* sim = sim_of(p, r);
  if (!sim)
    return Interrupts::requested() ? fmt::format("not reached ({})", Interrupts::signal_name())
                                   : std::string("not reached (the run ended first: sim.duration_ns)");
  return sim_algorithm(run, sim) + "/" + sim_protocol(p, run, sim);
}

std::string gpus_text(const NcclLog& log) {
  if (log.ranks > 0) return std::to_string(log.ranks);
  std::vector<int> n;
  for (const auto& s : log.sections)
    if (s.ranks > 0 && std::find(n.begin(), n.end(), s.ranks) == n.end()) n.push_back(s.ranks);
  if (n.empty()) return "?";
  std::string t;
  for (int x : n) t += (t.empty() ? "" : "/") + std::to_string(x);
  return t;
}

void print_section(const NcclLog& log, std::size_t k) {
  const NcclSection& s = log.sections[k];
  fmt::print("# section {} (line {}{}): {} GPUs{}\n", k + 1, s.line,
             s.title.empty() ? std::string(", the sizes start again") : ", '### " + s.title + "'",
             s.ranks > 0 ? std::to_string(s.ranks) : "?", s.count == 0 ? ", no rows" : "");
}

// The errors of the sizes simulated: all of them, and the steady ones.
struct Errors {
  ErrorSum time, busbw, steady_time, steady_busbw;
  int unsteady_sizes = 0;  // simulated sizes flagged unsteady
};

Errors sum_errors(const Plan& p) {
  Errors e;
  for (const Row& r : p.rows) {
    const Cell c = cell_of(p, r);
    if (!c.sim || r.status != Status::kSimulated) continue;
    e.time.add(c.time_err);
    if (c.busbw_resolved) e.busbw.add(c.busbw_err);
    if (unsteady(*r.m)) {
      ++e.unsteady_sizes;
      continue;
    }
    e.steady_time.add(c.time_err);
    if (c.busbw_resolved) e.steady_busbw.add(c.busbw_err);
  }
  return e;
}

// One line per size of the log: measured against simulated (the size's row
// of its run's stats.json), then what was left out and why.
void print_table(const CompareOptions& opts, const Plan& p) {
  const NcclRow& r0 = p.log.rows.front();
  fmt::print("# fabricsim compare: {} ({}, {} GPUs, {} {}) against {} ({})\n", opts.log_path,
             p.log.test.empty() ? to_string(p.op) : p.log.test, gpus_text(p.log), r0.type, r0.redop,
             opts.config_path, to_string(p.base.collective.dtype));
  fmt::print("# {:>12} {:>3} {:>10} {:>10} {:>9} {:>10} {:>10} {:>9} {:>7}  {:<14} {}\n", "size (B)", "n",
             "time us", "sim us", "error", "busbw GB/s", "sim busbw", "error", "#wrong", "measured",
             "simulated");
  const bool sections = p.log.sections.size() > 1;
  std::size_t next = 0;  // the next section to announce
  for (const Row& r : p.rows) {
    for (; sections && next <= r.m->section; ++next) print_section(p.log, next);
    const Cell c = cell_of(p, r);
    const std::string n = r.m->ranks > 0 ? std::to_string(r.m->ranks) : "?";
    if (!c.sim) {
      fmt::print("  {:>12} {:>3} {:>10.2f} {:>10} {:>9} {:>10.2f} {:>10} {:>9} {:>7}  {:<14} {}\n", r.m->size, n,
                 r.m->time_us, "-", "-", r.m->busbw, "-", "-", "-", measured_choice(*r.m), outcome_text(p, r));
      continue;
    }
    std::string be = "-";
    if (c.busbw_resolved) be = fmt::format("{:.1f}%", 100.0 * c.busbw_err);
    fmt::print("  {:>12} {:>3} {:>10.2f} {:>10.2f} {:>8.1f}% {:>10.2f} {:>10.2f} {:>9} {:>7}  {:<14} {}\n",
               r.m->size, n, r.m->time_us, (*c.sim)["time_us"].get<double>(), 100.0 * c.time_err, r.m->busbw,
               (*c.sim)["busbw_GBps"].get<double>(), be, (*c.sim)["wrong"].get<std::uint64_t>(),
               measured_choice(*r.m), outcome_text(p, r));
  }
  for (; sections && next < p.log.sections.size(); ++next) print_section(p.log, next);
  // Sizes from collective.fast_forward_min_bytes: fast-forwarded or why not.
  for (const Row& r : p.rows) {
    const nlohmann::json* sim = sim_of(p, r);
    const std::string note = sim ? fast_forward_note(*sim) : "";
    if (!note.empty()) fmt::print("# {:>12} B (line {}): {}\n", r.m->size, r.m->line, note);
  }
  for (const Row& r : p.rows) {
    if (!unsteady(*r.m)) continue;
    const nlohmann::json* sim = sim_of(p, r);
    std::string against;
    if (sim && r.status == Status::kSimulated)
      against = fmt::format("; the simulated time is {:+.1f}% off the in-place run",
                            100.0 * ((*sim)["time_us"].get<double>() - r.m->in_place_time_us) /
                                r.m->in_place_time_us);
    fmt::print("# {:>12} B (line {}): unsteady measurement: out of place {:.2f} us, in place {:.2f} us, "
               "{:.1f}% apart (more than {:.0f}%){}\n",
               r.m->size, r.m->line, r.m->time_us, r.m->in_place_time_us, 100.0 * run_spread(*r.m),
               100.0 * kUnsteadySpread, against);
  }
}

// What the comparison leaves out, said where it shows: with protocol
// `ideal` (the fabric alone) the measured time has a floor (launch, protocol
// handshakes, the GPU's copy loop) that the model does not have. Sizes run
// with the GPU side (collective.protocol simple, ll, ll128) have it.
void print_gpu_side(const Plan& p) {
  double floor_us = 0, sim_us = 0;
  std::uint64_t smallest = 0;
  bool fabric_only = false, gpu_side = false;
  for (const Row& r : p.rows) {
    const nlohmann::json* sim = r.status == Status::kSimulated ? sim_of(p, r) : nullptr;
    if (!sim) continue;
    const Run& run = p.runs[static_cast<std::size_t>(r.run)];
    if (p.model.has_protocol && sim_protocol(p, run, sim) != "ideal") {
      gpu_side = true;
      continue;
    }
    fabric_only = true;
    floor_us = floor_us == 0 ? r.m->time_us : std::min(floor_us, r.m->time_us);
    if (smallest == 0 || r.m->size < smallest) {
      smallest = r.m->size;
      sim_us = (*sim)["time_us"].get<double>();
    }
  }
  if (gpu_side && !fabric_only) return;
  fmt::print(
      "# Not in the model: the GPU side of a collective (kernel launch, NCCL's channels and\n"
      "#   protocols with their flags and slots, the SMs' copy and reduce rates); the fabric\n"
      "#   moves bytes at link speed from the first nanosecond.");
  if (floor_us > 0)
    fmt::print(
        " Here no measured call took less\n"
        "#   than {:.2f} us; the smallest size simulated took {:.2f} us: where the measured time stays\n"
        "#   near that floor, the error is that overhead, not the fabric",
        floor_us, sim_us);
  fmt::print(" (docs/validation.md,\n#   \"Comparing with measurements\").\n");
}

template <class Pred>
int count_rows(const Plan& p, Pred pred) {
  return static_cast<int>(std::count_if(p.rows.begin(), p.rows.end(), pred));
}

void print_footer(const CompareOptions& opts, const Plan& p, const Errors& e) {
  const ErrorSum& time_err = e.time;
  const ErrorSum& bw_err = e.busbw;
  const std::string where = p.runs.empty()       ? "none (nothing simulated)"
                            : p.runs.size() > 1 ? opts.out_dir + "/run-*/stats.json"
                                                : opts.out_dir + "/stats.json";
  fmt::print("# {} of {} sizes compared: {}; {} (busbw '-': measured below {:g} GB/s, printed with "
             "too few digits to compare); simulated statistics in {}\n",
             time_err.n, p.rows.size(), time_err.text("time"), bw_err.text("busbw"), kBusbwResolvedGBps, where);
  if (e.unsteady_sizes > 0)
    fmt::print("# without the {} unsteady size{} (the machine's two runs more than {:.0f}% apart): {}; {}\n",
               e.unsteady_sizes, e.unsteady_sizes == 1 ? "" : "s", 100.0 * kUnsteadySpread,
               e.steady_time.text("time"), e.steady_busbw.text("busbw"));
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const Run& run = p.runs[k];
    std::string sets;
    for (const auto& s : run.sets) sets += " " + s;
    const std::string sizes = run.sizes.size() == 1
                                  ? fmt::format("{} B", run.sizes.front())
                                  : fmt::format("{} .. {} B (x{})", run.sizes.front(), run.sizes.back(), run.factor);
    fmt::print("# simulation {}:{}; {}: algorithm {}, protocol {}, {} GPUs\n", k + 1,
               sets.empty() ? " (the configuration's and --set's settings)" : sets, sizes, sim_algorithm(run),
               sim_protocol(p, run), endpoint_count(run.cfg));
  }
  std::map<std::string, int> lacking;
  for (const Row& r : p.rows)
    if (r.status == Status::kNotInModel) ++lacking[r.why];
  for (const auto& [what, n] : lacking)
    fmt::print("# Not in the model, not simulated: {} ({} sizes); nothing else stands in for it\n",
               what.rfind("protocol", 0) == 0 ? what : "algorithm " + what, n);
  if (const int n = count_rows(p, [](const Row& r) { return r.status == Status::kBeyondReach; }))
    fmt::print("# Not simulated: {} sizes above --max-bytes {}, beyond host-time reach (issue 28)\n", n,
               opts.max_bytes);
  if (const int n = count_rows(p, [](const Row& r) { return r.status == Status::kLeftOut; }))
    fmt::print("# Left out: {} sizes the log does not say were run with protocol {} (--only-protocol)\n", n,
               lower(opts.only_protocol));
  for (const auto& [what, n] : p.protocol_fallbacks)
    fmt::print("# Protocol: {} ({} sizes)\n", what, n);
  if (p.model.has_cuda_graph && p.log.graph >= 0)
    fmt::print("# Launch: the log's calls were launched {} (its banner's 'graph: {}'): gpu.cuda_graph={}\n",
               p.log.graph > 0 ? "from a CUDA graph" : "one by one", p.log.graph,
               p.base.gpu.cuda_graph ? "true" : "false");
  if (p.model.has_registration && p.log.registration >= 0)
    fmt::print("# Buffers: the log's calls ran on {} buffers (nccl-tests -R {}): {}\n",
               p.log.registration == 2 ? "symmetric-registered" : p.log.registration == 1 ? "locally registered" : "unregistered",
               p.log.registration,
               registers(p) ? (p.log.registration == 1 ? std::string("not in the model")
                                                       : "collective.registration=" + to_string(p.base.collective.registration))
                            : "collective.registration=" + to_string(p.base.collective.registration) +
                                  (p.user_keys.count("collective.registration") ? " (--set)" : " (the fabric alone: no kernels)"));
  if (!p.model.has_protocol)
    fmt::print("# Protocol: not modelled yet (the configuration has no collective.protocol); the "
               "'measured' column says which NCCL used ('?': the log does not say)\n");
  const int unknown = count_rows(p, [](const Row& r) { return r.run >= 0 && r.m->algorithm.empty(); });
  if (unknown > 0 && !p.user_keys.count("collective.algorithm"))
    fmt::print("# Algorithm: the log does not say which NCCL ran for {} sizes ('?'); simulated with the "
               "configuration's ({})\n",
               unknown, to_string(p.base.collective.algorithm));
  print_gpu_side(p);
}

nlohmann::json opt_number(bool has, double v) { return has ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json row_json(const Plan& p, const Row& r) {
  const NcclRow& m = *r.m;
  const Cell c = cell_of(p, r);
  const Run* run = r.run >= 0 ? &p.runs[static_cast<std::size_t>(r.run)] : nullptr;
  auto text_or_null = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
  nlohmann::json j = {
      {"section", m.section + 1}, {"line", m.line}, {"size_bytes", m.size},
      {"n", m.ranks > 0 ? nlohmann::json(m.ranks) : nlohmann::json()},
      {"measured_time_us", m.time_us}, {"measured_algbw_GBps", m.algbw}, {"measured_busbw_GBps", m.busbw},
      {"measured_in_place_time_us", opt_number(m.in_place_time_us > 0, m.in_place_time_us)},
      {"measured_spread", opt_number(m.in_place_time_us > 0, run_spread(m))}, {"unsteady", unsteady(m)},
      {"measured_algorithm", text_or_null(m.algorithm)}, {"measured_algorithm_from", text_or_null(m.algorithm_from)},
      {"measured_protocol", text_or_null(m.protocol)}, {"measured_protocol_from", text_or_null(m.protocol_from)},
      {"status", status_key(c.sim || r.status != Status::kSimulated ? r.status : Status::kNotReached)},
      {"why", text_or_null(r.why)}, {"simulation", run ? nlohmann::json(r.run + 1) : nlohmann::json()}};
  j["sim_n"] = run ? nlohmann::json(endpoint_count(run->cfg)) : nlohmann::json();
  j["sim_algorithm"] = run ? nlohmann::json(sim_algorithm(*run, c.sim)) : nlohmann::json();
  j["sim_protocol"] = run && p.model.has_protocol ? nlohmann::json(sim_protocol(p, *run, c.sim)) : nlohmann::json();
  j["sim_time_us"] = c.sim ? (*c.sim)["time_us"] : nlohmann::json();
  j["sim_busbw_GBps"] = c.sim ? (*c.sim)["busbw_GBps"] : nlohmann::json();
  j["wrong"] = c.sim ? (*c.sim)["wrong"] : nlohmann::json();
  j["time_error"] = opt_number(c.sim != nullptr, c.time_err);
  j["busbw_error"] = opt_number(c.sim && c.busbw_resolved, c.busbw_err);
  j["fast_forward"] = c.sim && c.sim->contains("fast_forward") ? (*c.sim)["fast_forward"] : nlohmann::json();
  return j;
}

// compare.json: the table as data, for scripts/validate and plots.
void write_json(const CompareOptions& opts, const Plan& p, const Errors& e) {
  nlohmann::json j = {{"log", opts.log_path}, {"config", opts.config_path}, {"test", p.log.test},
                      {"max_bytes", opts.max_bytes ? nlohmann::json(opts.max_bytes) : nlohmann::json()},
                      {"only_protocol", opts.only_protocol.empty() ? nlohmann::json() : nlohmann::json(only_protocol_of(opts.only_protocol))},
                      {"protocol_modelled", p.model.has_protocol},
                      {"protocol_fallbacks", p.protocol_fallbacks},
                      {"busbw_resolved_GBps", kBusbwResolvedGBps},
                      {"graph", p.log.graph >= 0 ? nlohmann::json(p.log.graph) : nlohmann::json()}};
  for (std::size_t k = 0; k < p.log.sections.size(); ++k) {
    const NcclSection& s = p.log.sections[k];
    j["sections"].push_back({{"section", k + 1}, {"title", s.title}, {"line", s.line},
                             {"n", s.ranks > 0 ? nlohmann::json(s.ranks) : nlohmann::json()},
                             {"note", s.note}, {"rows", s.count}});
  }
  j["simulations"] = nlohmann::json::array();
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const Run& run = p.runs[k];
    j["simulations"].push_back({{"simulation", k + 1}, {"settings", run.sets}, {"sizes", run.sizes},
                                {"stats", (std::filesystem::path(run.dir) / "stats.json").string()},
                                {"started", run.started}, {"status", run.outcome.status},
                                {"error", run.outcome.error}, {"host_seconds", run.outcome.host_seconds}});
  }
  for (const Row& r : p.rows) j["rows"].push_back(row_json(p, r));
  j["unsteady_spread"] = kUnsteadySpread;
  j["summary"] = {{"time", e.time.json()},
                  {"busbw", e.busbw.json()},
                  {"unsteady_sizes", e.unsteady_sizes},
                  {"steady_time", e.steady_time.json()},
                  {"steady_busbw", e.steady_busbw.json()}};
  const std::string path = opts.json_path.empty()
                               ? (std::filesystem::path(opts.out_dir) / "compare.json").string()
                               : opts.json_path;
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  if (!f) fmt::print(stderr, "fabricsim: warning: cannot write {}\n", path);
}

// The log read and planned; ConfigError naming what does not fit.
Plan plan_of(const CompareOptions& opts) {
  Log rules;  // --log is refused here, before any simulation starts
  for (const auto& r : opts.log) rules.add_rules(r);
  std::ifstream f(opts.log_path);
  if (!f) throw ConfigError(fmt::format("cannot read nccl-tests output '{}'", opts.log_path));
  std::stringstream text;
  text << f.rdbuf();
  return prepare(opts, text.str());
}

}  // namespace

std::string only_protocol_of(const std::string& protocol) {
  std::string p = lower(protocol);
  if (!p.empty() && p != "simple" && p != "ll" && p != "ll128")
    throw ConfigError(fmt::format(
        "--only-protocol '{}': one of simple, ll, ll128 (NCCL's protocols, as a log names them)", protocol));
  return p;
}

CompareResult compare_log(const CompareOptions& opts, const Interrupts& interrupts) {
  CompareResult out;
  Plan p;
  try {
    p = plan_of(opts);
  } catch (const ConfigError& e) {
    out.status = 2;
    out.error = e.what();
    return out;
  }
  out.status = execute(opts, p, interrupts);
  for (const Row& r : p.rows) {
    const Cell c = cell_of(p, r);
    if (c.sim && r.status == Status::kSimulated)
      out.sizes.push_back({r.m->size, c.time_err, c.busbw_resolved, c.busbw_err});
  }
  write_json(opts, p, sum_errors(p));
  if (Interrupts::requested()) out.status = Interrupts::exit_status();
  return out;
}

int compare_command(const CompareOptions& opts) {
  Plan p;
  try {
    p = plan_of(opts);
  } catch (const ConfigError& e) {
    fmt::print(stderr, "fabricsim: error: {}\n", e.what());
    return 2;
  }
  // As run does: a setting the user gave that the mode ignores is named (the
  // keys compare sets from the log are not the user's).
  for (const auto& w : ignored_settings(p.base, keys_set_by_user(opts.config_path, opts.overrides)))
    fmt::print(stderr, "fabricsim: warning: {}\n", w);
  for (const auto& w : p.warnings) fmt::print(stderr, "fabricsim: warning: {}\n", w);

  // Ctrl-C stops the simulation under way where it is (its finished sizes
  // are compared) and starts no other; the sizes not reached say so.
  const Interrupts interrupts;
  const int worst = execute(opts, p, interrupts);
  const Errors errors = sum_errors(p);
  print_table(opts, p);
  print_footer(opts, p, errors);
  write_json(opts, p, errors);
  for (const Run& run : p.runs)
    if (!run.outcome.stopped.empty())
      fmt::print("# {}: {}; sizes not reached are shown as '-'\n", Interrupts::signal_name(), run.outcome.stopped);
  if (Interrupts::requested()) return Interrupts::exit_status();
  return worst;
}

}  // namespace fabricsim
