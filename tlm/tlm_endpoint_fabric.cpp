// TlmEndpoint's fabric side: its memory (DMI or a b_transport thread), its
// links (packets made when a link takes them), what arrives, and the
// end-of-run checks. The TLM faces are in tlm_endpoint.cpp.
#include <algorithm>
#include <cstring>
#include <string>

#include "models/core/errors.hpp"
#include "models/sc/stats_report.hpp"
#include "tlm/tlm_endpoint.hpp"

namespace fabricsim {

namespace {
// Applies atomic `op` to the element at `mem`. `operand` holds the operand
// (kCas: the compare value, then the new value) and gets the old value.
void apply_atomic(AtomicExtension::Op op, DType t, std::uint8_t* mem, std::uint8_t* operand) {
  const std::size_t es = element_bytes(t);
  std::uint8_t old[8];
  std::memcpy(old, mem, es);
  switch (op) {
    case AtomicExtension::Op::kAdd:
      alu_accumulate(RedOp::kSum, t, mem, operand, es);
      break;
    case AtomicExtension::Op::kMin:
      alu_accumulate(RedOp::kMin, t, mem, operand, es);
      break;
    case AtomicExtension::Op::kMax:
      alu_accumulate(RedOp::kMax, t, mem, operand, es);
      break;
    case AtomicExtension::Op::kExch:
      std::memcpy(mem, operand, es);
      break;
    case AtomicExtension::Op::kCas:
      if (std::memcmp(old, operand, es) == 0) std::memcpy(mem, operand + es, es);
      break;
  }
  std::memcpy(operand, old, es);
}
}  // namespace

// -------------------------------------------------------------- memory

std::uint32_t TlmEndpoint::alloc_job(const MemJob& job) {
  std::uint32_t j = 0;
  if (!mem_.free_jobs.empty()) {
    j = mem_.free_jobs.back();
    mem_.free_jobs.pop_back();
  } else {
    j = static_cast<std::uint32_t>(mem_.jobs.size());
    mem_.jobs.emplace_back();
  }
  mem_.jobs[j] = job;
  mem_.jobs[j].live = true;
  return j;
}

void TlmEndpoint::mem_submit(const MemJob& job) {
  const std::uint32_t j = alloc_job(job);
  MemJob& m = mem_.jobs[j];
  const bool own = m.own;
  if (mem_.dmi_ok && m.atomic) {  // the old value comes back after a read's latency
    apply_atomic(m.op, m.dtype, mem_.dmi_ptr + m.addr,
                 own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload));
    schedule(now() + mem_.dmi_read_ps, kItemMemDone, j);
    return;
  }
  if (mem_.dmi_ok) {
    std::uint8_t* mem = mem_.dmi_ptr + m.addr;
    if (m.write) {
      std::memcpy(mem, own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload), m.bytes);
      if (!own) {
        payloads_.release(m.payload);
        m.live = false;
        mem_.free_jobs.push_back(j);
        return;
      }
    } else if (own) {
      std::memcpy(txns_[m.tag].trans->get_data_ptr(), mem, m.bytes);
    } else {
      m.payload = payloads_.alloc();
      std::memcpy(payloads_.data(m.payload), mem, m.bytes);
    }
    schedule(now() + (m.write ? 0 : mem_.dmi_read_ps), kItemMemDone, j);
    return;
  }
  if (mem_.queue.empty()) mem_.kick.notify(sc_core::SC_ZERO_TIME);
  if (!m.write && !own && !m.atomic) m.payload = payloads_.alloc();
  mem_.queue.push_back(j);
}

// Without DMI: each access through the memory's b_transport, in order, in
// a thread of our own (a target may wait). Its latency (the annotation)
// delays the answer, not the next access: the memory is pipelined.
void TlmEndpoint::memory_thread() {
  for (;;) {
    while (mem_.queue.empty()) sc_core::wait(mem_.kick);
    const std::uint32_t j = mem_.queue.front();
    MemJob m = mem_.jobs[j];
    const bool own = m.own;
    if (m.atomic) {
      memory_atomic(j);
      continue;
    }
    mem_.buf.resize(m.bytes);
    if (m.write)
      std::memcpy(mem_.buf.data(), own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload),
                  m.bytes);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    memory_access(m.write, m.addr, m.bytes, d);
    if (!m.write) {
      std::uint8_t* to = own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload);
      std::memcpy(to, mem_.buf.data(), m.bytes);
    }
    mem_.queue.pop_front();
    if (m.write && !own) {
      payloads_.release(m.payload);
      mem_.jobs[j].live = false;
      mem_.free_jobs.push_back(j);
    } else {
      schedule(now() + static_cast<Ps>(d.value()), kItemMemDone, j);
    }
  }
}

