// The ideal NVLS all-reduce (collective.protocol=ideal) issues a GPU's
// multimem.ld_reduce reads in address order, and collective.outstanding
// counts a read from its issue, while it still waits for its link, until
// its result is back (models/sc/algorithms/nvls.cpp): a slow link holds the
// window and the GPU's other links wait for it. Read from the debug log of
// the GPU's sends and receives, as a user would check it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "testbenches/cli/cli_run.hpp"

namespace {

using namespace fabricsim_test;  // sh, temp_dir, load: testbenches/cli/cli_run.hpp

// A debug log line `[  T ns] MODULE: WHAT #N KIND ... @0xADDR...` from
// `module` (a prefix: fabric.gpu0.tx matches every link of GPU 0) whose
// text after the module has `what` and `kind`: its time (ns) and the
// address's 256-B slice; false for any other line.
bool parse(const std::string& l, const std::string& module, const std::string& what_kind, double& t,
           long& slice) {
  const auto close = l.find(" ns] ");
  if (l.empty() || l[0] != '[' || close == std::string::npos) return false;
  const auto body = close + 5;
  if (l.compare(body, module.size(), module) != 0) return false;
  const auto colon = l.find(": ", body);
  if (colon == std::string::npos || l.find(what_kind, colon) != colon + 2) return false;
  const auto at = l.find(" @0x", colon);
  if (at == std::string::npos) return false;
  t = std::stod(l.substr(1, close - 1));
  slice = std::stol(l.substr(at + 4), nullptr, 16) / 256;
  return true;
}

// GPU 0's link 0 at half its rate from the start (lane_down), a window of 16
// reads, 2 GPUs of dgx-h100, 1 MiB: GPU 0 reduces 512 KiB, 2048 reads of
// 256 B. At every read GPU 0 sends, fewer than 16 reads before it in address
// order may still be waiting for their results. (Were the window counted
// from the send, the 17 healthy links would run ahead of the slow one: up to
// 240 earlier reads were outstanding when a read left, and the GPU's output
// came in uneven, its slow link's addresses last.)
TEST(IdealNvls, ReadsIssueInAddressOrderWithinTheWindow) {
  constexpr int kWindow = 16;
  const std::string out = temp_dir("nvls_issue");
  const Result r = sh("run " + kSrc + "/configs/dgx-h100-allreduce.yaml -q --out " + out +
                      " --set topology.endpoints=2 collective.algorithm=nvls collective.min_bytes=1048576"
                      " collective.max_bytes=1048576 collective.data=false collective.outstanding=" +
                      std::to_string(kWindow) + " faults=lane_down@0:fabric.gpu0.tx0=1 --log 'fabric.gpu0*=debug'");
  ASSERT_EQ(r.status, 0) << r.output.substr(0, 2000);
  std::map<long, double> sent, back;  // slice index (address / 256 B) -> ns
  std::istringstream lines(r.output);
  double when = 0;
  long slice = 0;
  for (std::string l; std::getline(lines, l);) {
    // "sends #N multimem.ld_reduce", "receives #N ld_reduce-result"
    if (parse(l, "fabric.gpu0.tx", "sends #", when, slice) && l.find(" multimem.ld_reduce ") != std::string::npos)
      sent[slice] = when;
    else if (parse(l, "fabric.gpu0: ", "receives #", when, slice) &&
             l.find(" ld_reduce-result ") != std::string::npos)
      back[slice] = when;
  }
  ASSERT_EQ(sent.size(), 2048u);
  ASSERT_EQ(back.size(), 2048u);
  EXPECT_EQ(sent.rbegin()->first, 2047);
  int most = 0;  // earlier reads outstanding at a send, the most seen
  for (const auto& [i, t] : sent) {
    int waiting = 0;
    for (const auto& [j, tb] : back) {
      if (j >= i) break;
      waiting += tb > t;
    }
    most = std::max(most, waiting);
  }
  EXPECT_LT(most, kWindow);
  EXPECT_GE(most, kWindow / 2) << "the window never filled: the case tests nothing";
  const auto s = load(out + "/stats.json");
  EXPECT_EQ(s["collectives"]["rows"][0]["wrong"].get<int>(), 0);
}

}  // namespace
