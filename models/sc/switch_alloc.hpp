// The switch's allocation state (models/sc/switch.hpp, allocate() in
// switch_alloc.cpp): the allocator and its request matrix and matching, the
// per-edge scratch sets, and the views of inputs and outputs kept up to date
// as ports change, so that an allocation costs what changed, not the
// switch's width (at low load most outputs are idle and full of space).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/core/allocator.hpp"
#include "models/core/port_set.hpp"
#include "models/sc/switch_params.hpp"

namespace fabricsim {

struct SwitchAlloc {
  // `a`: one allocator for all VCs, or one per VC (see allocators).
  SwitchAlloc(const SwitchParams& p, std::vector<std::unique_ptr<Allocator>> a);

  bool per_vc() const { return allocators.size() > 1; }

  // Input i asks for output o for its head on VC v.
  void request(int i, int o, int v) {
    requests.set(i, o);
    if (per_vc()) vc_requests[static_cast<std::size_t>(v)].set(i, o);
  }
  // voq: the inputs in `s` ask for output o for their heads on VC v.
  void request_col(int o, int v, const PortSet& s) {
    requests.mutable_col(o) |= s;
    if (per_vc()) vc_requests[static_cast<std::size_t>(v)].mutable_col(o) |= s;
  }

  // voq: the fewest flits of any head waiting for o on vc, if known (0: not).
  int& col_min(int vc, int o) { return col_min_flits[index(vc, o)]; }
  PortSet& column(int vc, int o) { return col[index(vc, o)]; }
  std::size_t index(int vc, int o) const {
    const int k = vc * xports + o;
    return static_cast<std::size_t>(k);
  }
  // A head of `flits` joined / left the column (vc, o): the known minimum
  // follows, or is forgotten when the smallest may have left.
  void head_joined(int vc, int o, int flits) {
    int& m = col_min(vc, o);
    if (m != 0 && flits >= m) return;
    if (m != 0) m = flits;
    stalled[static_cast<std::size_t>(vc)].reset(o);  // it may fit where the others did not
  }
  void head_left(int vc, int o, int flits) {
    int& m = col_min(vc, o);
    if (flits == m) m = 0;
  }

  int xports;
  RequestMatrix requests;  // all VCs (what schedule_next looks at)
  Matching match;
  // With several VCs, each VC has its own requests and its own allocator
  // (its own round-robin pointers), run one after the other on the ports
  // still unmatched, from a VC that rotates every edge. One allocator for
  // all VCs would move an output's grant pointer on every grant of any VC:
  // where one VC's requests come and go with its output-buffer space while
  // the other VC's are granted often, the pointer is always just past the
  // other VC's last requester when the first VC's request comes, and the
  // inputs far after it wait (measured: NVLS with switch.speedup=2, the
  // engine ports of the highest-numbered GPU waited up to 6 us for the
  // output buffers toward the others, and busbw fell below speedup 1's).
  std::vector<std::unique_ptr<Allocator>> allocators;  // [VC], or one for all VCs
  std::vector<RequestMatrix> vc_requests;             // [VC], with several allocators
  Matching vc_match;
  std::vector<int> match_vc;      // [input] the VC its match this edge is for (-1: any)
  int vc_first = 0;               // the VC allocated first at the next edge
  int wide_first = 0;             // the engine port whose wide grants come first at the next edge
  PortSet out_free;               // scratch: outputs whose crossbar port is free this edge
  PortSet scratch;                // scratch: a set being worked on
  PortSet matched_out;            // scratch: outputs matched this edge
  std::vector<PortSet> fits_any;  // [vc] link outputs whose buffer takes a largest packet
  PortSet busy_out;               // outputs whose crossbar port may be busy (busy[] set)
  // voq: the column view of the inputs' `nonempty` sets. col[vc * xports + o]:
  // inputs with a packet queued for o on vc; requested[vc]: outputs some
  // input has a packet for. On a loaded wide switch most waiting inputs wait
  // for a few busy outputs: allocation then visits those outputs, not every
  // waiting input and VC (nvl72 NVLS: 60 free inputs, 2 grants an edge).
  std::vector<PortSet> col;
  std::vector<PortSet> requested;
  // voq: [vc * xports + o] the fewest flits of any head in col's column,
  // 0 when not known. An output with less free space than every head
  // waiting for it is passed over without visiting each head (nvl72 NVLS
  // with full engine tables: about 50 heads an allocation, none fitting).
  // Kept as heads join and leave; recomputed only after the smallest left.
  std::vector<int> col_min_flits;
  // voq: [vc] outputs found with less free space than every head waiting
  // for them, their space waiter set: allocation passes them over (nothing
  // it could do there) until space frees at the output or a smaller head
  // joins the column. Most of the outputs nvl72 NVLS visits, at 16 MiB.
  std::vector<PortSet> stalled;
  PortSet free_in;                 // scratch: waiting inputs free at this edge
  PortSet free_requested;          // scratch: free outputs some input has a packet for
  PortSet busy_requested;          // scratch: busy ones
  std::vector<int> granted_order;  // scratch: matched inputs in port order
  std::vector<Ps> xfer_ps;         // crossbar transfer time by packet length

  Ps tick_at = kNever;       // the allocation scheduled, if any
  Ps last_alloc = kNever;    // the last edge allocated
  bool due = false;          // an allocation runs after this time's items
  std::uint64_t cycles = 0;  // allocations in the window
  std::uint64_t grants = 0;  // grants in the window
};

}  // namespace fabricsim
