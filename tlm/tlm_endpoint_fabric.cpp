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
  if (!free_jobs_.empty()) {
    j = free_jobs_.back();
    free_jobs_.pop_back();
  } else {
    j = static_cast<std::uint32_t>(jobs_.size());
    jobs_.emplace_back();
  }
  jobs_[j] = job;
  jobs_[j].live = true;
  return j;
}

void TlmEndpoint::mem_submit(const MemJob& job) {
  const std::uint32_t j = alloc_job(job);
  MemJob& m = jobs_[j];
  const bool own = m.own;
  if (dmi_ok_ && m.atomic) {  // the old value comes back after a read's latency
    apply_atomic(m.op, m.dtype, dmi_ptr_ + m.addr,
                 own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload));
    schedule(now() + dmi_read_ps_, kItemMemDone, j);
    return;
  }
  if (dmi_ok_) {
    std::uint8_t* mem = dmi_ptr_ + m.addr;
    if (m.write) {
      std::memcpy(mem, own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload), m.bytes);
      if (!own) {
        payloads_.release(m.payload);
        m.live = false;
        free_jobs_.push_back(j);
        return;
      }
    } else if (own) {
      std::memcpy(txns_[m.tag].trans->get_data_ptr(), mem, m.bytes);
    } else {
      m.payload = payloads_.alloc();
      std::memcpy(payloads_.data(m.payload), mem, m.bytes);
    }
    schedule(now() + (m.write ? 0 : dmi_read_ps_), kItemMemDone, j);
    return;
  }
  if (mem_jobs_.empty()) mem_kick_.notify(sc_core::SC_ZERO_TIME);
  if (!m.write && !own && !m.atomic) m.payload = payloads_.alloc();
  mem_jobs_.push_back(j);
}

// Without DMI: each access through the memory's b_transport, in order, in
// a thread of our own (a target may wait). Its latency (the annotation)
// delays the answer, not the next access: the memory is pipelined.
void TlmEndpoint::memory_thread() {
  for (;;) {
    while (mem_jobs_.empty()) sc_core::wait(mem_kick_);
    const std::uint32_t j = mem_jobs_.front();
    MemJob m = jobs_[j];
    const bool own = m.own;
    if (m.atomic) {
      memory_atomic(j);
      continue;
    }
    mem_buf_.resize(m.bytes);
    if (m.write)
      std::memcpy(mem_buf_.data(), own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload),
                  m.bytes);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    memory_access(m.write, m.addr, m.bytes, d);
    if (!m.write) {
      std::uint8_t* to = own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload);
      std::memcpy(to, mem_buf_.data(), m.bytes);
    }
    mem_jobs_.pop_front();
    if (m.write && !own) {
      payloads_.release(m.payload);
      jobs_[j].live = false;
      free_jobs_.push_back(j);
    } else {
      schedule(now() + static_cast<Ps>(d.value()), kItemMemDone, j);
    }
  }
}

// One access of the fabric's through the memory's b_transport, on mem_buf_.
void TlmEndpoint::memory_access(bool write, std::uint64_t addr, std::uint32_t bytes,
                                sc_core::sc_time& d) {
  mem_trans_.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  mem_trans_.set_address(addr);
  mem_trans_.set_data_ptr(mem_buf_.data());
  mem_trans_.set_data_length(bytes);
  mem_trans_.set_streaming_width(bytes);
  mem_trans_.set_byte_enable_ptr(nullptr);
  mem_trans_.set_dmi_allowed(false);
  mem_trans_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  memory->b_transport(mem_trans_, d);
  if (mem_trans_.get_response_status() != tlm::TLM_OK_RESPONSE)
    SC_REPORT_ERROR(name(), ("the memory target answered " + mem_trans_.get_response_string() +
                             " to a " + (write ? "write" : "read") + " of " + std::to_string(bytes) +
                             " B at local address " + std::to_string(addr) +
                             ", inside this GPU's window")
                                .c_str());
}

// An atomic without DMI: read the element, apply, write it back; the old
// value leaves after both latencies.
void TlmEndpoint::memory_atomic(std::uint32_t j) {
  const MemJob m = jobs_[j];
  const auto es = static_cast<std::uint32_t>(element_bytes(m.dtype));
  mem_buf_.resize(es);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  memory_access(false, m.addr, es, d);
  // (Fresh pointers: the payload pool may have grown while the target waited.)
  apply_atomic(m.op, m.dtype, mem_buf_.data(),
               m.own ? txns_[m.tag].trans->get_data_ptr() : payloads_.data(m.payload));
  memory_access(true, m.addr, es, d);
  mem_jobs_.pop_front();
  schedule(now() + static_cast<Ps>(d.value()), kItemMemDone, j);
}

