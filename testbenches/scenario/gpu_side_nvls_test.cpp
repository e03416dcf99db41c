// The GPU side of NCCL's NVLS all-reduce (collective.algorithm=nvls with
// collective.protocol=simple or auto; docs/models/gpu.md, "NVLS"): exact
// results through channels, steps and the heads' pieces; the requests,
// responses, stores, write responses and step flags are real packets on the
// links, counted flit by flit; the channels NCCL uses per size; and what
// NCCL does not run is refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/errors.hpp"
#include "testbenches/common/run_fabrics.hpp"

namespace fabricsim {
namespace {

const std::string kNccl = FABRICSIM_SOURCE_DIR "/configs/dgx-h100-nccl.yaml";

Config nvls(int n, std::vector<std::string> sets) {
  sets.insert(sets.begin(), {"collective.algorithm=nvls", "topology.endpoints=" + std::to_string(n)});
  return load_config(kNccl, sets);
}

// Every row's output checked on every GPU, none wrong, run as simple.
void expect_exact(const nlohmann::json& s, int n) {
  expect_every_element_checked(s, n);
  for (const auto& r : s["collectives"]["rows"]) EXPECT_EQ(r["protocol"].get<std::string>(), "simple") << r.dump();
}

// Sizes from 4 B (one channel, head 0 alone, the other heads' pieces empty)
// to 16 MiB on 2, 3, 5 and 8 GPUs (5 and 7 reduce warps), the preset's
// protocol auto (simple for NVLS); and with the fewest slots that work, 3
// channels and 2 iterations. Flags and data are striped over a GPU's links,
// so they arrive out of order.
TEST(GpuSideNvls, IsExactAndEndsCleanOnEachSize) {
  std::vector<Config> cs;
  for (const int n : {2, 3, 5, 8})
    cs.push_back(nvls(n, {"collective.min_bytes=4", "collective.max_bytes=16777216",
                          "collective.step_factor=16"}));
  cs.push_back(nvls(4, {"collective.min_bytes=2097152", "collective.max_bytes=2097152",
                        "collective.protocol=simple", "gpu.slots=6", "gpu.buffer_bytes=98304", "gpu.nvls_channels=3",
                        "collective.iterations=2"}));
  // bf16 max (16-byte packs) and int32 sums (4-byte loads, 2 KiB hunks);
  // a GPU whose kernel starts 3 us late (the others' flags and reads wait).
  cs.push_back(nvls(4, {"collective.min_bytes=1048576", "collective.max_bytes=1048576",
                        "collective.dtype=bf16", "collective.redop=max"}));
  cs.push_back(nvls(6, {"collective.min_bytes=1048576", "collective.max_bytes=1048576",
                        "collective.dtype=int32"}));
  cs.push_back(nvls(4, {"collective.min_bytes=1048576", "collective.max_bytes=1048576",
                        "straggler.gpu=2", "straggler.delay_ns=3000"}));
  const auto s = run_fabrics(cs);
  const int gpus[] = {2, 3, 5, 8, 4, 4, 6, 4};
  for (std::size_t k = 0; k < s.size(); ++k) expect_exact(s[k], gpus[k]);
}

// Every packet on the GPUs' links, flit by flit, for 4 MiB of fp32 on 4 GPUs
// with 16-byte flits and 128-byte requests: per 128 B of the call, one
// request (1 flit) from its head, a read response (9 flits) from each GPU and
// a multicast store (9 flits) from its head; with gpu.write_acks a one-flit
// response from each GPU per store; and per channel step four 8-byte flags
// (2 flits: ready, credit, tail, gathered) from each GPU, three without
// timed copies (gpu.nvls_warp_copy_gbps = 0: no 'gathered'). 4 MiB: 16
// channels of 256 KiB, 32 KiB chunks (256 KiB is below 8 x 4 x 64 KiB, not
// below 2 x 4 x 32 KiB), 2 steps each.
TEST(GpuSideNvls, RequestsResponsesStoresAcksAndFlagsOnTheWire) {
  std::vector<Config> cs;
  for (const char* acks : {"true", "false"})
    cs.push_back(nvls(4, {"collective.min_bytes=4194304", "collective.max_bytes=4194304",
                          "collective.data=false", std::string("gpu.write_acks=") + acks,
                          "gpu.nvls_warp_copy_gbps=2"}));
  cs.push_back(nvls(4, {"collective.min_bytes=4194304", "collective.max_bytes=4194304",
                        "collective.data=false", "gpu.write_acks=false", "gpu.nvls_warp_copy_gbps=0"}));
  const auto s = run_fabrics(cs);
  const std::uint64_t n = 4, lines = (4u << 20) / 128, steps = std::uint64_t{16} * 2;
  const std::uint64_t flag_flits = n * steps * 2;
  const std::uint64_t base = lines * 1 + n * lines * 9 + lines * 9;
  EXPECT_EQ(gpu_tx_flits(s[1]), base + 4 * flag_flits);
  EXPECT_EQ(gpu_tx_flits(s[0]), base + 4 * flag_flits + n * lines);
  EXPECT_EQ(gpu_tx_flits(s[2]), base + 3 * flag_flits);
  EXPECT_EQ(s[0]["collectives"]["rows"][0]["channels"].get<int>(), 16);
  EXPECT_GE(s[0]["collectives"]["rows"][0]["time_us"].get<double>(),
            s[1]["collectives"]["rows"][0]["time_us"].get<double>());
}

// The scatter and gather copies at gpu.nvls_warp_copy_gbps per warp, slow
// enough (0.1 GB/s) that they set the pace: a call is the first step's
// scatter and then one gather after another. NCCL's split gives 6 copying
// warps each on 4 GPUs (8 or 6 slots); with 17 reduce warps the scatter has
// 2 and the gather 1, so the scatters and heads would run ahead of the
// gathers but for the heads' wait for every GPU's 'gathered' flag of the
// slot. 4 MiB on 4 GPUs, one channel: 64 KiB chunks, 16 steps of 256 KiB.
// Exact, and ends clean (the gathers' flags all in).
TEST(GpuSideNvls, ScatterAndGatherCopiesSetThePaceWhenSlow) {
  struct Case {
    const char* slots;
    const char* reduce_warps;
    double scatter_warps, gather_warps;
  };
  const Case cases[] = {{"8", "0", 6, 6}, {"6", "0", 6, 6}, {"6", "17", 2, 1}};
  std::vector<Config> cs;
  for (const Case& c : cases)
    cs.push_back(nvls(4, {"collective.min_bytes=4194304", "collective.max_bytes=4194304",
                          "gpu.nvls_channels=1", "gpu.nvls_warp_copy_gbps=0.1", "gpu.launch_ns=0",
                          "gpu.host_call_ns=0", "gpu.simple_start_ns=0",
                          "collective.protocol=simple", "gpu.buffer_bytes=98304",
                          std::string("gpu.slots=") + c.slots,
                          std::string("gpu.nvls_reduce_warps=") + c.reduce_warps}));
  const auto s = run_fabrics(cs);
  const double step = 262144.0;  // bytes; 0.1 GB/s = 0.1 B/ns
  for (std::size_t k = 0; k < s.size(); ++k) {
    const auto& r = s[k];
    expect_exact(r, 4);
    // 7427.0 us with 6 and 6 warps, 43253.8 us with 2 and 1.
    const double expect_us =
        (step / (cases[k].scatter_warps * 0.1) + 16 * step / (cases[k].gather_warps * 0.1)) / 1000.0;
    const double t = r["collectives"]["rows"][0]["time_us"].get<double>();
    EXPECT_GE(t, expect_us) << r["collectives"]["rows"][0].dump();
    EXPECT_LT(t, expect_us + 10.0) << r["collectives"]["rows"][0].dump();
  }
}

// NVLS uses all gpu.nvls_channels whatever the size, but the planner gives
// each at least a 16 KiB cell: 1 KiB is one channel, 64 KiB four, 512 KiB
// 16. The kernels start gpu.launch_ns late.
TEST(GpuSideNvls, ChannelsPerSizeAndLaunch) {
  std::vector<Config> cs;
  for (const char* launch : {"0", "5000"})
    cs.push_back(nvls(4, {"collective.min_bytes=1024", "collective.max_bytes=1048576",
                          "collective.step_factor=8", "collective.data=false",
                          "gpu.host_call_ns=0", std::string("gpu.launch_ns=") + launch}));
  const auto s = run_fabrics(cs);
  const auto& rows = s[0]["collectives"]["rows"];
  ASSERT_EQ(rows.size(), 4u);  // 1 KiB, 8 KiB, 64 KiB, 512 KiB
  EXPECT_EQ(rows[0]["channels"].get<int>(), 1);
  EXPECT_EQ(rows[1]["channels"].get<int>(), 1);
  EXPECT_EQ(rows[2]["channels"].get<int>(), 4);
  EXPECT_EQ(rows[3]["channels"].get<int>(), 16);
  for (std::size_t k = 0; k < rows.size(); ++k)
    EXPECT_NEAR(s[1]["collectives"]["rows"][k]["time_us"].get<double>() -
                    rows[k]["time_us"].get<double>(),
                5.0, 0.05);
}

// The bound on reads in flight: on links of 1 us, one channel with one data
// warp (4 KiB per round trip) takes about twice as long as with two. 1 MiB
// on 4 GPUs, one channel: 32 KiB chunks, 8 steps, each head's 8 hunks per
// step read by 1 warp in 8 round trips or by 2 in 4.
TEST(GpuSideNvls, ReadsInFlightBoundByTheReduceWarps) {
  std::vector<Config> cs;
  for (const char* warps : {"1", "3"})
    cs.push_back(nvls(4, {"collective.min_bytes=1048576", "collective.max_bytes=1048576",
                          "collective.data=false", "gpu.nvls_channels=1", "link.latency_ns=1000",
                          std::string("gpu.nvls_reduce_warps=") + warps}));
  const auto s = run_fabrics(cs);
  const double one = s[0]["collectives"]["rows"][0]["time_us"].get<double>();
  const double two = s[1]["collectives"]["rows"][0]["time_us"].get<double>();
  EXPECT_GT(one / two, 1.7) << one << " us vs " << two << " us";
  EXPECT_LT(one / two, 2.05) << one << " us vs " << two << " us";
}

TEST(GpuSideNvls, RefusesWhatNcclDoesNotRun) {
  for (const auto& [set, words] : std::vector<std::pair<std::string, std::string>>{
           {"collective.protocol=ll", "Simple protocol only"},
           {"collective.protocol=ll128", "Simple protocol only"},
           {"collective.redop=max", "no max for fp32"},
           {"gpu.nvls_chunk_bytes=20000", "multiple of 16384"},
           {"collective.op=all_gather", "collective.op=all_reduce"}}) {
    try {
      nvls(4, {set});
      ADD_FAILURE() << set << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
  // NCCL's NVLS with simple and auto is accepted; ideal stays the fabric alone.
  for (const char* p : {"simple", "auto", "ideal"})
    EXPECT_NO_THROW(nvls(4, {std::string("collective.protocol=") + p}));
}

// collective.algorithm=auto: each size runs what NCCL's tuner picks
// (NcclTuner::all_reduce), exact either way. On 8 GPUs the ring with LL
// below about 1.2 MB, NVLS above; on 2 GPUs the ring at every size; with
// collective.protocol=ll the ring only (NCCL runs NVLS with Simple only);
// with fp32 max the ring only (multimem.ld_reduce has no max for fp32).
TEST(GpuSideNvls, AutoPicksRingOrNvlsPerSizeAsNcclsTuner) {
  const std::vector<std::string> sizes = {"collective.min_bytes=65536", "collective.max_bytes=4194304",
                                          "collective.step_factor=64"};
  const auto with = [&](int n, std::vector<std::string> more) {
    more.insert(more.begin(), sizes.begin(), sizes.end());
    more.insert(more.begin(), {"collective.algorithm=auto", "topology.endpoints=" + std::to_string(n)});
    return load_config(kNccl, more);
  };
  const auto s = run_fabrics({with(8, {}), with(2, {}), with(8, {"collective.protocol=ll"}),
                              with(8, {"collective.redop=max"})});
  const auto picks = [](const nlohmann::json& st) {
    std::string out;
    for (const auto& r : st["collectives"]["rows"]) {
      EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u) << r.dump();
      EXPECT_GT(r["checked_elements"].get<std::uint64_t>(), 0u) << r.dump();
      out += r["algorithm"].get<std::string>() + "/" + r["protocol"].get<std::string>() + " ";
    }
    return out;
  };
  EXPECT_EQ(picks(s[0]), "ring/ll nvls/simple ");
  EXPECT_EQ(picks(s[1]), "ring/ll ring/simple ");
  EXPECT_EQ(picks(s[2]), "ring/ll ring/ll ");
  EXPECT_EQ(picks(s[3]), "ring/ll ring/ll128 ");
  EXPECT_EQ(s[0]["config"]["collective.algorithm"], "auto");
}

TEST(GpuSideNvls, AutoNeedsTheGpuSide) {
  try {
    load_config(kNccl, {"collective.algorithm=auto", "collective.protocol=ideal"});
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("set collective.protocol"), std::string::npos) << e.what();
  }
  try {
    load_config(kNccl, {"collective.algorithm=auto", "collective.op=all_gather"});
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("all_reduce"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabricsim
