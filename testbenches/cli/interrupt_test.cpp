// Ctrl-C keeps the work: fabricsim run and compare, started as a user starts
// them, get SIGINT or SIGTERM while they simulate; they stop at the current
// simulated instant, write stats.json (and the waveform or timeline asked
// for) of the part simulated, marked interrupted, and exit 130 / 143. A
// second signal ends the process at once.
//
// Timing: every case is far longer than a test may take (its full run would
// last minutes), and each waits for the run's first progress line before
// signalling, so the simulation is under way. Progress lines and the check
// for a signal run at the same points (every 16384 scheduler instants), so
// a signal sent just after a line is seen is acted on at the next of them.
#include <gtest/gtest.h>

#include <csignal>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
const std::string kBin = FABRICSIM_BINARY_DIR "/fabricsim";
const std::string kSrc = FABRICSIM_SOURCE_DIR;
// Generous: a stop takes well under a second on this project's machines.
constexpr auto kPatience = std::chrono::seconds(60);

std::string temp_dir(const std::string& tag) {
  const fs::path d =
      fs::temp_directory_path() / ("fabricsim_interrupt_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// fabricsim with `args`, its stdout and stderr in DIR/stdout and DIR/stderr.
class Process {
 public:
  Process(const std::vector<std::string>& args, const std::string& dir)
      : dir_(dir), pid_(fork()) {
    if (pid_ == 0) {
      const int out = open((dir + "/stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = open((dir + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      // execv takes writable strings: copies of the arguments.
      std::vector<std::vector<char>> text;
      text.emplace_back(kBin.begin(), kBin.end());
      for (const auto& a : args) text.emplace_back(a.begin(), a.end());
      std::vector<char*> argv;
      for (auto& t : text) {
        t.push_back('\0');
        argv.push_back(t.data());
      }
      argv.push_back(nullptr);
      setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
      execv(kBin.c_str(), argv.data());
      _exit(127);
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    if (pid_ > 0 && !ended_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  std::string err() const { return read(dir_ + "/stderr"); }
  std::string out() const { return read(dir_ + "/stdout"); }

  // Waits until stderr holds `text`; false if the process ended first or
  // kPatience passed.
  bool wait_for_stderr(const std::string& text) {
    const auto until = Clock::now() + kPatience;
    while (Clock::now() < until) {
      if (err().find(text) != std::string::npos) return true;
      if (poll()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }
  // The signal handler has run: the process no longer catches `sig`
  // (SigCgt in /proc/PID/status). False if it ended first.
  bool wait_until_not_caught(int sig) {
    const auto until = Clock::now() + kPatience;
    while (Clock::now() < until) {
      std::ifstream f("/proc/" + std::to_string(pid_) + "/status");
      for (std::string line; std::getline(f, line);)
        if (line.rfind("SigCgt:", 0) == 0 &&
            ((std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1) == 0)
          return !poll();
      if (poll()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  // The wait status once it ends (killed after kPatience: -1).
  int wait() {
    const auto until = Clock::now() + kPatience;
    while (Clock::now() < until) {
      if (poll()) return status_;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }

 private:
  bool poll() {
    if (ended_) return true;
    if (waitpid(pid_, &status_, WNOHANG) == pid_) ended_ = true;
    return ended_;
  }
  std::string dir_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool ended_ = false;
};

int exit_code(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

nlohmann::json load(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// Synthetic traffic on a 64-port switch for 100 ms of simulated time: hours
// of host time if it were not stopped.
const std::vector<std::string> kLongSynthetic = {"run",
                                                 kSrc + "/configs/switch64.yaml",
                                                 "--set",
                                                 "sim.warmup_ns=1000",
                                                 "sim.duration_ns=1e8",
                                                 "traffic.load=0.7",
                                                 "--progress",
                                                 "-q"};

TEST(Interrupt, SigintStopsARunAndKeepsItsStatistics) {
  const std::string dir = temp_dir("sigint");
  std::vector<std::string> args = kLongSynthetic;
  args.insert(args.end(),
              {"--out", dir, "--wave", dir + "/w.vcd", "--wave-scope", "fabric.sw0.out0*"});
  Process p(args, dir);
  ASSERT_TRUE(p.wait_for_stderr("us simulated")) << p.err();
  kill(p.pid(), SIGINT);
  const int st = p.wait();
  ASSERT_EQ(exit_code(st), 130) << st << p.err();
  EXPECT_NE(p.err().find("fabricsim: SIGINT: stopped at "), std::string::npos) << p.err();
  const auto s = load(dir + "/stats.json");
  EXPECT_TRUE(s["sim"]["interrupted"].get<bool>());
  EXPECT_EQ(s["sim"]["status"], "interrupted");
  EXPECT_EQ(s["sim"]["interrupted_by"], "SIGINT");
  const double t = s["sim"]["simulated_ns"].get<double>();
  EXPECT_GT(t, 0.0);
  EXPECT_LT(t, 1000 + 1e8);
  // The window closes where the run stopped.
  EXPECT_DOUBLE_EQ(s["sim"]["warmup_ns"].get<double>() + s["sim"]["window_ns"].get<double>(), t);
  // Packets still moving are in flight, none lost; the checks all ran.
  const auto& k = s["conservation"];
  EXPECT_EQ(k["lost"].get<std::int64_t>(), 0);
  EXPECT_GT(k["in_flight"].get<std::uint64_t>(), 0u);
  EXPECT_GT(k["delivered"].get<std::uint64_t>(), 0u);
  // The waveform of the part simulated was written, up to where it stopped
  // (and, as at any run's end, the changes already on their way then: ends
  // of transmissions, credits in flight, well within 1 us).
  const std::string vcd = read(dir + "/w.vcd");
  EXPECT_NE(vcd.find("$scope module out0 $end"), std::string::npos);
  const std::size_t last = vcd.rfind("\n#");
  ASSERT_NE(last, std::string::npos);
  const double last_ps = std::stod(vcd.substr(last + 2));
  EXPECT_GT(last_ps, 0.0);
  EXPECT_LT(last_ps, (t + 1000) * 1000);

  // The part simulated is the full run's: the same run with a window that
  // ends where this one stopped gives the same statistics, bit for bit,
  // except per link and switch buffer: there, transmissions already
  // committed at the stop (starting or ending after it) count in full.
  const std::string full = dir + "/full";
  fs::create_directories(full);
  char duration[64];
  std::snprintf(duration, sizeof duration, "sim.duration_ns=%.3f", t - 1000);
  Process f({"run", kSrc + "/configs/switch64.yaml", "--set", "sim.warmup_ns=1000", duration,
             "traffic.load=0.7", "-q", "--out", full},
            full);
  ASSERT_EQ(exit_code(f.wait()), 0) << f.err();
  const auto r = load(full + "/stats.json");
  auto model = [](nlohmann::json j) {
    for (const char* key : {"host", "links", "switches"}) j.erase(key);
    for (const char* key : {"host_seconds", "status", "interrupted", "interrupted_by"})
      j["sim"].erase(key);
    j["config"].erase("sim.duration_ns");
    return j;
  };
  EXPECT_EQ(model(r).dump(), model(s).dump());
  // A switch commits a send when it grants, switch.pipeline_cycles (16
  // cycles, 10.24 ns here) before it starts: at most 2 packets of 5.76 ns.
  for (const auto& [name, link] : r["links"].items()) {
    EXPECT_GE(s["links"][name]["packets"], link["packets"]) << name;
    EXPECT_LE(s["links"][name]["packets"].get<std::uint64_t>(),
              link["packets"].get<std::uint64_t>() + 4)
        << name;
  }
  fs::remove_all(dir);
}

// A collective sweep (all-reduce, 1 KiB to 256 MiB) stopped by SIGTERM with
// a timeline: the calls finished are in stats.json and the timeline.
TEST(Interrupt, SigtermStopsACollectiveAndWritesItsTimeline) {
  const std::string dir = temp_dir("sigterm");
  Process p({"run", kSrc + "/configs/dgx-h100-allreduce.yaml", "--out", dir, "--timeline",
             dir + "/t.json", "--wave-scope", "fabric.gpu0*", "--progress"},
            dir);
  ASSERT_TRUE(p.wait_for_stderr("us simulated")) << p.err();
  kill(p.pid(), SIGTERM);
  const int st = p.wait();
  ASSERT_EQ(exit_code(st), 143) << st << p.err();
  const auto s = load(dir + "/stats.json");
  EXPECT_TRUE(s["sim"]["interrupted"].get<bool>());
  EXPECT_EQ(s["sim"]["interrupted_by"], "SIGTERM");
  EXPECT_GT(s["sim"]["simulated_ns"].get<double>(), 0.0);
  int done = 0, not_run = 0;
  for (const auto& r : s["collectives"]["rows"]) {
    if (r["iterations"].get<int>() > 0) {
      ++done;
      EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u);
      EXPECT_GT(r["busbw_GBps"].get<double>(), 0.0);
    } else {
      ++not_run;
    }
  }
  EXPECT_GE(done, 2);
  EXPECT_GE(not_run, 1);  // the full sweep did not run
  EXPECT_EQ(s["conservation"]["lost"].get<std::int64_t>(), 0);
  // The summary shows the sizes done only.
  EXPECT_NE(p.out().find("all_reduce ring on 8 GPUs"), std::string::npos) << p.out();
  EXPECT_EQ(p.out().find(" 268435456 "), std::string::npos) << p.out();
  const auto t = load(dir + "/t.json");  // parses: the file was closed
  EXPECT_FALSE(t["traceEvents"].empty());
  fs::remove_all(dir);
}

// The first SIGINT asks for a stop at the next check; a second one, once the
// handler has run, ends the process at once by the default action.
TEST(Interrupt, SecondSigintEndsAtOnce) {
  const std::string dir = temp_dir("twice");
  // NVL72 (72 GPUs, 18 switches): 16384 instants take about 0.3 s of host
  // time here, against a few ms for this test to send the second signal.
  Process p({"run", kSrc + "/configs/nvl72.yaml", "--set", "sim.duration_ns=1e6", "--progress",
             "-q", "--out", dir},
            dir);
  // Just after a progress line: the next check is 16384 instants away.
  ASSERT_TRUE(p.wait_for_stderr("us simulated")) << p.err();
  kill(p.pid(), SIGINT);
  ASSERT_TRUE(p.wait_until_not_caught(SIGINT));
  kill(p.pid(), SIGINT);
  const int st = p.wait();
  ASSERT_TRUE(WIFSIGNALED(st)) << "exit " << exit_code(st) << ": " << p.err();
  EXPECT_EQ(WTERMSIG(st), SIGINT);
  EXPECT_FALSE(fs::exists(dir + "/stats.json"));
  fs::remove_all(dir);
}

// compare of the nccl-tests log `text` (ring on dgx-h100, out in `dir`),
// stopped by SIGINT once the simulation is under way (compare prints no
// progress to wait for): its output, after checking it exited 130 and said
// where it stopped.
std::string compare_stopped(const std::string& dir, const std::string& text) {
  std::ofstream(dir + "/log.txt") << text;
  Process p({"compare", dir + "/log.txt", "--config", kSrc + "/configs/dgx-h100.yaml", "--set",
             "collective.algorithm=ring", "--out", dir},
            dir);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(p.pid(), SIGINT);
  const int st = p.wait();
  EXPECT_EQ(exit_code(st), 130) << st << p.err() << p.out();
  std::string out = p.out();
  EXPECT_NE(out.find("# SIGINT: stopped at "), std::string::npos) << out;
  return out;
}

// compare: the sizes of an nccl-tests log up to 1 GiB; a stop shows the
// sizes simulated next to the log and the others as '-'.
TEST(Interrupt, CompareStopsAfterThePartialResult) {
  const std::string dir = temp_dir("compare");
  std::ostringstream log;
  log << "# Collective test starting: all_reduce_perf\n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong"
         "     time   algbw   busbw #wrong\n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
         "     (us)  (GB/s)  (GB/s)       \n";
  for (std::uint64_t b = 1024; b <= (1ull << 30); b *= 2) {
    const double us = 12.0 + static_cast<double>(b) / 400e3;
    const double algbw = static_cast<double>(b) / us / 1e3;
    log << "  " << b << "  " << b / 4 << "  float  sum  -1  " << us << "  " << algbw << "  "
        << algbw * 1.75 << "  0  " << us << "  " << algbw << "  " << algbw * 1.75 << "  0\n";
  }
  const std::string out = compare_stopped(dir, log.str());
  EXPECT_NE(out.find("sizes compared"), std::string::npos) << out;
  // The largest size was not reached: its simulated columns are '-'.
  EXPECT_NE(out.find(" 1073741824 "), std::string::npos) << out;
  const auto s = load(dir + "/stats.json");
  EXPECT_TRUE(s["sim"]["interrupted"].get<bool>());
  fs::remove_all(dir);
}

// compare with two simulations (one per GPU count): a stop in the first
// ends it where it is and starts no second; those sizes say so.
TEST(Interrupt, CompareStopsAndStartsNoOtherSimulation) {
  const std::string dir = temp_dir("compare_runs");
  std::ostringstream log;
  log << "# COLLECTIVE: all_reduce_perf\n";
  for (int gpus : {2, 4}) {
    log << "### GPUS=" << gpus << "\n";
    for (std::uint64_t b = 1 << 20; b <= (1ull << 30); b *= 2)
      log << "  " << b << "  " << b / 4 << "  float  sum  -1  100.0  1.0  1.0  0  100.0  1.0  1.0  0\n";
  }
  const std::string out = compare_stopped(dir, log.str());
  EXPECT_NE(out.find("    1073741824   4     100.00          -         -       1.00          -         -       -  ?/?   "
                     "         not reached (SIGINT)\n"),
            std::string::npos)
      << out;
  EXPECT_TRUE(load(dir + "/run-1/stats.json")["sim"]["interrupted"].get<bool>());
  EXPECT_FALSE(fs::exists(dir + "/run-2/stats.json"));
  const auto j = load(dir + "/compare.json");
  EXPECT_EQ(j["rows"].back()["status"], "not_reached");
  EXPECT_FALSE(j["simulations"][1]["started"].get<bool>());
  fs::remove_all(dir);
}

}  // namespace