// A read is over (its data is in the job's payload): answer it.
void TlmEndpoint::mem_done(std::uint32_t j) {
  MemJob m = jobs_[j];
  jobs_[j].live = false;
  free_jobs_.push_back(j);
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
      t, vcs_,
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
        ++injected_;
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
    case kItemAtResp: {
      AtSocket& a = at_[item.a];
      if (!a.resp_busy && !a.resp.empty()) {
        tlm::tlm_generic_payload* t = a.resp.front();
        a.resp.pop_front();
        send_response(static_cast<int>(item.a), *t);
        if (!a.resp_busy && !a.resp.empty()) schedule(now(), kItemAtResp, item.a);
      }
      break;
    }
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
    case kItemArrive: {
      Link* rx = ports_[item.b].rx;
      rx->arrived();
      const PacketId id = item.a;
      const Packet p = pool_.get(id);
      check_delivery(p, id_);
      pool_.release(id);
      ++delivered_;
      delivered_flits_ += p.flits;
      switch (p.kind) {
        case PacketKind::kWrite:
        case PacketKind::kMcStore: {  // lands in our memory
          rx->return_credits(p.vc, p.flits, item.time);
          shared_.endpoints[static_cast<size_t>(p.src)]->landed();
          MemJob j;
          j.write = true;
          j.addr = p.addr;
          j.bytes = p.bytes;
          j.payload = p.payload;
          mem_submit(j);
          break;
        }
        case PacketKind::kMemRead:
        case PacketKind::kReadReq: {  // a peer (or a switch's engine) reads us
          // The request keeps its buffer space until its answer leaves.
          MemJob j;
          j.addr = p.addr;
          j.bytes = p.bytes;
          j.reply = p.kind == PacketKind::kMemRead ? PacketKind::kMemReadData : PacketKind::kReadResp;
          j.to = p.src;
          j.tag = p.step;
          j.group = p.group;
          j.held = HeldCredits{rx, p.vc, p.flits};
          mem_submit(j);
          break;
        }
        case PacketKind::kAtomic: {  // a read-modify-write of our memory
          MemJob j;
          j.atomic = true;
          j.op = static_cast<AtomicExtension::Op>(p.group);
          j.dtype = p.dtype;
          j.addr = p.addr;
          j.bytes = p.bytes;
          j.payload = p.payload;  // the operand; the old value goes back in it
          j.reply = PacketKind::kAtomicResp;
          j.to = p.src;
          j.tag = p.step;
          j.held = HeldCredits{rx, p.vc, p.flits};
          mem_submit(j);
          break;
        }
        case PacketKind::kMemReadData:
        case PacketKind::kLdReduceResp:
        case PacketKind::kAtomicResp:
          rx->return_credits(p.vc, p.flits, item.time);
          data_arrived(p);
          break;
        default:
          throw InvariantError(std::string(name()) + ": a TLM endpoint cannot take a packet of kind " +
                               std::to_string(static_cast<int>(p.kind)));
      }
      break;
    }
    default:
      throw InvariantError("tlm endpoint: unknown item kind " + std::to_string(item.kind));
  }
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
  for (const MemJob& j : jobs_)
    if (j.live && j.payload != kNoPayload) ++n;
  return n;
}

nlohmann::json TlmEndpoint::stats() const {
  const char* names[kOps] = {"ignore", "write",  "read",  "multimem_st", "multimem_ld_reduce",
                             "fence",  "atomic"};
  nlohmann::json j;
  j["name"] = name();
  nlohmann::json ops = nlohmann::json::object();
  for (int k = 1; k < kOps; ++k) ops[names[k]] = {{"transactions", accepted_[k]}, {"bytes", bytes_[k]}};
  j["accepted"] = ops;
  j["errors"] = errors_;
  j["backpressured"] = backpressured_;
  j["queue_max_packets"] = queued_max_;
  std::uint64_t open = 0;
  for (const Txn& x : txns_) open += x.live ? 1 : 0;
  j["open_transactions"] = open;
  j["read_latency_ns"] = latency_json(read_latency_ps_);
  j["ld_reduce_latency_ns"] = latency_json(ld_reduce_latency_ps_);
  j["memory"] = dmi_ok_ ? "dmi" : "b_transport";
  return j;
}

}  // namespace fabricsim
