// An endpoint (a GPU's port in later issues): a synthetic traffic source with
// an infinite source queue, and a sink that measures latency.
//
// Source timing: time is cut into flit slots (one link flit time each). The
// Bernoulli process starts a packet in each slot with probability load / L
// (L = packet flits), so `load` is the offered fraction of the link's flit
// rate; the bursty process sends geometric bursts of back-to-back packets
// separated by geometric idle gaps with the same mean load. Packets are drawn
// lazily (only when the link could take one), but their generation times are
// exact, so latency includes time spent in the source queue.
//
// Sink timing: a packet is delivered when its tail arrives; the receive
// buffer drains at once, so its credits leave at that moment.
#pragma once
#include <cstdint>
#include "models/core/ring.hpp"
#include <vector>

#include "models/core/config.hpp"
#include "models/core/histogram.hpp"
#include "models/core/packet.hpp"
#include "models/core/rng.hpp"
#include "models/core/traffic_pattern.hpp"
#include "models/sc/link.hpp"
#include "models/sc/timed_module.hpp"

namespace fabricsim {

// Latency samples of every sink in a fabric (packets whose tail arrived in the window).
struct SinkStats {
  Histogram latency_ps;          // generation -> tail arrival
  Histogram network_latency_ps;  // injection (head leaves the source) -> tail arrival
};

class Endpoint : public TimedModule {
 public:
  Endpoint(const sc_core::sc_module_name& name, Scheduler& scheduler, int id, const Config& cfg,
           const TrafficPattern& pattern, PacketPool& pool, SinkStats& sink, Window window);

  void connect(Link* tx, Link* rx);
  // Draws the packets generated up to `end` (so the offered load and source
  // backlog are complete) and closes open stall intervals.
  void finish(Ps end);
  // Throws InvariantError if queued packets have nothing scheduled to send them.
  void check_end_of_run(Ps end) const;

  int id() const { return id_; }
  std::uint64_t generated() const { return generated_; }
  std::uint64_t injected() const { return injected_; }
  std::uint64_t delivered() const { return delivered_; }
  std::uint64_t delivered_flits() const { return delivered_flits_; }  // whole run
  std::uint64_t source_queued() const;
  std::uint64_t offered_flits_in_window() const { return offered_flits_window_; }
  std::uint64_t accepted_flits_in_window() const { return accepted_flits_window_; }
  std::uint64_t accepted_packets_in_window() const { return accepted_packets_window_; }

 protected:
  void handle(const Item& item) override;
  void start_of_simulation() override;

 private:
  enum : std::uint16_t { kItemTry = 16 };
  struct Queued {
    Ps t_gen;
    std::int32_t dst;
  };

  void try_inject();
  void schedule_try(Ps t);
  void generate_until(Ps t);
  void draw_next();     // advances next_slot_ to the next packet start
  void advance_slot();  // the arrival process itself

  int id_;
  int flits_;
  int vcs_;
  Process process_;
  double load_;
  double burst_packets_;
  Ps slot_ps_;
  Window window_;
  const TrafficPattern& pattern_;
  PacketPool& pool_;
  SinkStats& sink_;
  Rng rng_;
  Link* tx_ = nullptr;
  Link* rx_ = nullptr;

  // Source state.
  std::uint64_t next_slot_ = 0;
  bool exhausted_ = false;  // load 0: never generates
  std::uint64_t burst_left_ = 0;
  std::vector<Ring<Queued>> source_;  // per VC
  int vc_ptr_ = 0;
  Ps try_at_ = kNever;

  std::uint64_t generated_ = 0;
  std::uint64_t injected_ = 0;
  std::uint64_t delivered_ = 0;
  std::uint64_t delivered_flits_ = 0;
  std::uint64_t offered_flits_window_ = 0;
  std::uint64_t accepted_flits_window_ = 0;
  std::uint64_t accepted_packets_window_ = 0;
};

}  // namespace fabricsim
