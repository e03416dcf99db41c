// Allocation on the switch's clock edges (switch_alloc.hpp): which ports
// are free, the requests, the allocator, and when to look again.
#include "models/sc/switch.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "models/core/errors.hpp"

namespace fabricsim {

SwitchAlloc::SwitchAlloc(const SwitchParams& p, std::vector<std::unique_ptr<Allocator>> a)
    : xports(p.xports),
      requests(
          p.xports, p.xports,
          p.queueing == Queueing::kVoq ? RequestMatrix::Major::kCols : RequestMatrix::Major::kRows),
      match(p.xports, p.xports),
      allocators(std::move(a)),
      vc_match(p.xports, p.xports),
      match_vc(static_cast<size_t>(p.xports), -1),
      out_free(p.xports),
      scratch(p.xports),
      matched_out(p.xports),
      fits_any(static_cast<size_t>(p.vcs), PortSet(p.xports)),
      busy_out(p.xports),
      col(p.queueing == Queueing::kVoq ? static_cast<size_t>(p.vcs * p.xports) : 0,
          PortSet(p.xports)),
      requested(static_cast<size_t>(p.vcs), PortSet(p.xports)),
      col_min_flits(col.size(), 0),
      stalled(static_cast<size_t>(p.vcs), PortSet(p.xports)),
      free_in(p.xports),
      free_requested(p.xports),
      busy_requested(p.xports) {
  if (per_vc())
    vc_requests.assign(static_cast<size_t>(p.vcs),
                       RequestMatrix(p.xports, p.xports, requests.major()));
  // Crossbar transfer of L flits at speedup x link rate, rounded up to 1 ps.
  xfer_ps.resize(static_cast<size_t>(p.max_flits) + 1);
  for (size_t l = 0; l < xfer_ps.size(); ++l)
    xfer_ps[l] = static_cast<Ps>(std::ceil(static_cast<double>(l * p.flit_ps) / p.speedup));
}

// One allocation at edge e: free ports, requests, the allocator's
// matching, the grants, and when to look again.
void Switch::allocate(Ps e) {
  alloc_.last_alloc = e;
  if (window_.contains(e)) ++alloc_.cycles;
  const Ps first_release = free_outputs(e);
  Ps wake = kNever;
  build_requests(e, first_release, wake);
  if (alloc_.per_vc())
    allocate_per_vc();
  else
    alloc_.allocators.front()->allocate(alloc_.requests, alloc_.match);
  alloc_.matched_out.clear();
  for (int i : alloc_.match.matched_inputs)
    alloc_.matched_out.set(alloc_.match.out_of_in[static_cast<size_t>(i)]);
  const Ps first_free = grant_matches(e, wake);
  schedule_next(e, first_free, wake);
}

// Each VC's allocator in turn, on the inputs and outputs the VCs before it
// left unmatched; the VC that goes first rotates every edge.
void Switch::allocate_per_vc() {
  Matching& m = alloc_.match;
  m.reset();
  alloc_.matched_out.clear();  // (scratch here: outputs matched so far)
  for (int k = 0; k < params_.vcs; ++k) {
    const int v = (alloc_.vc_first + k) % params_.vcs;
    RequestMatrix& req = alloc_.vc_requests[static_cast<size_t>(v)];
    if (!req.written().any()) continue;
    if (m.size() > 0) {  // drop the ports matched for the VCs before
      PortSet& taken_in = alloc_.scratch;
      taken_in.clear();
      for (int i : m.matched_inputs) taken_in.set(i);
      req.written().for_each([&](int x) {
        PortSet& line =
            req.major() == RequestMatrix::Major::kCols ? req.mutable_col(x) : req.mutable_row(x);
        if (req.major() == RequestMatrix::Major::kCols) {
          if (alloc_.matched_out.test(x))
            line.clear();
          else
            line.subtract(taken_in);
        } else {
          if (taken_in.test(x))
            line.clear();
          else
            line.subtract(alloc_.matched_out);
        }
      });
    }
    alloc_.allocators[static_cast<size_t>(v)]->allocate(req, alloc_.vc_match);
    for (int i : alloc_.vc_match.matched_inputs) {
      const int o = alloc_.vc_match.out_of_in[static_cast<size_t>(i)];
      m.add(i, o);
      alloc_.match_vc[static_cast<size_t>(i)] = v;
      alloc_.matched_out.set(o);
    }
  }
  alloc_.vc_first = (alloc_.vc_first + 1) % params_.vcs;
}

Ps Switch::free_outputs(Ps e) {
  // Per output: crossbar port free at this edge? Output buffer of each VC
  // able to take a packet of the largest size? (Bit-parallel fast path:
  // smaller heads into a fuller buffer are checked one by one.)
  // Only the outputs that had packets leave or a port busy are looked at.
  alloc_.scratch = outputs_.with_sending;  // release_space changes with_sending
  alloc_.scratch.for_each([&](int o) {
    // Most outputs of a loaded wide switch are mid-packet: look before calling.
    if (outputs_.gone[static_cast<size_t>(o)] <= e) release_space(o, e);
  });
  alloc_.out_free.fill();
  Ps first_release = kNever;
  alloc_.scratch = alloc_.busy_out;
  alloc_.scratch.for_each([&](int o) {
    const Ps b = outputs_.busy[static_cast<size_t>(o)];
    if (b <= e) {
      alloc_.busy_out.reset(o);
    } else {
      alloc_.out_free.reset(o);
      first_release = std::min(first_release, b);
    }
  });
  return first_release;
}

// Requests blocked by a busy port lower `wake` to when it frees; those
// blocked by a full output buffer are woken by out_try when it frees space.
void Switch::build_requests(Ps e, Ps first_release, Ps& wake) {
  alloc_.requests.clear();
  for (RequestMatrix& r : alloc_.vc_requests) r.clear();
  alloc_.free_in.clear();
  inputs_.active.for_each([&](int i) {
    const Ps b = inputs_.busy[static_cast<size_t>(i)];
    if (b > e)
      wake = std::min(wake, b);
    else
      alloc_.free_in.set(i);
  });
  if (params_.queueing == Queueing::kVoq)
    request_voq(first_release, wake);
  else
    request_fifo(wake);
  for (Need n : {kNeedTable, kNeedSlot})
    if (eng_.share[n].any_asked()) share_engine(n, e, wake);
}

Ps Switch::grant_matches(Ps e, Ps& wake) {
  Ps first_free = kNever;
  // In port order, as the grants change shared state (pools, output queues).
  alloc_.granted_order.assign(alloc_.match.matched_inputs.begin(),
                              alloc_.match.matched_inputs.end());
  std::sort(alloc_.granted_order.begin(), alloc_.granted_order.end());
  for (int i : alloc_.granted_order) {
    const int o = alloc_.match.out_of_in[static_cast<size_t>(i)];
    const int vc = alloc_.per_vc() ? alloc_.match_vc[static_cast<size_t>(i)] : -1;
    const PacketId parent = grant(i, o, e, vc);
    if (parent != kNoPacket) fan_out(i, parent, e, inputs_.busy[static_cast<size_t>(i)]);
    first_free = std::min(first_free, outputs_.busy[static_cast<size_t>(o)]);
    // More packets behind the granted one: look again when this input frees.
    const SwitchInput& in = inputs_[static_cast<size_t>(i)];
    if (in.pending > 0) wake = std::min(wake, inputs_.busy[static_cast<size_t>(i)]);
  }
  if (params_.has_engine()) {
    // The engine ports take the outputs left free in turn, from one that
    // rotates every edge: in port order the first engine port took every
    // free output first, and with a slice per link port (distributed) the
    // lowest-numbered GPU's reductions were served first (measured: nvl72
    // NVLS, 32 MiB, the GPUs' outputs were half done at times rising with
    // the GPU number from 41.9 to 51.9 us; 43.3 to 46.4 us in turn).
    const int first = params_.engine_port, ports = params_.xports - first;
    for (int k = 0; k < ports; ++k) wide_grants(first + (alloc_.wide_first + k) % ports, e, wake);
    alloc_.wide_first = (alloc_.wide_first + 1) % ports;
  }
  eng_.lapse();
  return first_free;
}

// An input still waiting that requested an output nobody took: both
// stayed free, so another (iteration-limited) allocation may match them
// next edge. Waiting inputs whose requests all went to others: when a
// port frees (`first_free`: the first matched output to free).
void Switch::schedule_next(Ps e, Ps first_free, Ps wake) {
  bool retry_next_edge = false;
  bool waiting = false;
  PortSet& unmatched = alloc_.scratch;
  const RequestMatrix& req = alloc_.requests;
  if (req.major() == RequestMatrix::Major::kCols) {
    unmatched.clear();  // inputs that requested, still wait and were not matched
    req.written().for_each([&](int o) { unmatched |= req.col(o); });
    unmatched &= inputs_.active;
    for (int i : alloc_.match.matched_inputs) unmatched.reset(i);
    waiting = unmatched.any();
    if (waiting) {
      req.written().for_each([&](int o) {
        if (!retry_next_edge && !alloc_.matched_out.test(o))
          retry_next_edge = req.col(o).intersects(unmatched);
      });
    }
  } else {
    unmatched.assign_and(req.written(), inputs_.active);
    unmatched.for_each([&](int i) {
      if (alloc_.match.out_of_in[static_cast<size_t>(i)] >= 0) return;
      const PortSet& row = req.row(i);
      if (row.has_bits_outside(alloc_.matched_out))
        retry_next_edge = true;
      else if (row.any())
        waiting = true;
    });
  }
  if (waiting) wake = std::min(wake, first_free);
  if (inputs_.pending_total == 0) return;
  if (retry_next_edge) wake = e + params_.cycle_ps;
  if (wake != kNever) request_tick(std::max(wake, e + 1));
}

// Output by output: the free inputs with a packet for it on this VC.
// Outputs whose buffer takes a packet of any size get them all at once;
// the rest are checked head by head. Heads asking for an engine resource
// are noted for share_engine, which serves them in input order.
void Switch::request_voq(Ps first_release, Ps& wake) {
  bool waits_for_busy = false;  // a free input has a packet for a busy output
  for (int v = 0; v < params_.vcs; ++v) {
    const PortSet& requested = alloc_.requested[static_cast<size_t>(v)];
    // Busy outputs: one free input waiting for any of them is all we need.
    alloc_.busy_requested.assign_andnot(requested, alloc_.out_free);
    for (int o = alloc_.busy_requested.find_next(0); o != PortSet::kNone && !waits_for_busy;
         o = alloc_.busy_requested.find_next(o + 1))
      waits_for_busy = alloc_.column(v, o).intersects(alloc_.free_in);
    alloc_.free_requested.assign_and(requested, alloc_.out_free);
    alloc_.free_requested.subtract(alloc_.stalled[static_cast<size_t>(v)]);
    alloc_.free_requested.for_each([&](int o) { request_voq_column(v, o); });
  }
  if (waits_for_busy) wake = std::min(wake, first_release);
}

// The free inputs waiting for free output o on VC v (alloc_.scratch).
void Switch::request_voq_column(int v, int o) {
  PortSet& waiting = alloc_.scratch;
  waiting.assign_and(alloc_.column(v, o), alloc_.free_in);
  if (!waiting.any()) return;
  if (alloc_.fits_any[static_cast<size_t>(v)].test(o)) {
    alloc_.request_col(o, v, waiting);
    return;
  }
  if (is_engine_port(o)) {
    request_engine_port(v, o);
    return;
  }
  if (col_min_flits(v, o) > outputs_.space(o, v)) {
    // No head waiting for o fits its buffer, whichever inputs are free:
    // what the loop below would conclude, without visiting each head.
    wait_for_space(o);
    alloc_.stalled[static_cast<size_t>(v)].set(o);
    return;
  }
  waiting.for_each([&](int i) {
    if (flits_fit(o, v, inputs_.head_flits(inputs_[static_cast<size_t>(i)], v, o)))
      alloc_.request(i, o, v);
    else
      wait_for_space(o);
  });
}

void Switch::wait_for_space(int o) {
  if (outputs_.space_waiter[static_cast<size_t>(o)]) return;
  outputs_.space_waiter[static_cast<size_t>(o)] = 1;
  const SwitchOutput& out = outputs_[static_cast<size_t>(o)];
  if (!out.sending.empty()) schedule_out_try(o, out.sending.front().tail_gone);
}

// Input by input: the head of each VC's FIFO asks for its output.
void Switch::request_fifo(Ps& wake) {
  alloc_.free_in.for_each([&](int i) {
    SwitchInput& in = inputs_[static_cast<size_t>(i)];
    for (int v = 0; v < params_.vcs; ++v) {
      const PacketQueue& q = in.queues[static_cast<size_t>(v)].q;
      if (q.empty()) continue;
      const PacketId head = q.front();
      const int o = pool_.get(head).out_port;
      if (!alloc_.out_free.test(o)) {
        wake = std::min(wake, outputs_.busy[static_cast<size_t>(o)]);
      } else if (is_engine_port(o)) {
        const Need n = engine_->need(pool_.get(head), o);
        if (n == kNeedNone)
          alloc_.request(i, o, v);
        else
          eng_.ask(n, i, v, o);
      } else if (head_fits(o, v, head)) {
        alloc_.request(i, o, v);
      } else {
        wait_for_space(o);
      }
    }
  });
}

}  // namespace fabricsim
