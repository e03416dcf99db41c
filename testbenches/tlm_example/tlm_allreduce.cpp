// An all-reduce over the dgx-h100 preset, driven only by plain TLM-2.0
// initiators (tlm_utils sockets, the generic payload, a quantum keeper) -
// the way a user's GPU model would drive fabricsim (docs/tlm.md).
//
// Each GPU has `sms` initiators (its SMs). The buffer is a multicast object
// backed at offset 0 of every GPU's memory:
//   1. each SM writes its part of the GPU's input into the GPU's own memory;
//   2. barrier; each GPU reduces its 1/n share, packet by packet:
//      multimem.ld_reduce (the switch reads and sums every GPU's copy), then
//      multimem.st of the sum (the switch writes it into every GPU's copy);
//   3. barrier; each GPU reads its whole buffer back and checks every element
//      against the sum computed here.
// Usage: tlm_allreduce [BYTES_PER_GPU] [SMS_PER_GPU] [CONFIG.yaml] ; exit 0 if correct.
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "tlm/extensions.hpp"
#include "tlm/tlm_fabric.hpp"

namespace {

using fabricsim::MultimemExtension;

// A counting barrier for the SMs of every GPU.
struct Barrier {
  int expected = 0;
  int arrived = 0;
  sc_core::sc_event all_in;
  void wait() {
    if (++arrived == expected) {
      arrived = 0;
      all_in.notify(sc_core::SC_ZERO_TIME);
    }
    sc_core::wait(all_in);
  }
};

// The input of GPU g, element i: small integers, so any summation order
// gives the same fp32 result and the check can be exact.
float input(int g, std::uint64_t i) { return static_cast<float>((static_cast<std::uint64_t>(g) * 7 + i * 3) % 1000) - 500.0f; }

struct Sm : sc_core::sc_module {
  SC_HAS_PROCESS(Sm);
  tlm_utils::simple_initiator_socket<Sm> socket;

  Sm(const sc_core::sc_module_name& n, int gpu, int sm, int sms, int gpus, std::uint64_t bytes,
     std::uint64_t gpu_base, std::uint64_t mc_base, std::uint32_t chunk, Barrier& b)
      : sc_core::sc_module(n), socket("socket"), gpu_(gpu), sm_(sm), sms_(sms), gpus_(gpus), bytes_(bytes),
        gpu_base_(gpu_base), mc_base_(mc_base), chunk_(chunk), barrier_(b) {
    SC_THREAD(run);
  }

  std::uint64_t wrong = 0;
  sc_core::sc_time reduce_start, reduce_end;

 private:
  // One blocking transaction, annotated with the keeper's local time.
  template <class Ext = MultimemExtension>
  void transport(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, unsigned len,
                 Ext* ext) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(data);
    t.set_data_length(len);
    t.set_streaming_width(len);
    t.set_byte_enable_ptr(nullptr);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    if (ext) t.set_extension(ext);
    sc_core::sc_time delay = qk_.get_local_time();
    socket->b_transport(t, delay);
    if (ext) t.clear_extension(ext);
    if (t.is_response_error())
      SC_REPORT_FATAL(name(), ("transaction failed: " + t.get_response_string()).c_str());
    qk_.set(delay);
    if (qk_.need_sync()) qk_.sync();
  }

  void run() {
    std::vector<std::uint8_t> buf(chunk_);
    // 1. Our part of the GPU's input, into its own memory (no fabric).
    for (std::uint64_t off = static_cast<std::uint64_t>(sm_) * chunk_; off < bytes_;
         off += static_cast<std::uint64_t>(sms_) * chunk_) {
      const unsigned len = static_cast<unsigned>(std::min<std::uint64_t>(chunk_, bytes_ - off));
      for (unsigned k = 0; k < len / 4; ++k) {
        const float v = input(gpu_, off / 4 + k);
        std::memcpy(&buf[static_cast<std::size_t>(k) * 4], &v, 4);
      }
      transport<MultimemExtension>(tlm::TLM_WRITE_COMMAND, gpu_base_ + off, buf.data(), len, nullptr);
    }
    qk_.sync();
    barrier_.wait();
    // 2. Our GPU's share, chunk by chunk, spread over its SMs.
    reduce_start = sc_core::sc_time_stamp();
    const std::uint64_t share = (bytes_ / 4 + gpus_ - 1) / gpus_ * 4;
    const std::uint64_t lo = std::min(bytes_, share * static_cast<std::uint64_t>(gpu_));
    const std::uint64_t hi = std::min(bytes_, lo + share);
    MultimemExtension ld(MultimemExtension::Op::kLdReduce, fabricsim::RedOp::kSum,
                         fabricsim::DType::kFp32);
    MultimemExtension st(MultimemExtension::Op::kStore, fabricsim::RedOp::kSum,
                         fabricsim::DType::kFp32);
    for (std::uint64_t off = lo + static_cast<std::uint64_t>(sm_) * chunk_; off < hi;
         off += static_cast<std::uint64_t>(sms_) * chunk_) {
      const unsigned len = static_cast<unsigned>(std::min<std::uint64_t>(chunk_, hi - off));
      transport(tlm::TLM_READ_COMMAND, mc_base_ + off, buf.data(), len, &ld);
      transport(tlm::TLM_WRITE_COMMAND, mc_base_ + off, buf.data(), len, &st);
    }
    // Stores are posted: wait until ours have landed in every GPU.
    fabricsim::FenceExtension fence;
    transport(tlm::TLM_IGNORE_COMMAND, 0, buf.data(), 1, &fence);
    qk_.sync();
    reduce_end = sc_core::sc_time_stamp();
    barrier_.wait();
    // 3. The whole result, from our own memory.
    for (std::uint64_t off = static_cast<std::uint64_t>(sm_) * chunk_; off < bytes_;
         off += static_cast<std::uint64_t>(sms_) * chunk_) {
      const unsigned len = static_cast<unsigned>(std::min<std::uint64_t>(chunk_, bytes_ - off));
      transport<MultimemExtension>(tlm::TLM_READ_COMMAND, gpu_base_ + off, buf.data(), len, nullptr);
      for (unsigned k = 0; k < len / 4; ++k) {
        float want = 0;
        for (int g = 0; g < gpus_; ++g) want += input(g, off / 4 + k);
        float got = 0;
        std::memcpy(&got, &buf[static_cast<std::size_t>(k) * 4], 4);
        if (got != want) ++wrong;
      }
    }
  }

