// A GPU's NVLink ports as a TLM-2.0 target (docs/tlm.md): the user's
// initiators send loads, stores and multimem operations into the fabric,
// and the GPU's memory, behind a TLM initiator socket, answers the fabric.
//
// Transactions:
//   write            posted: complete once accepted (its data is copied);
//                    it lands in the target GPU's memory when its tail arrives
//   read             complete when the last data packet's tail is back
//   multimem.st      posted, like a write; the switch writes every member
//   multimem.ld_reduce  complete when the switch's reduced data is back
// A transaction longer than collective.payload_bytes travels as several
// packets (requests: one header flit; data: header + payload flits).
// Accesses to the GPU's own window go straight to its memory (no fabric).
//
// Acceptance (both coding styles): a transaction is accepted when its
// packets fit in the endpoint's queue (tlm.queue_packets, drained as the
// links' credits allow), a non-posted one finds a free slot of
// tlm.outstanding, and an ld_reduce's addresses are not being reduced for
// another ld_reduce already (the engine holds one table entry per address:
// the later one waits at its source). LT b_transport waits for acceptance
// only when it must (back-pressure); a read waits for its data. AT
// nb_transport_fw answers BEGIN_REQ with END_REQ when accepted, now or
// later (back-pressure), and sends BEGIN_RESP when complete.
//
// Timing assumptions: the endpoint adds no time of its own; memory latency
// comes from the memory target (the b_transport annotation, or the DMI
// descriptor's latencies), and a read's response leaves once it is over.
#pragma once
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "models/core/address_map.hpp"
#include "models/core/histogram.hpp"
#include "models/core/packet.hpp"
#include "models/core/ring.hpp"
#include "models/sc/fabric_endpoint.hpp"
#include "models/sc/link_port.hpp"
#include "tlm/extensions.hpp"

namespace fabricsim {

class TlmEndpoint;

// What the endpoints of one fabric share.
struct TlmShared {
  explicit TlmShared(AddressMap m) : map(std::move(m)) {}
  AddressMap map;
  std::vector<TlmEndpoint*> endpoints;
  // (group << 48 | address) of every ld_reduce packet accepted and not answered.
  std::unordered_set<std::uint64_t> ld_reduce_keys;
};

class TlmEndpoint : public FabricEndpoint {
 public:
  SC_HAS_PROCESS(TlmEndpoint);
  // Any number of initiators (0 too) may bind: SMs, copy engines, a CPU.
  tlm_utils::multi_passthrough_target_socket_optional<TlmEndpoint> socket;
  // Toward this GPU's memory (TlmFabric binds it: the default Memory or yours).
  tlm_utils::simple_initiator_socket<TlmEndpoint> memory;

  TlmEndpoint(const sc_core::sc_module_name& name, int id, int links, const EndpointContext& ctx,
              TlmShared& shared);

  void connect(int port, Link* tx, Link* rx, int peer_switch) override;
  void finish(Ps end) override;
  void check_end_of_run(Ps end) const override;
  std::uint64_t injected() const override { return stats_.injected; }
  std::uint64_t delivered() const override { return stats_.delivered; }
  std::uint64_t delivered_flits() const override { return stats_.delivered_flits; }
  std::uint64_t payload_slots_held() const override;
  bool busy() const override { return !mem_.queue.empty(); }
  nlohmann::json stats() const override;

  int id() const { return id_; }
  int links() const { return static_cast<int>(ports_.size()); }
  // Debug transport into this GPU's memory at `local` (zero time).
  unsigned int memory_debug(tlm::tlm_generic_payload& t, std::uint64_t local);
  // An ld_reduce somewhere finished: a transaction waiting for its address may go.
  void retry() {
    if (!at_waiting_.empty() || lt_waiting_ > 0) accept_waiting();
  }
  // One of our writes (or a multimem.st copy) landed in a GPU's memory.
  void landed();
  void landed_all();

 protected:
  void handle(const Item& item) override;
  void start_of_simulation() override;