// One access of the fabric's through the memory's b_transport, on mem_.buf.
void TlmEndpoint::memory_access(bool write, std::uint64_t addr, std::uint32_t bytes,
                                sc_core::sc_time& d) {
  mem_.trans.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  mem_.trans.set_address(addr);
  mem_.trans.set_data_ptr(mem_.buf.data());
  mem_.trans.set_data_length(bytes);
  mem_.trans.set_streaming_width(bytes);
  mem_.trans.set_byte_enable_ptr(nullptr);
  mem_.trans.set_dmi_allowed(false);
  mem_.trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  memory->b_transport(mem_.trans, d);
  if (mem_.trans.get_response_status() != tlm::TLM_OK_RESPONSE)
    SC_REPORT_ERROR(name(), ("the memory target answered " + mem_.trans.get_response_string() +
                             " to a " + (write ? "write" : "read") + " of " + std::to_string(bytes) +
                             " B at local address " + std::to_string(addr) +
                             ", inside this GPU's window")
                                .c_str());
}

// An atomic without DMI: read the element, apply, write it back; the old
// value leaves after both latencies.
void TlmEndpoint::memory_atomic(std::uint32_t j) {
  const MemJob m = mem_.jobs[j];
  const auto es = static_cast<std::uint32_t>(element_bytes(m.dtype));
  mem_.buf.resize(es);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  memory_access(false, m.addr, es, d);
  // (Fresh pointers: the payload pool may have grown while the target waited.)
  apply_atomic(m.op, m.dtype, mem_.buf.data(),
               m.own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload));
  memory_access(true, m.addr, es, d);
  mem_.queue.pop_front();
  schedule(now() + static_cast<Ps>(d.value()), kItemMemDone, j);
}

// A read is over (its data is in the job's payload): answer it.
void TlmEndpoint::mem_done(std::uint32_t j) {
  MemJob m = mem_.jobs[j];
  mem_.jobs[j].live = false;
  mem_.free_jobs.push_back(j);
  if (m.own) {  // a local transaction
    complete(m.tag);
    return;
  }
  m.held.release(now());  // the request leaves our receive buffer
  Out o{};
  o.kind = m.reply;
  o.dst = m.to;
  o.addr = m.addr;
  o.bytes = m.atomic ? static_cast<std::uint32_t>(element_bytes(m.dtype)) : m.bytes;  // the old value
  o.flits = static_cast<std::uint16_t>(packet_flits_for(cfg_, o.bytes));
  o.tag = m.tag;
  o.group = m.group;
  o.payload = m.payload;
  o.t_gen = now();
  // A read response for the switch goes back on the link its address
  // picks: the same chip's engine asked (every GPU is wired alike).
  push(kResponseVc, o);
}

unsigned int TlmEndpoint::memory_debug(tlm::tlm_generic_payload& t, std::uint64_t local) {
  const sc_dt::uint64 a = t.get_address();
  t.set_address(local);
  const unsigned n = memory->transport_dbg(t);
  t.set_address(a);
  return n;
}

unsigned int TlmEndpoint::transport_dbg(int /*s*/, tlm::tlm_generic_payload& t) {
  const AddressMap::Target w = shared_.map.decode(t.get_address(), std::max(1u, t.get_data_length()));
  if (w.kind == AddressMap::Kind::kGpu)
    return shared_.endpoints[static_cast<size_t>(w.gpu)]->memory_debug(t, w.local);
  if (w.kind == AddressMap::Kind::kMulticast) {
    // Reads see the first member's copy; writes go to every member's.
    const std::vector<int> members = shared_.map.members(w.object);
    if (t.is_read()) return shared_.endpoints[static_cast<size_t>(members.front())]->memory_debug(t, w.local);
    unsigned n = 0;
    for (int g : members) n = shared_.endpoints[static_cast<size_t>(g)]->memory_debug(t, w.local);
    return n;
  }
  return 0;
}