  int gpu_, sm_, sms_, gpus_;
  std::uint64_t bytes_, gpu_base_, mc_base_;
  std::uint32_t chunk_;
  Barrier& barrier_;
  tlm_utils::tlm_quantumkeeper qk_;
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  const std::uint64_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 1u << 20;
  const int sms = argc > 2 ? std::atoi(argv[2]) : 8;
  const std::string preset = argc > 3 ? argv[3] : FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml";
  if (bytes == 0 || bytes % 4 != 0 || sms < 1) {
    std::fprintf(stderr, "usage: tlm_allreduce [BYTES_PER_GPU (a multiple of 4)] [SMS_PER_GPU >= 1] [CONFIG.yaml]\n");
    return 2;
  }
  try {
    const fabricsim::Config cfg = fabricsim::load_config(
        preset, {"workload.kind=tlm", "tlm.multicast=" + std::to_string(bytes) + "@0",
                 "tlm.outstanding=1024"});
    // Each SM may run ahead of the fabric by up to a microsecond.
    tlm_utils::tlm_quantumkeeper::set_global_quantum(sc_core::sc_time(1, sc_core::SC_US));
    fabricsim::TlmFabric fabric("top", cfg);
    const int gpus = fabric.gpus();
    const auto chunk = static_cast<std::uint32_t>(cfg.collective.payload_bytes);
    Barrier barrier;
    barrier.expected = gpus * sms;
    std::vector<std::unique_ptr<Sm>> all;
    for (int g = 0; g < gpus; ++g)
      for (int s = 0; s < sms; ++s) {
        all.push_back(std::make_unique<Sm>(("gpu" + std::to_string(g) + "_sm" + std::to_string(s)).c_str(),
                                           g, s, sms, gpus, bytes, fabric.address_map().gpu_base(g),
                                           fabric.address_map().object_base(0), chunk, barrier));
        all.back()->socket.bind(fabric.target(g));
      }
    sc_core::sc_start();
    if (!fabric.finish()) {
      std::fprintf(stderr, "end-of-run check failed: %s\n", fabric.error().c_str());
      return 1;
    }
    // The fabric's statistics, for the identity check of refactors
    // (scripts/identity): written only when asked.
    if (const char* path = std::getenv("FABRICSIM_STATS_JSON")) {
      std::ofstream out(path);
      out << fabric.stats().dump(1) << "\n";
      if (!out) {
        std::fprintf(stderr, "tlm_allreduce: cannot write '%s'\n", path);
        return 2;
      }
    }
    std::uint64_t wrong = 0;
    sc_core::sc_time start = sc_core::sc_max_time(), end = sc_core::SC_ZERO_TIME;
    for (auto& sm : all) {
      wrong += sm->wrong;
      start = std::min(start, sm->reduce_start);
      end = std::max(end, sm->reduce_end);
    }
    const double us = (end - start).to_seconds() * 1e6;
    // nccl-tests' bus bandwidth of an all-reduce: 2 (n-1)/n x bytes / time.
    const double busbw = 2.0 * (gpus - 1) / gpus * static_cast<double>(bytes) / ((end - start).to_seconds() * 1e9);
    std::printf("all-reduce of %llu B per GPU over %d GPUs x %d SMs: %.3f us, busbw %.1f GB/s, "
                "%llu wrong elements\n",
                static_cast<unsigned long long>(bytes), gpus, sms, us, busbw,
                static_cast<unsigned long long>(wrong));
    return wrong == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlm_allreduce: %s\n", e.what());
    return 2;
  }
}
