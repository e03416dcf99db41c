// The TLM-2.0 faces (docs/tlm.md): LT and AT agree, AT back-pressure goes
// through END_REQ, bad transactions get the base protocol's error
// responses, a foreign memory target receives the fabric's accesses, and
// timing annotations add up with the fabric's latency.
#include <gtest/gtest.h>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "tlm/extensions.hpp"
#include "tlm/tlm_fabric.hpp"

namespace fabricsim {
namespace {

Config tlm_config(std::vector<std::string> extra = {}) {
  std::vector<std::string> s = {"workload.kind=tlm", "tlm.window_bytes=1048576",
                                "tlm.multicast=65536@0", "tlm.multicast_base=268435456"};
  s.insert(s.end(), extra.begin(), extra.end());
  return load_config(FABRICSIM_SOURCE_DIR "/configs/dgx-h100.yaml", s);
}

std::uint64_t gpu_addr(const TlmFabric& f, int g, std::uint64_t off) {
  return f.address_map().gpu_base(g) + off;
}

// One operation of a script, and when it completed.
struct Op {
  tlm::tlm_command cmd = tlm::TLM_IGNORE_COMMAND;
  std::uint64_t addr = 0;
  unsigned len = 0;
  int ext = 0;  // 0 none, 1 ld_reduce (fp32 sum), 2 multimem.st, 3 fence, 4 atomic
  AtomicExtension atomic;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;  // LT annotation / AT BEGIN_REQ delay
  std::vector<std::uint8_t> data;
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  sc_core::sc_time issued, done, end_req;
};

// Runs a script one transaction at a time, in LT (b_transport) or AT
// (nb_transport, four phases) style.
struct Initiator : sc_core::sc_module {
  SC_HAS_PROCESS(Initiator);
  tlm_utils::simple_initiator_socket<Initiator> socket;
  std::vector<Op> ops;
  bool at = false;
  sc_core::sc_time start = sc_core::SC_ZERO_TIME;

  explicit Initiator(const sc_core::sc_module_name& n) : sc_core::sc_module(n), socket("socket") {
    socket.register_nb_transport_bw(this, &Initiator::nb_bw);
    SC_THREAD(run);
  }

  void run() {
    sc_core::wait(start);
    MultimemExtension ld(MultimemExtension::Op::kLdReduce, RedOp::kSum, DType::kFp32);
    MultimemExtension st(MultimemExtension::Op::kStore, RedOp::kSum, DType::kFp32);
    FenceExtension fence;
    for (Op& op : ops) {
      tlm::tlm_generic_payload t;
      if (op.data.size() < op.len) op.data.resize(op.len);
      t.set_command(op.cmd);
      t.set_address(op.addr);
      t.set_data_ptr(op.data.data());
      t.set_data_length(op.len);
      t.set_streaming_width(op.len);
      t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      if (op.ext == 1) t.set_extension(&ld);
      if (op.ext == 2) t.set_extension(&st);
      if (op.ext == 3) t.set_extension(&fence);
      if (op.ext == 4) t.set_extension(&op.atomic);
      op.issued = sc_core::sc_time_stamp() + op.delay;
      if (!at) {
        sc_core::sc_time d = op.delay;
        socket->b_transport(t, d);
        sc_core::wait(d);  // quantum 0: synchronise after every transaction
        op.done = op.end_req = sc_core::sc_time_stamp();
      } else {
        run_at(t, op);
      }
      op.status = t.get_response_status();
      t.clear_extension(&ld);
      t.clear_extension(&st);
      t.clear_extension(&fence);
      if (op.ext == 4) t.clear_extension(&op.atomic);
    }
  }

