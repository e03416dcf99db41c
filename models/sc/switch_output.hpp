// The switch's output side (models/sc/switch.hpp): per crossbar output its
// buffer space per VC, the packets waiting for the link and those on it
// whose space is not back yet, and the Transmitter that sends them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/core/packet.hpp"
#include "models/core/port_set.hpp"
#include "models/core/ring.hpp"
#include "models/sc/link_port.hpp"
#include "models/sc/switch_params.hpp"

namespace fabricsim {

// A packet on the output link: its buffer space frees when the tail has left.
struct Sending {
  Ps tail_gone;
  int vc;
  int flits;
};

struct SwitchOutput {
  Transmitter tx;                   // its link and the VC served next
  std::uint32_t queued = 0;         // packets in `queues`: an idle output is told without them
  Ps try_at = kNever;               // the out_try scheduled, if any
  Ring<Sending> sending;            // on the link, space not yet released
  std::vector<PacketQueue> queues;  // [vc] waiting for the link

  bool nothing_queued() const { return queued == 0; }
};

// Every crossbar output (the engine's ports have records too, unused but
// for their crossbar port and space): the records, and what allocation
// reads for each busy output at every edge, kept dense apart from them.
struct SwitchOutputs {
  explicit SwitchOutputs(const SwitchParams& p);

  SwitchOutput& operator[](std::size_t o) { return port[o]; }
  const SwitchOutput& operator[](std::size_t o) const { return port[o]; }
  // Free output-buffer flits of output o's VC.
  int& space(int o, int vc) { return free_flits[index(o, vc)]; }
  int space(int o, int vc) const { return free_flits[index(o, vc)]; }
  std::size_t index(int o, int vc) const {
    const int k = o * vcs + vc;
    return static_cast<std::size_t>(k);
  }

  int vcs;
  std::vector<SwitchOutput> port;  // [output]
  std::vector<Ps> busy;            // [output] crossbar output port busy until
  std::vector<Ps> gone;            // [output] tail_gone of sending.front(), kNever if none
  std::vector<int> free_flits;     // [output * vcs + vc] free output-buffer flits
  // [output] an allocation is blocked on its buffer space (out_try wakes it)
  std::vector<std::uint8_t> space_waiter;
  PortSet with_sending;            // outputs with packets leaving (space to give back)
  std::uint64_t queued_total = 0;  // packets waiting for a link, all outputs
};

}  // namespace fabricsim
