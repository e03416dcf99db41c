#include "cli/compare_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/interrupt.hpp"
#include "models/core/config.hpp"
#include "models/core/config_effect.hpp"
#include "models/core/errors.hpp"
#include "models/core/nccl_log.hpp"
#include "models/sc/fabric.hpp"
#include "rtl/rtl_alu.hpp"

namespace fabricsim {

namespace {

// The sweep the log ran: nccl-tests' -b -e -f (a geometric series of sizes).
std::vector<std::string> sweep_of(const NcclLog& log) {
  const auto& r = log.rows;
  std::uint64_t factor = 2;
  if (r.size() > 1) {
    if (r[1].size <= r[0].size || r[1].size % r[0].size != 0)
      throw ConfigError(fmt::format("{}:{}: sizes {} then {}: fabricsim sweeps geometric series "
                                    "(nccl-tests -f), each size a whole multiple of the last",
                                    log.origin, r[1].line, r[0].size, r[1].size));
    factor = r[1].size / r[0].size;
  }
  for (std::size_t i = 1; i < r.size(); ++i)
    if (r[i].size != r[i - 1].size * factor)
      throw ConfigError(fmt::format("{}:{}: size {} breaks the series {} x {} (nccl-tests -f {})",
                                    log.origin, r[i].line, r[i].size, r[i - 1].size, factor, factor));
  for (const auto& x : r)
    if (x.type != r[0].type || x.redop != r[0].redop)
      throw ConfigError(fmt::format("{}:{}: {} {} after {} {}: one data type and reduction per log",
                                    log.origin, x.line, x.type, x.redop, r[0].type, r[0].redop));
  return {"collective.min_bytes=" + std::to_string(r.front().size),
          "collective.max_bytes=" + std::to_string(r.back().size),
          "collective.step_factor=" + std::to_string(factor)};
}

// What the log ran, and the configuration that runs it in the simulator.
struct Comparison {
  NcclLog log;
  CollectiveOp op = CollectiveOp::kAllReduce;
  Config cfg;
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

// Parses the log and loads the configuration with the log's sweep set;
// ConfigError if either does not fit.
Comparison prepare(const CompareOptions& opts, const std::string& text) {
  Comparison c;
  c.log = parse_nccl_log(text, opts.log_path);
  c.op = op_of(opts, c.log);
  const NcclRow& r0 = c.log.rows.front();
  // The run lasts as long as the sweep (a cap, as in dgx-h100-allreduce.yaml).
  std::vector<std::string> sets = {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9",
                                   "collective.op=" + to_string(c.op),
                                   "collective.dtype=" + to_string(nccl_type(r0.type, c.log.origin, r0.line)),
                                   "collective.redop=" + to_string(nccl_redop(r0.redop, c.log.origin, r0.line))};
  for (auto& s : sweep_of(c.log)) sets.push_back(s);
  sets.insert(sets.end(), opts.overrides.begin(), opts.overrides.end());
  c.cfg = load_config(opts.config_path, sets);
  if (c.log.ranks > 0 && c.log.ranks != endpoint_count(c.cfg))
    throw ConfigError(fmt::format("{} ran on {} GPUs; the configuration has {} (topology.endpoints)",
                                  opts.log_path, c.log.ranks, endpoint_count(c.cfg)));
  return c;
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
};

// nccl-tests prints busbw with two decimals: below 1 GB/s that is fewer than
// three significant digits (0.00 at 8 B), too coarse for a relative error.
constexpr double kBusbwResolvedGBps = 1.0;

const nlohmann::json* simulated_row(const nlohmann::json& s, std::uint64_t size) {
  const nlohmann::json* sim = nullptr;
  for (const auto& x : s["collectives"]["rows"])
    if (x["size_bytes"].get<std::uint64_t>() == size && x["iterations"].get<int>() > 0)
      sim = &x;  // (none: a size an interrupted run did not reach)
  return sim;
}

// What the comparison leaves out, said where it shows: the measured time
// has a floor (launch, protocol handshakes, the GPU's copy loop) that the
// model, fabric only, does not have.
void print_not_modelled(const Comparison& c, const nlohmann::json& s) {
  double floor_us = 0, sim_us = 0;
  for (const NcclRow& r : c.log.rows) {
    const nlohmann::json* sim = simulated_row(s, r.size);
    if (!sim) continue;
    floor_us = floor_us == 0 ? r.time_us : std::min(floor_us, r.time_us);
    if (sim_us == 0) sim_us = (*sim)["time_us"].get<double>();
  }
  fmt::print(
      "# Not in the model: the GPU side of a collective (kernel launch, NCCL's channels and\n"
      "#   protocols with their flags and slots, the SMs' copy and reduce rates); the fabric\n"
      "#   moves bytes at link speed from the first nanosecond. Here no measured call took less\n"
      "#   than {:.2f} us; the smallest size simulated took {:.2f} us: where the measured time stays\n"
      "#   near that floor, the error is that overhead, not the fabric (docs/validation.md,\n"
      "#   \"Comparing with measurements\").\n",
      floor_us, sim_us);
}

// One line per size of the log: measured against simulated (the size's row
// of stats.json's collectives), and the mean and largest error of each.
void print_table(const CompareOptions& opts, const Comparison& c, const nlohmann::json& s) {
  fmt::print("# fabricsim compare: {} ({}, {} GPUs, {} {}) against {} ({}, algorithm {})\n",
             opts.log_path, c.log.test.empty() ? to_string(c.op) : c.log.test, endpoint_count(c.cfg),
             c.log.rows.front().type, c.log.rows.front().redop, opts.config_path,
             to_string(c.cfg.collective.dtype), to_string(c.cfg.collective.algorithm));
  fmt::print("# {:>12} {:>10} {:>10} {:>9} {:>10} {:>10} {:>9} {:>7}\n", "size (B)", "time us",
             "sim us", "error", "busbw GB/s", "sim busbw", "error", "#wrong");
  ErrorSum time_err, bw_err;
  for (const NcclRow& r : c.log.rows) {
    const nlohmann::json* sim = simulated_row(s, r.size);
    if (!sim) {
      fmt::print("  {:>12} {:>10.2f} {:>10} {:>9} {:>10.2f} {:>10} {:>9} {:>7}\n", r.size,
                 r.time_us, "-", "-", r.busbw, "-", "-", "-");
      continue;
    }
    const double st = (*sim)["time_us"].get<double>();
    const double sb = (*sim)["busbw_GBps"].get<double>();
    const double te = (st - r.time_us) / r.time_us;
    time_err.add(te);
    std::string be = "-";
    if (r.busbw >= kBusbwResolvedGBps) {
      const double e = (sb - r.busbw) / r.busbw;
      bw_err.add(e);
      be = fmt::format("{:.1f}%", 100.0 * e);
    }
    fmt::print("  {:>12} {:>10.2f} {:>10.2f} {:>8.1f}% {:>10.2f} {:>10.2f} {:>9} {:>7}\n", r.size,
               r.time_us, st, 100.0 * te, r.busbw, sb, be, (*sim)["wrong"].get<std::uint64_t>());
  }
  fmt::print("# {} sizes compared: {}; {} (busbw '-': measured below {:g} GB/s, printed with "
             "too few digits to compare); simulated statistics in {}/stats.json\n",
             time_err.n, time_err.text("time"), bw_err.text("busbw"), kBusbwResolvedGBps,
             opts.out_dir);
  print_not_modelled(c, s);
}

}  // namespace

int compare_command(const CompareOptions& opts) {
  std::ifstream f(opts.log_path);
  if (!f) {
    fmt::print(stderr, "fabricsim: error: cannot read nccl-tests output '{}'\n", opts.log_path);
    return 2;
  }
  std::stringstream text;
  text << f.rdbuf();
  Comparison c;
  try {
    c = prepare(opts, text.str());
  } catch (const ConfigError& e) {
    fmt::print(stderr, "fabricsim: error: {}\n", e.what());
    return 2;
  }
  // As run does: a setting the user gave that the mode ignores is named (the
  // keys compare sets from the log are not the user's).
  for (const auto& w : ignored_settings(c.cfg, keys_set_by_user(opts.config_path, opts.overrides)))
    fmt::print(stderr, "fabricsim: warning: {}\n", w);

  // Ctrl-C stops the sweep of sizes where it is: the sizes done (and the
  // current one's finished iterations) are compared, the rest shown as '-'.
  const Interrupts interrupts;
  std::unique_ptr<Fabric> fabric;
  try {
    fabric = std::make_unique<Fabric>("fabric", c.cfg, RtlAlu::factory());
  } catch (const ConfigError& e) {
    fmt::print(stderr, "fabricsim: error: {}\n", e.what());
    return 2;
  }
  interrupts.watch(*fabric);
  const bool ok = fabric->run();
  nlohmann::json s = fabric->stats();
  if (fabric->interrupted()) s["sim"]["interrupted_by"] = Interrupts::signal_name();
  std::error_code ec;
  std::filesystem::create_directories(opts.out_dir, ec);
  std::ofstream(std::filesystem::path(opts.out_dir) / "stats.json") << s.dump(2) << "\n";
  if (!ok) {
    fmt::print(stderr, "fabricsim: simulation FAILED: {}\n", fabric->error());
    return 1;
  }
  print_table(opts, c, s);
  if (fabric->interrupted()) {
    const CollectiveSweep& k = *fabric->sweep();
    fmt::print("# {}: stopped at {:.3f} us simulated during call {} of {} ({} B); sizes not "
               "reached are shown as '-'\n",
               Interrupts::signal_name(), ps_to_ns(fabric->window().end) / 1000.0,
               k.current_index() + 1, k.calls().size(), k.current().bytes);
  }
  return Interrupts::requested() ? Interrupts::exit_status() : 0;
}

}  // namespace fabricsim
