// Micro-benchmarks of the hot paths (Google Benchmark): the allocator, the
// time-bucket event queue, credit counting, the reduction ALU, statistics
// and input generation. Numbers, not tests: scripts/bench --micro runs them;
// CTest only checks that each runs (label bench). docs/performance.md says
// how they relate to the fabric's cost per packet.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "models/core/allocator.hpp"
#include "models/core/collective.hpp"
#include "models/core/credit_counter.hpp"
#include "models/core/histogram.hpp"
#include "models/core/reduction_alu.hpp"
#include "models/core/rng.hpp"
#include "models/core/time_buckets.hpp"

namespace fabricsim {
namespace {

// A request matrix like a loaded switch's at one edge: `free_outputs`
// outputs are free, and each input with a waiting head asks for the free
// ones it has packets for (each with probability `p`).
RequestMatrix requests(int ports, int free_outputs, double p, std::uint64_t seed) {
  RequestMatrix req(ports, ports);
  Rng rng(seed, 1);
  std::vector<int> outs;
  outs.reserve(static_cast<std::size_t>(free_outputs));
  for (int k = 0; k < free_outputs; ++k) outs.push_back(static_cast<int>(rng.below(static_cast<std::uint64_t>(ports))));
  for (int i = 0; i < ports; ++i)
    for (int o : outs)
      if (rng.uniform() < p) req.mutable_row(i).set(o);
  return req;
}

// Args: ports, free outputs, iterations.
void BM_ISlipAllocate(benchmark::State& st) {
  const int ports = static_cast<int>(st.range(0));
  const auto a = make_allocator(AllocatorKind::kISlip, ports, ports, static_cast<int>(st.range(2)), 1);
  std::vector<RequestMatrix> reqs;
  for (std::uint64_t s = 0; s < 16; ++s) reqs.push_back(requests(ports, static_cast<int>(st.range(1)), 0.5, s));
  Matching m(ports, ports);
  std::size_t k = 0;
  for (auto _ : st) {
    a->allocate(reqs[k++ % reqs.size()], m);
    benchmark::DoNotOptimize(m.size());
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_ISlipAllocate)
    ->Args({16, 16, 1})
    ->Args({64, 4, 1})
    ->Args({64, 64, 1})
    ->Args({64, 64, 4})
    ->Args({76, 5, 1})
    ->Args({256, 16, 1})
    ->Args({256, 256, 1});

// The event queue: items land on a flit grid a little ahead of now (the
// common case: at or near the back), the earliest bucket is taken.
void BM_TimeBuckets(benchmark::State& st) {
  TimeBuckets<std::uint32_t> q;
  Rng rng(7, 1);
  Ps now = 0;
  std::uint32_t n = 0;
  for (auto _ : st) {
    for (int k = 0; k < 4; ++k) q.add(now + 640 * (1 + rng.below(8)), n++);
    benchmark::DoNotOptimize(q.front().items.size());
    now = q.next_time();
    q.pop_front();
  }
  st.SetItemsProcessed(st.iterations() * 4);
}
BENCHMARK(BM_TimeBuckets);

void BM_CreditReturn(benchmark::State& st) {
  CreditCounter c("bench", 1024);
  for (auto _ : st) {
    c.take(17);
    c.give(17);
    benchmark::DoNotOptimize(c.available());
  }
}
BENCHMARK(BM_CreditReturn);

// Folding one 256-B contribution into an accumulator (the engine's work per
// read response or push contribution).
void BM_AluAccumulate(benchmark::State& st) {
  const auto t = static_cast<DType>(st.range(0));
  std::vector<std::uint8_t> acc(256), in(256);
  fill_input(1, 0, 0, 0, 256 / element_bytes(t), t, acc.data());
  fill_input(1, 0, 1, 0, 256 / element_bytes(t), t, in.data());
  for (auto _ : st) {
    alu_accumulate(RedOp::kSum, t, acc.data(), in.data(), 256);
    benchmark::DoNotOptimize(acc.data());
  }
  st.SetBytesProcessed(st.iterations() * 256);
}
BENCHMARK(BM_AluAccumulate)
    ->Arg(static_cast<int>(DType::kFp32))
    ->Arg(static_cast<int>(DType::kBf16))
    ->Arg(static_cast<int>(DType::kFp16))
    ->Arg(static_cast<int>(DType::kInt32));

// The data of one 256-B fp32 packet (every read response and store makes one).
void BM_FillInput(benchmark::State& st) {
  std::vector<std::uint8_t> out(256);
  std::uint64_t first = 0;
  for (auto _ : st) {
    fill_input(1, 0, 3, first, 64, DType::kFp32, out.data());
    first += 64;
    benchmark::DoNotOptimize(out.data());
  }
  st.SetBytesProcessed(st.iterations() * 256);
}
BENCHMARK(BM_FillInput);

void BM_HistogramRecord(benchmark::State& st) {
  Histogram h;
  Rng rng(3, 1);
  std::vector<std::uint64_t> v(4096);
  for (auto& x : v) x = 100000 + rng.below(400000);  // latencies in ps
  std::size_t k = 0;
  for (auto _ : st) h.record(v[k++ & 4095]);
  benchmark::DoNotOptimize(h.count());
}
BENCHMARK(BM_HistogramRecord);

}  // namespace
}  // namespace fabricsim

BENCHMARK_MAIN();
