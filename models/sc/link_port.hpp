// The two sides of a link port, shared by every module on a link (switch
// ports, synthetic endpoints, GPUs, NICs, TLM endpoints): Transmitter sends,
// Receiver gives the buffer space back as credits.
//
// Transmitter
// Policy (virtual cut-through, docs/models/link.md): when the link is free,
// the VCs are offered round-robin from the one after the last VC served; a
// VC's head goes only when the VC has credits for all its flits. When
// nothing goes and some head lacks credits, the link counts a credit stall
// from now and wakes the sender (kItemCreditWake) when credits land; when
// something goes, the stall (if any) ends now.
//
// Receiver: a packet takes its flits of its VC's buffer when it arrives;
// the receiver frees them when the packet leaves the buffer (a switch input
// when the crossbar has moved it, a sink at once, a GPU when it has taken
// the data) and the credits then travel back over the link (link.md,
// "Credits"). A packet kept past its arrival (a read request waiting for its
// answer) holds its credits until it is released, so the sender is
// flow-controlled by the receiver's answers.
#pragma once
#include "models/core/time.hpp"
#include "models/sc/link.hpp"

namespace fabricsim {

class Transmitter {
 public:
  enum class Outcome {
    kSent,      // a packet went
    kDeclined,  // the chosen VC's sender took its head but sent nothing
    kIdle,      // no VC had a head to send
    kBlocked,   // heads wait for credits: the link wakes the sender
  };

  Link* link = nullptr;

  // One look at time t, the link being free. head(v) returns the flits of
  // what VC v would send now, 0 for nothing; send(v), called right after
  // head(v) for the VC chosen, sends that head on the link and returns
  // true, or returns false having sent nothing (the port is then left as
  // it was: no stall mark, the round-robin unmoved).
  template <class Head, class Send>
  Outcome offer(Ps t, int vcs, Head&& head, Send&& send) {
    bool waiting = false;
    for (int k = 0; k < vcs; ++k) {
      const int v = (vc_ptr_ + k) % vcs;
      const int flits = head(v);
      if (flits <= 0) continue;
      if (!link->has_credits(v, flits, t)) {
        waiting = true;
        continue;
      }
      if (!send(v)) return Outcome::kDeclined;
      sent(v, vcs, t);
      return Outcome::kSent;
    }
    link->set_stalled(t, waiting);
    if (waiting) link->wait_for_credits();
    return waiting ? Outcome::kBlocked : Outcome::kIdle;
  }
  // A packet of VC v went without offer() (sent at once on arrival): the
  // stall ends and the round-robin moves past v.
  void sent(int v, int vcs, Ps t) {
    link->set_stalled(t, false);
    vc_ptr_ = (v + 1) % vcs;
  }

 private:
  int vc_ptr_ = 0;  // the VC offered first next time
};

class Receiver {
 public:
  Link* link = nullptr;  // null for a port fed by no link (a switch's engine input)

  // Fed by `l`, which reads this receiver's arrivals for its count of
  // packets in flight (the receiver must not move after this).
  void attach(Link* l) {
    link = l;
    if (l != nullptr) l->count_arrivals_at(&arrivals_);
  }
  // The arrival of a packet was handled: one packet fewer on the link. The
  // count stays here, in the receiver's own state, so an arrival does not
  // touch the link (one cache miss a packet-hop on a large fabric).
  void arrived() { ++arrivals_; }
  // `flits` of `vc` left the buffer at `t` (>= now): their credits go back.
  void free(int vc, int flits, Ps t) const { link->return_credits(vc, flits, t); }
  void free(const Packet& p, Ps t) const { free(p.vc, p.flits, t); }
  // The packet stays past its arrival: its credits go back on release().
  HeldCredits hold(const Packet& p) const { return HeldCredits{link, p.vc, p.flits}; }

 private:
  std::uint64_t arrivals_ = 0;
};

}  // namespace fabricsim
