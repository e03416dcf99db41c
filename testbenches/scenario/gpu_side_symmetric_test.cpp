// NCCL's all-reduce on symmetric-registered buffers (collective.registration=
// symmetric; docs/models/gpu.md, "Registered buffers"): each size runs what
// NCCL's model picks (its normal kernels where it picks an LL kernel,
// RSxLDMC_AGxSTMC on 1 to 3 CTAs from 64 KiB on 4 GPUs), exactly; the
// requests, responses, stores, write responses and barrier counters are real
// packets on the links, counted flit by flit; the kernel's start; and what
// cannot be run is refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/errors.hpp"
#include "testbenches/common/run_fabrics.hpp"

namespace fabricsim {
namespace {

const std::string kNccl = FABRICSIM_SOURCE_DIR "/configs/dgx-h100-nccl.yaml";

Config symmetric(int n, std::vector<std::string> sets) {
  sets.insert(sets.begin(), {"collective.algorithm=auto", "collective.protocol=auto",
                             "collective.registration=symmetric",
                             "topology.endpoints=" + std::to_string(n)});
  return load_config(kNccl, sets);
}

std::string picks(const nlohmann::json& s) {
  std::string out;
  for (const auto& r : s["collectives"]["rows"])
    out += r["algorithm"].get<std::string>() + "/" + r["protocol"].get<std::string>() + "/" +
           std::to_string(r["channels"].get<int>()) + " ";
  return out;
}

// 8 B to 8 MiB x 16 on 4 GPUs: the ring with LL up to 32 KiB (NCCL's model
// picks its LL multicast kernel, which falls back with several GPUs per
// process), then the symmetric kernel on 2 CTAs (512 KiB) and 3 (8 MiB).
// Sizes with a tail after the last whole 4 KiB chunk on 2, 6 and 8 GPUs;
// fp16 (the tail wraps over the threads); a GPU 3 us late; int32 (no
// symmetric kernel: the normal ones). Every element checked, none wrong.
TEST(GpuSideSymmetric, IsExactAndRunsWhatNcclPicks) {
  std::vector<Config> cs;
  cs.push_back(symmetric(4, {"collective.min_bytes=8", "collective.max_bytes=8388608",
                             "collective.step_factor=16"}));
  for (const int n : {2, 6, 8})
    cs.push_back(symmetric(n, {"collective.min_bytes=1000012", "collective.max_bytes=1000012"}));
  cs.push_back(symmetric(4, {"collective.min_bytes=300002", "collective.max_bytes=300002",
                             "collective.dtype=fp16"}));
  cs.push_back(symmetric(4, {"collective.min_bytes=1048576", "collective.max_bytes=1048576",
                             "straggler.gpu=2", "straggler.delay_ns=3000", "collective.iterations=2"}));
  cs.push_back(symmetric(4, {"collective.min_bytes=1048576", "collective.max_bytes=1048576",
                             "collective.dtype=int32"}));
  // NCCL runs the symmetric kernel whatever the algorithm: the switches get
  // their engines with collective.algorithm=ring too.
  cs.push_back(symmetric(4, {"collective.algorithm=ring", "collective.min_bytes=1048576",
                             "collective.max_bytes=1048576"}));
  const auto s = run_fabrics(cs);
  const int gpus[] = {4, 2, 6, 8, 4, 4, 4, 4};
  for (std::size_t k = 0; k < s.size(); ++k) expect_every_element_checked(s[k], gpus[k]);
  EXPECT_EQ(picks(s[0]), "ring/ll/1 ring/ll/1 ring/ll/1 ring/ll/2 nvls/symmetric/2 nvls/symmetric/3 ");
  EXPECT_EQ(picks(s[1]), "nvls/symmetric/4 ");
  EXPECT_EQ(picks(s[3]), "nvls/symmetric/1 ");  // ceil(16 / 8) CTAs at most
  EXPECT_EQ(picks(s[5]), "nvls/symmetric/2 ");  // (its 2 iterations in one row)
  EXPECT_EQ(picks(s[6]).rfind("ring/", 0), 0u) << picks(s[6]);
  EXPECT_EQ(picks(s[7]), "nvls/symmetric/2 ");
}

// Every packet on the GPUs' links, flit by flit, for 1 MiB of fp32 on 4 GPUs
// (2 CTAs) with 16-byte flits and 128-byte requests: per 128 B of the call,
// one request (1 flit) from its reader, a read response (9 flits) from each
// GPU and a multicast store (9 flits) from its reader; with gpu.write_acks a
// one-flit response from each GPU per store copy; and per CTA two barrier
// counters (8 bytes, 2 flits) from each GPU. Nothing per step: no FIFO.
TEST(GpuSideSymmetric, RequestsResponsesStoresAcksAndBarriersOnTheWire) {
  std::vector<Config> cs;
  for (const char* acks : {"true", "false"})
    cs.push_back(symmetric(4, {"collective.min_bytes=1048576", "collective.max_bytes=1048576",
                               "collective.data=false", std::string("gpu.write_acks=") + acks}));
  const auto s = run_fabrics(cs);
  const std::uint64_t n = 4, lines = (1u << 20) / 128, ctas = 2;
  const std::uint64_t barriers = 2 * n * ctas * 2;
  const std::uint64_t base = lines * 1 + n * lines * 9 + lines * 9 + barriers;
  EXPECT_EQ(gpu_tx_flits(s[1]), base);
  EXPECT_EQ(gpu_tx_flits(s[0]), base + n * lines);
  EXPECT_EQ(s[0]["collectives"]["rows"][0]["channels"].get<int>(), 2);
}

// The kernel starts gpu.launch_ns + gpu.symmetric_start_ns after its call
// (not gpu.simple_start_ns: no FIFO to set up), and the host floor holds.
TEST(GpuSideSymmetric, KernelStart) {
  std::vector<Config> cs;
  for (const char* start : {"0", "5000"})
    cs.push_back(symmetric(4, {"collective.min_bytes=65536", "collective.max_bytes=4194304",
                               "collective.step_factor=8", "collective.data=false", "gpu.host_call_ns=0",
                               "gpu.simple_start_ns=0", std::string("gpu.symmetric_start_ns=") + start}));
  cs.push_back(symmetric(4, {"collective.min_bytes=65536", "collective.max_bytes=65536",
                             "collective.data=false", "gpu.host_call_ns=40000"}));
  const auto s = run_fabrics(cs);
  const auto& rows = s[0]["collectives"]["rows"];
  ASSERT_EQ(rows.size(), 3u);  // 64 KiB, 512 KiB, 4 MiB
  for (std::size_t k = 0; k < rows.size(); ++k)
    EXPECT_NEAR(s[1]["collectives"]["rows"][k]["time_us"].get<double>() - rows[k]["time_us"].get<double>(),
                5.0, 0.05);
  EXPECT_NEAR(s[2]["collectives"]["rows"][0]["time_us"].get<double>(), 40.0, 1e-6);
}

TEST(GpuSideSymmetric, RefusesWhatItCannotRun) {
  for (const auto& [set, words] : std::vector<std::pair<std::string, std::string>>{
           {"collective.protocol=ideal", "collective.registration=symmetric picks NCCL's kernels"},
           {"collective.registration=local", "allowed: none | symmetric"},
           {"switch.vcs=1", "collective.registration=symmetric (NCCL's symmetric kernel) all_reduce reads "
                            "through the switch"}}) {
    try {
      symmetric(4, {set});
      ADD_FAILURE() << set << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace fabricsim