  void run_at(tlm::tlm_generic_payload& t, Op& op) {
    tlm::tlm_phase ph = tlm::BEGIN_REQ;
    sc_core::sc_time d = op.delay;
    got_end_req_ = got_resp_ = false;
    const tlm::tlm_sync_enum r = socket->nb_transport_fw(t, ph, d);
    if (r == tlm::TLM_COMPLETED) {
      sc_core::wait(d);
      op.done = op.end_req = sc_core::sc_time_stamp();
      return;
    }
    if (r == tlm::TLM_UPDATED && ph == tlm::END_REQ) {
      got_end_req_ = true;
      op.end_req = sc_core::sc_time_stamp() + d;
    }
    if (!got_end_req_) {
      sc_core::wait(end_req_);
      op.end_req = sc_core::sc_time_stamp();
    }
    if (!got_resp_) sc_core::wait(resp_);
    op.done = sc_core::sc_time_stamp();
  }

  tlm::tlm_sync_enum nb_bw(tlm::tlm_generic_payload& /*t*/, tlm::tlm_phase& ph,
                           sc_core::sc_time& /*delay*/) {
    if (ph == tlm::END_REQ) {
      got_end_req_ = true;
      end_req_.notify();
      return tlm::TLM_ACCEPTED;
    }
    // BEGIN_RESP (it implies END_REQ): complete at once.
    if (!got_end_req_) {
      got_end_req_ = true;
      end_req_.notify();
    }
    got_resp_ = true;
    resp_.notify();
    ph = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }

 private:
  bool got_end_req_ = false, got_resp_ = false;
  sc_core::sc_event end_req_, resp_;
};

Op op(tlm::tlm_command cmd, std::uint64_t addr, unsigned len, int ext = 0,
      std::vector<std::uint8_t> data = {}) {
  Op o;
  o.cmd = cmd;
  o.addr = addr;
  o.len = len;
  o.ext = ext;
  o.data = std::move(data);
  return o;
}

std::vector<std::uint8_t> floats(std::initializer_list<float> v, std::size_t n) {
  std::vector<std::uint8_t> b(n * 4, 0);
  std::size_t i = 0;
  for (float f : v) std::memcpy(&b[4 * i++], &f, 4);
  return b;
}

// The same script on two fabrics in one kernel, one driven LT (quantum 0)
// and one AT: the same data back and the same completion times.
TEST(TlmFaces, LtAndAtGiveTheSameDataAndTimesAtQuantumZero) {
  const Config c = tlm_config();
  TlmFabric lt_f("lt", c), at_f("at", c);
  Initiator lt("lt_init"), at("at_init");
  at.at = true;
  lt.socket.bind(lt_f.target(0));
  at.socket.bind(at_f.target(0));
  auto script = [&](TlmFabric& f) {
    const std::uint64_t mc = f.address_map().object_base(0);
    std::vector<Op> s;
    s.push_back(op(tlm::TLM_WRITE_COMMAND, gpu_addr(f, 3, 4096), 600, 0, floats({1, 2, 3}, 150)));
    s.push_back(op(tlm::TLM_IGNORE_COMMAND, 0, 1, 3));  // fence: the write has landed
    s.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 3, 4096), 600));
    s.push_back(op(tlm::TLM_WRITE_COMMAND, mc + 256, 512, 2, floats({0.5f, -1}, 128)));
    s.push_back(op(tlm::TLM_IGNORE_COMMAND, 0, 1, 3));
    s.push_back(op(tlm::TLM_READ_COMMAND, mc + 256, 512, 1));  // 8 GPUs x the stored data
    s.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 0, 256), 8));  // local: no fabric
    return s;
  };
  lt.ops = script(lt_f);
  at.ops = script(at_f);
  sc_core::sc_start();
  ASSERT_TRUE(lt_f.finish()) << lt_f.error();
  ASSERT_TRUE(at_f.finish()) << at_f.error();
  ASSERT_EQ(lt.ops.size(), at.ops.size());
  for (std::size_t i = 0; i < lt.ops.size(); ++i) {
    SCOPED_TRACE("operation " + std::to_string(i));
    EXPECT_EQ(lt.ops[i].status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(at.ops[i].status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(lt.ops[i].data, at.ops[i].data);
    EXPECT_EQ(lt.ops[i].done, at.ops[i].done);
  }
  // The data is right, not only equal: the read sees the write, the
  // ld_reduce the sum of 8 stored copies.
  EXPECT_EQ(lt.ops[2].data, lt.ops[0].data);
  float v[2];
  std::memcpy(v, lt.ops[5].data.data(), 8);
  EXPECT_EQ(v[0], 4.0f);
  EXPECT_EQ(v[1], -8.0f);
  // Remote operations took fabric time; the local read none.
  EXPECT_GT(lt.ops[2].done - lt.ops[2].issued, sc_core::sc_time(400, sc_core::SC_NS));
  EXPECT_EQ(lt.ops[6].done, lt.ops[6].issued);
}

// A memory model of the user's, without DMI: it records what reaches it,
// answers reads with a pattern, and annotates a read latency.
struct RecordingMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<RecordingMemory> socket;
  struct Access {
    bool write;
    std::uint64_t addr;
    unsigned len;
    sc_core::sc_time at;
    std::vector<std::uint8_t> data;
  };
  std::vector<Access> log;
  explicit RecordingMemory(const sc_core::sc_module_name& n) : sc_core::sc_module(n), socket("socket") {
    socket.register_b_transport(this, &RecordingMemory::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& d) {
    Access a{t.is_write(), t.get_address(), t.get_data_length(), sc_core::sc_time_stamp() + d, {}};
    if (t.is_write()) a.data.assign(t.get_data_ptr(), t.get_data_ptr() + t.get_data_length());
    if (t.is_read())
      for (unsigned i = 0; i < t.get_data_length(); ++i) t.get_data_ptr()[i] = static_cast<std::uint8_t>(i * 3);
    if (t.is_read()) d += sc_core::sc_time(50, sc_core::SC_NS);
    log.push_back(a);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// GPU 3's memory is the user's: the fabric's writes land in it (at the
// fabric's time) and its reads come from it, its latency added.
TEST(TlmFaces, AForeignMemoryTargetReceivesTheWrites) {
  const Config c = tlm_config();
  TlmFabric f("top", c);
  RecordingMemory mem("mem3");
  f.bind_memory(3, mem.socket);
  Initiator i("init");
  i.socket.bind(f.target(0));
  i.ops.push_back(op(tlm::TLM_WRITE_COMMAND, gpu_addr(f, 3, 1000), 300, 0, floats({7, 8}, 75)));
  i.ops.push_back(op(tlm::TLM_IGNORE_COMMAND, 0, 1, 3));
  i.ops.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 3, 64), 16));
  sc_core::sc_start();
  ASSERT_TRUE(f.finish()) << f.error();
  // 300 B travel as two packets (256 + 44) on two links (the address
  // stripe): the short one lands first.
  ASSERT_EQ(mem.log.size(), 3u);
  const auto& head = mem.log[0].addr == 1000u ? mem.log[0] : mem.log[1];
  const auto& tail = mem.log[0].addr == 1000u ? mem.log[1] : mem.log[0];
  EXPECT_TRUE(head.write && tail.write);
  EXPECT_EQ(head.addr, 1000u);
  EXPECT_EQ(head.len, 256u);
  EXPECT_EQ(tail.addr, 1256u);
  EXPECT_EQ(tail.len, 44u);
  std::vector<std::uint8_t> landed = head.data;
  landed.insert(landed.end(), tail.data.begin(), tail.data.end());
  EXPECT_EQ(landed, i.ops[0].data);
  // The write landed a fabric trip after it was issued.
  EXPECT_GT(head.at, i.ops[0].issued + sc_core::sc_time(200, sc_core::SC_NS));
  // The fence completed when the last packet landed (no ack trip modelled).
  EXPECT_EQ(i.ops[1].done, std::max(head.at, tail.at));
  EXPECT_FALSE(mem.log[2].write);
  for (unsigned k = 0; k < 16; ++k) EXPECT_EQ(i.ops[2].data[k], static_cast<std::uint8_t>(k * 3));
  EXPECT_EQ(f.stats()["endpoints"][3]["memory"], "b_transport");
  EXPECT_EQ(f.stats()["endpoints"][0]["memory"], "dmi");
}