 private:
  enum : std::uint16_t { kItemTry = 16, kItemIssue = 17, kItemAtReq = 18, kItemMemDone = 19,
                         kItemAtResp = 20 };
  // Requests (writes, read requests) on VC 0, answers (read data) on VC 1.
  static constexpr int kRequestVc = 0;
  static constexpr int kResponseVc = 1;
  enum class Op : std::uint8_t { kIgnore, kWrite, kRead, kStore, kLdReduce, kFence, kAtomic };
  static constexpr int kOps = 7;
  static bool posted(Op op) { return op == Op::kWrite || op == Op::kStore; }

  // A decoded transaction.
  struct Req {
    Op op = Op::kIgnore;
    bool local = false;      // this GPU's own memory: no fabric
    int dst = -1;            // write / read: the target GPU
    int group = -1;          // multimem: the object (multicast group)
    std::uint64_t addr = 0;  // first byte, local to the target's memory
    std::uint32_t bytes = 0;
    std::uint32_t packets = 0;
    RedOp redop = RedOp::kSum;
    DType dtype = DType::kFp32;
    AtomicExtension::Op atomic = AtomicExtension::Op::kAdd;
  };
  struct Txn {
    Req req;
    tlm::tlm_generic_payload* trans = nullptr;  // non-posted and local: completed here
    int socket = -1;                    // AT: the initiator's index; -1 LT
    sc_core::sc_event* done = nullptr;  // LT: the b_transport waiting for it
    std::uint32_t left = 0;             // data packets still to come
    Ps t_accept = 0;
    std::vector<PayloadId> data;        // posted: the data, copied at acceptance
    bool live = false;
  };
  // A packet to send, made into one when its link takes it (so packets
  // exist only in flight).
  struct Out {
    PacketKind kind;
    std::int32_t dst;
    std::uint64_t addr;
    std::uint32_t bytes;
    std::uint16_t flits;
    std::uint16_t tag;
    std::uint16_t group;
    RedOp redop;
    DType dtype;
    PayloadId payload;
    Ps t_gen;
  };
  // A memory access for the fabric (a landing write, a read to answer).
  struct MemJob {
    bool write = false;
    std::uint64_t addr = 0;
    std::uint32_t bytes = 0;
    PayloadId payload = kNoPayload;  // write: the data; read: filled; atomic: operand, then old value
    bool own = false;  // our own transaction `tag` on our memory: complete it when done
    bool atomic = false;  // a read-modify-write (op, dtype)
    AtomicExtension::Op op = AtomicExtension::Op::kAdd;
    DType dtype = DType::kInt32;
    // Read: the answer to send.
    PacketKind reply = PacketKind::kMemReadData;  // or kReadResp, kAtomicResp
    std::int32_t to = -1;
    std::uint16_t tag = 0;
    std::uint16_t group = 0;
    HeldCredits held;
    bool live = false;
  };
  struct Port {
    Transmitter tx;  // its link and the VC served next
    Receiver rx;
    std::vector<Ring<Out>> ready;  // [vc] 0 requests, 1 responses
    Ps try_at = kNever;
  };
  struct AtSocket {
    tlm::tlm_generic_payload* req = nullptr;  // BEGIN_REQ not yet answered with END_REQ
    Req decoded;
    bool resp_busy = false;                   // BEGIN_RESP sent, END_RESP not yet back
    tlm::tlm_generic_payload* resp_trans = nullptr;  // that response's transaction
    Ring<tlm::tlm_generic_payload*> resp;     // responses waiting for that
  };

  // The TLM faces.
  void b_transport(int s, tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int s, tlm::tlm_generic_payload& t, tlm::tlm_phase& ph,
                                     sc_core::sc_time& delay);
  unsigned int transport_dbg(int s, tlm::tlm_generic_payload& t);
  bool get_direct_mem_ptr(int s, tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi);
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);

