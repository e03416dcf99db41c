// fabricsim command line. SystemC's own main() prints a banner before
// sc_main runs; ours silences it, then enters the kernel the same way.
#include <systemc>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli/calibrate_command.hpp"
#include "cli/compare_command.hpp"
#include "cli/run_command.hpp"
#include "models/core/config.hpp"

namespace {

using namespace fabricsim;

// What Ctrl-C does (cli/interrupt.hpp), for both simulating commands.
const char* const kOnSignal =
    "Ctrl-C (SIGINT) or SIGTERM stops the simulation at the current simulated instant, writes "
    "stats.json (and any waveform or timeline) for the part simulated, marked \"interrupted\": "
    "true, prints the summary and exits 130 (SIGINT) or 143 (SIGTERM); a second one ends at "
    "once.\nExit status: 0 done, 1 a check failed, 2 bad input, 130/143 interrupted.";

// The configuration file, in the same two forms for every command:
// positional or --config.
void add_config(CLI::App* cmd, std::string& path, const char* what) {
  cmd->add_option("config,--config", path, what)->required();
}

void add_run(CLI::App& app, RunOptions& run, std::int64_t& seed) {
  auto* cmd = app.add_subcommand("run", "run one simulation and write DIR/stats.json");
  add_config(cmd, run.config_path, "YAML configuration file (positional or --config)");
  cmd->add_option("--set", run.overrides, "override a parameter: key=value (repeatable)")
      ->take_all();
  cmd->add_option("--seed", seed, "same as --set sim.seed=N");
  cmd->add_option("--out", run.out_dir, "output directory (default: out)");
  cmd->add_flag("--quiet,-q", run.quiet, "print nothing on success");
  cmd->add_option("--wave", run.wave,
                  "write waveforms of every link and switch to this file (.vcd or .fst)");
  cmd->add_option("--wave-rtl", run.wave_rtl,
                  "write the reduction ALUs' RTL signals (Verilator tracing) to this .fst file");
  cmd->add_option("--timeline", run.timeline,
                  "write a timeline (Chrome trace-event .json for ui.perfetto.dev): each GPU's "
                  "collective phases, link, credit and buffer counters, faults, late starts");
  cmd->add_option("--log", run.log,
                  "log levels per module: GLOB=LEVEL[,...], LEVEL one of off, error, warn "
                  "(default), info (faults, calls), debug (every packet), e.g. "
                  "'fabric.sw0*=debug' (repeatable; a later rule wins)")
      ->take_all();
  cmd->add_option("--watch", run.watch,
                  "log packet SERIAL at every hop (its number; waveforms show SERIAL+1)");
  cmd->add_flag("--progress", run.progress,
                "print the progress line even when stderr is not a terminal "
                "(it is printed on a terminal unless --quiet)");
  cmd->add_option("--wave-scope", run.wave_scope,
                  "only signals and timeline counters (and RTL ALUs) whose full name matches "
                  "this glob, e.g. 'fabric.sw0.*'");
  cmd->add_option("--wave-window", run.wave_window,
                  "only changes (and timeline events) in START_NS:END_NS (either side may be "
                  "empty)");
  cmd->footer(kOnSignal);
}

CLI::App* add_compare(CLI::App& app, CompareOptions& cmp) {
  auto* cmd = app.add_subcommand(
      "compare", "simulate the sizes of an nccl-tests *_perf output and print both side by side");
  cmd->add_option("log", cmp.log_path, "nccl-tests output (all_reduce_perf etc.)")->required();
  add_config(cmd, cmp.config_path,
             "YAML configuration of the fabric (positional, after the log, or --config)");
  cmd->add_option("--set", cmp.overrides, "override a parameter: key=value (repeatable)")
      ->take_all();
  cmd->add_option("--op", cmp.op,
                  "the collective, when the log does not name its test (all_reduce, ...)");
  cmd->add_option("--out", cmp.out_dir,
                  "where the simulated stats.json goes (default out/compare; run-K/stats.json when "
                  "the log's sizes need several simulations)");
  cmd->add_option("--max-bytes", cmp.max_bytes,
                  "simulate sizes up to N bytes only; larger ones are rows marked not simulated "
                  "(default: no limit)");
  cmd->add_option("--only-protocol", cmp.only_protocol,
                  "simulate only the sizes the log says NCCL ran with this protocol (simple, ll, "
                  "ll128); the others are rows marked left out");
  cmd->add_option("--json", cmp.json_path,
                  "write the table as JSON to this file (default OUT/compare.json)");
  cmd->add_option("--log", cmp.log,
                  "log levels per module in every simulation, as run's --log (e.g. 'fabric=info': "
                  "each call as it ends, with its fast-forward rounds)")
      ->take_all();
  cmd->add_flag("--progress", cmp.progress,
                "print each simulation's progress line on stderr (simulated time, host time, "
                "events/s)");
  cmd->footer(kOnSignal);
  return cmd;
}

CLI::App* add_calibrate(CLI::App& app, CalibrateOptions& cal) {
  auto* cmd = app.add_subcommand(
      "calibrate",
      "fit numeric parameters to measured nccl-tests logs and report the error on held-out logs");
  cmd->add_option("logs", cal.logs, "nccl-tests outputs to fit on")->required();
  cmd->add_option("--config", cal.config_path, "YAML configuration of the fabric")->required();
  cmd->add_option("--fit", cal.fit,
                  "a parameter to fit and the range to search: KEY=LO:HI[:STEP] (STEP: the resolution; "
                  "default (HI-LO)/1000, whole for integers); several separated by ',' or repeated")
      ->required()
      ->delimiter(',');
  cmd->add_option("--hold-out", cal.hold_out,
                  "nccl-tests outputs not fitted on, on which the fit's error is reported (at least one)")
      ->required();
  cmd->add_option("--set", cal.overrides, "override a parameter: key=value (repeatable)")->take_all();
  cmd->add_option("--op", cal.op, "the collective, when a log does not name its test");
  cmd->add_option("--max-bytes", cal.max_bytes, "simulate sizes up to N bytes only, as compare does");
  cmd->add_option("--only-protocol", cal.only_protocol,
                  "fit only on the sizes the fitted logs say NCCL ran with this protocol (simple, ll, "
                  "ll128); held-out logs are compared whole");
  cmd->add_option("--grid", cal.grid, "grid points per parameter before the golden-section search (default 9)");
  cmd->add_option("--out", cal.out_dir,
                  "where calibrate.json and each log's compare output go (default out/calibrate)");
  cmd->footer(
      "The objective is the mean |time error| over every size simulated in the fitted logs, each "
      "compared as fabricsim compare does. Ctrl-C stops after the simulation under way; what was "
      "evaluated is in OUT/calibrate.json.\nExit status: 0 fitted, 1 a simulation failed a check, 2 "
      "bad input, 130/143 interrupted.");
  return cmd;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  CLI::App app{"fabricsim: cycle-approximate simulator of scale-up switch fabrics"};
  app.require_subcommand(1);
  RunOptions run;
  std::int64_t seed = -1;
  add_run(app, run, seed);
  CompareOptions cmp;
  auto* cmp_cmd = add_compare(app, cmp);
  CalibrateOptions cal;
  auto* cal_cmd = add_calibrate(app, cal);
  bool markdown = false;
  auto* params_cmd = app.add_subcommand("params", "list every configuration parameter");
  params_cmd->add_flag("--markdown", markdown, "print docs/config.md");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  if (*params_cmd) {
    fmt::print("{}", markdown ? params_markdown() : params_text());
    return 0;
  }
  // A collective sweep ends with sc_stop(); its "stopped by user" note is noise.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  if (*cmp_cmd) return compare_command(cmp);
  if (*cal_cmd) return calibrate_command(cal);
  if (seed >= 0) run.overrides.push_back("sim.seed=" + std::to_string(seed));
  return run_command(run);
}

int main(int argc, char* argv[]) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