// An LT annotation moves the transaction by exactly that much on an idle
// fabric; a write lands one fabric trip after its annotated issue time.
TEST(TlmFaces, TimingAnnotationAddsUp) {
  const Config c = tlm_config();
  TlmFabric f("top", c);
  RecordingMemory mem("mem5");
  f.bind_memory(5, mem.socket);
  Initiator i("init");
  i.socket.bind(f.target(1));
  i.ops.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 5, 0), 256));
  i.ops.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 5, 0), 256));
  i.ops[1].delay = sc_core::sc_time(1280, sc_core::SC_NS);
  i.ops.push_back(op(tlm::TLM_WRITE_COMMAND, gpu_addr(f, 5, 0), 256));
  i.ops[2].delay = sc_core::sc_time(333, sc_core::SC_NS);
  i.ops.push_back(op(tlm::TLM_IGNORE_COMMAND, 0, 1, 3));
  sc_core::sc_start();
  ASSERT_TRUE(f.finish()) << f.error();
  const sc_core::sc_time read0 = i.ops[0].done - i.ops[0].issued;
  const sc_core::sc_time read1 = i.ops[1].done - i.ops[1].issued;
  // Issue time + the same fabric latency, but for where the issue falls
  // between switch clock edges (up to a cycle, 0.64 ns).
  EXPECT_NEAR(read1.to_seconds() * 1e9, read0.to_seconds() * 1e9, 0.64);
  // A one-flit request, 50 ns of memory, 17 flits of data back: each trip
  // is 2 x 100 ns of link + 16 pipeline cycles (10.24 ns) + serialisation
  // and the wait for a switch edge (<= 0.64 ns).
  const double trip_req = 200 + 10.24 + 2 * 0.64, trip_data = 200 + 10.24 + 0.64 + 17 * 0.64;
  EXPECT_NEAR(read0.to_seconds() * 1e9, trip_req + 50 + trip_data, 2 * 0.64);
  ASSERT_EQ(mem.log.size(), 3u);
  // The posted write: accepted at its annotated time, landed a trip later.
  EXPECT_EQ(i.ops[2].done, i.ops[2].issued);
  EXPECT_NEAR((mem.log[2].at - i.ops[2].issued).to_seconds() * 1e9, trip_data, 0.64);
}

// With a queue of 4 packets, an AT initiator streaming writes is held off
// through END_REQ; all its writes still land, in order, with their data.
TEST(TlmFaces, AtBackPressureHoldsEndReq) {
  const Config c = tlm_config({"tlm.queue_packets=4", "tlm.max_bytes=1024"});
  TlmFabric f("top", c);
  Initiator i("init");
  i.at = true;
  i.socket.bind(f.target(2));
  // 64 writes of 256 B to one address stripe of GPU 6: one link, one queue.
  const std::uint64_t stripe = stripe_bytes(c) * static_cast<std::uint64_t>(f.endpoint(2).links());
  for (int k = 0; k < 64; ++k) {
    std::vector<std::uint8_t> d(256, static_cast<std::uint8_t>(k));
    i.ops.push_back(op(tlm::TLM_WRITE_COMMAND, gpu_addr(f, 6, k * stripe), 256, 0, d));
  }
  i.ops.push_back(op(tlm::TLM_IGNORE_COMMAND, 0, 1, 3));
  sc_core::sc_start();
  ASSERT_TRUE(f.finish()) << f.error();
  int held = 0;
  for (int k = 0; k < 64; ++k) {
    EXPECT_EQ(i.ops[static_cast<size_t>(k)].status, tlm::TLM_OK_RESPONSE);
    if (i.ops[static_cast<size_t>(k)].end_req > i.ops[static_cast<size_t>(k)].issued) ++held;
  }
  EXPECT_GT(held, 32);  // most waited for room
  const auto s = f.stats()["endpoints"][2];
  EXPECT_LE(s["queue_max_packets"].get<int>(), 4);
  EXPECT_GT(s["backpressured"].get<int>(), 32);
  // Held off, the writes left at the link's rate: 64 x 17 flits x 0.64 ns.
  const double span = (i.ops[63].end_req - i.ops[0].issued).to_seconds() * 1e9;
  EXPECT_NEAR(span, 60 * 17 * 0.64, 17 * 0.64 * 4);
  Memory& m = f.memory(6);
  for (int k = 0; k < 64; ++k) EXPECT_EQ(m.data()[k * stripe + 255], static_cast<std::uint8_t>(k));
}

