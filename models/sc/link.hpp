// A point-to-point SerDes link, one direction, with credit flow control.
//
// Timing (see docs/models/link.md):
//   - serialization: a packet of L flits occupies the link for L * flit_ps,
//     flit_ps = flit_bytes * 8 / (lanes * lane_gbps * encoding_efficiency);
//   - the first bit reaches the receiver latency_ps after it leaves; the head
//     flit is complete one flit time later, the tail L flit times later;
//   - credits (one per flit, per VC) come back on the reverse direction with
//     the same latency, counted from the moment the receiver frees the buffer.
// The link has no process of its own: `send` computes arrival times and
// queues one item at the receiver. Returned credits
// wait in the link with their arrival time and are absorbed when the sender
// next looks (has_credits), so a credit costs no event unless the sender is
// blocked waiting for it (wait_for_credits).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/core/credit_counter.hpp"
#include "models/core/histogram.hpp"
#include "models/core/link_errors.hpp"
#include "models/core/log.hpp"
#include "models/core/packet.hpp"
#include "models/core/ring.hpp"
#include "models/core/time.hpp"
#include "models/core/wave_trace.hpp"
#include "models/sc/timed_module.hpp"

namespace fabricsim {

// Item kinds every module understands; module-specific kinds start at 16.
//   kItemArrive      a = packet, b = receiving port
//   kItemCredit      a = sending port, b = vc, c = flits: apply these credits
//   kItemCreditWake  a = sending port: credits the sender waited for are due
enum : std::uint16_t { kItemArrive = 1, kItemCredit = 2, kItemCreditWake = 3 };

// The measurement window: statistics count what happens in [begin, end).
struct Window {
  Ps begin = 0;
  Ps end = 0;
  bool contains(Ps t) const { return t >= begin && t < end; }
  Ps length() const { return end - begin; }
};

class Link;

// Errors, FEC and link-level retry of one link (docs/reliability.md).
struct LinkReliability {
  double ber = 0;
  double burst_bits = 1;
  Fec fec = Fec::kNone;
  Ps fec_ps = 0;           // added to every flit's (and credit's, ack's) latency
  Retry retry = Retry::kNone;
  std::int64_t replay_buffer_flits = 0;
  Ps ack_delay_ps = 0;
  std::int64_t flit_bytes = 16;
  std::uint64_t seed = 1;  // the link's error stream: Rng(seed, stream)
  std::uint64_t stream = 0;
  const char* keys = "link";  // where its settings come from, for messages (link, scaleout)
};

// Counters of a reliable link: what transmissions of packets first sent in
// the window did (codewords: those the transmissions opened).
struct ReliabilityStats {
  std::uint64_t codewords = 0;
  std::uint64_t corrected_codewords = 0;
  std::uint64_t uncorrectable_codewords = 0;
  std::uint64_t crc_errors = 0;     // transmissions that arrived corrupted
  std::uint64_t replays = 0;        // nacks acted on (go-back-N rewinds)
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t retransmitted_bytes = 0;  // on the wire (flits x flit_bytes)
  std::uint64_t delivered_bytes = 0;      // on the wire, packets that arrived intact
  Ps replay_stall_ps = 0;  // link time lost between a bad transmission and its nack
  std::int64_t replay_buffer_max = 0;  // flits held, peak
  Histogram added_ps;  // per packet: delay added by replays (0 for most)
};

// A packet a receiver keeps in its buffer past its arrival (a read request
// waiting for its answer): its credits go back to the sender only when it is
// released, so the sender is flow-controlled by the receiver's answers.
struct HeldCredits {
  Link* link = nullptr;
  std::uint8_t vc = 0;
  std::uint16_t flits = 0;
  void release(Ps t) const;
};

class alignas(64) Link {  // its hot members start a cache line (below)
 public:
  Link(std::string name, Ps flit_ps, Ps latency_ps, int vcs, int credits_per_vc, Window window,
       int lanes = 1);
  // Its credit counters borrow names it holds: a link stays where it was made.
  ~Link() = default;
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // The transmitter receives kItemCreditWake / kItemCredit with a = port.
  void bind_tx(TimedModule* module, std::uint32_t port);
  // The receiver receives kItemArrive(a = packet, b = rx_port) when the head
  // flit is complete (cut-through receivers) or when the tail is (sinks).
  void bind_rx(TimedModule* module, std::uint32_t port, bool deliver_at_tail);

