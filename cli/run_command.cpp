#include "cli/run_command.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "cli/fast_forward_note.hpp"
#include "cli/host_stats.hpp"
#include "cli/interrupt.hpp"
#include "cli/progress_line.hpp"
#include "models/core/config.hpp"
#include "models/core/config_effect.hpp"
#include "models/core/errors.hpp"
#include "models/core/log.hpp"
#include "models/sc/fabric.hpp"
#include "rtl/rtl_alu.hpp"
#include "rtl/rtl_wave.hpp"

namespace fabricsim {

namespace {

// The nccl-tests table (all_reduce_perf style) of a collective sweep.
void print_collectives(const Config& c, const nlohmann::json& s, const std::string& path) {
  const auto& k = s["collectives"];
  const std::string fabric =
      c.topology.kind == TopologyKind::kScaleOut
          ? fmt::format("{} domains of {} GPUs x {} switches, NICs into {} leaves + {} spines",
                        c.scaleout.domains, c.topology.endpoints, c.topology.switches,
                        s["tiers"]["leaves"].get<int>(), s["tiers"]["spines"].get<int>())
          : fmt::format("{} endpoints x {} switches",
                        c.topology.kind == TopologyKind::kSingle ? c.sw.ports : c.topology.endpoints,
                        c.topology.kind == TopologyKind::kSingle ? 1 : c.topology.switches);
  fmt::print("fabricsim: {} {} on {} GPUs ({}), {} {}, {} B payloads\n",
             k["op"].get<std::string>(), k["algorithm"].get<std::string>(), k["gpus"].get<int>(),
             fabric, to_string(c.collective.dtype),
             reduces(c.collective.op) ? to_string(c.collective.redop) : "(no reduction)",
             c.collective.payload_bytes);
  // The GPU side (collective.protocol): NCCL's algorithm, protocol and channels per size.
  const bool gpu_side = c.collective.protocol != Protocol::kIdeal;
  fmt::print("#\n# {:>12} {:>12} {:>8} {:>6} {:>10} {:>9} {:>9} {:>8}{}\n", "size", "count", "type",
             "redop", "time", "algbw", "busbw", "#wrong", gpu_side ? "  algorithm protocol channels" : "");
  fmt::print("# {:>12} {:>12} {:>8} {:>6} {:>10} {:>9} {:>9} {:>8}\n", "(B)", "(elements)", "", "",
             "(us)", "(GB/s)", "(GB/s)", "");
  const bool cut_short = s["sim"].contains("interrupted");
  for (const auto& r : k["rows"]) {
    if (cut_short && r["iterations"].get<int>() == 0) continue;  // not reached
    const bool checked = k["check"].get<bool>();
    fmt::print("  {:>12} {:>12} {:>8} {:>6} {:>10.2f} {:>9.2f} {:>9.2f} {:>8}{}\n",
               r["size_bytes"].get<std::uint64_t>(), r["count"].get<std::uint64_t>(),
               r["type"].get<std::string>(), r["redop"].get<std::string>(),
               r["time_us"].get<double>(), r["algbw_GBps"].get<double>(),
               r["busbw_GBps"].get<double>(),
               checked ? std::to_string(r["wrong"].get<std::uint64_t>()) : std::string("n/a"),
               gpu_side ? fmt::format("  {:>9} {:>8} {:>8}", r["algorithm"].get<std::string>(),
                                      r["protocol"].get<std::string>(), r["channels"].get<int>())
                        : std::string());
  }
  for (const auto& r : k["rows"]) {
    const std::string note = fast_forward_note(r);
    if (!note.empty()) fmt::print("# {:>12} B: {}\n", r["size_bytes"].get<std::uint64_t>(), note);
  }
  for (const auto& r : k["rows"])
    if (r.contains("intra_done_us"))
      fmt::print("# {:>12} B: reduce-scatter in the domains done at {:.2f} us, all-reduce across "
                 "them at {:.2f} us, all-gather in the domains at {:.2f} us\n",
                 r["size_bytes"].get<std::uint64_t>(), r["intra_done_us"].get<double>(),
                 r["inter_done_us"].get<double>(), r["time_us"].get<double>());
  if (s.contains("tiers")) {
    const auto& t = s["tiers"];
    fmt::print("# bytes on scale-up links {:.4g}, on scale-out links {:.4g} ({:.4g} into NICs); "
               "mean utilization {:.3f} / {:.3f}\n",
               t["scale_up"]["bytes"].get<double>(), t["scale_out"]["bytes"].get<double>(),
               t["boundary_bytes"].get<double>(), t["scale_up"]["utilization_mean"].get<double>(),
               t["scale_out"]["utilization_mean"].get<double>());
  }
  fmt::print("# host {:.2f} s, {:.2f} M events/s, peak RSS {:.0f} MiB -> {}\n",
             s["sim"]["host_seconds"].get<double>(),
             s["host"]["events_per_second"].get<double>() / 1e6,
             static_cast<double>(s["host"]["peak_rss_bytes"].get<std::uint64_t>()) / 1048576.0, path);
}

// collective.workload: one line per call of the last step, then the step.
void print_workload(const Config& c, const nlohmann::json& s, const std::string& path) {
  const auto& k = s["collectives"];
  fmt::print("fabricsim: workload {} ({}) on {} GPUs, {}\n", k["workload"].get<std::string>(),
             k["file"].get<std::string>(), k["gpus"].get<int>(), to_string(c.collective.dtype));
  fmt::print("# {:>14} {:>12} {:>12} {:>10} {:>10} {:>10} {:>9} {:>11} {:>11} {:>7}\n", "call", "op",
             "group", "size", "compute", "time", "busbw", "scale-up", "scale-out", "#wrong");
  fmt::print("# {:>14} {:>12} {:>12} {:>10} {:>10} {:>10} {:>9} {:>11} {:>11} {:>7}\n", "", "", "",
             "(B)", "(us)", "(us)", "(GB/s)", "(B)", "(B)", "");
  const int last = k["rows"].empty() ? 0 : k["rows"].back()["iteration"].get<int>();
  for (const auto& r : k["rows"]) {
    if (r["iteration"].get<int>() != last) continue;
    fmt::print("  {:>14} {:>12} {:>12} {:>10} {:>10.2f} {:>10.2f} {:>9.2f} {:>11.4g} {:>11.4g} {:>7}\n",
               r["name"].get<std::string>(), r["op"].get<std::string>(),
               r["group"].get<std::string>() + "=" + r["layout"].get<std::string>(),
               r["size_bytes"].get<std::uint64_t>(), r["compute_us"].get<double>(),
               r["time_us"].get<double>(), r["busbw_GBps"].get<double>(),
               r["scale_up_bytes"].get<double>(), r["scale_out_bytes"].get<double>(),
               k["check"].get<bool>() ? std::to_string(r["wrong"].get<std::uint64_t>()) : "n/a");
  }
  std::string steps;
  for (const auto& t : k["step_time_us"]) steps += fmt::format(" {:.2f}", t.get<double>());
  fmt::print("# step time (us):{}; last step: {:.2f} us in collectives, {:.2f} us of compute\n", steps,
             k["last_step_communication_us"].get<double>(), k["last_step_compute_us"].get<double>());
  fmt::print("# host {:.2f} s, {:.2f} M events/s, peak RSS {:.0f} MiB -> {}\n",
             s["sim"]["host_seconds"].get<double>(),
             s["host"]["events_per_second"].get<double>() / 1e6,
             static_cast<double>(s["host"]["peak_rss_bytes"].get<std::uint64_t>()) / 1048576.0, path);
}

void print_summary(const Config& c, const nlohmann::json& s, const std::string& path) {
  if (s.contains("collectives") && s["collectives"].contains("workload")) {
    print_workload(c, s, path);
    return;
  }
  if (s.contains("collectives")) {
    print_collectives(c, s, path);
    return;
  }
  const auto& t = s["throughput"];
  const auto& l = s["latency_ns"];
  const auto& k = s["conservation"];
  const std::string fabric =
      c.topology.kind == TopologyKind::kSingle
          ? fmt::format("{}-port switch", c.sw.ports)
          : fmt::format("{} endpoints x {} switches ({}-port)", c.topology.endpoints,
                        c.topology.switches, c.sw.ports);
  fmt::print("fabricsim: {}, {} queues, {} x{}, {} traffic, load {:.3f}, {}-flit packets\n", fabric,
             to_string(c.sw.queueing), to_string(c.sw.allocator), c.sw.iterations,
             to_string(c.traffic.pattern), c.traffic.load, c.traffic.packet_flits);
  fmt::print("  window      {:.1f} ns after {:.1f} ns warm-up ({:.0f} flit cycles of {:.3f} ns)\n",
             s["sim"]["window_ns"].get<double>(), s["sim"]["warmup_ns"].get<double>(),
             s["sim"]["window_flit_cycles"].get<double>(), s["sim"]["flit_time_ns"].get<double>());
  fmt::print("  throughput  offered {:.4f}  accepted {:.4f} flits/cycle/endpoint  ({:.2f} GB/s payload per endpoint)\n",
             t["offered"].get<double>(), t["accepted"].get<double>(),
             t["accepted_payload_GBps_per_endpoint"].get<double>());
  fmt::print("  latency ns  mean {:.1f}  p50 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}  ({} packets)\n",
             l["mean"].get<double>(), l["p50"].get<double>(), l["p99"].get<double>(),
             l["p999"].get<double>(), l["max"].get<double>(), l["count"].get<std::uint64_t>());
  fmt::print("  packets     injected {}  delivered {}  in flight {}  lost {}  (source queue {})\n",
             k["injected"].get<std::uint64_t>(), k["delivered"].get<std::uint64_t>(),
             k["in_flight"].get<std::uint64_t>(), k["lost"].get<std::int64_t>(),
             k["source_queued"].get<std::uint64_t>());
  fmt::print("  host        {:.2f} s, {:.2f} M events/s, peak RSS {:.0f} MiB -> {}\n",
             s["sim"]["host_seconds"].get<double>(),
             s["host"]["events_per_second"].get<double>() / 1e6,
             static_cast<double>(s["host"]["peak_rss_bytes"].get<std::uint64_t>()) / 1048576.0, path);
}

// Always printed (--quiet too): the exit status alone would not say that
// stats.json covers only part of the run.
void print_interrupted(const Fabric& f, const std::string& path) {
  const CollectiveSweep* k = f.sweep();
  const std::string where =
      k ? fmt::format(" during call {} of {}", k->current_index() + 1, k->calls().size()) : "";
  fmt::print(stderr,
             "fabricsim: {}: stopped at {:.3f} us simulated{}; statistics of the part simulated "
             "(marked interrupted) -> {}\n",
             Interrupts::signal_name(), ps_to_ns(f.window().end) / 1000.0, where, path);
}

}  // namespace

int run_command(const RunOptions& opts) {
  Config cfg;
  try {
    cfg = load_config(opts.config_path, opts.overrides);
  } catch (const ConfigError& e) {
    fmt::print(stderr, "fabricsim: error: {}\n", e.what());
    return 2;
  }
  // Always printed (--quiet too): a setting that cannot matter is a mistake
  // in the experiment, not in the run.
  const std::vector<std::string> ignored =
      ignored_settings(cfg, keys_set_by_user(opts.config_path, opts.overrides));
  for (const auto& w : ignored) fmt::print(stderr, "fabricsim: warning: {}\n", w);

  // --wave, --timeline and --wave-rtl share the scope and the window.
  auto ends_with = [](const std::string& s, const char* suffix) {
    const std::size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
  };
  if (!opts.wave.empty() && !ends_with(opts.wave, ".vcd") && !ends_with(opts.wave, ".fst")) {
    fmt::print(stderr,
               "fabricsim: error: --wave={}: the waveform file must end in .vcd or .fst "
               "(the format follows the name)\n",
               opts.wave);
    return 2;
  }
  if (!opts.timeline.empty() && !ends_with(opts.timeline, ".json")) {
    fmt::print(stderr,
               "fabricsim: error: --timeline={}: the timeline file must end in .json "
               "(Chrome trace events, for ui.perfetto.dev or chrome://tracing)\n",
               opts.timeline);
    return 2;
  }
  if (!opts.wave_rtl.empty() && !ends_with(opts.wave_rtl, ".fst")) {
    fmt::print(stderr,
               "fabricsim: error: --wave-rtl={}: the RTL waveform file must end in .fst "
               "(Verilator's FST tracing)\n",
               opts.wave_rtl);
    return 2;
  }
  Ps window_begin = 0, window_end = kNever;
  if (!opts.wave_window.empty()) {
    try {
      parse_wave_window(opts.wave_window, window_begin, window_end);
    } catch (const ConfigError& e) {
      fmt::print(stderr, "fabricsim: error: {}\n", e.what());
      return 2;
    }
  }
  for (const std::string* w : {&opts.wave, &opts.wave_rtl, &opts.timeline}) {
    const auto parent = std::filesystem::path(*w).parent_path();
    std::error_code dir_ec;
    if (!w->empty() && !parent.empty()) std::filesystem::create_directories(parent, dir_ec);
  }
  const bool rtl_wave_wanted = !opts.wave_rtl.empty();
  if (rtl_wave_wanted && !uses_reduction_engine(cfg)) {
    fmt::print(stderr,
               "fabricsim: error: --wave-rtl={}: this configuration uses no reduction engine "
               "(it needs a collective with reduction.ports > 0 and an in-switch algorithm: "
               "collective.algorithm=nvls or push)\n",
               opts.wave_rtl);
    return 2;
  }
  RtlWave rtl_wave({opts.wave_rtl, opts.wave_scope, window_begin, window_end});

  // From here on, Ctrl-C stops the run and keeps what was simulated (a
  // signal while the fabric is built stops it at its first check).
  const Interrupts interrupts;
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Fabric> built;
  try {
    built = std::make_unique<Fabric>("fabric", cfg, RtlAlu::factory());
  } catch (const ConfigError& e) {
    fmt::print(stderr, "fabricsim: error: {}\n", e.what());
    return 2;
  }
  Fabric& fabric = *built;
  Log log;
  try {
    for (const auto& rules : opts.log) log.add_rules(rules);
  } catch (const ConfigError& e) {
    fmt::print(stderr, "fabricsim: error: {}\n", e.what());
    return 2;
  }
  log.set_watch(opts.watch);
  fabric.enable_log(log);
  // The progress line: on stderr, on a terminal unless --quiet.
  const bool progress = opts.progress || (!opts.quiet && isatty(STDERR_FILENO));
  log.set_clear_line(progress);
  ProgressLine line(fabric, "fabricsim: ", t0);
  interrupts.watch(fabric, progress ? std::function<void()>([&] { line.tick(); }) : std::function<void()>());
  if (!opts.wave.empty() || !opts.timeline.empty())
    fabric.enable_wave({opts.wave, opts.wave_scope, window_begin, window_end, opts.timeline});
  if (rtl_wave_wanted) fabric.enable_fold_trace(rtl_wave);
  const bool ok = fabric.run();
  if (progress) line.finish();
  const double host_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  nlohmann::json s = fabric.stats();
  s["sim"]["host_seconds"] = host_s;
  s["sim"]["status"] = !ok ? "failed" : fabric.interrupted() ? "interrupted" : "ok";
  if (fabric.interrupted()) s["sim"]["interrupted_by"] = Interrupts::signal_name();
  if (!ok) s["sim"]["error"] = fabric.error();
  if (!ignored.empty()) s["sim"]["ignored_settings"] = ignored;
  s["host"] = {{"build", build_flavour()},
               {"peak_rss_bytes", peak_rss_bytes()},
               {"events_per_second", host_s > 0 ? static_cast<double>(fabric.events()) / host_s : 0.0},
               {"flit_cycles_per_second",
                host_s > 0 ? s["sim"]["simulated_ns"].get<double>() / s["sim"]["flit_time_ns"].get<double>() / host_s
                           : 0.0},
               {"delivered_flits_per_second",
                host_s > 0 ? static_cast<double>(fabric.delivered_flits_total()) / host_s : 0.0}};

  std::error_code ec;
  std::filesystem::create_directories(opts.out_dir, ec);
  const std::string path = (std::filesystem::path(opts.out_dir) / "stats.json").string();
  std::ofstream f(path);
  if (!f) {
    fmt::print(stderr, "fabricsim: error: cannot write '{}'\n", path);
    return 2;
  }
  f << s.dump(2) << "\n";
  f.close();

  // Every fault that was injected, with its time (also in stats.json).
  if (s.contains("faults") && (!opts.quiet || !ok))
    for (const auto& a : s["faults"]) {
      const auto& t = a["targets"];
      fmt::print(stderr, "fabricsim: fault at {:.3f} ns: {} -> {}{}\n", a["at_ns"].get<double>(),
                 a["fault"].get<std::string>(), t[0].get<std::string>(),
                 t.size() > 1 ? fmt::format(" and {} more", t.size() - 1) : std::string());
    }
  if (!ok) {
    fmt::print(stderr, "fabricsim: simulation FAILED: {}\n", fabric.error());
    return 1;
  }
  if (fabric.interrupted()) print_interrupted(fabric, path);
  if (!opts.quiet) print_summary(cfg, s, path);
  // A signal after the run had ended still says the caller was stopped (a
  // shell loop or scripts/sweep then stops too); stats.json is complete.
  return Interrupts::requested() ? Interrupts::exit_status() : 0;
}

}  // namespace fabricsim
