#include "cli/compare_run.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include "cli/interrupt.hpp"
#include "cli/progress_line.hpp"
#include "models/core/errors.hpp"
#include "models/core/log.hpp"
#include "models/sc/fabric.hpp"
#include "rtl/rtl_alu.hpp"

namespace fabricsim {

namespace {

// The child's side: simulate and write stats.json; what happened, as JSON.
nlohmann::json simulate(const Config& cfg, const std::string& out_dir, const Interrupts& interrupts,
                        const ChildView& view) {
  nlohmann::json r = {{"status", 0}};
  const auto t0 = std::chrono::steady_clock::now();
  Log log;  // outlives the fabric that writes to it
  std::unique_ptr<Fabric> fabric;
  try {
    fabric = std::make_unique<Fabric>("fabric", cfg, RtlAlu::factory());
    for (const auto& rules : view.log) log.add_rules(rules);
  } catch (const ConfigError& e) {
    return {{"status", 2}, {"error", e.what()}};
  }
  log.set_clear_line(view.progress);
  if (!view.log.empty()) fabric->enable_log(log);  // else as before --log: no module logs
  ProgressLine line(*fabric, view.label, t0);
  interrupts.watch(*fabric, view.progress ? std::function<void()>([&] { line.tick(); }) : std::function<void()>());
  const bool ok = fabric->run();
  if (view.progress) line.finish();
  nlohmann::json s = fabric->stats();
  if (fabric->interrupted()) {
    s["sim"]["interrupted_by"] = Interrupts::signal_name();
    const CollectiveSweep& k = *fabric->sweep();
    r["status"] = Interrupts::exit_status();
    r["stopped"] = fmt::format("stopped at {:.3f} us simulated during call {} of {} ({} B)",
                               ps_to_ns(fabric->window().end) / 1000.0, k.current_index() + 1,
                               k.calls().size(), k.current().bytes);
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  std::ofstream(std::filesystem::path(out_dir) / "stats.json") << s.dump(2) << "\n";
  if (!ok) r = {{"status", 1}, {"error", fabric->error()}};
  return r;
}

[[noreturn]] void child(int fd, const Config& cfg, const std::string& out_dir, const Interrupts& interrupts,
                        const ChildView& view) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  nlohmann::json r;
  try {
    r = simulate(cfg, out_dir, interrupts, view);
  } catch (const std::exception& e) {
    r = {{"status", 1}, {"error", std::string("the simulation threw: ") + e.what()}};
  }
  const std::string text = r.dump();
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  close(fd);
  std::fflush(nullptr);
  _exit(r["status"].get<int>());
}

// Reads the child's report to its end; a signal seen meanwhile goes on to it.
std::string report_of(int fd, pid_t pid) {
  std::string text;
  bool passed_on = false;
  char buf[4096];
  for (;;) {
    if (Interrupts::requested() && !passed_on) {
      kill(pid, Interrupts::signal());
      passed_on = true;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;  // timeout or EINTR: look at the signals again
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace

RunOutcome simulate_in_child(const Config& cfg, const std::string& out_dir, const Interrupts& interrupts,
                             const ChildView& view) {
  RunOutcome out;
  int fds[2];
  if (pipe(fds) != 0) {
    out.status = 1;
    out.error = fmt::format("cannot make a pipe for the simulation process: {}", std::strerror(errno));
    return out;
  }
  std::error_code ec;  // a stats.json of an earlier compare is not this run's
  std::filesystem::remove(std::filesystem::path(out_dir) / "stats.json", ec);
  std::fflush(nullptr);  // nothing buffered may be written twice
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    out.status = 1;
    out.error = fmt::format("cannot start the simulation process: {}", std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return out;
  }
  if (pid == 0) {
    close(fds[0]);
    child(fds[1], cfg, out_dir, interrupts, view);
  }
  setpgid(pid, pid);  // as the child does: before a terminal's Ctrl-C can reach it
  close(fds[1]);
  const std::string text = report_of(fds[0], pid);
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  out.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const nlohmann::json r = nlohmann::json::parse(text, nullptr, false);
  if (!WIFEXITED(st) || r.is_discarded() || !r.contains("status")) {
    out.status = 1;
    out.error = WIFSIGNALED(st) ? fmt::format("the simulation process ended by signal {}", WTERMSIG(st))
                                : fmt::format("the simulation process exited {} without a report",
                                              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return out;
  }
  out.status = r["status"].get<int>();
  out.error = r.value("error", "");
  out.stopped = r.value("stopped", "");
  std::ifstream f(std::filesystem::path(out_dir) / "stats.json");
  if (!f) return out;
  auto stats = std::make_shared<nlohmann::json>(nlohmann::json::parse(f, nullptr, false));
  if (!stats->is_discarded()) out.stats = std::move(stats);
  return out;
}

}  // namespace fabricsim