// The base protocol's error responses, LT and AT alike; nothing enters the fabric.
TEST(TlmFaces, ErrorResponses) {
  const Config c = tlm_config();
  TlmFabric f("top", c);
  Initiator lt("lt"), at("at");
  at.at = true;
  lt.socket.bind(f.target(0));
  at.socket.bind(f.target(1));
  auto script = [&] {
    const std::uint64_t mc = f.address_map().object_base(0);
    std::vector<Op> s;
    s.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 8, 0), 4));           // past the last GPU
    s.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 2, 1048570), 16));    // straddles two windows
    s.push_back(op(tlm::TLM_WRITE_COMMAND, mc + 65530, 16, 2));             // runs past the object
    s.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 2, 0), 8192));        // > tlm.max_bytes
    s.push_back(op(tlm::TLM_READ_COMMAND, mc, 16));                         // plain load of multicast
    s.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 2, 0), 16, 1));       // ld_reduce of a GPU window
    s.push_back(op(tlm::TLM_READ_COMMAND, mc + 2, 16, 1));                  // misaligned fp32
    s.push_back(op(tlm::TLM_READ_COMMAND, gpu_addr(f, 2, 0), 0));           // no data
    s.push_back(op(tlm::TLM_WRITE_COMMAND, gpu_addr(f, 2, 0), 16, 3));      // a fence must ignore
    return s;
  };
  lt.ops = script();
  at.ops = script();
  sc_core::sc_start();
  ASSERT_TRUE(f.finish()) << f.error();
  const tlm::tlm_response_status want[] = {
      tlm::TLM_ADDRESS_ERROR_RESPONSE, tlm::TLM_ADDRESS_ERROR_RESPONSE,
      tlm::TLM_ADDRESS_ERROR_RESPONSE, tlm::TLM_BURST_ERROR_RESPONSE,
      tlm::TLM_COMMAND_ERROR_RESPONSE, tlm::TLM_COMMAND_ERROR_RESPONSE,
      tlm::TLM_GENERIC_ERROR_RESPONSE, tlm::TLM_GENERIC_ERROR_RESPONSE,
      tlm::TLM_COMMAND_ERROR_RESPONSE};
  for (std::size_t k = 0; k < lt.ops.size(); ++k) {
    SCOPED_TRACE("operation " + std::to_string(k));
    EXPECT_EQ(lt.ops[k].status, want[k]);
    EXPECT_EQ(at.ops[k].status, want[k]);
    EXPECT_EQ(at.ops[k].done, at.ops[k].issued);  // refused at once
  }
  EXPECT_EQ(f.stats()["conservation"]["injected"].get<int>(), 0);
}

