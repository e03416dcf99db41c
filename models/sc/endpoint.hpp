// An endpoint (a GPU's ports in later issues): a synthetic traffic source with
// infinite source queues, and a sink that measures latency. It may have
// several links (a GPU's NVLinks); each has its own source queues per VC.
//
// Source timing: time is cut into slots of one flit time divided by the
// number of links (k). The Bernoulli process starts a packet in each slot
// with probability load / L (L = packet flits), so `load` is the offered
// fraction of the endpoint's total link flit rate (k links); the bursty
// process sends geometric bursts of back-to-back packets (at the k links'
// rate) separated by geometric idle gaps with the same mean load. Each packet
// goes to one link chosen by endpoint.link_policy: `stripe` interleaves the
// addresses of each destination's stream over the links every
// endpoint.stripe_bytes, as NVLink does. Packets are drawn lazily (only when
// a link could take one or sits idle), but their generation times are exact,
// so latency includes time spent in the source queue.
//
// Sink timing: a packet is delivered when its tail arrives; the receive
// buffer drains at once, so its credits leave at that moment.
//
// Operations (traffic.read_fraction): a posted write is one packet of L
// flits. A read is a one-flit request (request VCs: all but the last) that
// the destination answers with L flits of data on the last VC, on the link
// the address picks, when that link can send it; the request keeps its
// receive-buffer space (credits) until then, so responses back-pressure
// requests instead of piling up. At most traffic.outstanding_reads reads
// are in flight per endpoint. A read's latency runs from its generation to
// the tail of its data back at the requester.
#pragma once
#include <cstdint>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/histogram.hpp"
#include "models/core/packet.hpp"
#include "models/core/ring.hpp"
#include "models/core/rng.hpp"
#include "models/core/traffic_pattern.hpp"
#include "models/sc/link.hpp"
#include "models/sc/link_port.hpp"
#include "models/sc/timed_module.hpp"

namespace fabricsim {

// Latency samples of every sink in a fabric (packets whose tail arrived in the window).
struct SinkStats {
  Histogram latency_ps;          // generation -> tail arrival (writes), -> data back (reads)
  Histogram network_latency_ps;  // injection (head leaves the source) -> tail arrival
  Histogram read_latency_ps;     // reads only: generation -> data back
};

class Endpoint : public TimedModule {
 public:
  Endpoint(const sc_core::sc_module_name& name, Scheduler& scheduler, int id, const Config& cfg,
           const TrafficPattern& pattern, PacketPool& pool, SinkStats& sink, Window window,
           int links = 1);

  // Port `port`'s outgoing and incoming links.
  void connect(int port, Link* tx, Link* rx);
  // Draws the packets generated up to `end` (so the offered load and source
  // backlog are complete) and closes open stall intervals.
  void finish(Ps end);
  // Throws InvariantError if queued packets have nothing scheduled to send them.
  void check_end_of_run(Ps end) const;

  int id() const { return id_; }
  int links() const { return static_cast<int>(ports_.size()); }
  std::uint64_t generated() const { return generated_; }
  std::uint64_t injected() const { return injected_; }
  std::uint64_t delivered() const { return delivered_; }
  std::uint64_t delivered_flits() const { return delivered_flits_; }  // whole run
  std::uint64_t source_queued() const;
  std::uint64_t reads_completed() const { return reads_completed_; }
  std::uint64_t offered_flits_in_window() const { return offered_flits_window_; }
  std::uint64_t accepted_flits_in_window() const { return accepted_flits_window_; }
  std::uint64_t accepted_packets_in_window() const { return accepted_packets_window_; }
  // Packets that carried data (writes, read data; not read requests).
  std::uint64_t accepted_data_packets_in_window() const { return accepted_data_packets_window_; }

 protected:
  void handle(const Item& item) override;
  void start_of_simulation() override;

 private:
  enum : std::uint16_t { kItemTry = 16, kItemGen = 17 };
  struct Queued {
    Ps t_gen;
    std::uint64_t addr;
    std::int32_t dst;
    bool read;
  };
  // A read we must answer: the request's place in our receive buffer is
  // held until the data leaves.
  struct Answer {
    Ps t_gen = 0;  // the read's generation time (travels back with the data)
    std::uint64_t addr = 0;
    std::int32_t requester = 0;
    HeldCredits held;
  };
  struct Port {
    Transmitter tx;  // its link and the VC served next
    Receiver rx;
    std::vector<Ring<Queued>> source;  // per VC
    Ring<Answer> answers;              // reads to answer on this link (last VC)
    std::uint64_t queued = 0;
    Ps try_at = kNever;
  };

  void try_link(int l);
  void schedule_try(int port, Ps t);
  // Draws the packets generated up to t into the links' queues. A link that
  // gets its first packet is woken: when it frees if busy; at t if idle,
  // unless it is `trying` or the caller tries idle links itself (kCallerTries).
  enum class Wake { kAll, kCallerTries, kNone };
  void generate_until(Ps t, int trying, Wake wake);
  void ensure_generation_wake();
  int pick_link(std::uint64_t addr);
  Ps slot_time(std::uint64_t slot) const {
    // (no 64-bit division on the common one-link path)
    return ports_.size() == 1 ? slot * flit_ps_ : slot * flit_ps_ / ports_.size();
  }
  void draw_next();     // advances next_slot_ to the next packet start
  void advance_slot();  // the arrival process itself

  bool can_send_head(const Queued& q) const {
    return !q.read || reads_in_flight_ < outstanding_reads_;
  }
  void answer(Port& port, Ps t);  // sends the oldest of port.answers
  void send(Port& port, PacketKind kind, Ps t_gen, std::uint64_t addr, int dst, int flits, int vc,
            Ps t);

  int id_;
  int flits_;
  int vcs_;
  double read_fraction_;
  int request_vcs_;               // VCs writes and read requests use (all but the last with reads)
  std::uint64_t outstanding_reads_;
  std::uint64_t reads_in_flight_ = 0;
  std::uint64_t reads_completed_ = 0;
  Process process_;
  double load_;
  double log1p_p_ = 0.0;  // Bernoulli: log1p(-load / flits), 0 when every slot starts a packet
  double burst_packets_;
  Ps flit_ps_;
  LinkPolicy policy_;
  std::uint64_t stripe_bytes_;
  std::uint64_t packet_bytes_;  // address advance per packet (its payload, at least a flit)
  Window window_;
  const TrafficPattern& pattern_;
  PacketPool& pool_;
  SinkStats& sink_;
  Rng rng_;
  std::vector<Port> ports_;
  std::vector<std::uint64_t> next_addr_;  // per destination: its address stream
  int rr_link_ = 0;

  // Source state.
  std::uint64_t next_slot_ = 0;
  bool exhausted_ = false;  // load 0: never generates
  std::uint64_t burst_left_ = 0;
  Ps gen_at_ = kNever;
  int idle_empty_links_ = 0;  // links with nothing queued (generation must wake)

  std::uint64_t generated_ = 0;
  std::uint64_t injected_ = 0;
  std::uint64_t delivered_ = 0;
  std::uint64_t delivered_flits_ = 0;
  std::uint64_t offered_flits_window_ = 0;
  std::uint64_t accepted_flits_window_ = 0;
  std::uint64_t accepted_packets_window_ = 0;
  std::uint64_t accepted_data_packets_window_ = 0;
};

}  // namespace fabricsim