  const std::string& name() const { return name_; }
  void enable_log(const Log& l) { log_.enable(l, name_); }
  Ps flit_ps() const { return flit_ps_; }
  Ps latency_ps() const { return latency_ps_; }
  Ps serialization_ps(int flits) const { return static_cast<Ps>(flits) * flit_ps_; }
  Ps free_at() const { return free_at_; }
  int vcs() const { return nvcs_; }
  const CreditCounter& credits(int vc) const { return vc_[static_cast<size_t>(vc)].pool; }
  // Absorbs the credits returned by `now`, then: can `flits` of `vc` go?
  // With go-back-N, the replay buffer must have room for the packet too.
  bool has_credits(int vc, int flits, Ps now) {
    absorb(now);
    return credits(vc).can_take(flits) && replay_room(flits);
  }
  // The sender is blocked on credits: wake it (kItemCreditWake) when the
  // next returned credit arrives.
  void wait_for_credits();

  // Starts serialising `p` at `start` (>= free_at()). Takes its credits,
  // stamps p.t_head with the head's arrival time and queues the arrival.
  void send(PacketId id, Packet& p, Ps start);
  // Where the receiver counts the packets it took off this link
  // (Receiver::attach; it counts them as it handles their arrival items).
  void count_arrivals_at(const std::uint64_t* arrivals) { arrivals_ = arrivals; }
  // The receiver freed `flits` of `vc` at time `when` (>= now).
  void return_credits(int vc, int flits, Ps when);
  // The transmitter calls this when a kItemCredit item is handled.
  void credits_arrived(int vc, int flits);
  // Applies every credit return that has arrived by `now`.
  void absorb(Ps now);

  // True if the transmitter, blocked on credits, will be woken at or after t.
  bool sender_will_be_woken(Ps t) const {
    return tx_waiting_ || (wake_sent_for_ != kNever && wake_sent_for_ >= t);
  }
  // End-of-run check of a sender with work waiting for this link: true if
  // nothing will ever wake it (its own try at `try_at`, or a credit wake),
  // a lost wake-up.
  bool sender_stranded(bool has_work, Ps try_at, Ps end) const {
    return has_work && (try_at == kNever || try_at < end) && !sender_will_be_woken(end);
  }

  // Credit-stall accounting: the transmitter has a packet ready and the link
  // free, but not enough credits for it.
  void set_stalled(Ps t, bool stalled);
  // Go-back-N: the end of the last stretch the link spent replaying (the
  // watchdog does not call a fabric stuck while its links retry).
  Ps replaying_until() const { return replaying_until_; }
  // Up, waiting for credits, and none freed, for at least `period` by `now`.
  bool starved(Ps now, Ps period) const {
    return !down_ && stall_since_ != kNever && stall_since_ + period <= now && last_freed_ + period <= now;
  }

  // Statistics over the window.
  double utilization() const;
  Ps credit_stall_ps() const;
  // Packets / flits whose serialization started in the window.
  std::uint64_t packets_sent() const { return packets_sent_; }
  std::uint64_t flits_sent() const { return flits_sent_; }
  // Packets sent and not yet taken off by the receiver.
  std::uint64_t in_flight() const { return transmissions_ - (arrivals_ ? *arrivals_ : 0); }
  // Every transmission started, whole run (the watchdog's sign of life).
  std::uint64_t transmissions() const { return transmissions_; }
  // Credits of `vc` on their way back to the transmitter.
  int credits_returning(int vc) const { return vc_[static_cast<size_t>(vc)].returning; }
  // Flits sent on `vc` whose credits the receiver has not returned yet.
  int flits_outstanding(int vc) const { return vc_[static_cast<size_t>(vc)].outstanding; }
  // Throws unless, per VC, available + returning + outstanding == pool size.
  void check_credit_conservation() const;
  void finish(Ps end);  // closes an open stall interval
  // A run that stopped early: statistics cover `w` (nothing happened after it).
  void close_window(Window w) { window_ = w; }

  // Waveforms: <name>.valid (serialising), .vc, .packet (serial + 1: 0 is
  // "none yet"), and
  // .credits_vc<v> (available, returns counted when they land).
  void trace(WaveTrace& w);

  // Faults (models/core/faults.hpp), from time `t` on.
  // The link runs on `lanes` of its `lanes_total` lanes: transmissions that
  // start from now take lanes_total / lanes times as long.
  void set_lanes(int lanes);
  int lanes() const { return lanes_; }
  // No new packet is sent from now on: senders route around it (what they
  // had already committed to it still crosses).
  void set_down() { down_ = true; }
  bool down() const { return down_; }
  // Nothing starts before `until` (a stalled port).
  void stall_until(Ps until) { free_at_ = std::max(free_at_, until); }
  void set_ber(double ber);

