// The switch's access to its reduction engine's resources (models/sc/
// switch.hpp, switch_engine.cpp): which waiting heads need a table entry or
// a replication slot, and the sharing of the free ones among the heads
// that asked at an allocation edge.
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "models/core/port_set.hpp"
#include "models/sc/reduction_engine.hpp"
#include "models/sc/switch_params.hpp"

namespace fabricsim {

// The heads that asked for one kind of resource (kNeedTable, kNeedSlot) at
// an edge, and what share_engine gave them. The engine may keep a resource
// in several pools (ReductionEngine::pools, pool: e.g. a table slice per
// engine port); each pool's free ones are shared among the asks drawing on it.
struct EngineShare {
  struct Ask {
    int in, vc, port;  // input, its VC, the engine port it asks for
    bool operator<(const Ask& o) const {
      return in != o.in ? in < o.in : vc != o.vc ? vc < o.vc : port < o.port;
    }
  };
  std::vector<Ask> wanted;  // scratch: heads asking (sorted before serving)
  // When VCs x engine ports <= 64 and the engine has one pool of the
  // resource, asks are bits instead: bit v * engine ports + k of ask_bits[i]
  // for input i's head on VC v asking for engine port k, served in (input,
  // VC, port) order without a list or a sort.
  bool by_bits = false;
  std::vector<std::uint64_t> ask_bits;
  PortSet askers;
  std::vector<int> given;       // [input] engine port given this edge, or -1
  std::vector<int> given_list;  // inputs with given[] set
  int rr = 0;                   // first input served next time
  // By list: [pool] free ones not yet given this edge, and asks drawing on it.
  std::vector<std::size_t> budget, asks;

  bool any_asked() const { return by_bits ? askers.any() : !wanted.empty(); }
};

struct EngineAccess {
  using Need = ReductionEngine::Need;
  // `engine`: the switch's engine (null without one), asked how its resources pool.
  EngineAccess(const SwitchParams& p, const ReductionEngine* engine);

  // Notes that input i's head on VC v asks engine port o for resource n
  // (share_engine() serves the notes).
  void ask(Need n, int i, int v, int o) {
    EngineShare& sh = share[n];
    if (!sh.by_bits) {
      sh.wanted.push_back({i, v, o});
      return;
    }
    sh.ask_bits[static_cast<std::size_t>(i)] |= std::uint64_t{1}
                                                << (v * engine_ports + o - engine_port);
    sh.askers.set(i);
  }
  // The index of (vc, engine port o) in need_class and SwitchInput::engine_heads.
  std::size_t slot(int vc, int o) const {
    return static_cast<std::size_t>(vc * engine_ports + o - engine_port);
  }
  // What was given and not used lapses at the end of an edge.
  void lapse() {
    for (EngineShare& sh : share) {
      for (int i : sh.given_list) sh.given[static_cast<std::size_t>(i)] = -1;
      sh.given_list.clear();
    }
  }

  int engine_port;   // first engine port, -1 without an engine
  int engine_ports;  // engine ports
  int xports;        // crossbar ports
  // voq: [Need][vc * engine ports + k] the inputs whose head for engine port
  // k on vc needs nothing, a table entry or a replication slot, kept as heads
  // and the table change: allocation asks the engine ports with word
  // operations instead of looking at each waiting head (on nvl72 with full
  // tables, 72 inputs x 4 engine ports x 2 VCs of them at every edge).
  std::vector<PortSet> need_class[3];
  // Heads whose need depends on the table, by key: (vc * engine ports + k) * xports + input.
  std::unordered_map<std::uint64_t, std::vector<int>> heads_by_key;
  PortSet scratch;
  bool waiter = false;   // an allocation is blocked on a full table
  EngineShare share[2];  // per resource (kNeedTable, kNeedSlot)
};

}  // namespace fabricsim