bool TlmEndpoint::get_direct_mem_ptr(int /*s*/, tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
  // Only this GPU's own memory: remote data must cross the fabric.
  const AddressMap::Target w = shared_.map.decode(t.get_address(), 1);
  if (w.kind != AddressMap::Kind::kGpu || w.gpu != id_) return false;
  const sc_dt::uint64 base = shared_.map.gpu_base(id_);
  const sc_dt::uint64 a = t.get_address();
  t.set_address(w.local);
  const bool ok = memory->get_direct_mem_ptr(t, dmi);
  t.set_address(a);
  if (!ok) return false;
  const sc_dt::uint64 last = static_cast<sc_dt::uint64>(cfg_.tlm.window_bytes) - 1;
  const sc_dt::uint64 start = dmi.get_start_address(), end = std::min(dmi.get_end_address(), last);
  // The pointer stays the memory's for its start; only the addresses move.
  dmi.set_start_address(base + start);
  dmi.set_end_address(base + end);
  return true;
}

// -------------------------------------------------------------- links

void TlmEndpoint::schedule_try(int l, Ps t) {
  Port& p = ports_[static_cast<size_t>(l)];
  if (p.try_at != kNever && p.try_at <= t) return;
  p.try_at = t;
  schedule(t, kItemTry, static_cast<std::uint32_t>(l));
}

bool TlmEndpoint::has_work(const Port& p) {
  return std::any_of(p.ready.begin(), p.ready.end(), [](const auto& q) { return !q.empty(); });
}

// Round-robin over the VCs; a packet is made when its link takes it.
void TlmEndpoint::try_link(int l) {
  Port& port = ports_[static_cast<size_t>(l)];
  const Ps t = now();
  if (!has_work(port)) return;
  if (port.tx.link->free_at() > t) {
    schedule_try(l, port.tx.link->free_at());
    return;
  }
  int sent_vc = -1;
  port.tx.offer(
      t, lim_.vcs,
      [&](int v) {
        const auto& q = port.ready[static_cast<size_t>(v)];
        return q.empty() ? 0 : static_cast<int>(q.front().flits);
      },
      [&](int v) {
        auto& q = port.ready[static_cast<size_t>(v)];
        const Out o = q.front();
        q.pop_front();
        const PacketId id = pool_.alloc();
        Packet& p = pool_.get(id);
        p.kind = o.kind;
        p.t_gen = o.t_gen;
        p.t_inject = t;
        p.src = id_;
        p.dst = o.dst;
        p.addr = o.addr;
        p.bytes = o.bytes;
        p.flits = o.flits;
        p.vc = static_cast<std::uint8_t>(v);
        p.step = o.tag;
        p.group = o.group;
        p.redop = o.redop;
        p.dtype = o.dtype;
        p.payload = o.payload;
        port.tx.link->send(id, p, t);
        ++stats_.injected;
        sent_vc = v;
        return true;
      });
  if (sent_vc < 0) return;
  if (has_work(port)) schedule_try(l, port.tx.link->free_at());
  if (sent_vc == kRequestVc) {  // a request left the queue: room for another
    --queued_;
    accept_waiting();
  }
}

void TlmEndpoint::handle(const Item& item) {
  switch (item.kind) {
    case kItemTry: {
      Port& p = ports_[item.a];
      if (item.time == p.try_at) p.try_at = kNever;
      try_link(static_cast<int>(item.a));
      break;
    }
    case kItemIssue:
      issue(item.a);
      break;
    case kItemAtReq:
      at_begin_req(static_cast<int>(item.a));
      break;
    case kItemAtResp:
      at_next_response(item.a);
      break;
    case kItemMemDone:
      mem_done(item.a);
      break;
    case kItemCredit:
      ports_[item.a].tx.link->credits_arrived(static_cast<int>(item.b), static_cast<int>(item.c));
      try_link(static_cast<int>(item.a));
      break;
    case kItemCreditWake:
      try_link(static_cast<int>(item.a));
      break;
    case kItemArrive:
      arrive(item.a, item.b, item.time);
      break;
    default:
      throw InvariantError("tlm endpoint: unknown item kind " + std::to_string(item.kind));
  }
}

// Socket s's END_RESP came back (or a response queued): the next response goes.
void TlmEndpoint::at_next_response(std::uint32_t s) {
  AtSocket& a = at_[s];
  if (a.resp_busy || a.resp.empty()) return;
  tlm::tlm_generic_payload* t = a.resp.front();
  a.resp.pop_front();
  send_response(static_cast<int>(s), *t);
  if (!a.resp_busy && !a.resp.empty()) schedule(now(), kItemAtResp, s);
}