  tlm::tlm_response_status decode(tlm::tlm_generic_payload& t, Req& r) const;
  bool can_accept(const Req& r) const;
  void accept(const Req& r, tlm::tlm_generic_payload& t, int socket, sc_core::sc_event* done, Ps issue);
  void accept_waiting();           // room freed: AT requests, then LT waiters
  tlm::tlm_sync_enum begin_req(int s, tlm::tlm_generic_payload& t, tlm::tlm_phase& ph,
                               sc_core::sc_time& delay);
  void at_begin_req(int s);        // process socket s's BEGIN_REQ now
  void issue(std::uint32_t tag);   // the accepted transaction's packets join the queue
  void complete(std::uint32_t tag);
  void send_response(int s, tlm::tlm_generic_payload& t);
  void data_arrived(const Packet& p);
  void at_next_response(std::uint32_t s);
  void arrive(PacketId id, std::uint32_t port, Ps t);
  static MemJob write_job(const Packet& p);
  static MemJob answer_job(const Packet& p, HeldCredits held);

  void try_link(int l);
  void schedule_try(int l, Ps t);
  static bool has_work(const Port& p);
  int pick_link(std::uint64_t addr) const {
    return static_cast<int>((addr / lim_.stripe_bytes) % ports_.size());
  }
  void push(int vc, const Out& o);

  void mem_submit(const MemJob& job);
  void mem_done(std::uint32_t job);
  void memory_thread();
  void memory_access(bool write, std::uint64_t addr, std::uint32_t bytes, sc_core::sc_time& d);
  void memory_atomic(std::uint32_t job);
  std::uint32_t alloc_job(const MemJob& job);

  int id_;
  const Config& cfg_;
  PacketPool& pool_;
  PayloadPool& payloads_;
  TlmShared& shared_;
  // What the configuration fixes (collective.payload_bytes, tlm.*, switch.vcs).
  struct Limits {
    explicit Limits(const Config& cfg);
    std::uint64_t stripe_bytes;     // the address interleave over the links
    std::uint32_t payload_bytes;    // data per packet
    std::uint32_t queue_cap;        // tlm.queue_packets
    std::uint32_t outstanding_cap;  // tlm.outstanding
    int vcs;
  };
  const Limits lim_;
  std::vector<Port> ports_;

  std::vector<Txn> txns_;
  std::vector<std::uint32_t> free_tags_;
  std::uint32_t queued_ = 0;       // request packets accepted, not yet sent
  std::uint32_t outstanding_ = 0;  // non-posted transactions waiting for data
  // Writes and multimem.st copies accepted and not yet landed (fences wait
  // for none), and the fences waiting: LT threads on `landed_`, AT sockets.
  std::uint64_t unlanded_ = 0;
  sc_core::sc_event landed_;
  std::vector<int> at_fences_;
  std::vector<AtSocket> at_;
  Ring<int> at_waiting_;           // sockets whose BEGIN_REQ waits for room
  sc_core::sc_event room_;         // LT: room may have freed
  int lt_waiting_ = 0;             // b_transport calls waiting on room_

  // Memory: DMI when the target grants the whole window, else a thread
  // calling b_transport (which may wait).
  struct MemorySide {
    bool dmi_ok = false;
    std::uint8_t* dmi_ptr = nullptr;
    Ps dmi_read_ps = 0;
    std::vector<MemJob> jobs;
    std::vector<std::uint32_t> free_jobs;
    Ring<std::uint32_t> queue;  // jobs for the thread, in order
    sc_core::sc_event kick;
    tlm::tlm_generic_payload trans;
    std::vector<std::uint8_t> buf;
  };
  MemorySide mem_;

  // Statistics (the whole run).
  struct Counters {
    std::uint64_t injected = 0, delivered = 0, delivered_flits = 0;
    std::uint64_t accepted[kOps] = {};  // by Op
    std::uint64_t bytes[kOps] = {};
    std::uint64_t errors = 0;
    std::uint64_t backpressured = 0;  // transactions not accepted at once
    std::uint32_t queued_max = 0;
    Histogram read_latency_ps;        // reads: acceptance -> data back
    Histogram ld_reduce_latency_ps;
  };
  Counters stats_;
};

}  // namespace fabricsim
