// Endpoint operations of synthetic traffic: reads (a one-flit request, data
// back on the response VC) next to posted writes. Zero-load read latency is
// a one-flit trip plus an L-flit trip; the reads-in-flight limit caps read
// throughput by Little's law; nothing is lost when responses back up.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/sc/fabric.hpp"

namespace fabricsim {
namespace {

std::vector<std::string> zero_load(std::vector<std::string> extra) {
  std::vector<std::string> s = {"switch.ports=8",          "switch.vcs=2",
                                "traffic.pattern=permutation", "traffic.load=0.002",
                                "traffic.packet_flits=9",  "link.latency_ns=50",
                                "switch.pipeline_cycles=16", "switch.clock_ghz=1.5625",
                                "sim.warmup_ns=0",         "sim.duration_ns=200000"};
  s.insert(s.end(), extra.begin(), extra.end());
  return s;
}

// A write of L flits takes 50.64 (head at the switch) + 0.56 (next edge) +
// 16 x 0.64 (pipeline) + 50 + L x 0.64 ns: 112.08 ns for the one-flit read
// request, 117.2 ns for 9 flits of data. A read is both trips back to back
// (the response leaves as the request's tail lands, off the flit grid, so its
// edge wait differs by up to one cycle).
TEST(EndpointOps, ZeroLoadReadIsARequestTripPlusADataTrip) {
  const Config c = load_config("", zero_load({"traffic.read_fraction=1"}));
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const auto& r = s["reads"];
  ASSERT_GT(r["completed"].get<std::uint64_t>(), 100u);
  const double expect_ns = 112.08 + 117.2;
  EXPECT_NEAR(r["latency_ns"]["min"].get<double>(), expect_ns, 0.64);
  EXPECT_NEAR(r["latency_ns"]["p50"].get<double>(), expect_ns, 0.64);
  // Every read's data came back: requests and data both delivered.
  EXPECT_EQ(s["conservation"]["lost"].get<std::uint64_t>(), 0u);
}

// One read in flight per endpoint: each endpoint completes at most one read
// per read latency, however much it offers.
TEST(EndpointOps, ReadsInFlightCapThroughput) {
  const Config c = load_config("", {"switch.ports=8", "switch.vcs=2", "traffic.load=0.9",
                                    "traffic.read_fraction=1", "traffic.outstanding_reads=1",
                                    "link.latency_ns=50", "sim.warmup_ns=0",
                                    "sim.duration_ns=20000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  const auto completed = s["reads"]["completed"].get<std::uint64_t>();
  const double min_ns = s["reads"]["latency_ns"]["min"].get<double>();
  ASSERT_GT(min_ns, 200.0);
  const double bound = 8 * (20000.0 / min_ns + 1);
  EXPECT_LE(static_cast<double>(completed), bound);
  EXPECT_GT(static_cast<double>(completed), 0.5 * bound);  // and the slot is kept busy
  EXPECT_LT(s["throughput"]["accepted"].get<double>(), 0.2);
}

// Reads and writes mixed under overload on DGX H100's wiring: responses
// wait at their responder holding the request's credits, nothing is lost
// and every read started long enough before the end completes.
TEST(EndpointOps, MixedReadsAndWritesUnderOverloadLoseNothing) {
  const Config c = load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml",
                               {"traffic.load=0.95", "traffic.read_fraction=0.5",
                                "traffic.packet_flits=17", "sim.warmup_ns=1000",
                                "sim.duration_ns=5000"});
  Fabric f("fabric", c);
  ASSERT_TRUE(f.run()) << f.error();
  const auto s = f.stats();
  EXPECT_EQ(s["conservation"]["lost"].get<std::uint64_t>(), 0u);
  EXPECT_GT(s["reads"]["completed"].get<std::uint64_t>(), 1000u);
  EXPECT_GT(s["throughput"]["accepted"].get<double>(), 0.3);
}

}  // namespace
}  // namespace fabricsim