// Packet `id`'s tail arrived on port `port`'s receiving link at `t`.
void TlmEndpoint::arrive(PacketId id, std::uint32_t port, Ps t) {
  Receiver& rx = ports_[port].rx;
  rx.arrived();
  const Packet p = pool_.get(id);
  check_delivery(p, id_);
  pool_.release(id);
  ++stats_.delivered;
  stats_.delivered_flits += p.flits;
  switch (p.kind) {
    case PacketKind::kWrite:
    case PacketKind::kMcStore:  // lands in our memory
      rx.free(p, t);
      shared_.endpoints[static_cast<size_t>(p.src)]->landed();
      mem_submit(write_job(p));
      break;
    case PacketKind::kMemRead:
    case PacketKind::kReadReq:  // a peer (or a switch's engine) reads us
    case PacketKind::kAtomic:   // a read-modify-write of our memory
      // The request keeps its buffer space until its answer leaves.
      mem_submit(answer_job(p, rx.hold(p)));
      break;
    case PacketKind::kMemReadData:
    case PacketKind::kLdReduceResp:
    case PacketKind::kAtomicResp:
      rx.free(p, t);
      data_arrived(p);
      break;
    default:
      throw InvariantError(std::string(name()) + ": a TLM endpoint cannot take a packet of kind " +
                           std::to_string(static_cast<int>(p.kind)));
  }
}

TlmEndpoint::MemJob TlmEndpoint::write_job(const Packet& p) {
  MemJob j;
  j.write = true;
  j.addr = p.addr;
  j.bytes = p.bytes;
  j.payload = p.payload;
  return j;
}

// A read (kMemRead, kReadReq) or an atomic (kAtomic) to answer.
TlmEndpoint::MemJob TlmEndpoint::answer_job(const Packet& p, HeldCredits held) {
  MemJob j;
  j.addr = p.addr;
  j.bytes = p.bytes;
  j.to = p.src;
  j.tag = p.step;
  j.held = held;
  if (p.kind == PacketKind::kAtomic) {
    j.atomic = true;
    j.op = static_cast<AtomicExtension::Op>(p.group);
    j.dtype = p.dtype;
    j.payload = p.payload;  // the operand; the old value goes back in it
    j.reply = PacketKind::kAtomicResp;
  } else {
    j.reply = p.kind == PacketKind::kMemRead ? PacketKind::kMemReadData : PacketKind::kReadResp;
    j.group = p.group;
  }
  return j;
}

// -------------------------------------------------------------- end of run

void TlmEndpoint::finish(Ps end) {
  for (auto& p : ports_) p.tx.link->finish(end);
}

void TlmEndpoint::check_end_of_run(Ps end) const {
  for (std::size_t l = 0; l < ports_.size(); ++l) {
    const Port& p = ports_[l];
    if (p.tx.link->sender_stranded(has_work(p), p.try_at, end))
      throw InvariantError(std::string(name()) + " link " + std::to_string(l) +
                           ": packets wait but nothing will send them (lost wake-up)");
  }
}

std::uint64_t TlmEndpoint::payload_slots_held() const {
  std::uint64_t n = 0;
  for (const Txn& x : txns_)
    if (x.live) n += x.data.size();
  for (const Port& p : ports_)
    for (const auto& q : p.ready)
      for (std::size_t i = 0; i < q.size(); ++i)
        if (q[i].payload != kNoPayload) ++n;
  for (const MemJob& j : mem_.jobs)
    if (j.live && j.payload != kNoPayload) ++n;
  return n;
}

nlohmann::json TlmEndpoint::stats() const {
  const char* names[kOps] = {"ignore", "write",  "read",  "multimem_st", "multimem_ld_reduce",
                             "fence",  "atomic"};
  nlohmann::json j;
  j["name"] = name();
  nlohmann::json ops = nlohmann::json::object();
  for (int k = 1; k < kOps; ++k) ops[names[k]] = {{"transactions", stats_.accepted[k]}, {"bytes", stats_.bytes[k]}};
  j["accepted"] = ops;
  j["errors"] = stats_.errors;
  j["backpressured"] = stats_.backpressured;
  j["queue_max_packets"] = stats_.queued_max;
  std::uint64_t open = 0;
  for (const Txn& x : txns_) open += x.live ? 1 : 0;
  j["open_transactions"] = open;
  j["read_latency_ns"] = latency_json(stats_.read_latency_ps);
  j["ld_reduce_latency_ns"] = latency_json(stats_.ld_reduce_latency_ps);
  j["memory"] = mem_.dmi_ok ? "dmi" : "b_transport";
  return j;
}

}  // namespace fabricsim
