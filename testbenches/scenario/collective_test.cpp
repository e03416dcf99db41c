// Collectives with real data: every output element bit-exact against the
// golden reduction, for several sizes, GPU counts, data types and operators;
// and ring all-reduce bus bandwidth against the link rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/core/collective_algorithms.hpp"
#include "models/core/collective.hpp"
#include "models/core/config.hpp"
#include "models/sc/collective_algorithm.hpp"
#include "models/sc/fabric.hpp"
#include "rtl/rtl_alu.hpp"
#include "testbenches/common/run_fabrics.hpp"

namespace fabricsim {
namespace {

nlohmann::json run(std::vector<std::string> sets) {
  sets.insert(sets.begin(), {"workload.kind=collective", "sim.warmup_ns=0",
                             "sim.duration_ns=100000000"});
  const Config c = load_config("", sets);
  Fabric f("fabric", c);
  EXPECT_TRUE(f.run()) << f.error();
  return f.stats();
}

// The same on the DGX H100 wiring: 8 GPUs, 4 chips, links split 5/4/4/5.
nlohmann::json run_dgx_h100(std::vector<std::string> sets) {
  sets.insert(sets.begin(), {"topology.kind=scaleup", "topology.endpoints=8",
                             "topology.switches=4", "topology.links=5,4,4,5"});
  return run(std::move(sets));
}

// Every row: all output elements checked, none wrong. Sizes include ones that
// do not split evenly into chunks and slices.
void expect_exact(const nlohmann::json& s, std::uint64_t outputs_per_byte_num,
                  std::uint64_t outputs_per_byte_den) {
  const auto& rows = s["collectives"]["rows"];
  ASSERT_GT(rows.size(), 0u);
  for (const auto& r : rows) {
    EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u) << r.dump();
    const std::uint64_t count = r["count"].get<std::uint64_t>();
    EXPECT_EQ(r["checked_elements"].get<std::uint64_t>() * outputs_per_byte_den,
              count * outputs_per_byte_num)
        << r.dump();
  }
}

// all-reduce: each of n GPUs checks all `count` elements.
// collective.data=false (timing only) gives the same times and counts as
// carrying the data, for every algorithm: the timing never depends on the
// values. Only the checks and the payload pool's size differ.
TEST(Collective, TimingOnlyIsTheSameSimulation) {
  const std::string dgx = FABRICSIM_SOURCE_DIR "/configs/dgx-h100-allreduce.yaml";
  const std::string ib = FABRICSIM_SOURCE_DIR "/configs/dgx-h100-x4-ib.yaml";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {dgx, {"collective.max_bytes=1048576", "collective.iterations=2", "straggler.jitter_ns=300"}},
      {dgx, {"collective.algorithm=nvls", "collective.max_bytes=1048576", "collective.dtype=bf16",
             "reduction.order=arrival"}},
      {dgx, {"collective.algorithm=push", "collective.op=reduce", "collective.max_bytes=262144"}},
      {dgx, {"collective.algorithm=direct", "collective.op=all_to_all",
             "collective.max_bytes=262144"}},
      {ib, {"collective.algorithm=hierarchical", "scaleout.sharp=true", "collective.min_bytes=262144",
            "collective.max_bytes=1048576"}},
      {ib, {"collective.algorithm=hierarchical", "collective.inter=tree",
            "collective.min_bytes=262144", "collective.max_bytes=1048576"}},
      {ib, {"collective.algorithm=hierarchical", "collective.inter=double_tree",
            "collective.min_bytes=262144", "collective.max_bytes=1048576"}}};
  std::vector<Config> cs;
  for (const auto& [file, sets] : cases)
    for (const char* data : {"true", "false"}) {
      auto with = sets;
      with.push_back(std::string("collective.data=") + data);
      cs.push_back(load_config(file, with));
    }
  auto s = run_fabrics(cs);
  for (std::size_t k = 0; k < s.size(); k += 2) {
    EXPECT_GT(s[k]["collectives"]["rows"][0]["checked_elements"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(s[k + 1]["collectives"]["rows"][0]["checked_elements"].get<std::uint64_t>(), 0u);
    for (auto* j : {&s[k], &s[k + 1]}) {
      j->erase("config");
      (*j)["sim"].erase("payload_slots_max");
      (*j)["collectives"].erase("check");
      (*j)["collectives"].erase("check_within_rounding");
      for (auto& r : (*j)["collectives"]["rows"])
        for (const char* key : {"wrong", "within_rounding", "checked_elements"}) r.erase(key);
    }
    // The fabrics are f0, f1, ...: compare with their names taken out.
    auto text = [](const nlohmann::json& j, std::size_t i) {
      std::string t = j.dump();
      const std::string name = "\"f" + std::to_string(i) + ".";
      for (auto p = t.find(name); p != std::string::npos; p = t.find(name, p)) t.replace(p, name.size(), "\"f.");
      return t;
    };
    const std::string a = text(s[k], k), b = text(s[k + 1], k + 1);
    std::size_t d = 0;
    while (d < a.size() && d < b.size() && a[d] == b[d]) ++d;
    EXPECT_EQ(a.size(), b.size()) << "case " << k / 2;
    EXPECT_EQ(d, a.size()) << "case " << k / 2 << " differs at: " << a.substr(d > 80 ? d - 80 : 0, 160)
                           << "\n vs " << b.substr(d > 80 ? d - 80 : 0, 160);
  }
}

TEST(Collective, RingAllReduceExactOnFiveGpus) {
  const auto s = run({"switch.ports=5", "collective.min_bytes=4", "collective.max_bytes=300000",
                      "collective.step_factor=7", "collective.payload_bytes=128"});
  expect_exact(s, 5, 1);
}

// Every data type with every operator, on 3 GPUs (one process each).
class CollectiveTypes : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(CollectiveTypes, RingAllReduceExact) {
  const auto s = run({"switch.ports=3", std::string("collective.dtype=") + GetParam().first,
                      std::string("collective.redop=") + GetParam().second,
                      "collective.min_bytes=4", "collective.max_bytes=100000",
                      "collective.step_factor=9"});
  expect_exact(s, 3, 1);
}

INSTANTIATE_TEST_SUITE_P(
    AllTypesAndOps, CollectiveTypes,
    ::testing::Values(std::pair{"fp32", "sum"}, std::pair{"fp32", "min"}, std::pair{"fp32", "max"},
                      std::pair{"fp16", "sum"}, std::pair{"fp16", "min"}, std::pair{"fp16", "max"},
                      std::pair{"bf16", "sum"}, std::pair{"bf16", "min"}, std::pair{"bf16", "max"},
                      std::pair{"int32", "sum"}, std::pair{"int32", "min"},
                      std::pair{"int32", "max"}),
    [](const auto& param_info) {
      return std::string(param_info.param.first) + "_" + param_info.param.second;
    });

TEST(Collective, RingAllReduceBf16Max) {
  const auto s = run({"switch.ports=4", "collective.dtype=bf16", "collective.redop=max",
                      "collective.min_bytes=1000", "collective.max_bytes=64000",
                      "collective.step_factor=8"});
  expect_exact(s, 4, 1);
}

TEST(Collective, RingAllReduceInt32MinOnDgxH100) {
  const auto s = run_dgx_h100({"collective.dtype=int32",
                      "collective.redop=min", "collective.min_bytes=4096",
                      "collective.max_bytes=1048576", "collective.step_factor=16"});
  expect_exact(s, 8, 1);
}

// reduce-scatter: each GPU checks its own chunk: count elements in total.
TEST(Collective, RingReduceScatterExact) {
  const auto s = run({"switch.ports=6", "collective.op=reduce_scatter", "collective.min_bytes=8",
                      "collective.max_bytes=500000", "collective.step_factor=5"});
  expect_exact(s, 1, 1);
}

// all-gather: each GPU checks the n-1 chunks it did not own: (n-1) x count.
TEST(Collective, RingAllGatherExact) {
  const auto s = run({"switch.ports=4", "collective.op=all_gather", "collective.min_bytes=16",
                      "collective.max_bytes=500000", "collective.step_factor=5"});
  expect_exact(s, 3, 1);
}

// At a large size the ring is bandwidth bound: each GPU sends and receives at
// its links' rate, so busbw approaches k links x lane rate x lanes x the
// payload share of each packet. Derived from the parameters, not hard-coded.
TEST(Collective, RingBusBandwidthApproachesTheLinkRate) {
  const Config c = load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml", {});
  const double links = 18;
  const double flits = packet_flits_for(c, 256);
  const double link_GBps = link_gbps(c.link) / 8;
  const double expect = links * link_GBps * 256.0 / (flits * static_cast<double>(c.link.flit_bytes));
  const auto s = run_dgx_h100({"switch.ports=64", "collective.check=false",
                      "collective.min_bytes=33554432", "collective.max_bytes=33554432"});
  const double busbw = s["collectives"]["rows"][0]["busbw_GBps"].get<double>();
  EXPECT_GT(busbw, 0.90 * expect) << "expected about " << expect;
  EXPECT_LT(busbw, 1.0 * expect) << "expected about " << expect;
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// NVLS all-gather: each GPU's chunk goes out once as multimem stores; the
// switch writes one copy to every member (the sender included). Every GPU
// then checks all n chunks, and the packet counts show exactly n copies per
// original, each delivered once.
TEST(Collective, NvlsAllGatherOneCopyPerMember) {
  const auto s = run({"switch.ports=5", "collective.op=all_gather", "collective.algorithm=nvls",
                      "collective.min_bytes=16", "collective.max_bytes=500000",
                      "collective.step_factor=5"});
  expect_exact(s, 5, 1);
  const auto& k = s["conservation"];
  const auto injected = k["injected"].get<std::uint64_t>();
  EXPECT_GT(injected, 0u);
  EXPECT_EQ(k["multicast_copies"].get<std::uint64_t>(), 5 * injected);
  EXPECT_EQ(k["multicast_originals_retired"].get<std::uint64_t>(), injected);
  EXPECT_EQ(k["delivered"].get<std::uint64_t>(), 5 * injected);
}

// The same on DGX H100's four chips: each chip replicates the stripes that
// reach it, over its links to all 8 GPUs.
TEST(Collective, NvlsAllGatherOnDgxH100) {
  const auto s = run_dgx_h100({"collective.op=all_gather",
                      "collective.algorithm=nvls", "collective.min_bytes=4096",
                      "collective.max_bytes=1048576", "collective.step_factor=16"});
  expect_exact(s, 8, 1);
  EXPECT_EQ(s["conservation"]["multicast_copies"].get<std::uint64_t>(),
            8 * s["conservation"]["injected"].get<std::uint64_t>());
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// Push all-reduce: every GPU writes its buffer to the switches' reduction
// engines, which fold the n contributions in member order and multicast the
// result. Bit-exact against the member-order golden fold.
TEST(Collective, PushAllReduceExact) {
  const auto s = run({"switch.ports=5", "switch.vcs=1", "collective.algorithm=push",
                      "collective.dtype=bf16", "collective.min_bytes=2",
                      "collective.max_bytes=300000", "collective.step_factor=7"});
  expect_exact(s, 5, 1);
  const auto& k = s["conservation"];
  // Each result is multicast to all 5 GPUs; every contribution was consumed.
  EXPECT_EQ(k["reduction_contributions"].get<std::uint64_t>(), k["injected"].get<std::uint64_t>());
  EXPECT_EQ(5 * k["reduction_results"].get<std::uint64_t>(), k["delivered"].get<std::uint64_t>());
}

TEST(Collective, PushAllReduceExactOnDgxH100) {
  const auto s = run_dgx_h100({"collective.algorithm=push",
                      "collective.min_bytes=4096", "collective.max_bytes=1048576",
                      "collective.step_factor=16"});
  expect_exact(s, 8, 1);
  for (int sw = 0; sw < 4; ++sw) {
    const auto& e = s["switches"]["fabric.sw" + std::to_string(sw)]["reduction_engine"];
    EXPECT_GT(e["completed"].get<std::uint64_t>(), 0u);
    EXPECT_LE(e["occupancy_max"].get<int>(), s["config"]["reduction.table_entries"].get<int>());
  }
}

// reduction.order=arrival: the engines fold as contributions come, so NVLS
// bf16 sums (responses arrive in varying order) differ from the
// member-order golden in their last bits; the check
// accepts those within the rounding of any order and counts them apart.
TEST(Collective, ArrivalOrderFoldIsWithinRounding) {
  const Config c = load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml",
                               {"workload.kind=collective", "sim.warmup_ns=0",
                                "sim.duration_ns=100000000", "collective.algorithm=nvls",
                                "collective.dtype=bf16", "reduction.order=arrival",
                                "collective.min_bytes=65536", "collective.max_bytes=65536"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  EXPECT_TRUE(s["collectives"]["check_within_rounding"].get<bool>());
  const auto& r = s["collectives"]["rows"][0];
  EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u);
  EXPECT_GT(r["within_rounding"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(r["checked_elements"].get<std::uint64_t>(), 8u * r["count"].get<std::uint64_t>());
}

// A call cut short by sim.duration_ns says so, and only so: the end-of-run
// accounting (asked why, in case the fabric is stuck) counts the packets
// GPUs have made but not sent and the multicast copies not made yet.
void expect_cut_short(const std::string& algorithm) {
  const Config c = load_config(
      "", {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=2000",
           "topology.kind=scaleup", "topology.endpoints=8", "topology.switches=4",
           "topology.links=5,4,4,5", "switch.vcs=2", "collective.algorithm=" + algorithm,
           "collective.min_bytes=1048576", "collective.max_bytes=1048576"});
  Fabric f("fabric", c);
  EXPECT_FALSE(f.run());
  EXPECT_EQ(f.error(),
            "the collective sweep did not finish by 2000.000000 ns (sim.warmup_ns + "
            "sim.duration_ns): call 1 of 1 was running");
}
TEST(Collective, NvlsCutShortSaysOnlyThat) { expect_cut_short("nvls"); }
TEST(Collective, RingCutShortSaysOnlyThat) { expect_cut_short("ring"); }

// A one-entry table: contributions for a second address wait at the inputs
// (their credits withheld) until the entry in use completes. Slow, but
// nothing is lost and the result is exact.
TEST(Collective, FullReductionTableBackPressuresWithoutLoss) {
  const auto s = run({"switch.ports=4", "collective.algorithm=push", "reduction.table_entries=1",
                      "collective.min_bytes=65536", "collective.max_bytes=65536"});
  expect_exact(s, 4, 1);
  const auto& e = s["switches"]["fabric.sw0"]["reduction_engine"];
  EXPECT_EQ(e["occupancy_max"].get<int>(), 1);
  double stall = 0;
  for (const auto& [name, l] : s["links"].items())
    if (name.find(".tx") != std::string::npos) stall += l["credit_stall_ns"].get<double>();
  EXPECT_GT(stall, 0.0);  // the withheld credits reached the GPUs
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// NVLS all-reduce (multimem.ld_reduce, then multimem.st) is bit-exact.
TEST(Collective, NvlsAllReduceExact) {
  const auto s = run({"switch.ports=5", "switch.vcs=2", "collective.algorithm=nvls",
                      "collective.dtype=fp16", "collective.min_bytes=2",
                      "collective.max_bytes=200000", "collective.step_factor=7"});
  expect_exact(s, 5, 1);
}

// Both places a multicast write can be replicated (at the engine, at the
// input) give exact results and one copy per member on DGX H100's 4 chips.
// (One fabric per test process: SystemC elaborates once.)
void nvls_all_reduce_exact_on_dgx_h100(const std::string& where) {
  const auto s = run_dgx_h100({"switch.vcs=2", "collective.algorithm=nvls",
                      "switch.multicast=" + where, "collective.min_bytes=4096",
                      "collective.max_bytes=1048576", "collective.step_factor=16"});
  expect_exact(s, 8, 1);
  const auto& k = s["conservation"];
  EXPECT_GT(k["multicast_originals_retired"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(k["multicast_copies"].get<std::uint64_t>(),
            8 * k["multicast_originals_retired"].get<std::uint64_t>());
}
TEST(Collective, NvlsAllReduceExactReplicatingAtTheEngine) {
  nvls_all_reduce_exact_on_dgx_h100("engine");
}
TEST(Collective, NvlsAllReduceExactReplicatingAtTheInput) {
  nvls_all_reduce_exact_on_dgx_h100("crossbar");
}

// One replication slot per chip: multicast writes wait at their inputs
// (credits withheld) while the engine replicates one at a time. Nothing is
// lost and the result is exact.
TEST(Collective, OneReplicationSlotBackPressuresWithoutLoss) {
  const auto s = run({"switch.ports=4", "switch.vcs=2", "collective.op=all_gather",
                      "collective.algorithm=nvls", "reduction.replication_slots=1",
                      "collective.min_bytes=65536", "collective.max_bytes=65536"});
  expect_exact(s, 4, 1);
  double stall = 0;
  for (const auto& [name, l] : s["links"].items())
    if (name.find(".tx") != std::string::npos) stall += l["credit_stall_ns"].get<double>();
  EXPECT_GT(stall, 0.0);
  // The limit held (with 256 slots this run holds up to 195 at once, measured).
  EXPECT_EQ(s["switches"]["fabric.sw0"]["reduction_engine"]["replication_slots_max"].get<int>(), 1);
  const auto& k = s["conservation"];
  EXPECT_EQ(k["multicast_copies"].get<std::uint64_t>(), 4 * k["injected"].get<std::uint64_t>());
}

// Stores are bounded like an SM's store buffer: with `outstanding` stores
// waiting a GPU issues no new read, so at most twice that many wait (the
// reads in flight still return). Here the links are the limit and the
// bound is reached (426 stores at most; busbw 16.6 GB/s, 15.9 without the
// bound, measured).
TEST(Collective, NvlsStoresWaitAtMostTwiceTheReadWindow) {
  const int window = 256;
  const auto s = run({"switch.ports=4", "switch.vcs=2", "collective.algorithm=nvls",
                      "collective.outstanding=" + std::to_string(window),
                      "collective.min_bytes=1048576", "collective.max_bytes=1048576"});
  expect_exact(s, 4, 1);
  const auto most = s["collectives"]["rows"][0]["stores_waiting_max"].get<int>();
  EXPECT_GE(most, window);
  EXPECT_LE(most, 2 * window);
}

// Per GPU and direction the links carry S(n+1)/n data bytes plus headers:
// out, S of read responses + S/n of multicast stores (+ header-only
// ld_reduce requests); in, S/n of ld_reduce responses + S of multicast
// copies (+ header-only read requests). Counted from the link statistics.
TEST(Collective, NvlsLinkBytesAreSTimesNPlusOneOverN) {
  const int n = 4;
  const std::uint64_t P = 256, S = 4 * P * 64;  // 64 slices per GPU share
  const auto s = run({"switch.ports=4", "switch.vcs=2", "collective.algorithm=nvls",
                      "collective.min_bytes=" + std::to_string(S),
                      "collective.max_bytes=" + std::to_string(S)});
  expect_exact(s, n, 1);
  const std::uint64_t data_flits = P / 16, share_slices = S / n / P, all_slices = S / P;
  const std::uint64_t out_flits =
      share_slices * 1 + all_slices * (data_flits + 1) + share_slices * (data_flits + 1);
  const std::uint64_t in_flits =
      all_slices * 1 + share_slices * (data_flits + 1) + all_slices * (data_flits + 1);
  for (int g = 0; g < n; ++g) {
    EXPECT_EQ(s["links"]["fabric.gpu" + std::to_string(g) + ".tx0"]["flits"].get<std::uint64_t>(),
              out_flits);
    EXPECT_EQ(s["links"]["fabric.sw0.out" + std::to_string(g)]["flits"].get<std::uint64_t>(),
              in_flits);
  }
  // The data part alone: S(n+1)/n each way.
  EXPECT_EQ((all_slices + share_slices) * P, S * (n + 1) / n);
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// One-shot (direct) all-reduce: every GPU writes its buffer to every peer
// and folds the n inputs in member order. Bit-exact, odd sizes included.
TEST(Collective, DirectAllReduceExact) {
  const auto s = run({"switch.ports=5", "collective.algorithm=direct", "collective.dtype=fp16",
                      "collective.min_bytes=2", "collective.max_bytes=300000",
                      "collective.step_factor=7"});
  expect_exact(s, 5, 1);
  // Each of the 5 GPUs sends every slice of its buffer to the 4 others: 20
  // packets per slice (128 fp16 elements), and nothing else.
  std::uint64_t packets = 0;
  for (const auto& r : s["collectives"]["rows"]) {
    const RingPlan plan{5, r["count"].get<std::uint64_t>(), 128};
    for (int c = 0; c < 5; ++c) packets += 20 * plan.slices(c);
  }
  const auto& k = s["conservation"];
  EXPECT_EQ(k["injected"].get<std::uint64_t>(), packets);
  EXPECT_EQ(k["delivered"].get<std::uint64_t>(), packets);
}

TEST(Collective, DirectAllReduceExactOnDgxH100) {
  const auto s = run_dgx_h100({"collective.algorithm=direct",
                      "collective.redop=max", "collective.dtype=bf16", "collective.min_bytes=2048",
                      "collective.max_bytes=1048576", "collective.step_factor=32"});
  expect_exact(s, 8, 1);
}

// All-to-all: GPU g receives chunk g of every other GPU's buffer, a copy of
// their input: (n-1)/n of the buffer checked per GPU.
TEST(Collective, AllToAllExact) {
  const auto s = run({"switch.ports=5", "collective.op=all_to_all", "collective.algorithm=direct",
                      "collective.min_bytes=20", "collective.max_bytes=400000",
                      "collective.step_factor=9"});
  expect_exact(s, 4, 1);
  EXPECT_DOUBLE_EQ(s["collectives"]["bus_factor"].get<double>(), 4.0 / 5.0);
}

// Broadcast from a root that is not GPU 0: a ring chain (the n-1 others
// check the root's data) and an NVLS multicast (the root gets its copy too).
TEST(Collective, RingBroadcastExact) {
  const auto s = run({"switch.ports=5", "collective.op=broadcast", "collective.algorithm=ring",
                      "collective.root=2", "collective.min_bytes=4", "collective.max_bytes=300000",
                      "collective.step_factor=11"});
  expect_exact(s, 4, 1);
  EXPECT_DOUBLE_EQ(s["collectives"]["bus_factor"].get<double>(), 1.0);
}

TEST(Collective, NvlsBroadcastExactOnDgxH100) {
  const auto s = run_dgx_h100({"collective.op=broadcast",
                      "collective.algorithm=nvls", "collective.root=5", "collective.min_bytes=4096",
                      "collective.max_bytes=1048576", "collective.step_factor=16"});
  expect_exact(s, 8, 1);
}

// Reduce to a root: a ring chain root+1, ..., root adding as it goes, or the
// switches' engines (push) sending the result to the root alone. Only the
// root checks: count elements per row.
TEST(Collective, RingReduceExact) {
  const auto s = run({"switch.ports=5", "collective.op=reduce", "collective.algorithm=ring",
                      "collective.root=3", "collective.dtype=int32", "collective.redop=min",
                      "collective.min_bytes=4", "collective.max_bytes=300000",
                      "collective.step_factor=11"});
  expect_exact(s, 1, 1);
}

TEST(Collective, PushReduceExactOnDgxH100) {
  const auto s = run_dgx_h100({"collective.op=reduce", "collective.algorithm=push",
                      "collective.root=6", "collective.min_bytes=4096",
                      "collective.max_bytes=1048576", "collective.step_factor=16"});
  expect_exact(s, 1, 1);
  // The results went to the root alone: no multicast of results.
  const auto& k = s["conservation"];
  EXPECT_GT(k["reduction_results"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(k["reduction_contributions"].get<std::uint64_t>(),
            8 * k["reduction_results"].get<std::uint64_t>());
  EXPECT_EQ(k["multicast_copies"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(k["delivered"].get<std::uint64_t>(), k["reduction_results"].get<std::uint64_t>());
}

// A one-shot collective waits for its last contributor: a straggler that
// starts D late delays completion by D, within one packet time (the others'
// contributions do not queue at the engine ahead of it).
void one_shot_moves_by_the_delay(const std::string& algorithm) {
  const std::vector<std::string> base = {"switch.ports=4", "collective.algorithm=" + algorithm,
                                         "collective.min_bytes=256", "collective.max_bytes=256"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return extra;
  };
  // Separate processes would be cleaner; two fabrics side by side in one
  // elaboration are independent (a test checks it), so run both here.
  const Config c0 = load_config("", with({"workload.kind=collective", "sim.warmup_ns=0",
                                          "sim.duration_ns=1000000"}));
  const Config c1 = load_config("", with({"workload.kind=collective", "sim.warmup_ns=0",
                                          "sim.duration_ns=1000000", "straggler.gpu=2",
                                          "straggler.delay_ns=5000"}));
  Fabric f0("f0", c0), f1("f1", c1);
  f0.sweep()->set_stop_kernel_when_done(false);
  f1.sweep()->set_stop_kernel_when_done(false);
  sc_core::sc_start(sc_core::sc_time::from_value(ns_to_ps(100000)));
  ASSERT_TRUE(f0.sweep()->done() && f1.sweep()->done());
  const auto t0 = static_cast<double>(f0.sweep()->calls()[0].end - f0.sweep()->calls()[0].start);
  const auto t1 = static_cast<double>(f1.sweep()->calls()[0].end - f1.sweep()->calls()[0].start);
  const double packet_ps = packet_flits_for(c0, 256) * static_cast<double>(flit_time_ps(c0.link));
  EXPECT_NEAR(t1 - t0, 5000000.0, packet_ps) << "t0 " << t0 << " ps, t1 " << t1 << " ps";
}
TEST(Straggler, OneShotPushCompletionMovesByTheInjectedDelay) {
  one_shot_moves_by_the_delay("push");
}
TEST(Straggler, OneShotDirectCompletionMovesByTheInjectedDelay) {
  one_shot_moves_by_the_delay("direct");
}

// A GPU whose links lost half their lanes paces the whole ring: bus
// bandwidth drops to about half.
TEST(Straggler, DegradedLinkPacesTheRing) {
  const auto s = run({"switch.ports=4", "collective.min_bytes=4194304",
                      "collective.max_bytes=4194304", "collective.check=false",
                      "straggler.gpu=1", "straggler.lanes=1"});
  const Config c = load_config("", {"switch.ports=4"});
  const double bound = link_gbps(c.link) / 8 / 2 * 256.0 / (17 * 16);  // half the lanes
  const double busbw = s["collectives"]["rows"][0]["busbw_GBps"].get<double>();
  EXPECT_LT(busbw, 1.02 * bound);
  EXPECT_GT(busbw, 0.85 * bound);
  // The GPUs that finish before the last one wait for it.
  const auto& wait = s["collectives"]["rows"][0]["gpu_wait_us_mean"];
  ASSERT_EQ(wait.size(), 4u);
  double most = 0, least = 1e9;
  for (const auto& w : wait) {
    most = std::max(most, w.get<double>());
    least = std::min(least, w.get<double>());
  }
  EXPECT_EQ(least, 0.0);  // the last GPU waits for nobody
  EXPECT_GT(most, 0.1);
}

// A throttled GPU (half its issue rate) paces the push all-reduce: no call
// can be faster than its 64 KiB at half its link rate. Jitter spreads the
// calls (without it, 8 identical calls take the same time to 1 ns).
TEST(Straggler, ThrottledGpuAndJitter) {
  const auto s = run({"switch.ports=4", "collective.algorithm=push", "collective.iterations=8",
                      "collective.min_bytes=65536", "collective.max_bytes=65536",
                      "straggler.gpu=0", "straggler.issue_factor=0.5", "straggler.jitter_ns=500"});
  const Config c = load_config("", {"switch.ports=4"});
  const auto& r = s["collectives"]["rows"][0];
  EXPECT_EQ(r["iterations"].get<int>(), 8);
  EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u);
  const double packet_ns = 17 * ps_to_ns(flit_time_ps(c.link));
  const double throttled_us = 65536.0 / 256 * packet_ns / 0.5 / 1000;
  EXPECT_GT(r["time_us_p50"].get<double>(), throttled_us);
  EXPECT_GT(r["time_us_max"].get<double>() - r["time_us_p50"].get<double>(), 0.1);
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// reduction.alu=rtl: the switches' reductions computed by the Verilated RTL
// give the same statistics (timing is the engine's either way) and the same
// bits (every element checked against the golden fold) as the C++ model.
TEST(Collective, RtlAluGivesTheSameRunAsTheModel) {
  auto config = [](const char* alu) {
    return load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml",
                       {"workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9",
                        "collective.algorithm=nvls", "collective.dtype=bf16",
                        "collective.min_bytes=1024", "collective.max_bytes=262144",
                        "collective.step_factor=16", std::string("reduction.alu=") + alu});
  };
  const Config cm = config("model"), cr = config("rtl");
  Fabric fm("fm", cm), fr("fr", cr, RtlAlu::factory());
  fm.sweep()->set_stop_kernel_when_done(false);
  fr.sweep()->set_stop_kernel_when_done(false);
  sc_core::sc_start(sc_core::sc_time::from_value(ns_to_ps(1000000)));
  ASSERT_TRUE(fm.sweep()->done() && fr.sweep()->done());
  // Both ran the same sweep to the same end; compare what they report.
  ASSERT_TRUE(fm.finish()) << fm.error();
  ASSERT_TRUE(fr.finish()) << fr.error();
  auto sm = fm.stats(), sr = fr.stats();
  EXPECT_EQ(sm["collectives"].dump(), sr["collectives"].dump());
  EXPECT_EQ(sm["conservation"].dump(), sr["conservation"].dump());
  for (int s = 0; s < 4; ++s) {
    const std::string n = "sw" + std::to_string(s);
    EXPECT_EQ(sm["switches"]["fm." + n].dump(), sr["switches"]["fr." + n].dump()) << n;
  }
  for (const auto& r : sr["collectives"]["rows"]) {
    EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(r["checked_elements"].get<std::uint64_t>(), 8u * r["count"].get<std::uint64_t>());
  }
  // The RTL really did the work: one 256-B beat per fold.
  std::uint64_t beats = 0;
  for (int s = 0; s < 4; ++s) beats += fr.sw(s).alu().beats();
  std::uint64_t folds = 0;
  for (const auto& [name, sw] : sr["switches"].items())
    folds += sw["reduction_engine"]["contributions"].get<std::uint64_t>() -
             sw["reduction_engine"]["completed"].get<std::uint64_t>();
  EXPECT_GT(beats, 0u);
  EXPECT_EQ(beats, folds);
}

// Every row of the algorithms' table (models/core/collective_algorithms.hpp:
// what the configuration accepts) finds its class in the registry under the
// same name, and the registry has no class the table does not list.
TEST(CollectiveAlgorithms, EveryAlgorithmValueIsRegistered) {
  const std::vector<std::string> names = collective_algorithm_names();
  for (const AlgorithmTraits& t : collective_algorithms()) {
    EXPECT_EQ(to_string(t.id), t.name);
    EXPECT_NE(std::find(names.begin(), names.end(), t.name), names.end()) << t.name;
    // What the table says an algorithm implements, the config accepts.
    for (const CollectiveOp op : t.ops) {
      // auto picks from the GPU side's algorithms: it needs a protocol.
      const std::string protocol = t.id == CollectiveAlgo::kAuto ? "auto" : "ideal";
      EXPECT_NO_THROW(load_config("", {"workload.kind=collective", "switch.vcs=2",
                                       std::string("collective.algorithm=") + t.name,
                                       "collective.op=" + to_string(op), "collective.protocol=" + protocol}))
          << t.name << " " << to_string(op);
    }
  }
  EXPECT_EQ(names.size(), collective_algorithms().size());
}

}  // namespace
}  // namespace fabricsim
