// The switch's input side (models/sc/switch.hpp): per input port its queues
// (one FIFO per VC, or one VOQ per VC and output), the multicast copies not
// made yet, the buffer occupancy and the frees scheduled for it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "models/core/packet.hpp"
#include "models/core/port_set.hpp"
#include "models/core/ring.hpp"
#include "models/sc/link.hpp"
#include "models/sc/link_port.hpp"
#include "models/sc/switch_params.hpp"

namespace fabricsim {

// A multicast copy waiting at an input as a reference to its original: a
// reduction engine's multicast (72 read requests or stored results per
// entry on nvl72) would otherwise hold a whole packet per member until its
// output takes it, most of the packets alive in a large run. The packet
// is made when the copy reaches the head of its queue and is granted,
// with the serial number it would have had: same timing, same traces.
struct LazyCopy {
  PacketId original;
  std::int32_t member;  // destination endpoint
  std::uint64_t serial;
  int flits;  // the original's (allocation tests it without the packet)
};

// Flits of one packet leaving an input buffer at time t (its tail crossed).
struct Departure {
  Ps t;
  std::uint16_t vc;
  std::uint16_t flits;
};

struct SwitchInput {
  Receiver rx;                // its link; none for an engine port's input
  std::uint32_t pending = 0;  // packets waiting for allocation
  // fifo: [vc]; voq: [vc * xports + out]: the packets queued and (voq) the
  // multicast copies not made yet, queued behind them (a packet joining
  // the queue first makes them). Side by side in one array: allocation
  // tests both for every VOQ it looks at.
  struct Queue {
    PacketQueue q;
    Ring<LazyCopy> lazy;
  };
  std::vector<Queue> queues;
  std::vector<PortSet> nonempty;  // voq: [vc] outputs with a packet queued
  std::vector<int> occupancy;     // [vc] flits held, departures applied
  Ring<Departure> departures;     // future frees, in time order
  int total_occ = 0;
  int mc_held_flits = 0;  // flits of multicast originals not yet fully sent
  int max_occ = 0;
  double occ_integral = 0;  // flit*ps inside the window
  int vc_ptr = 0;
  // An engine port's input: data it started sending at edge `edge_at`.
  Ps edge_at = kNever;
  std::int64_t edge_bytes = 0;
  PacketId edge_parent = kNoPacket;  // multicast original whose data it sent then
  int out_ptr = 0;                   // engine input: where wide grants look first
  int w_occupancy = -1;              // waveform signal id
  // voq: [vc * engine ports + k] kind and table key of the head of the VOQ
  // to engine port k: what EngineAccess::need_class and heads_by_key were filed by.
  std::vector<std::pair<PacketKind, std::uint64_t>> engine_heads;

  // Applies the frees due by t (t >= the last event of this input).
  void apply_departures(Ps t) {
    while (!departures.empty() && departures.front().t <= t) {
      const Departure& d = departures.front();
      occupancy[d.vc] -= d.flits;
      total_occ -= d.flits;
      departures.pop_front();
    }
  }
  // Flits of the packets queued here that have not been granted yet, and
  // of the multicast originals held for their copies.
  std::int64_t queued_flits(const PacketPool& pool) const;
  // A packet of `flits` on `vc` entered the buffer.
  void hold(int vc, int flits) {
    occupancy[static_cast<std::size_t>(vc)] += flits;
    total_occ += flits;
  }
};

// Every crossbar input: the records, and what allocation reads for each
// active input at every edge, kept dense apart from the large records (a
// cache line per port otherwise, the largest source of cache misses on nvl72).
struct SwitchInputs {
  explicit SwitchInputs(const SwitchParams& p);

  SwitchInput& operator[](std::size_t i) { return port[i]; }
  const SwitchInput& operator[](std::size_t i) const { return port[i]; }
  std::vector<SwitchInput>::iterator begin() { return port.begin(); }
  std::vector<SwitchInput>::iterator end() { return port.end(); }
  std::vector<SwitchInput>::const_iterator begin() const { return port.begin(); }
  std::vector<SwitchInput>::const_iterator end() const { return port.end(); }
  int index_of(const SwitchInput& in) const { return static_cast<int>(&in - port.data()); }
  // Multicast copies waiting as references to their originals, all inputs.
  std::uint64_t copies_unmade() const;

  // voq: the queue of (vc, out), its copies not made yet, both empty.
  PacketQueue& voq(SwitchInput& in, int vc, int out) const { return in.queues[index(vc, out)].q; }
  Ring<LazyCopy>& lazy(SwitchInput& in, int vc, int out) const {
    return in.queues[index(vc, out)].lazy;
  }
  std::size_t index(int vc, int out) const {
    const int k = vc * xports + out;
    return static_cast<std::size_t>(k);
  }
  bool voq_empty(SwitchInput& in, int vc, int out) const {
    return voq(in, vc, out).empty() && lazy(in, vc, out).empty();
  }
  // Flits of a VOQ's head, without making it if it is a lazy copy.
  int head_flits(SwitchInput& in, int vc, int out) const {
    const PacketQueue& q = voq(in, vc, out);
    return q.empty() ? lazy(in, vc, out).front().flits : q.front_flits();
  }

  int xports;
  std::vector<SwitchInput> port;  // [input]
  std::vector<Ps> busy;           // [input] crossbar input busy until
  PortSet active;                 // inputs with pending packets
  std::uint64_t pending_total = 0;
};

}  // namespace fabricsim
