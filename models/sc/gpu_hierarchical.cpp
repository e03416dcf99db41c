// Hierarchical all-reduce (HierPlan in collective.hpp): what a GPU sends and
// does on receipt in each of the three phases. With scaleout.sharp, phase 2
// is in the network: the GPUs of rank r push their whole chunk to their
// leaf's reduction engine (multicast group 1 + r), which folds the domains
// in order and multicasts the sum back.
//
// Timing assumptions, as for the ring: a slice moves on as soon as it
// arrives and a GPU's local add is instantaneous. Phase 2 starts at a GPU
// when its whole chunk is reduced inside its domain (its own input to the
// second ring must be complete: a barrier per GPU, not per call); data from
// other domains that arrives earlier waits. Phase 3 is pipelined: every
// slice of our chunk goes on inside the domain as soon as it is final.
#include <algorithm>

#include "models/core/errors.hpp"
#include "models/sc/gpu.hpp"

namespace fabricsim {

void Gpu::hier_start() {
  sharp_ = cfg_.topology.kind == TopologyKind::kScaleOut && cfg_.scaleout.sharp &&
           sweep_.hier().domains > 1;
  tree_ = sweep_.hier().tree && sweep_.hier().domains > 1;
  const std::uint64_t mine = sweep_.plan().chunk_elements(rank());
  final_left_ = mine;
  // With one GPU per domain our chunk is our input: nothing to wait for.
  chunk_left_ = per_domain() > 1 ? mine : 0;
  chunk_.resize(data_ ? static_cast<std::size_t>(chunk_left_) * es_ : 0);
  inter_ready_ = false;
  inter_stash_.clear();
}

const std::uint8_t* Gpu::chunk_data(std::uint64_t first, std::uint64_t count) {
  if (per_domain() == 1 || !data_) {
    input(first, count, own_.data());
    return own_.data();
  }
  return chunk_.data() + (first - sweep_.plan().chunk_begin(rank())) * es_;
}

// Our chunk is reduced inside the domain: start phase 2 on it (the ring's
// reduce-scatter step 0 sends sub-chunk (domain - 1) to the next domain; a
// tree leaf sends its chunk up; SHARP pushes it to the leaf's engine), or,
// with one domain, it is final: send it round the domain.
void Gpu::begin_inter() {
  inter_ready_ = true;
  sweep_.mark_mid(id_, now());
  const HierPlan& h = sweep_.hier();
  const RingPlan& plan = sweep_.plan();
  const int r = rank();
  const std::uint64_t base = plan.chunk_begin(r);
  auto push = [&](std::uint64_t begin, std::uint64_t end, std::uint64_t tag) {
    for (std::uint64_t e = begin; e < end; e += plan.slice_elements)
      ports_[static_cast<size_t>(first_step_link(e | tag))].first_step.push_back(e | tag);
  };
  if (h.domains == 1) {
    push(base, plan.chunk_begin(r + 1), kFromChunkGather);
  } else if (sharp_) {  // the whole chunk to the leaf's engine
    push(base, plan.chunk_begin(r + 1), kFromChunkInter);
  } else if (tree_) {
    // A leaf of a tree sends its part of the chunk (all of it with one
    // tree) up; an inner node folds it with its children's as their slices
    // come (some may have come).
    const std::uint64_t split = base + h.tree_split(r);
    if (h.tree_children(0, domain()) == 0) push(base, split, kFromChunkInter);
    if (h.double_tree && h.tree_children(1, domain()) == 0)
      push(split, plan.chunk_begin(r + 1), kFromChunkInter);
    std::vector<Packet> early;
    early.swap(inter_stash_);
    for (const Packet& p : early) hier_receive(p);
  } else {
    const RingPlan sub = h.inter(r);
    const int k = (id_ / per_domain() + h.domains - 1) % h.domains;
    push(base + sub.chunk_begin(k), base + sub.chunk_begin(k + 1), kFromChunkInter);
    std::vector<Packet> early;
    early.swap(inter_stash_);
    for (const Packet& p : early) hier_receive(p);
  }
  if (final_left_ == 0) sweep_.mark_inter(id_, now());
  for (int l = 0; l < links(); ++l) try_link(l);
}

// A first-step packet whose data is our reduced chunk: phase 2's first send
// (to the next domain), or with one domain phase 3's (then it is final:
// checked here, as part of our output).
PacketId Gpu::make_from_chunk(Port& port, std::uint64_t entry) {
  const std::uint64_t first = entry & kEntryElement;
  const std::uint64_t count = first_step_count(entry);
  const bool inter = (entry & kFromChunkInter) != 0;
  const HierPlan& h = sweep_.hier();
  const PacketId id = make_packet(inter ? h.inter_first() : h.gather_first(), first, count);
  Packet& p = pool_.get(id);
  p.dst = !inter  ? domain_next()
          : tree_ ? tree_gpu(h.tree_parent(tree_of(first), domain()))
                  : inter_next();
  p.flits = static_cast<std::uint16_t>(flits_on(port, p.bytes));
  if (inter && sharp_) {  // a contribution to rank r's group at our leaf
    p.kind = PacketKind::kReduceContrib;
    p.group = static_cast<std::uint16_t>(1 + rank());
    p.dst = -1;
    p.step = kMcStep;
  }
  p.payload = payloads_.alloc();
  std::uint8_t* data = payloads_.data(p.payload);
  const std::uint8_t* src = chunk_data(first, count);
  copy(src, count * es_, data);
  if (!inter) {
    sweep_.check(first, count, data, n_, group_);
    if ((final_left_ -= count) == 0) sweep_.mark_inter(id_, now());
    output_done(count);
  }
  return id;
}

void Gpu::send_on(int step, int dst, std::uint64_t first, std::uint64_t count, PayloadId payload) {
  const PacketId id = make_packet(step, first, count);
  Packet& p = pool_.get(id);
  p.dst = dst;
  p.payload = payload;
  queue(id);
}

// A slice of our chunk is final (phase 2 reduced it across the domains):
// it is part of our output, goes on round the second ring (`next_step`,
// -1: it has been everywhere) or down the tree to our children, and into
// our domain (phase 3). The packets share the payload: nobody changes final
// data.
void Gpu::hier_final(std::uint64_t first, std::uint64_t count, PayloadId payload, int next_step) {
  const HierPlan& h = sweep_.hier();
  sweep_.check(first, count, payloads_.data(payload), n_, group_);
  std::pair<int, int> sends[3];  // (step, GPU): at most the domain and two children
  int n = 0;
  if (per_domain() > 1) sends[n++] = {h.gather_first(), domain_next()};
  if (next_step >= 0) sends[n++] = {next_step, inter_next()};
  if (tree_) {
    const int t = tree_of(first);
    for (int k = 0; k < h.tree_children(t, domain()); ++k)
      sends[n++] = {h.inter_first() + 1, tree_gpu(h.tree_child(t, domain(), k))};
  }
  for (int k = 1; k < n; ++k) payloads_.retain(payload);
  for (int k = 0; k < n; ++k) send_on(sends[k].first, sends[k].second, first, count, payload);
  if (n == 0) payloads_.release(payload);
  if ((final_left_ -= count) == 0) sweep_.mark_inter(id_, now());
  output_done(count);
}

// Tree, going up: a child's subtree sum of a slice. We fold in a fixed
// order, our own sum first, then the children's (early arrivals wait), and
// send the result to our parent, or, at the root, it is final.
void Gpu::tree_up(const Packet& in) {
  const HierPlan& h = sweep_.hier();
  const std::uint64_t first = in.addr / es_;
  const std::uint64_t count = in.bytes / es_;
  const std::size_t bytes = static_cast<std::size_t>(count) * es_;
  const int d = domain();
  const int t = tree_of(first);
  const int n = 1 + h.tree_children(t, d);
  int child = 0;
  while (child + 1 < n && h.tree_child(t, d, child) != in.src / per_domain()) ++child;
  if (child + 1 >= n)
    throw InvariantError(std::string(name()) + ": GPU " + std::to_string(in.src) +
                         " is not our child in tree " + std::to_string(t) +
                         " across the domains");
  Fold& f = folds_[first];
  if (f.early.empty()) f.early.assign(static_cast<size_t>(n), kNoPayload);
  if (f.early[static_cast<size_t>(child + 1)] != kNoPayload || child + 1 < f.next)
    throw InvariantError(std::string(name()) + ": GPU " + std::to_string(in.src) +
                         " sent element " + std::to_string(first) + " up twice");
  f.early[static_cast<size_t>(child + 1)] = in.payload;
  if (f.next == 0) {  // our own sum starts the fold
    f.acc = payloads_.alloc();
    const std::uint8_t* mine = chunk_data(first, count);
    copy(mine, bytes, payloads_.data(f.acc));
    f.next = 1;
  }
  while (f.next < n && f.early[static_cast<size_t>(f.next)] != kNoPayload) {
    const PayloadId p = f.early[static_cast<size_t>(f.next)];
    reduce(payloads_.data(f.acc), payloads_.data(p), bytes);
    payloads_.release(p);
    ++f.next;
  }
  if (f.next < n) return;
  const PayloadId acc = f.acc;
  folds_.erase(first);
  if (h.tree_root(t, d))
    hier_final(first, count, acc, -1);
  else
    send_on(h.inter_first(), tree_gpu(h.tree_parent(t, d)), first, count, acc);
}

void Gpu::hier_receive(const Packet& in) {
  const HierPlan& h = sweep_.hier();
  const int t = in.step;
  const std::uint64_t first = in.addr / es_;
  const std::uint64_t count = in.bytes / es_;
  const PayloadId payload = in.payload;
  std::uint8_t* data = payloads_.data(payload);
  if (in.step == kMcStep) {  // SHARP: the leaf's sum across the domains (a multicast copy)
    hier_final(first, count, payload, -1);
    return;
  }
  if (tree_ && (t == h.inter_first() || t == h.inter_first() + 1)) {
    if (t == h.inter_first() + 1) {  // down from our parent: final
      hier_final(first, count, payload, -1);
    } else if (!inter_ready_) {      // up from a child before our chunk is ready
      inter_stash_.push_back(in);
    } else {
      tree_up(in);
    }
    return;
  }
  if (t <= h.intra_last()) {  // phase 1: the ring's reduce-scatter in the domain
    add_own_input(first, count, data);
    if (t < h.intra_last()) {
      send_on(t + 1, domain_next(), first, count, payload);
      return;
    }
    const std::uint64_t base = sweep_.plan().chunk_begin(rank());
    if (first < base || first + count > base + sweep_.plan().chunk_elements(rank()) ||
        count > chunk_left_)
      throw InvariantError(std::string(name()) + ": element " + std::to_string(first) +
                           " reduced inside the domain twice or outside our chunk");
    if (data_) copy(data, count * es_, chunk_.data() + (first - base) * es_);
    payloads_.release(payload);
    if ((chunk_left_ -= count) == 0) begin_inter();
    return;
  }
  if (t <= h.inter_rs_last()) {  // phase 2, reduce-scatter across the domains
    if (!inter_ready_) {
      inter_stash_.push_back(in);
      return;
    }
    const std::uint8_t* mine = chunk_data(first, count);
    reduce(data, mine, count * es_);
    if (t < h.inter_rs_last())
      send_on(t + 1, inter_next(), first, count, payload);
    else
      hier_final(first, count, payload, t + 1);
    return;
  }
  if (t <= h.inter_last()) {  // phase 2, all-gather across the domains
    hier_final(first, count, payload, t < h.inter_last() ? t + 1 : -1);
    return;
  }
  // Phase 3: the all-gather inside the domain.
  sweep_.check(first, count, data, n_, group_);
  if (t < h.last())
    send_on(t + 1, domain_next(), first, count, payload);
  else
    payloads_.release(payload);
  output_done(count);
}

}  // namespace fabricsim
