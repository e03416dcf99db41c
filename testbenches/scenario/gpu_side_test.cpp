// The GPU side of NCCL's ring (collective.protocol simple, ll, ll128;
// docs/models/gpu.md):
// exact results through channels, loops and slices; the responses, flags
// and credits are real packets on the links; the channels NCCL would use
// per size; and what the protocol does not implement is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/errors.hpp"
#include "testbenches/common/run_fabrics.hpp"

namespace fabricsim {
namespace {

const std::string kNccl = FABRICSIM_SOURCE_DIR "/configs/dgx-h100-nccl.yaml";

// The preset with the ring (it picks ring or NVLS per size: collective.algorithm=auto).
Config nccl_ring(std::vector<std::string> sets) {
  sets.insert(sets.begin(), "collective.algorithm=ring");
  return load_config(kNccl, sets);
}

// Every row's output checked (n GPUs x every element, every iteration), none wrong.
void expect_exact(const nlohmann::json& s, int n) {
  expect_every_element_checked(s, n);
  for (const auto& r : s["collectives"]["rows"]) {
    const std::string set = s["config"]["collective.protocol"].get<std::string>();
    const std::string ran = r["protocol"].get<std::string>();
    EXPECT_TRUE(ran == set || (set == "auto" && (ran == "simple" || ran == "ll" || ran == "ll128")))
        << ran << " with collective.protocol=" << set;
  }
}

// Sizes from 4 B (empty chunks pass empty slices) to 20 MiB, past one
// channel's full loop, on rings of 2, 3, 5 and 8 GPUs with the protocol NCCL's
// tuner picks per size (LL, LL128, Simple); and
// with the fewest slots that work (3 slices: sends wait for credits). Counters and
// data are striped over a GPU's links, so they arrive out of order.
TEST(GpuSide, RingIsExactAndEndsCleanWithEachProtocol) {
  std::vector<Config> cs;
  for (const int n : {2, 3, 5, 8})
    cs.push_back(nccl_ring({"topology.endpoints=" + std::to_string(n),
                                     "collective.min_bytes=4", "collective.max_bytes=20971520",
                                     "collective.step_factor=16", "collective.channels=2"}));
  cs.push_back(nccl_ring({"topology.endpoints=4", "collective.min_bytes=1048576",
                                   "collective.max_bytes=1048576", "collective.protocol=simple", "gpu.slots=6",
                                   "gpu.buffer_bytes=98304", "collective.iterations=2"}));
  // LL and LL128: lines passed on as they arrive, their data in 64 and 120 B
  // of each 128 B write.
  for (const char* p : {"ll", "ll128"})
    for (const int n : {3, 4})
      cs.push_back(nccl_ring({"topology.endpoints=" + std::to_string(n),
                                       std::string("collective.protocol=") + p,
                                       "collective.min_bytes=4", "collective.max_bytes=4194304",
                                       "collective.step_factor=32", "collective.channels=3"}));
  const auto s = run_fabrics(cs);
  const int gpus[] = {2, 3, 5, 8, 4, 3, 4, 3, 4};
  for (std::size_t k = 0; k < s.size(); ++k) expect_exact(s[k], gpus[k]);
}

// One response per data write: with gpu.write_acks the GPUs' links carry
// exactly one more flit per data packet, and the call takes no less time.
// 3 MiB on 4 GPUs, one channel: one loop of 768 KiB chunks in 384 KiB
// slices, all whole 128 B writes: 2(n-1) steps x 6144 writes per GPU.
TEST(GpuSide, WriteResponsesAreOneFlitPerDataWrite) {
  std::vector<Config> cs;
  for (const char* acks : {"true", "false"})
    cs.push_back(nccl_ring({"topology.endpoints=4", "collective.min_bytes=3145728",
                                     "collective.max_bytes=3145728", "collective.channels=1", "collective.protocol=simple",
                                     "collective.data=false", std::string("gpu.write_acks=") + acks}));
  const auto s = run_fabrics(cs);
  const std::uint64_t writes = std::uint64_t{4} * 6 * (768 * 1024 / 128);
  EXPECT_EQ(gpu_tx_flits(s[0]) - gpu_tx_flits(s[1]), writes);
  EXPECT_GE(s[0]["collectives"]["rows"][0]["time_us"].get<double>(),
            s[1]["collectives"]["rows"][0]["time_us"].get<double>());
}

// NCCL drops a channel while the message is below channels x 512 threads x
// 64 B (24 channels: 768 KiB); the kernels start gpu.launch_ns late (the
// call takes that much longer, within what the links' flit-time phase moves).
// Without the preset's CTA copy rate and wait per slice, whose timers shift
// that phase further.
TEST(GpuSide, ChannelsPerSizeAndLaunch) {
  std::vector<Config> cs;
  for (const char* launch : {"0", "5000"})
    cs.push_back(nccl_ring({"collective.protocol=simple", "collective.min_bytes=1024",
                            "collective.max_bytes=1048576", "collective.step_factor=32",
                            "collective.data=false", "gpu.host_call_ns=0",
                            "gpu.channel_gbps=0", "gpu.slice_sync_ns=0",
                            std::string("gpu.launch_ns=") + launch}));
  const auto s = run_fabrics(cs);
  const auto& rows = s[0]["collectives"]["rows"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["channels"].get<int>(), 1);   // 1 KiB
  EXPECT_EQ(rows[1]["channels"].get<int>(), 1);   // 32 KiB: exactly 1 x 32 KiB
  EXPECT_EQ(rows[2]["channels"].get<int>(), 24);  // 1 MiB
  for (std::size_t k = 0; k < rows.size(); ++k)
    EXPECT_NEAR(s[1]["collectives"]["rows"][k]["time_us"].get<double>() -
                    rows[k]["time_us"].get<double>(),
                5.0, 0.05);
}

// nccl-tests issues its calls back to back: a call lasts at least
// gpu.host_call_ns, the host's time to issue it. 1 and 64 KiB (kernels of
// 4 and 9 us after a 5 us launch) take exactly the 20 us floor, twice in a row;
// 4 MiB (about 27 us) is not held, within 2% (its calls start at other
// times, after a fabric that had time to go quiet); calls from a CUDA graph
// have no floor. Without the preset's CTA copy rate, wait per slice and
// Simple kernel start, which make the small kernels longer than the floor.
TEST(GpuSide, HostCallFloor) {
  const std::vector<std::string> base = {"collective.protocol=simple", "collective.min_bytes=1024",
                                         "collective.max_bytes=4194304", "collective.step_factor=64",
                                         "collective.data=false", "collective.iterations=2",
                                         "gpu.channel_gbps=0", "gpu.slice_sync_ns=0",
                                         "gpu.simple_start_ns=0"};
  const auto with = [&](std::vector<std::string> sets) {
    sets.insert(sets.begin(), base.begin(), base.end());
    return nccl_ring(sets);
  };
  const auto s = run_fabrics({with({"gpu.launch_ns=5000", "gpu.host_call_ns=0"}),
                              with({"gpu.launch_ns=5000", "gpu.host_call_ns=20000"}),
                              with({"gpu.graph_launch_ns=5000", "gpu.host_call_ns=20000",
                                    "gpu.cuda_graph=true"})});
  const auto time = [&](int run, int row, const char* key = "time_us") {
    return s[static_cast<std::size_t>(run)]["collectives"]["rows"][static_cast<std::size_t>(row)][key]
        .get<double>();
  };
  ASSERT_EQ(s[0]["collectives"]["rows"].size(), 3u);  // 1 KiB, 64 KiB, 4 MiB
  for (int row = 0; row < 2; ++row) {
    EXPECT_LT(time(0, row, "time_us_max"), 20.0);
    EXPECT_DOUBLE_EQ(time(1, row), 20.0);
    EXPECT_DOUBLE_EQ(time(1, row, "time_us_max"), 20.0);
  }
  EXPECT_GT(time(0, 2), 20.0);
  EXPECT_NEAR(time(1, 2), time(0, 2), 0.02 * time(0, 2));
  for (int row = 0; row < 3; ++row) EXPECT_DOUBLE_EQ(time(2, row), time(0, row));
}

// Simple, then LL (or `protos`): one call of `bytes` on n GPUs over
// `channels` channels, without a launch, once per value of `key`. The
// preset's CTA copy rate, wait per slice, LL trip and kernel starts are off
// but for `key`.
std::vector<Config> channel_runs(int n, int bytes, const std::string& key,
                                 const std::vector<std::string>& values, int channels = 1,
                                 const std::vector<std::string>& protos = {"simple", "ll"}) {
  std::vector<Config> cs;
  for (const std::string& proto : protos)
    for (const std::string& v : values)
      cs.push_back(nccl_ring({"topology.endpoints=" + std::to_string(n),
                              "collective.protocol=" + proto,
                              "collective.min_bytes=" + std::to_string(bytes),
                              "collective.max_bytes=" + std::to_string(bytes),
                              "collective.channels=" + std::to_string(channels),
                              "gpu.launch_ns=0", "gpu.host_call_ns=0", "gpu.channel_gbps=0",
                              "gpu.slice_sync_ns=0", "gpu.ll_trip_ns=0", "gpu.simple_start_ns=0",
                              "gpu.ll128_start_ns=0", key + "=" + v}));
  return cs;
}

// gpu.slice_sync_ns delays every Simple op's first write: 1 KiB on 4 GPUs and
// one channel is a chain of 2n - 1 = 7 ops, one slice each, every one waiting
// on the one before (its flag), so the call takes 7 x 1 us longer, every
// element still exact. LL passes lines on as they come: no such wait.
TEST(GpuSide, SliceSyncDelaysEverySimpleOp) {
  const auto s = run_fabrics(channel_runs(4, 1024, "gpu.slice_sync_ns", {"0", "1000"}));
  const auto time = [&](std::size_t k) {
    return s[k]["collectives"]["rows"][0]["time_us"].get<double>();
  };
  for (const auto& r : s) expect_exact(r, 4);
  EXPECT_NEAR(time(1) - time(0), 7.0, 0.01);
  EXPECT_DOUBLE_EQ(time(3), time(2));
}

// gpu.channel_gbps: one channel's CTA copies at that rate. On 2 GPUs a rank
// sends its half of the data (step 0), adds and sends the other half (step
// 1) and copies the half it receives last out of the FIFO (step 2): 1.5 x
// 256 KiB at 1 GB/s is 393.2 us, far beyond what the links take, and the
// slices overlap so that the CTA never waits (2 slices per chunk). Each
// protocol counts data bytes (LL's writes carry half as many), and every
// element is still exact. Twice the data over two channels, each with its
// own CTA, takes as long.
TEST(GpuSide, ChannelCopyRateBoundsTheCall) {
  std::vector<Config> cs = channel_runs(2, 262144, "gpu.channel_gbps", {"0", "1"});
  for (Config& c : channel_runs(2, 524288, "gpu.channel_gbps", {"0", "1"}, 2)) cs.push_back(c);
  const auto s = run_fabrics(cs);
  const auto time = [&](std::size_t k) {
    return s[k]["collectives"]["rows"][0]["time_us"].get<double>();
  };
  for (const auto& r : s) expect_exact(r, 2);
  const double bound = 1.5 * 262144 / 1e3;  // us at 1 GB/s
  for (std::size_t k : {1u, 3u, 5u, 7u}) {
    EXPECT_GT(time(k), bound) << k;
    EXPECT_LT(time(k), 1.02 * bound) << k;
    EXPECT_LT(time(k - 1), 0.25 * bound) << k;
  }
}

// gpu.ll_trip_ns: an LL thread moves one line (8 B of data) per trip. A
// 4096 ns trip with 512 threads bounds one channel's CTA at 1 GB/s, as in
// ChannelCopyRateBoundsTheCall (393.2 us for 256 KiB on 2 GPUs), and each
// op's first line waits a trip: LL's 32 KiB chunks make 4 loops of 3 ops,
// 12 trips (49.2 us) more at most; Simple does not move. On 4 GPUs, 1 KiB
// is a chain of 2n - 1 = 7 ops of 4 lines each, every one a trip after the
// line it waits for: 7 x 1 us longer.
TEST(GpuSide, LlTripBoundsTheRateAndDelaysEveryStep) {
  std::vector<Config> cs = channel_runs(2, 262144, "gpu.ll_trip_ns", {"0", "4096"});
  for (Config& c : channel_runs(4, 1024, "gpu.ll_trip_ns", {"0", "1000"}, 1, {"ll"}))
    cs.push_back(c);
  const auto s = run_fabrics(cs);
  const auto time = [&](std::size_t k) {
    return s[k]["collectives"]["rows"][0]["time_us"].get<double>();
  };
  for (std::size_t k = 0; k < 4; ++k) expect_exact(s[k], 2);
  for (std::size_t k = 4; k < 6; ++k) expect_exact(s[k], 4);
  EXPECT_DOUBLE_EQ(time(1), time(0));  // Simple
  const double bound = 1.5 * 262144 / 1e3;  // us at 1 GB/s
  EXPECT_GT(time(3), bound);
  EXPECT_LT(time(3), bound + 12 * 4.096);
  EXPECT_LT(time(2), 0.25 * bound);
  EXPECT_NEAR(time(5) - time(4), 7.0, 0.1);
}

// gpu.simple_start_ns and gpu.ll128_start_ns: the kernel with that
// protocol starts later by that much, on every GPU, so the call takes that
// much longer (within the links' flit-time phase); NVLS's kernel runs
// Simple and moves with it; LL's kernels do not move.
TEST(GpuSide, ProtocolStartDelaysTheKernel) {
  std::vector<Config> cs;
  for (const char* key : {"gpu.simple_start_ns", "gpu.ll128_start_ns"})
    for (Config& c : channel_runs(4, 65536, key, {"0", "3000"}, 2, {"simple", "ll", "ll128"}))
      cs.push_back(c);
  for (const char* v : {"0", "3000"})
    cs.push_back(load_config(kNccl, {"topology.endpoints=4", "collective.algorithm=nvls",
                                     "collective.min_bytes=65536", "collective.max_bytes=65536",
                                     "gpu.launch_ns=0", "gpu.host_call_ns=0",
                                     std::string("gpu.simple_start_ns=") + v}));
  const auto s = run_fabrics(cs);
  const auto time = [&](std::size_t k) {
    return s[k]["collectives"]["rows"][0]["time_us"].get<double>();
  };
  for (const auto& r : s) expect_exact(r, 4);
  // [key][protocol][0, 3000]: simple_start moves Simple only, ll128_start LL128 only.
  EXPECT_NEAR(time(1) - time(0), 3.0, 0.05);
  EXPECT_DOUBLE_EQ(time(3), time(2));
  EXPECT_DOUBLE_EQ(time(5), time(4));
  EXPECT_DOUBLE_EQ(time(7), time(6));
  EXPECT_DOUBLE_EQ(time(9), time(8));
  EXPECT_NEAR(time(11) - time(10), 3.0, 0.05);
  EXPECT_NEAR(time(13) - time(12), 3.0, 0.05);  // NVLS
}

// LL128 writes are whole 128 B lines, one after another in the receiver's
// FIFO, and take a GPU's 18 links in turn. Striped by their data's address
// instead (120 B each), 8 full chunks of 576000 B would put 2400 writes on
// every third link and 2000 on the others; here every link's packet count
// is within 1% of the others' (the credits, a few, go where theirs pick).
TEST(GpuSide, Ll128WritesTakeTheLinksInTurn) {
  const auto s = run_fabrics({nccl_ring({"topology.endpoints=2", "collective.protocol=ll128",
                                         "collective.min_bytes=4608000", "collective.max_bytes=4608000",
                                         "collective.channels=1", "gpu.write_acks=false"})});
  expect_exact(s[0], 2);
  for (int g = 0; g < 2; ++g) {
    std::vector<double> packets(18);
    for (std::size_t l = 0; l < packets.size(); ++l)
      packets[l] = s[0]["links"]["f0.gpu" + std::to_string(g) + ".tx" + std::to_string(l)]["packets"]
                       .get<double>();
    const auto [lo, hi] = std::minmax_element(packets.begin(), packets.end());
    EXPECT_GT(*lo, 2000.0) << g;
    EXPECT_LE(*hi - *lo, 0.01 * *lo) << g << ": " << *lo << " .. " << *hi;
  }
}

TEST(GpuSide, RefusesWhatTheProtocolDoesNotImplement) {
  for (const auto& [set, words] : std::vector<std::pair<std::string, std::string>>{
           {"collective.algorithm=push", "collective.algorithm=ring"},
           {"collective.op=reduce_scatter", "collective.op=all_reduce"},
           {"gpu.buffer_bytes=100000", "gpu.buffer_bytes=100000"}}) {
    try {
      nccl_ring({set});
      ADD_FAILURE() << set << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("collective.protocol=auto"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace fabricsim
