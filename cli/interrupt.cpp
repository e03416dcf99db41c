#include "cli/interrupt.hpp"

#include <atomic>
#include <csignal>

#include "models/sc/fabric.hpp"

namespace fabricsim {

namespace {

// A signal handler reaches only static storage, and may only store to
// lock-free atomics: the one piece of process-wide mutable state in
// fabricsim, kept here in the command line. The models never see it; the
// fabric is stopped by a call (Fabric::interrupt) from the polling hook.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler needs a lock-free flag");

struct sigaction g_previous[2];
constexpr int kSignals[2] = {SIGINT, SIGTERM};

void set_handler(int sig, void (*handler)(int), struct sigaction* previous) {
  struct sigaction a {};
  a.sa_handler = handler;
  sigemptyset(&a.sa_mask);
  sigaction(sig, &a, previous);
}

// Async-signal-safe: an atomic store and sigaction. After the first signal
// both go back to their default action, so a second one (Ctrl-C again, or a
// SIGTERM after a SIGINT) ends the process at once.
extern "C" void on_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig, std::memory_order_relaxed);
  for (int s : kSignals) set_handler(s, SIG_DFL, nullptr);
}

}  // namespace

Interrupts::Interrupts() {
  g_signal.store(0, std::memory_order_relaxed);
  for (int k = 0; k < 2; ++k) set_handler(kSignals[k], on_signal, &g_previous[k]);
}

Interrupts::~Interrupts() {
  for (int k = 0; k < 2; ++k) sigaction(kSignals[k], &g_previous[k], nullptr);
}

bool Interrupts::requested() {
  return signal() != 0;
}

int Interrupts::signal() {
  return g_signal.load(std::memory_order_relaxed);
}

std::string Interrupts::signal_name() {
  switch (signal()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(signal());
  }
}

void Interrupts::watch(Fabric& f, std::function<void()> progress) const {
  f.scheduler().set_progress([this, &f, progress = std::move(progress)] {
    if (progress) progress();
    if (requested() && !f.interrupted()) f.interrupt();
  });
}

}  // namespace fabricsim