// Byte enables and a streaming width below the length are refused explicitly.
TEST(TlmFaces, ByteEnablesAndStreamingAreRefused) {
  const Config c = tlm_config();
  TlmFabric f("top", c);
  struct Probe : sc_core::sc_module {
    SC_HAS_PROCESS(Probe);
    tlm_utils::simple_initiator_socket<Probe> socket;
    tlm::tlm_response_status be = tlm::TLM_OK_RESPONSE, sw = tlm::TLM_OK_RESPONSE;
    std::uint64_t addr = 0;
    explicit Probe(const sc_core::sc_module_name& n) : sc_core::sc_module(n), socket("socket") {
      SC_THREAD(run);
    }
    void run() {
      std::uint8_t data[16] = {}, mask[16] = {};
      tlm::tlm_generic_payload t;
      sc_core::sc_time d;
      t.set_command(tlm::TLM_WRITE_COMMAND);
      t.set_address(addr);
      t.set_data_ptr(data);
      t.set_data_length(16);
      t.set_streaming_width(16);
      t.set_byte_enable_ptr(mask);
      t.set_byte_enable_length(16);
      socket->b_transport(t, d);
      be = t.get_response_status();
      t.set_byte_enable_ptr(nullptr);
      t.set_streaming_width(4);
      socket->b_transport(t, d);
      sw = t.get_response_status();
    }
  } probe("probe");
  probe.addr = gpu_addr(f, 4, 0);
  probe.socket.bind(f.target(0));
  sc_core::sc_start();
  ASSERT_TRUE(f.finish()) << f.error();
  EXPECT_EQ(probe.be, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  EXPECT_EQ(probe.sw, tlm::TLM_BURST_ERROR_RESPONSE);
}

// DMI and debug transport: direct pointers to a GPU's own memory only;
// debug reads reach any GPU's memory at once.
TEST(TlmFaces, DmiToOwnMemoryAndDebugEverywhere) {
  const Config c = tlm_config();
  TlmFabric f("top", c);
  struct Probe : sc_core::sc_module {
    SC_HAS_PROCESS(Probe);
    tlm_utils::simple_initiator_socket<Probe> socket;
    bool own = false, remote = true;
    unsigned dbg = 0;
    std::uint8_t seen = 0;
    std::uint64_t own_addr = 0, remote_addr = 0, dmi_start = 0;
    explicit Probe(const sc_core::sc_module_name& n) : sc_core::sc_module(n), socket("socket") {
      SC_THREAD(run);
    }
    void run() {
      tlm::tlm_generic_payload t;
      tlm::tlm_dmi dmi;
      t.set_address(own_addr);
      own = socket->get_direct_mem_ptr(t, dmi);
      dmi_start = dmi.get_start_address();
      if (own) dmi.get_dmi_ptr()[own_addr - dmi_start] = 0x5A;
      t.set_address(remote_addr);
      remote = socket->get_direct_mem_ptr(t, dmi);
      std::uint8_t b = 0x77;
      t.set_command(tlm::TLM_WRITE_COMMAND);
      t.set_data_ptr(&b);
      t.set_data_length(1);
      dbg = socket->transport_dbg(t);
      t.set_address(own_addr);
      t.set_command(tlm::TLM_READ_COMMAND);
      t.set_data_ptr(&seen);
      socket->transport_dbg(t);
    }
  } probe("probe");
  probe.own_addr = gpu_addr(f, 2, 100);
  probe.remote_addr = gpu_addr(f, 7, 100);
  probe.socket.bind(f.target(2));
  sc_core::sc_start();
  ASSERT_TRUE(f.finish()) << f.error();
  EXPECT_TRUE(probe.own);
  EXPECT_EQ(probe.dmi_start, f.address_map().gpu_base(2));
  EXPECT_FALSE(probe.remote);
  EXPECT_EQ(probe.dbg, 1u);
  EXPECT_EQ(f.memory(7).data()[100], 0x77);
  EXPECT_EQ(probe.seen, 0x5A);
}

std::vector<std::uint8_t> ints(std::initializer_list<std::int32_t> v) {
  std::vector<std::uint8_t> b(v.size() * 4);
  std::size_t i = 0;
  for (std::int32_t x : v) std::memcpy(&b[4 * i++], &x, 4);
  return b;
}
std::int32_t int_at(const std::vector<std::uint8_t>& b, std::size_t i = 0) {
  std::int32_t x = 0;
  std::memcpy(&x, &b[4 * i], 4);
  return x;
}
Op atomic(std::uint64_t addr, AtomicExtension::Op o, DType t, std::vector<std::uint8_t> data) {
  const auto len = static_cast<unsigned>(data.size());  // (before the move below)
  Op a = op(tlm::TLM_WRITE_COMMAND, addr, len, 4, std::move(data));
  a.atomic = AtomicExtension(o, t);
  return a;
}

// Atomics at a remote GPU (and at our own): each returns the old value and
// leaves the operation's result in memory, LT and AT alike.
TEST(TlmFaces, AtomicsReturnTheOldValue) {
  const Config c = tlm_config();
  TlmFabric f("top", c);
  Initiator lt("lt"), at("at");
  at.at = true;
  lt.socket.bind(f.target(0));
  at.socket.bind(f.target(1));
  using A = AtomicExtension::Op;
  const std::uint64_t x = gpu_addr(f, 4, 64), y = gpu_addr(f, 4, 128), z = gpu_addr(f, 0, 32);
  lt.ops.push_back(atomic(x, A::kAdd, DType::kInt32, ints({5})));       // 0 -> 5
  lt.ops.push_back(atomic(x, A::kCas, DType::kInt32, ints({7, 100})));  // 5 != 7: unchanged
  lt.ops.push_back(atomic(y, A::kExch, DType::kInt32, ints({-3})));     // 0 -> -3
  lt.ops.push_back(atomic(z, A::kAdd, DType::kInt32, ints({9})));       // our own memory
  lt.ops.push_back(atomic(gpu_addr(f, 4, 66), A::kAdd, DType::kInt32, ints({1})));  // misaligned
  lt.ops.push_back(atomic(f.address_map().object_base(0), A::kAdd, DType::kInt32, ints({1})));
  at.start = sc_core::sc_time(10, sc_core::SC_US);  // after LT's
  at.ops.push_back(atomic(x, A::kCas, DType::kInt32, ints({5, 100})));  // 5 == 5: 100
  at.ops.push_back(atomic(x, A::kAdd, DType::kInt32, ints({1})));       // 100 -> 101
  at.ops.push_back(atomic(gpu_addr(f, 4, 256), A::kMax, DType::kFp32, floats({2.5f}, 1)));
  sc_core::sc_start();
  ASSERT_TRUE(f.finish()) << f.error();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(lt.ops[static_cast<size_t>(k)].status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(int_at(lt.ops[0].data), 0);
  EXPECT_EQ(int_at(lt.ops[1].data), 5);
  EXPECT_EQ(int_at(lt.ops[2].data), 0);
  EXPECT_EQ(int_at(lt.ops[3].data), 0);
  EXPECT_EQ(lt.ops[4].status, tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(lt.ops[5].status, tlm::TLM_COMMAND_ERROR_RESPONSE);
  for (const Op& o : at.ops) EXPECT_EQ(o.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(int_at(at.ops[0].data), 5);
  EXPECT_EQ(int_at(at.ops[1].data), 100);
  std::int32_t v = 0;
  std::memcpy(&v, f.memory(4).data() + 64, 4);
  EXPECT_EQ(v, 101);
  std::memcpy(&v, f.memory(4).data() + 128, 4);
  EXPECT_EQ(v, -3);
  std::memcpy(&v, f.memory(0).data() + 32, 4);
  EXPECT_EQ(v, 9);
  float m = 0;
  std::memcpy(&m, f.memory(4).data() + 256, 4);
  EXPECT_EQ(m, 2.5f);
  // A remote atomic is a round trip: request with data there, old value back.
  EXPECT_GT(lt.ops[0].done - lt.ops[0].issued, sc_core::sc_time(400, sc_core::SC_NS));
  EXPECT_EQ(lt.ops[3].done, lt.ops[3].issued);  // local, default memory: no latency
  EXPECT_EQ(f.stats()["endpoints"][0]["accepted"]["atomic"]["transactions"].get<int>(), 4);
}

// A memory manager as the standard describes it: payloads come from a pool,
// extensions are "auto" (freed when the payload goes back), and the target
// must acquire what it keeps. Every payload must come back.
struct Pool : tlm::tlm_mm_interface {
  std::vector<tlm::tlm_generic_payload*> spare;
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> all;
  int live = 0;
  tlm::tlm_generic_payload* get() {
    tlm::tlm_generic_payload* t = nullptr;
    if (spare.empty()) {
      all.push_back(std::make_unique<tlm::tlm_generic_payload>(this));
      t = all.back().get();
    } else {
      t = spare.back();
      spare.pop_back();
    }
    t->acquire();
    ++live;
    return t;
  }
  void free(tlm::tlm_generic_payload* t) override {
    t->reset();  // frees the auto extensions
    spare.push_back(t);
    --live;
  }
};

// An AT initiator that pipelines: a new BEGIN_REQ as soon as END_REQ comes,
// many responses outstanding, payloads from the pool.
struct Streamer : sc_core::sc_module {
  SC_HAS_PROCESS(Streamer);
  tlm_utils::simple_initiator_socket<Streamer> socket;
  Pool pool;
  std::uint64_t remote = 0, mc = 0;
  int n = 0, responses = 0, wrong = 0;
  std::vector<std::vector<std::uint8_t>> bufs;
  explicit Streamer(const sc_core::sc_module_name& nm) : sc_core::sc_module(nm), socket("socket") {
    socket.register_nb_transport_bw(this, &Streamer::bw);
    SC_THREAD(run);
  }
  void run() {
    bufs.assign(static_cast<size_t>(n), std::vector<std::uint8_t>(64));
    for (int k = 0; k < n; ++k) {
      tlm::tlm_generic_payload* t = pool.get();
      const bool ld = k % 2 == 1;
      t->set_command(tlm::TLM_READ_COMMAND);
      t->set_address(ld ? mc + 64 * static_cast<std::uint64_t>(k) : remote + 64 * static_cast<std::uint64_t>(k));
      t->set_data_ptr(bufs[static_cast<size_t>(k)].data());
      t->set_data_length(64);
      t->set_streaming_width(64);
      if (ld) t->set_auto_extension(new MultimemExtension(MultimemExtension::Op::kLdReduce, RedOp::kSum, DType::kInt32));
      tlm::tlm_phase ph = tlm::BEGIN_REQ;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      end_req_ = false;
      const tlm::tlm_sync_enum r = socket->nb_transport_fw(*t, ph, d);
      if (r == tlm::TLM_ACCEPTED) sc_core::wait(got_end_req_);
      t->release();  // ours no more: the target holds it if it must
    }
  }
  tlm::tlm_sync_enum bw(tlm::tlm_generic_payload& t, tlm::tlm_phase& ph,
                        sc_core::sc_time& /*delay*/) {
    if (ph == tlm::END_REQ) {
      got_end_req_.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_ACCEPTED;
    }
    ++responses;
    if (t.get_response_status() != tlm::TLM_OK_RESPONSE) ++wrong;
    return tlm::TLM_COMPLETED;
  }

 private:
  bool end_req_ = false;
  sc_core::sc_event got_end_req_;
};

// Transactions with a memory manager are acquired while the fabric holds
// them and all come back to the pool; their auto extensions are freed
// (no leaks under ASan).
TEST(TlmFaces, AtTransactionsWithAMemoryManagerAllComeBack) {
  const Config c = tlm_config({"tlm.queue_packets=4", "tlm.outstanding=8", "tlm.max_bytes=1024"});
  TlmFabric f("top", c);
  Streamer st("streamer");
  st.n = 64;
  st.remote = gpu_addr(f, 5, 0);
  st.mc = f.address_map().object_base(0);
  st.socket.bind(f.target(2));
  sc_core::sc_start();
  ASSERT_TRUE(f.finish()) << f.error();
  EXPECT_EQ(st.responses, 64);
  EXPECT_EQ(st.wrong, 0);
  EXPECT_EQ(st.pool.live, 0);
  EXPECT_EQ(f.stats()["endpoints"][2]["open_transactions"].get<int>(), 0);
  EXPECT_GT(f.stats()["endpoints"][2]["backpressured"].get<int>(), 0);  // tlm.outstanding held some
}

// Configs a TLM fabric cannot run are refused with the key named.
TEST(TlmFaces, BadConfigsAreRefused) {
  EXPECT_THROW(tlm_config({"tlm.multicast=65536@1048000"}), ConfigError);  // past the window
  EXPECT_THROW(tlm_config({"tlm.multicast=4096@0,4096@2048"}), ConfigError);  // overlap
  EXPECT_THROW(tlm_config({"tlm.multicast_base=4096"}), ConfigError);  // inside the windows
  EXPECT_THROW(tlm_config({"switch.vcs=1"}), ConfigError);
  try {
    tlm_config({"tlm.multicast=16@0:3-9"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("tlm.multicast"), std::string::npos);
  }
}

}  // namespace
}  // namespace fabricsim
