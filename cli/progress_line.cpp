#include "cli/progress_line.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

#include "models/sc/fabric.hpp"

namespace fabricsim {

ProgressLine::ProgressLine(Fabric& fabric, std::string prefix, std::chrono::steady_clock::time_point t0)
    : fabric_(fabric), prefix_(std::move(prefix)), t0_(t0), last_(t0) {}

void ProgressLine::tick() {
  done_at_ = fabric_.progress();
  if (std::chrono::steady_clock::now() - last_ < std::chrono::milliseconds(500)) return;
  draw(false);
}

void ProgressLine::finish() { draw(true); }

void ProgressLine::draw(bool final_line) {
  const auto now = std::chrono::steady_clock::now();
  last_ = now;
  const double host = std::chrono::duration<double>(now - t0_).count();
  const double done = final_line && !fabric_.interrupted() ? 1.0 : done_at_;
  const std::string eta =
      done > 0.01 && !final_line ? fmt::format(", ETA {:.0f} s", host * (1 - done) / done) : "";
  const std::string detail = fabric_.progress_detail();
  fmt::print(stderr, "\r{}{:.3f} us simulated, {:.0f}%{}, host {:.1f} s, {:.2f} M events/s{}\033[K{}", prefix_,
             ps_to_ns(fabric_.scheduler().now()) / 1000.0, 100 * done, detail.empty() ? "" : ", " + detail, host,
             host > 0 ? static_cast<double>(fabric_.events()) / host / 1e6 : 0.0, eta, final_line ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace fabricsim
