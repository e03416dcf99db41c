// Scale-out: scale-up domains joined by NICs into a leaf/spine network.
// A flat ring across both tiers runs at the NICs' rate; the bytes crossing
// the boundary are what the ring's accounting says; an oversubscribed fat
// tree slows traffic that must cross leaves.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/sc/fabric.hpp"
#include "testbenches/common/run_fabrics.hpp"

namespace fabricsim {
namespace {

Config two_dgx(std::vector<std::string> extra) {
  std::vector<std::string> s = {"topology.kind=scaleout", "scaleout.domains=2",
                                "workload.kind=collective", "collective.algorithm=ring",
                                "collective.payload_bytes=256", "sim.warmup_ns=0",
                                "sim.duration_ns=1e9"};
  s.insert(s.end(), extra.begin(), extra.end());
  return load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml", s);
}

// 16 GPUs in a ring: 14 hops over NVLink (450 GB/s a GPU), 2 over one
// 400 Gb/s NIC each. The ring runs at its slowest hop: 50 GB/s x 256 B of
// payload per 320 B on the wire (a 64-B header flit) = 40 GB/s of busbw.
TEST(ScaleOut, FlatRingIsBoundByTheNics) {
  const std::uint64_t S = 16u << 20;
  const Config c = two_dgx({"collective.min_bytes=" + std::to_string(S),
                            "collective.max_bytes=" + std::to_string(S)});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const auto& row = s["collectives"]["rows"][0];
  EXPECT_EQ(row["wrong"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(s["collectives"]["gpus"].get<int>(), 16);
  EXPECT_NEAR(row["busbw_GBps"].get<double>(), 40.0, 40.0 * 0.03);
  // Each of the two crossing hops carries 2 (n-1)/n x S of payload, in
  // 256-B packets of 5 flits of 64 B.
  const double payload = 2.0 * 2.0 * 15.0 / 16.0 * static_cast<double>(S);
  EXPECT_DOUBLE_EQ(s["tiers"]["boundary_bytes"].get<double>(), payload * 320.0 / 256.0);
  // Rail-optimized: a leaf per GPU of a domain, two NICs each, two spines.
  EXPECT_EQ(s["tiers"]["leaves"].get<int>(), 8);
  EXPECT_EQ(s["tiers"]["spines"].get<int>(), 2);
  EXPECT_EQ(s["conservation"]["lost"].get<int>(), 0);
}

// 4 domains, 32 NICs packed on 16-port leaves: at 1:1, 8 NICs and 8 uplinks per
// leaf; at 3:1, 12 NICs share 4 uplinks. All-to-all sends 3/4 of every
// GPU's data to other domains, most of it across leaves: the oversubscribed
// tree must be markedly slower, and the data the same.
TEST(ScaleOut, OversubscriptionSlowsCrossLeafAllToAll) {
  std::vector<Config> cs;
  for (const char* o : {"1", "3"})
    cs.push_back(two_dgx({"scaleout.domains=4", "scaleout.switch_ports=16",
                          "scaleout.placement=packed",
                          std::string("scaleout.oversubscription=") + o,
                          "collective.op=all_to_all", "collective.algorithm=direct",
                          "collective.min_bytes=1048576", "collective.max_bytes=1048576"}));
  const auto s = run_fabrics(cs);
  const auto& a = s[0]["collectives"]["rows"][0];
  const auto& b = s[1]["collectives"]["rows"][0];
  EXPECT_EQ(a["wrong"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(b["wrong"].get<std::uint64_t>(), 0u);
  EXPECT_GT(b["time_us"].get<double>(), 1.5 * a["time_us"].get<double>());
  EXPECT_EQ(s[1]["tiers"]["spines"].get<int>(), 4);
}

// Hierarchical all-reduce on 2 x 8 GPUs: ring reduce-scatter in each DGX,
// a ring of 2 across them per rank, all-gather in each DGX. Every element
// is checked against the golden result folded in the algorithm's order
// (bit for bit), and the bytes match the algorithm's accounting: each GPU
// sends 2 (D-1)/D x S over NVLink (GPU -> switch -> GPU, 272 B on the
// wire per 256 B) and 2 (m-1)/m x S/D into its NIC (320 B per 256 B);
// rail placement keeps each rank's ring on its own leaf (no spine).
TEST(ScaleOut, HierarchicalAllReduceIsExactAndMovesTheAccountedBytes) {
  const std::uint64_t S = 4u << 20;
  const std::string size = std::to_string(S);
  std::vector<Config> cs;
  for (const char* a : {"hierarchical", "ring"})
    cs.push_back(two_dgx({std::string("collective.algorithm=") + a, "collective.min_bytes=" + size,
                          "collective.max_bytes=" + size}));
  cs.push_back(two_dgx({"collective.algorithm=hierarchical", "scaleout.sharp=true",
                        "collective.min_bytes=" + size, "collective.max_bytes=" + size}));
  const auto s = run_fabrics(cs);
  const auto& h = s[0]["collectives"]["rows"][0];
  EXPECT_EQ(h["wrong"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(h["checked_elements"].get<std::uint64_t>(), 16u * S / 4);
  const double n = 16, d = 8, m = 2;
  const auto& t = s[0]["tiers"];
  EXPECT_DOUBLE_EQ(t["boundary_bytes"].get<double>(), n * 2 * (m - 1) / m * S / d * 320 / 256);
  EXPECT_DOUBLE_EQ(t["scale_out"]["bytes"].get<double>(), 2 * t["boundary_bytes"].get<double>());
  EXPECT_DOUBLE_EQ(t["scale_up"]["bytes"].get<double>(), n * 2 * (d - 1) / d * S * 272 / 256 * 2);
  // Phases end in order, and the hierarchy beats the flat ring (bound by
  // one NIC per hop) several times over.
  EXPECT_GT(h["intra_done_us"].get<double>(), 0.0);
  EXPECT_GT(h["inter_done_us"].get<double>(), h["intra_done_us"].get<double>());
  EXPECT_GT(h["time_us"].get<double>(), h["inter_done_us"].get<double>());
  EXPECT_GT(h["busbw_GBps"].get<double>(), 3 * s[1]["collectives"]["rows"][0]["busbw_GBps"].get<double>());
  // SHARP: each GPU pushes its S/D chunk to its leaf's engine and gets the
  // sum back (S/D each way over its NIC, not 2 (m-1)/m x S/D: the same
  // here with m = 2); exact in the engine's domain order.
  const auto& x = s[2]["collectives"]["rows"][0];
  EXPECT_EQ(x["wrong"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(x["checked_elements"].get<std::uint64_t>(), 16u * S / 4);
  EXPECT_DOUBLE_EQ(s[2]["tiers"]["boundary_bytes"].get<double>(), n * S / d * 320 / 256);
  EXPECT_DOUBLE_EQ(s[2]["tiers"]["scale_out"]["bytes"].get<double>(), 2 * n * S / d * 320 / 256);
  std::uint64_t folded = 0;
  for (const auto& [name, sw] : s[2]["switches"].items())
    if (sw.contains("reduction_engine")) folded += sw["reduction_engine"]["contributions"].get<std::uint64_t>();
  EXPECT_EQ(folded, 16u * (S / d / 256));  // every GPU's chunk, in 256-B packets
  for (const auto& st : s) EXPECT_EQ(st["conservation"]["lost"].get<int>(), 0);
}

// The leaves' engines are built as scaleout.sharp_organisation says, central
// by default, whatever the scale-up chips' reduction.organisation: a
// distributed slice is a share of an NVSwitch chip and of a scale-up link.
// With the chips' distributed slices on the leaves SHARP is slower (4 MiB:
// each slice's 16 B per cycle is half a 400 Gb/s NIC).
TEST(ScaleOut, SharpEnginesHaveTheTiersOwnOrganisation) {
  const std::string size = std::to_string(4u << 20);
  std::vector<Config> cs;
  for (const char* o : {"central", "distributed"})
    cs.push_back(two_dgx({"collective.algorithm=hierarchical", "scaleout.sharp=true",
                          "reduction.organisation=distributed",
                          std::string("scaleout.sharp_organisation=") + o,
                          "collective.min_bytes=" + size, "collective.max_bytes=" + size}));
  const auto s = run_fabrics(cs);
  const char* want[] = {"central", "distributed"};
  for (std::size_t k = 0; k < s.size(); ++k) {
    EXPECT_EQ(s[k]["collectives"]["rows"][0]["wrong"].get<std::uint64_t>(), 0u);
    int engines = 0;
    for (const auto& [name, sw] : s[k]["switches"].items())
      if (sw.contains("reduction_engine")) {
        ++engines;
        EXPECT_EQ(sw["reduction_engine"]["organisation"].get<std::string>(), want[k]) << name;
      }
    EXPECT_GT(engines, 0);
  }
  EXPECT_GT(s[0]["collectives"]["rows"][0]["busbw_GBps"].get<double>(),
            s[1]["collectives"]["rows"][0]["busbw_GBps"].get<double>());
}

// Phase 2 by a binary tree (collective.inter=tree) over 5 domains of 2
// GPUs: domain 0 the root with children 1 and 2, domain 1 with 3 and 4.
// Exact against the tree's fold order (own sum, then children in order),
// uneven chunks included; up and down each carry (m-1) x S/D per rank, as
// much as the ring's 2(m-1) x S/D per rank (up to packet rounding). The
// double tree (collective.inter=double_tree) sends each half of a chunk
// over its own tree, the second mirrored (domain 4 its root, domain 2 a
// leaf of both): exact too, the same bytes.
TEST(ScaleOut, HierarchicalTreeAcrossTheDomains) {
  std::vector<Config> cs;
  for (const char* inter : {"tree", "ring", "double_tree"})
    cs.push_back(two_dgx({"scaleout.domains=5", "topology.endpoints=2", "topology.links=[5,4,4,5]",
                          "collective.algorithm=hierarchical", std::string("collective.inter=") + inter,
                          "collective.min_bytes=1000000", "collective.max_bytes=1000000"}));
  const auto s = run_fabrics(cs);
  // On the wire, a packet is a 64-B header flit plus its payload in 64-B
  // flits. A chunk is 125000 elements: 1953 packets of 256 B and one of
  // 32 B (the tree sends whole chunks); the ring's sub-chunks of 25000 are
  // 390 of 256 B and one of 160 B. Per rank, 2 (m-1) chunks or 2 (m-1) m
  // sub-chunks cross; 2 ranks.
  // The double tree splits a chunk at whole slices: 977 packets on tree 0
  // (62528 elements), 976 and one of 32 B on tree 1: the tree's bytes.
  const double chunk = 1953 * 320 + 128, sub = 390 * 320 + 256;
  const double boundary[3] = {2 * 2 * 4 * chunk, 2 * 2 * 4 * 5 * sub, 2 * 2 * 4 * chunk};
  for (int k = 0; k < 3; ++k) {
    const auto& st = s[static_cast<size_t>(k)];
    const auto& r = st["collectives"]["rows"][0];
    EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(r["checked_elements"].get<std::uint64_t>(), 10u * 250000u);
    EXPECT_DOUBLE_EQ(st["tiers"]["boundary_bytes"].get<double>(), boundary[k]) << k;
    EXPECT_EQ(st["conservation"]["lost"].get<int>(), 0);
  }
  // The tree ends phase 2 in fewer steps, the ring moves less through the
  // busiest NIC: at 1 MB the ring is ahead. The double tree halves what an
  // inner node's NIC takes: ahead of the single tree.
  const auto time = [&](int k) { return s[static_cast<size_t>(k)]["collectives"]["rows"][0]["time_us"].get<double>(); };
  EXPECT_GT(time(0), time(1));
  EXPECT_LT(time(2), time(0));
}

// A workload with every op a workload runs, on groups that span domains
// (tp: 4 GPUs of each of 2 DGX; dp: its complement), uneven sizes, bf16,
// two iterations: every element right, and every call's bytes accounted.
TEST(ScaleOut, WorkloadRunsEveryOpOnGroups) {
  const std::string path = ::testing::TempDir() + "/every_op.json";
  std::ofstream(path) << R"({"groups": {"tp": "4x1+2x8", "dp": "2x4+2x16"}, "calls": [
      {"op": "reduce_scatter", "bytes": 100000, "group": "tp"},
      {"op": "all_gather", "bytes": 100000, "group": "dp", "compute_ns": 500},
      {"op": "all_to_all", "algorithm": "direct", "bytes": 65536, "group": "tp"},
      {"op": "all_reduce", "algorithm": "hierarchical", "bytes": 100000, "group": "all"},
      {"op": "all_reduce", "bytes": 100000, "group": "all"}]})";
  Fabric f("fabric", two_dgx({"scaleout.domains=4", "collective.workload=" + path,
                              "collective.iterations=2", "collective.dtype=bf16"}));
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const auto& k = s["collectives"];
  EXPECT_EQ(k["workload"].get<std::string>(), "every_op");
  EXPECT_EQ(k["wrong"].get<std::uint64_t>(), 0u);
  ASSERT_EQ(k["rows"].size(), 10u);
  ASSERT_EQ(k["step_time_us"].size(), 2u);
  // Output elements per call over the 32 GPUs: a reduce-scatter's share
  // (1/8 of 50000), an all-gather's other 3/4 (of 50000), an all-to-all's
  // 7 peers' 1/8 (of 32768), all-reduces' whole 50000.
  const std::uint64_t gpus = 32;
  const std::uint64_t expect[5] = {gpus * 6250, gpus * 37500, gpus * 7 * 4096, gpus * 50000,
                                   gpus * 50000};
  std::uint64_t sum = 0;
  double tiers = 0;
  for (int i = 0; i < 10; ++i) {
    const auto& r = k["rows"][static_cast<size_t>(i)];
    EXPECT_EQ(r["checked_elements"].get<std::uint64_t>(), expect[i % 5]) << i;
    sum += r["checked_elements"].get<std::uint64_t>();
    tiers += r["scale_up_bytes"].get<double>() + r["scale_out_bytes"].get<double>();
  }
  EXPECT_EQ(k["checked_elements"].get<std::uint64_t>(), sum);
  // The calls' tier bytes add up to the run's.
  EXPECT_DOUBLE_EQ(tiers, s["tiers"]["scale_up"]["bytes"].get<double>() +
                              s["tiers"]["scale_out"]["bytes"].get<double>());
  EXPECT_EQ(s["conservation"]["lost"].get<int>(), 0);
}

// Errors on the scale-out links only (scaleout.ber, .fec, .retry): with
// go-back-N every element still arrives right, the replays are all on NIC,
// leaf and spine links, counted in their 64-B flits; without a retry the
// first uncorrectable codeword stops the run with the scale-out keys named.
TEST(ScaleOut, LinkErrorsAndRetryOnTheScaleOutTier) {
  const std::vector<std::string> base = {
      "collective.algorithm=hierarchical", "collective.min_bytes=1048576",
      "collective.max_bytes=1048576",      "scaleout.ber=3e-3",
      "scaleout.fec=rs544",                "scaleout.replay_buffer_flits=8192"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), base.begin(), base.end());
    return two_dgx(extra);
  };
  const auto s = run_fabrics({with({"scaleout.retry=go_back_n"})});
  const auto& r = s[0]["collectives"]["rows"][0];
  EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(r["checked_elements"].get<std::uint64_t>(), 16u * 262144u);
  std::uint64_t replays = 0;
  for (const auto& [name, l] : s[0]["links"].items()) {
    if (!l.contains("reliability")) continue;
    const auto& rel = l["reliability"];
    const bool nvlink = name.find(".tx") != std::string::npos ||
                        (name.rfind("fabric.sw", 0) == 0 && std::stoi(name.substr(9)) < 8);
    if (nvlink) {
      EXPECT_EQ(rel["codewords"].get<std::uint64_t>(), 0u) << name;
      continue;
    }
    replays += rel["replays"].get<std::uint64_t>();
    // 256-B packets: 5 flits of 64 B each.
    EXPECT_EQ(rel["retransmitted_bytes"].get<std::uint64_t>(),
              320u * rel["retransmitted_packets"].get<std::uint64_t>()) << name;
  }
  EXPECT_GT(replays, 0u);
}

TEST(ScaleOut, AnUncorrectableScaleOutErrorWithoutRetryNamesTheScaleOutKeys) {
  Fabric f("fabric", two_dgx({"collective.algorithm=hierarchical", "collective.min_bytes=1048576",
                              "collective.max_bytes=1048576", "scaleout.ber=3e-3",
                              "scaleout.fec=rs544"}));
  EXPECT_FALSE(f.run());
  EXPECT_NE(f.error().find("with scaleout.retry=none nothing can resend it"), std::string::npos)
      << f.error();
}

// The corners: uneven chunks (an odd element count) with fp16 max; one GPU
// per domain (the whole message is the chunk: a ring across the domains);
// one domain (no scale-out phase: reduce-scatter, then all-gather).
TEST(ScaleOut, HierarchicalAllReduceCorners) {
  const std::vector<std::string> h = {"collective.algorithm=hierarchical",
                                      "collective.min_bytes=200002",
                                      "collective.max_bytes=200002"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), h.begin(), h.end());
    return extra;
  };
  std::vector<Config> cs;
  cs.push_back(two_dgx(with({"collective.dtype=fp16", "collective.redop=max"})));
  cs.push_back(two_dgx(with({"scaleout.domains=4", "topology.endpoints=1",
                             "topology.links=[5,4,4,5]"})));
  cs.push_back(load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml",
                           with({"workload.kind=collective", "sim.warmup_ns=0",
                                 "sim.duration_ns=1e9"})));
  const auto s = run_fabrics(cs);
  const std::uint64_t gpus[3] = {16, 4, 8};
  const std::uint64_t elements[3] = {100001, 50000, 50000};
  for (int i = 0; i < 3; ++i) {
    const auto& r = s[static_cast<size_t>(i)]["collectives"]["rows"][0];
    EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u) << i;
    EXPECT_EQ(r["checked_elements"].get<std::uint64_t>(), gpus[i] * elements[i]) << i;
    EXPECT_EQ(s[static_cast<size_t>(i)]["conservation"]["lost"].get<int>(), 0) << i;
  }
}

// A training step (collective.workload) of a tensor-parallel all-reduce on
// groups of 8 and a data-parallel one on groups of 2, 4 MiB each, 10 us of
// compute before each, on 2 x 8 GPUs, under two mappings: tp inside each
// DGX (dp across), and tp spanning both (dp inside). Each call takes at
// least its bound, 2 (n-1)/n x S over the slowest tier its ring crosses
// (NVLink 18 x 25 GB/s x 256/272, or one NIC 50 GB/s x 256/320), and
// within 25 % of it; the bytes each tier carried during each call are the
// rings' accounting; the step is the sum of its compute and calls.
TEST(ScaleOut, RemappingTensorParallelAcrossTheBoundarySlowsTheStep) {
  const std::string path = ::testing::TempDir() + "/tp_dp_step.json";
  std::ofstream(path) << R"({"name": "tp-dp", "groups": {"tp": "8x1", "dp": "2x8"}, "calls": [
      {"name": "tp", "op": "all_reduce", "bytes": 4194304, "group": "tp", "compute_ns": 10000},
      {"name": "dp", "op": "all_reduce", "bytes": 4194304, "group": "dp", "compute_ns": 10000}]})";
  std::vector<Config> cs;
  for (const char* g : {"tp=8x1,dp=2x8", "tp=4x1+2x8,dp=2x4"})
    cs.push_back(two_dgx({"collective.workload=" + path, std::string("collective.groups=") + g}));
  const auto s = run_fabrics(cs);
  const double S = 4194304, nvlink = 18 * 25e9 * 256 / 272, nic = 50e9 * 256 / 320;
  const auto bound_us = [&](double n, double b) { return 2 * (n - 1) / n * S / b * 1e6; };
  // [mapping][call]: the bound, and the scale-out bytes.
  const double bound[2][2] = {{bound_us(8, nvlink), bound_us(2, nic)},
                              {bound_us(8, nic), bound_us(2, nvlink)}};
  // Mapping 0: dp pairs GPU g with g+8, both on rail leaf g: NIC, leaf,
  // NIC (2 links). Mapping 1: each tp ring crosses twice (3 -> 8, 11 -> 0)
  // between rails: NIC, leaf, spine, leaf (4 links); 2 groups.
  const double so_bytes[2][2] = {{0, 16 * S * 1.25 * 2}, {2 * 2 * 1.75 * S * 1.25 * 4, 0}};
  double step[2];
  for (int m = 0; m < 2; ++m) {
    const auto& k = s[static_cast<size_t>(m)]["collectives"];
    EXPECT_EQ(k["wrong"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(k["checked_elements"].get<std::uint64_t>(), 2u * 16u * 1048576u);
    double sum = 0;
    for (int c = 0; c < 2; ++c) {
      const auto& r = k["rows"][static_cast<size_t>(c)];
      const double t = r["time_us"].get<double>();
      EXPECT_GE(t, bound[m][c]) << m << " " << c;
      EXPECT_LE(t, 1.25 * bound[m][c]) << m << " " << c;
      EXPECT_DOUBLE_EQ(r["scale_out_bytes"].get<double>(), so_bytes[m][c]) << m << " " << c;
      sum += t + r["compute_us"].get<double>();
    }
    step[m] = k["step_time_us"][0].get<double>();
    EXPECT_NEAR(step[m], sum, 1e-6);
  }
  // tp moves 1.75 x S per GPU, dp 1 x S: putting tp on the NICs costs more
  // than taking dp off them.
  EXPECT_GT(step[1], 1.3 * step[0]);
}

}  // namespace
}  // namespace fabricsim
