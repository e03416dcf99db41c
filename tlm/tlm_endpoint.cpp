#include "tlm/tlm_endpoint.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "models/core/errors.hpp"
#include "models/sc/stats_report.hpp"

namespace fabricsim {

namespace {

std::uint64_t ld_key(int group, std::uint64_t addr) {
  return (static_cast<std::uint64_t>(group) << 48) | addr;
}
}  // namespace

TlmEndpoint::TlmEndpoint(const sc_core::sc_module_name& name, int id, int links,
                         const EndpointContext& ctx, TlmShared& shared)
    : FabricEndpoint(name, ctx.scheduler),
      socket("socket"),
      memory("memory"),
      id_(id),
      cfg_(ctx.cfg),
      pool_(ctx.pool),
      payloads_(ctx.payloads),
      shared_(shared),
      lim_(ctx.cfg),
      ports_(static_cast<size_t>(links)) {
  for (auto& p : ports_) p.ready.resize(static_cast<size_t>(lim_.vcs));
  socket.register_b_transport(this, &TlmEndpoint::b_transport);
  socket.register_nb_transport_fw(this, &TlmEndpoint::nb_transport_fw);
  socket.register_transport_dbg(this, &TlmEndpoint::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &TlmEndpoint::get_direct_mem_ptr);
  memory.register_invalidate_direct_mem_ptr(this, &TlmEndpoint::invalidate_direct_mem_ptr);
  SC_THREAD(memory_thread);
}

TlmEndpoint::Limits::Limits(const Config& cfg)
    : stripe_bytes(fabricsim::stripe_bytes(cfg)),
      payload_bytes(static_cast<std::uint32_t>(cfg.collective.payload_bytes)),
      queue_cap(static_cast<std::uint32_t>(cfg.tlm.queue_packets)),
      outstanding_cap(static_cast<std::uint32_t>(cfg.tlm.outstanding)),
      vcs(static_cast<int>(cfg.sw.vcs)) {}

void TlmEndpoint::connect(int port, Link* tx, Link* rx, int /*peer_switch*/) {
  ports_[static_cast<size_t>(port)].tx.link = tx;
  ports_[static_cast<size_t>(port)].rx.attach(rx);
}

void TlmEndpoint::start_of_simulation() {
  at_.resize(socket.size());
  // DMI over the whole window: the fabric's accesses then cost a memcpy.
  tlm::tlm_generic_payload t;
  tlm::tlm_dmi dmi;
  t.set_address(0);
  t.set_command(tlm::TLM_READ_COMMAND);
  if (memory->get_direct_mem_ptr(t, dmi) && dmi.is_read_write_allowed() &&
      dmi.get_start_address() == 0 &&
      dmi.get_end_address() + 1 >= static_cast<sc_dt::uint64>(cfg_.tlm.window_bytes)) {
    mem_.dmi_ok = true;
    mem_.dmi_ptr = dmi.get_dmi_ptr();
    mem_.dmi_read_ps = static_cast<Ps>(dmi.get_read_latency().value());
  }
}

void TlmEndpoint::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  if (mem_.dmi_ok && start < static_cast<sc_dt::uint64>(cfg_.tlm.window_bytes)) mem_.dmi_ok = false;
  // Initiators holding DMI to this GPU's window hear of it in global addresses.
  const sc_dt::uint64 base = shared_.map.gpu_base(id_);
  for (unsigned i = 0; i < socket.size(); ++i)
    socket[static_cast<int>(i)]->invalidate_direct_mem_ptr(base + start, base + std::min<sc_dt::uint64>(end, static_cast<sc_dt::uint64>(cfg_.tlm.window_bytes) - 1));
}

// ------------------------------------------------------------- decoding

tlm::tlm_response_status TlmEndpoint::decode(tlm::tlm_generic_payload& t, Req& r) const {
  r = Req{};
  const tlm::tlm_command cmd = t.get_command();
  FenceExtension* fence = nullptr;
  t.get_extension(fence);
  if (fence) {
    if (cmd != tlm::TLM_IGNORE_COMMAND) return tlm::TLM_COMMAND_ERROR_RESPONSE;
    r.op = Op::kFence;
    return tlm::TLM_OK_RESPONSE;
  }
  AtomicExtension* atomic = nullptr;
  t.get_extension(atomic);
  const std::uint64_t a = t.get_address();
  const unsigned len = t.get_data_length();
  if (len == 0) return tlm::TLM_GENERIC_ERROR_RESPONSE;
  // Byte enables would have to travel with the data: refused, as the
  // standard allows (TLM_BYTE_ENABLE_ERROR_RESPONSE).
  if (t.get_byte_enable_ptr() != nullptr) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  if (t.get_streaming_width() < len || len > static_cast<unsigned>(cfg_.tlm.max_bytes))
    return tlm::TLM_BURST_ERROR_RESPONSE;
  if (cmd != tlm::TLM_IGNORE_COMMAND && t.get_data_ptr() == nullptr)
    return tlm::TLM_GENERIC_ERROR_RESPONSE;
  const AddressMap::Target where = shared_.map.decode(a, len);
  MultimemExtension* ext = nullptr;
  t.get_extension(ext);
  switch (where.kind) {
    case AddressMap::Kind::kNone:
      return tlm::TLM_ADDRESS_ERROR_RESPONSE;
    case AddressMap::Kind::kGpu:
      if (ext) return tlm::TLM_COMMAND_ERROR_RESPONSE;  // multimem needs a multicast address
      if (atomic) {
        // One element (kCas: compare value and new value), aligned.
        const auto es = static_cast<std::uint64_t>(element_bytes(atomic->dtype));
        if (cmd != tlm::TLM_WRITE_COMMAND) return tlm::TLM_COMMAND_ERROR_RESPONSE;
        if (len != (atomic->op == AtomicExtension::Op::kCas ? 2 : 1) * es || where.local % es != 0)
          return tlm::TLM_GENERIC_ERROR_RESPONSE;
        r.op = Op::kAtomic;
        r.atomic = atomic->op;
        r.dtype = atomic->dtype;
        r.dst = where.gpu;
        r.local = where.gpu == id_;
        break;
      }
      r.op = cmd == tlm::TLM_READ_COMMAND ? Op::kRead
             : cmd == tlm::TLM_WRITE_COMMAND ? Op::kWrite : Op::kIgnore;
      r.dst = where.gpu;
      r.local = where.gpu == id_;
      break;
    case AddressMap::Kind::kMulticast:
      if (atomic) return tlm::TLM_COMMAND_ERROR_RESPONSE;  // atomics act on one GPU's memory
      if (ext && ext->group >= 0 && ext->group != where.object)
        return tlm::TLM_ADDRESS_ERROR_RESPONSE;
      if (cmd == tlm::TLM_READ_COMMAND) {
        if (!ext || ext->op != MultimemExtension::Op::kLdReduce)
          return tlm::TLM_COMMAND_ERROR_RESPONSE;  // a plain load of a multicast address
        const auto es = static_cast<std::uint64_t>(element_bytes(ext->dtype));
        if (len % es != 0 || where.local % es != 0) return tlm::TLM_GENERIC_ERROR_RESPONSE;
        r.op = Op::kLdReduce;
        r.redop = ext->redop;
        r.dtype = ext->dtype;
      } else if (cmd == tlm::TLM_WRITE_COMMAND) {
        if (ext && ext->op != MultimemExtension::Op::kStore) return tlm::TLM_COMMAND_ERROR_RESPONSE;
        r.op = Op::kStore;
      } else {
        r.op = Op::kIgnore;
      }
      r.group = where.object;
      break;
  }
  r.addr = where.local;
  r.bytes = len;
  r.packets = (len + lim_.payload_bytes - 1) / lim_.payload_bytes;
  return tlm::TLM_OK_RESPONSE;
}

bool TlmEndpoint::can_accept(const Req& r) const {
  if (queued_ + r.packets > lim_.queue_cap) return false;
  if (!posted(r.op) && outstanding_ >= lim_.outstanding_cap) return false;
  if (r.op == Op::kLdReduce)
    for (std::uint32_t i = 0; i < r.packets; ++i)
      if (shared_.ld_reduce_keys.count(ld_key(r.group, r.addr + std::uint64_t{i} * lim_.payload_bytes)))
        return false;
  return true;
}

void TlmEndpoint::accept(const Req& r, tlm::tlm_generic_payload& t, int s, sc_core::sc_event* done,
                         Ps issue_at) {
  std::uint32_t tag = 0;
  if (!free_tags_.empty()) {
    tag = free_tags_.back();
    free_tags_.pop_back();
  } else {
    tag = static_cast<std::uint32_t>(txns_.size());
    txns_.emplace_back();
  }
  Txn& x = txns_[tag];
  x = Txn{};
  x.req = r;
  x.live = true;
  x.socket = s;
  x.done = done;
  x.t_accept = now();
  ++stats_.accepted[static_cast<int>(r.op)];
  stats_.bytes[static_cast<int>(r.op)] += r.bytes;
  if (r.local) {
    // Our own memory: no fabric. The access runs as the fabric's would.
    x.trans = &t;
    MemJob j;
    j.write = r.op == Op::kWrite;
    j.atomic = r.op == Op::kAtomic;
    j.op = r.atomic;
    j.dtype = r.dtype;
    j.addr = r.addr;
    j.bytes = r.bytes;
    j.own = true;
    j.tag = static_cast<std::uint16_t>(tag);
    j.payload = kNoPayload;
    mem_submit(j);
    return;
  }
  if (posted(r.op)) {
    // Each packet lands once per destination: a multimem.st in every member.
    unlanded_ += std::uint64_t{r.packets} *
                 (r.op == Op::kStore ? shared_.map.members(r.group).size() : 1u);
    // The initiator may reuse its buffer once we return: copy the data now.
    for (std::uint32_t i = 0; i < r.packets; ++i) {
      const PayloadId pid = payloads_.alloc();
      const std::uint32_t off = i * lim_.payload_bytes;
      std::memcpy(payloads_.data(pid), t.get_data_ptr() + off, std::min(lim_.payload_bytes, r.bytes - off));
      x.data.push_back(pid);
    }
  } else {
    x.trans = &t;
    x.left = r.packets;
    ++outstanding_;
  }
  if (r.op == Op::kLdReduce)
    for (std::uint32_t i = 0; i < r.packets; ++i)
      shared_.ld_reduce_keys.insert(ld_key(r.group, r.addr + std::uint64_t{i} * lim_.payload_bytes));
  queued_ += r.packets;
  stats_.queued_max = std::max(stats_.queued_max, queued_);
  schedule(issue_at, kItemIssue, tag);
}

// The transaction's packets join the queue of the links their addresses pick.
void TlmEndpoint::issue(std::uint32_t tag) {
  // push() may accept a waiting transaction, and txns_ may grow: copy what
  // is needed, and index txns_ afresh after.
  const Req r = txns_[tag].req;
  const Ps t_accept = txns_[tag].t_accept;
  for (std::uint32_t i = 0; i < r.packets; ++i) {
    const std::uint32_t off = i * lim_.payload_bytes;
    const std::uint32_t bytes = std::min(lim_.payload_bytes, r.bytes - off);
    Out o{};
    o.dst = r.dst < 0 ? id_ : r.dst;
    o.addr = r.addr + off;
    o.bytes = bytes;
    o.tag = static_cast<std::uint16_t>(tag);
    o.group = static_cast<std::uint16_t>(r.group < 0 ? 0 : r.group);
    o.redop = r.redop;
    o.dtype = r.dtype;
    o.payload = kNoPayload;
    o.t_gen = t_accept;
    switch (r.op) {
      case Op::kWrite:
      case Op::kStore:
        o.kind = r.op == Op::kWrite ? PacketKind::kWrite : PacketKind::kMcStore;
        o.flits = static_cast<std::uint16_t>(packet_flits_for(cfg_, bytes));
        o.payload = txns_[tag].data[i];
        break;
      case Op::kRead:
      case Op::kLdReduce:
        o.kind = r.op == Op::kRead ? PacketKind::kMemRead : PacketKind::kLdReduceReq;
        o.flits = 1;  // a header-only request
        break;
      case Op::kAtomic: {
        o.kind = PacketKind::kAtomic;
        o.flits = static_cast<std::uint16_t>(packet_flits_for(cfg_, bytes));
        o.group = static_cast<std::uint16_t>(r.atomic);
        // The initiator waits for the old value: its buffer is still ours.
        o.payload = payloads_.alloc();
        std::memcpy(payloads_.data(o.payload), txns_[tag].trans->get_data_ptr(), bytes);
        break;
      }
      case Op::kIgnore:
      case Op::kFence:
        throw InvariantError("tlm endpoint: an ignore command reached the fabric");
    }
    push(kRequestVc, o);
  }
  if (posted(r.op)) {  // done with: the packets carry the data now
    txns_[tag].live = false;
    txns_[tag].data.clear();
    free_tags_.push_back(tag);
  }
}

void TlmEndpoint::push(int vc, const Out& o) {
  const int l = pick_link(o.addr);
  ports_[static_cast<size_t>(l)].ready[static_cast<size_t>(vc)].push_back(o);
  try_link(l);
}

// Room may have freed (a request left, a read finished, an ld_reduce's
// address was released): AT requests first, in arrival order, then LT.
void TlmEndpoint::accept_waiting() {
  std::size_t n = at_waiting_.size();
  while (n-- > 0) {
    const int s = at_waiting_.front();
    AtSocket& a = at_[static_cast<size_t>(s)];
    if (!can_accept(a.decoded)) break;  // first come, first served
    at_waiting_.pop_front();
    tlm::tlm_generic_payload& t = *a.req;
    a.req = nullptr;
    accept(a.decoded, t, s, nullptr, now());
    tlm::tlm_phase ph = tlm::END_REQ;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    socket[s]->nb_transport_bw(t, ph, d);
    if (posted(a.decoded.op)) {
      t.set_response_status(tlm::TLM_OK_RESPONSE);
      send_response(s, t);
    }
  }
  if (lt_waiting_ > 0) room_.notify(sc_core::SC_ZERO_TIME);
}

// -------------------------------------------------------------- LT

void TlmEndpoint::b_transport(int /*s*/, tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
  Req r;
  const tlm::tlm_response_status st = decode(t, r);
  if (st != tlm::TLM_OK_RESPONSE) {
    ++stats_.errors;
    t.set_response_status(st);
    return;
  }
  if (r.op == Op::kIgnore) {
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (r.op == Op::kFence) {
    ++stats_.accepted[static_cast<int>(r.op)];
    if (unlanded_ > 0) {
      // Writes issued at the annotated time count too: catch up first.
      sc_core::wait(delay);
      delay = sc_core::SC_ZERO_TIME;
      while (unlanded_ > 0) sc_core::wait(landed_);
    }
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (r.local && r.op != Op::kAtomic) {  // our own memory, through its socket (which may wait)
    const sc_dt::uint64 a = t.get_address();
    t.set_address(r.addr);
    memory->b_transport(t, delay);
    t.set_address(a);
    ++stats_.accepted[static_cast<int>(r.op)];
    stats_.bytes[static_cast<int>(r.op)] += r.bytes;
    return;
  }
  if (!can_accept(r)) {
    ++stats_.backpressured;
    // Back-pressure: catch up with the annotated time, then wait for room.
    while (!can_accept(r)) {
      if (delay != sc_core::SC_ZERO_TIME) {
        sc_core::wait(delay);
        delay = sc_core::SC_ZERO_TIME;
      } else {
        ++lt_waiting_;
        sc_core::wait(room_);
        --lt_waiting_;
      }
    }
  }
  const Ps issue_at = now() + static_cast<Ps>(delay.value());
  if (posted(r.op)) {
    accept(r, t, -1, nullptr, issue_at);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  // Non-posted: the data comes from the simulated fabric, so wait for it.
  sc_core::sc_event done;
  accept(r, t, -1, &done, issue_at);
  sc_core::wait(done);
  delay = sc_core::SC_ZERO_TIME;
}

// -------------------------------------------------------------- AT

tlm::tlm_sync_enum TlmEndpoint::nb_transport_fw(int s, tlm::tlm_generic_payload& t,
                                                tlm::tlm_phase& ph, sc_core::sc_time& delay) {
  AtSocket& a = at_[static_cast<size_t>(s)];
  if (ph == tlm::BEGIN_REQ) {
    const tlm::tlm_sync_enum r = begin_req(s, t, ph, delay);
    // Kept past this call: a transaction with a memory manager is held
    // (acquire) until its response is done (send_response / END_RESP).
    if (r != tlm::TLM_COMPLETED && t.has_mm()) t.acquire();
    return r;
  }
  if (ph == tlm::END_RESP) {
    a.resp_busy = false;
    tlm::tlm_generic_payload* done = a.resp_trans;
    a.resp_trans = nullptr;
    if (done && done->has_mm()) done->release();
    if (!a.resp.empty()) schedule(now(), kItemAtResp, static_cast<std::uint32_t>(s));
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR(name(), "nb_transport_fw: an initiator may send only BEGIN_REQ and END_RESP");
  return tlm::TLM_COMPLETED;
}

tlm::tlm_sync_enum TlmEndpoint::begin_req(int s, tlm::tlm_generic_payload& t, tlm::tlm_phase& ph,
                                          sc_core::sc_time& delay) {
  AtSocket& a = at_[static_cast<size_t>(s)];
  {
    if (a.req)
      SC_REPORT_ERROR(name(), "BEGIN_REQ before the previous request's END_REQ (base protocol "
                              "request exclusion rule)");
    a.req = &t;
    if (delay != sc_core::SC_ZERO_TIME) {  // take it at its annotated time
      schedule(now() + static_cast<Ps>(delay.value()), kItemAtReq, static_cast<std::uint32_t>(s));
      return tlm::TLM_ACCEPTED;
    }
    Req r;
    const tlm::tlm_response_status st = decode(t, r);
    if (st != tlm::TLM_OK_RESPONSE || r.op == Op::kIgnore) {
      if (st != tlm::TLM_OK_RESPONSE) ++stats_.errors;
      a.req = nullptr;
      t.set_response_status(st);
      ph = tlm::END_RESP;
      return tlm::TLM_COMPLETED;
    }
    a.decoded = r;
    if (r.op == Op::kFence) {
      ++stats_.accepted[static_cast<int>(r.op)];
      if (unlanded_ == 0) {
        a.req = nullptr;
        t.set_response_status(tlm::TLM_OK_RESPONSE);
        ph = tlm::END_RESP;
        return tlm::TLM_COMPLETED;
      }
      at_fences_.push_back(s);  // END_REQ and BEGIN_RESP once all have landed
      return tlm::TLM_ACCEPTED;
    }
    if (!at_waiting_.empty() || !can_accept(r)) {  // back-pressure: END_REQ later
      ++stats_.backpressured;
      at_waiting_.push_back(s);
      return tlm::TLM_ACCEPTED;
    }
    a.req = nullptr;
    accept(r, t, s, nullptr, now());
    if (posted(r.op) && !r.local) {
      t.set_response_status(tlm::TLM_OK_RESPONSE);
      ph = tlm::END_RESP;
      return tlm::TLM_COMPLETED;
    }
    ph = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  }
}

// A BEGIN_REQ whose annotated time has come.
void TlmEndpoint::at_begin_req(int s) {
  AtSocket& a = at_[static_cast<size_t>(s)];
  tlm::tlm_generic_payload& t = *a.req;
  Req r;
  const tlm::tlm_response_status st = decode(t, r);
  tlm::tlm_phase ph;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  if (st != tlm::TLM_OK_RESPONSE || r.op == Op::kIgnore) {
    if (st != tlm::TLM_OK_RESPONSE) ++stats_.errors;
    a.req = nullptr;
    t.set_response_status(st);
    ph = tlm::END_REQ;
    socket[s]->nb_transport_bw(t, ph, d);
    send_response(s, t);
    return;
  }
  a.decoded = r;
  if (r.op == Op::kFence) {
    ++stats_.accepted[static_cast<int>(r.op)];
    at_fences_.push_back(s);
    if (unlanded_ == 0) landed_all();
    return;
  }
  at_waiting_.push_back(s);
  if (at_waiting_.size() == 1 && can_accept(r)) accept_waiting();
  else ++stats_.backpressured;
}

void TlmEndpoint::send_response(int s, tlm::tlm_generic_payload& t) {
  AtSocket& a = at_[static_cast<size_t>(s)];
  if (a.resp_busy) {  // response exclusion: after the previous END_RESP
    a.resp.push_back(&t);
    return;
  }
  tlm::tlm_phase ph = tlm::BEGIN_RESP;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum r = socket[s]->nb_transport_bw(t, ph, d);
  if (r == tlm::TLM_ACCEPTED || (r == tlm::TLM_UPDATED && ph != tlm::END_RESP)) {
    a.resp_busy = true;  // until END_RESP
    a.resp_trans = &t;
  } else if (t.has_mm()) {
    t.release();  // done with it
  }
}

// -------------------------------------------------------------- completion

void TlmEndpoint::landed() {
  if (unlanded_ == 0) throw InvariantError(std::string(name()) + ": more writes landed than it sent");
  if (--unlanded_ == 0) landed_all();
}

// No write of ours is in flight: fences complete.
void TlmEndpoint::landed_all() {
  landed_.notify();
  std::vector<int> fences;
  fences.swap(at_fences_);
  for (int s : fences) {
    AtSocket& a = at_[static_cast<size_t>(s)];
    tlm::tlm_generic_payload& t = *a.req;
    a.req = nullptr;
    tlm::tlm_phase ph = tlm::END_REQ;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    socket[s]->nb_transport_bw(t, ph, d);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    send_response(s, t);
  }
}

void TlmEndpoint::complete(std::uint32_t tag) {
  Txn& x = txns_[tag];
  const Ps lat = now() - x.t_accept;
  if (x.req.op == Op::kRead) stats_.read_latency_ps.record(static_cast<std::uint64_t>(lat));
  if (x.req.op == Op::kLdReduce) stats_.ld_reduce_latency_ps.record(static_cast<std::uint64_t>(lat));
  if (!x.req.local) --outstanding_;
  x.trans->set_response_status(tlm::TLM_OK_RESPONSE);
  x.live = false;
  free_tags_.push_back(tag);
  if (x.done)
    x.done->notify();
  else
    send_response(x.socket, *x.trans);
  accept_waiting();
}

// A data packet for one of our reads or ld_reduces.
void TlmEndpoint::data_arrived(const Packet& p) {
  Txn& x = txns_[p.step];
  if (!x.live || x.req.local || posted(x.req.op) || x.left == 0)
    throw InvariantError(std::string(name()) + ": data for transaction " + std::to_string(p.step) +
                         ", which does not wait for any");
  if (p.addr < x.req.addr || p.addr + p.bytes > x.req.addr + x.req.bytes)
    throw InvariantError(std::string(name()) + ": data at " + std::to_string(p.addr) +
                         " outside its transaction");
  std::memcpy(x.trans->get_data_ptr() + (p.addr - x.req.addr), payloads_.data(p.payload), p.bytes);
  payloads_.release(p.payload);
  const bool ld = x.req.op == Op::kLdReduce;
  if (ld) shared_.ld_reduce_keys.erase(ld_key(x.req.group, p.addr));
  if (--x.left == 0) complete(p.step);
  if (ld)  // an ld_reduce of this address elsewhere may go now
    for (TlmEndpoint* e : shared_.endpoints) e->retry();
}


}  // namespace fabricsim