  // Bit errors, FEC and retry; without this call the link is error-free
  // and costs nothing extra.
  void set_reliability(const LinkReliability& r);
  bool reliable() const { return errors_ != nullptr; }
  const ReliabilityStats& reliability() const { return rel_stats_; }
  // Flits in the replay buffer (sent, not yet acknowledged) at `now`.
  std::int64_t replay_held(Ps now) {
    absorb(now);
    return replay_held_;
  }

 private:
  // Go-back-N on one packet: transmissions until one arrives intact;
  // returns the start of that one.
  Ps transmit_reliably(const Packet& p, Ps start, Ps ser);
  bool replay_room(int flits) const {
    return !go_back_n_ || replay_held_ + flits <= rel_.replay_buffer_flits;
  }

  // Layout: a fabric has thousands of links, and a send, a credit check and
  // a credit return each touch a link far from the last one touched, so
  // what they read sits together at the front, by use: the first line is a
  // sender's credit check (is the link free, which returns have landed, is
  // it stalled), the next two a send and a credit return, then the VCs'
  // credits (those in use in one or two lines). About four lines a send,
  // instead of ten spread over a 640-byte object. Names, reliability
  // settings and statistics follow.
  struct Return {
    Ps t;
    int vc;
    int flits;
  };
  Ps free_at_ = 0;
  Ring<Return> returns_;  // in arrival-time order
  // The first landing time among returns_ and acks_ (kNever: none), and the
  // time of the return pushed last: a sender's check and a receiver's return
  // read these here instead of the rings' storage, which is another line
  // (on the 576-GPU fabric, a cache miss on most returns).
  Ps next_landing_ = kNever;
  Ps last_return_ = 0;
  Ps stall_since_ = kNever;
  Ps flit_ps_;
  Ps wire_ps_;  // latency + FEC: what a flit, a credit or an ack takes to cross
  TimedModule* rx_ = nullptr;
  TimedModule* tx_ = nullptr;
  std::uint32_t rx_port_ = 0;
  std::uint32_t tx_port_ = 0;
  std::unique_ptr<LinkErrors> errors_;  // null: an ideal link
  WaveTrace* wave_ = nullptr;
  int nvcs_ = 0;
  bool deliver_at_tail_ = false;
  bool tx_waiting_ = false;
  bool down_ = false;
  bool go_back_n_ = false;  // rel_.retry == go_back_n
  Ps last_freed_ = 0;
  Ps wake_sent_for_ = kNever;  // landing time of the last wake sent to the transmitter
  std::uint64_t transmissions_ = 0;
  std::uint64_t packets_sent_ = 0;
  std::uint64_t flits_sent_ = 0;
  Ps busy_in_window_ = 0;
  LogPoint log_;
  Window window_;
  std::int64_t replay_held_ = 0;
  // A VC's credit state in one place: a packet sent and its credits coming
  // back touch all three. Inline for every VC a link may have (switch.vcs
  // is at most kMaxVcs): the ones in use share a line or two.
  struct VcCredits {
    CreditCounter pool;   // credits the transmitter may use
    int returning = 0;    // freed by the receiver, still on the way back
    int outstanding = 0;  // flits sent and not yet freed by the receiver
  };
  static constexpr int kMaxVcs = 16;
  std::array<VcCredits, kMaxVcs> vc_;

  // Cold: set up once, or read at the end of a run (acks: go-back-N only).
  Ring<Return> acks_;  // acks in flight (t, flits freed), in time order
  std::string name_;
  const std::uint64_t* arrivals_ = nullptr;  // the receiver's count (Receiver::attach)
  std::vector<std::string> vc_names_;  // the counters' names (they borrow them)
  Ps latency_ps_;
  Ps stall_in_window_ = 0;
  Ps replaying_until_ = 0;
  int w_valid_ = -1, w_vc_ = -1, w_packet_ = -1;
  std::vector<int> w_credits_;
  int lanes_total_ = 1;
  int lanes_ = 1;
  Ps flit_ps_full_ = 0;  // with every lane
  LinkReliability rel_;
  ReliabilityStats rel_stats_;
  bool sent_any_ = false;
};

}  // namespace fabricsim
