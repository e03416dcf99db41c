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
#include <unordered_map>
#include <utility>

#include "models/core/errors.hpp"
#include "models/sc/collective_algorithm.hpp"

namespace fabricsim {

namespace {

class HierarchicalAlgorithm final : public CollectiveAlgorithm {
 public:
  using CollectiveAlgorithm::CollectiveAlgorithm;

  void begin_call() override;
  void start_work() override {
    if (call().op != CollectiveOp::kAllReduce)
      throw InvariantError(name() + ": collective.algorithm=hierarchical does not implement " +
                           to_string(call().op));
    // Phase 1 as the ring's reduce-scatter step 0, inside our domain.
    if (call().size > 1 && per_domain() > 1) send_chunk((rank() + per_domain() - 1) % per_domain());
    if (call().size > 1 && chunk_left_ == 0) begin_inter();
  }
  // Phase 1's entries go to our domain's next GPU; entries made from our
  // reduced chunk to the next domain (phase 2: the port toward it also
  // serves the tree and SHARP) or, with one domain, round our domain.
  int first_step_dst(std::uint64_t entry) const override {
    return entry & kFromChunkInter ? inter_next() : domain_next();
  }
  std::uint64_t first_step_count(std::uint64_t entry) const override;
  PacketId make_first_step(Port& port) override {
    const std::uint64_t entry = port.first_step.front();
    port.first_step.pop_front();
    if (entry & ~kEntryElement) return make_from_chunk(port, entry);
    const std::uint64_t count = first_step_count(entry);
    const PacketId pk = make_packet(0, entry, count);
    Packet& p = pool().get(pk);
    p.dst = domain_next();
    p.flits = flits_on(port, p.bytes);
    p.payload = payloads().alloc();
    input(entry, count, payloads().data(p.payload));
    return pk;
  }
  void receive(const Packet& in) override;

 private:
  // First-step entries made from our reduced chunk carry a tag: phase 2
  // (to the next domain), or phase 3 with one domain (to our domain's next
  // GPU).
  static constexpr std::uint64_t kFromChunkInter = 1ull << 63;
  static constexpr std::uint64_t kFromChunkGather = 1ull << 62;

  void begin_inter();  // our chunk is reduced inside the domain
  PacketId make_from_chunk(Port& port, std::uint64_t entry);
  void hier_final(std::uint64_t first, std::uint64_t count, PayloadId payload, int next_step);
  void send_on(int step, int dst, std::uint64_t first, std::uint64_t count, PayloadId payload);
  void tree_up(const Packet& in);
  // Our domain-reduced data at `first` (our input itself with one GPU per domain).
  const std::uint8_t* chunk_data(std::uint64_t first, std::uint64_t count);
  int rank() const { return id() - domain_begin(); }  // in our domain
  int domain_next() const { return domain_begin() + (rank() + 1) % per_domain(); }
  int inter_next() const { return (id() + per_domain()) % gpus(); }
  int domain() const { return id() / per_domain(); }
  int tree_gpu(int d) const { return d * per_domain() + rank(); }  // our rank in domain d
  // The tree (collective.inter=double_tree: 0 or 1) element `first` of our chunk takes.
  int tree_of(std::uint64_t first) const {
    return sweep().hier().tree_of(rank(), first - plan().chunk_begin(rank()));
  }

  bool sharp_ = false;  // phase 2 in the leaves' engines (scaleout.sharp)
  bool tree_ = false;   // phase 2 by a binary tree over the domains (collective.inter)
  // Our chunk reduced inside the domain (phase 1's result, phase 2's own
  // input), its elements still to come, and phase-2 data that arrived
  // before it was complete.
  std::vector<std::uint8_t> chunk_;
  std::uint64_t chunk_left_ = 0;
  std::uint64_t final_left_ = 0;  // our chunk's elements not yet fully reduced
  bool inter_ready_ = false;
  std::vector<Packet> inter_stash_;
  std::unordered_map<std::uint64_t, Fold> folds_;  // tree: by first element
};

std::uint64_t HierarchicalAlgorithm::first_step_count(std::uint64_t entry) const {
  const std::uint64_t first = entry & kEntryElement;
  const RingPlan& chunks = plan();
  int c = chunks.chunk_of(first);
  std::uint64_t end = chunks.chunk_begin(c + 1);
  if ((entry & kFromChunkInter) && !sharp_ && !tree_) {  // a sub-chunk of our chunk
    const RingPlan sub = sweep().hier().inter(c);
    const std::uint64_t base = chunks.chunk_begin(c);
    end = base + sub.chunk_begin(sub.chunk_of(first - base) + 1);
  } else if ((entry & kFromChunkInter) && tree_) {  // double tree: tree 0's part ends at the split
    const std::uint64_t split = chunks.chunk_begin(c) + sweep().hier().tree_split(c);
    if (first < split) end = split;
  }
  return std::min(chunks.slice_elements, end - first);
}

void HierarchicalAlgorithm::begin_call() {
  sharp_ = config().topology.kind == TopologyKind::kScaleOut && config().scaleout.sharp &&
           sweep().hier().domains > 1;
  tree_ = sweep().hier().tree && sweep().hier().domains > 1;
  const std::uint64_t mine = sweep().plan().chunk_elements(rank());
  final_left_ = mine;
  // With one GPU per domain our chunk is our input: nothing to wait for.
  chunk_left_ = per_domain() > 1 ? mine : 0;
  chunk_.resize(data() ? static_cast<std::size_t>(chunk_left_) * es() : 0);
  inter_ready_ = false;
  inter_stash_.clear();
}

const std::uint8_t* HierarchicalAlgorithm::chunk_data(std::uint64_t first, std::uint64_t count) {
  if (per_domain() == 1 || !data()) {
    input(first, count, own());
    return own();
  }
  return chunk_.data() + (first - sweep().plan().chunk_begin(rank())) * es();
}

// Our chunk is reduced inside the domain: start phase 2 on it (the ring's
// reduce-scatter step 0 sends sub-chunk (domain - 1) to the next domain; a
// tree leaf sends its chunk up; SHARP pushes it to the leaf's engine), or,
// with one domain, it is final: send it round the domain.
void HierarchicalAlgorithm::begin_inter() {
  inter_ready_ = true;
  sweep().mark_mid(id(), now());
  const HierPlan& h = sweep().hier();
  const RingPlan& chunks = plan();
  const int r = rank();
  const std::uint64_t base = chunks.chunk_begin(r);
  auto push = [&](std::uint64_t begin, std::uint64_t end, std::uint64_t tag) {
    for (std::uint64_t e = begin; e < end; e += chunks.slice_elements) push_first_step(e | tag);
  };
  if (h.domains == 1) {
    push(base, chunks.chunk_begin(r + 1), kFromChunkGather);
  } else if (sharp_) {  // the whole chunk to the leaf's engine
    push(base, chunks.chunk_begin(r + 1), kFromChunkInter);
  } else if (tree_) {
    // A leaf of a tree sends its part of the chunk (all of it with one
    // tree) up; an inner node folds it with its children's as their slices
    // come (some may have come).
    const std::uint64_t split = base + h.tree_split(r);
    if (h.tree_children(0, domain()) == 0) push(base, split, kFromChunkInter);
    if (h.double_tree && h.tree_children(1, domain()) == 0)
      push(split, chunks.chunk_begin(r + 1), kFromChunkInter);
    std::vector<Packet> early;
    early.swap(inter_stash_);
    for (const Packet& p : early) receive(p);
  } else {
    const RingPlan sub = h.inter(r);
    const int k = (id() / per_domain() + h.domains - 1) % h.domains;
    push(base + sub.chunk_begin(k), base + sub.chunk_begin(k + 1), kFromChunkInter);
    std::vector<Packet> early;
    early.swap(inter_stash_);
    for (const Packet& p : early) receive(p);
  }
  if (final_left_ == 0) sweep().mark_inter(id(), now());
  try_links();
}

// A first-step packet whose data is our reduced chunk: phase 2's first send
// (to the next domain), or with one domain phase 3's (then it is final:
// checked here, as part of our output).
PacketId HierarchicalAlgorithm::make_from_chunk(Port& port, std::uint64_t entry) {
  const std::uint64_t first = entry & kEntryElement;
  const std::uint64_t count = first_step_count(entry);
  const bool inter = (entry & kFromChunkInter) != 0;
  const HierPlan& h = sweep().hier();
  const PacketId pk = make_packet(inter ? h.inter_first() : h.gather_first(), first, count);
  Packet& p = pool().get(pk);
  p.dst = !inter  ? domain_next()
          : tree_ ? tree_gpu(h.tree_parent(tree_of(first), domain()))
                  : inter_next();
  p.flits = flits_on(port, p.bytes);
  if (inter && sharp_) {  // a contribution to rank r's group at our leaf
    p.kind = PacketKind::kReduceContrib;
    p.group = static_cast<std::uint16_t>(1 + rank());
    p.dst = -1;
    p.step = kMcStep;
  }
  p.payload = payloads().alloc();
  std::uint8_t* values = payloads().data(p.payload);
  const std::uint8_t* src = chunk_data(first, count);
  copy(src, count * es(), values);
  if (!inter) {
    sweep().check(first, count, values, gpus(), call().group);
    if ((final_left_ -= count) == 0) sweep().mark_inter(id(), now());
    output_done(count);
  }
  return pk;
}

void HierarchicalAlgorithm::send_on(int step, int dst, std::uint64_t first, std::uint64_t count,
                                    PayloadId payload) {
  const PacketId pk = make_packet(step, first, count);
  Packet& p = pool().get(pk);
  p.dst = dst;
  p.payload = payload;
  queue(pk);
}

// A slice of our chunk is final (phase 2 reduced it across the domains):
// it is part of our output, goes on round the second ring (`next_step`,
// -1: it has been everywhere) or down the tree to our children, and into
// our domain (phase 3). The packets share the payload: nobody changes final
// data.
void HierarchicalAlgorithm::hier_final(std::uint64_t first, std::uint64_t count, PayloadId payload,
                                       int next_step) {
  const HierPlan& h = sweep().hier();
  sweep().check(first, count, payloads().data(payload), gpus(), call().group);
  std::pair<int, int> sends[3];  // (step, GPU): at most the domain and two children
  int n = 0;
  if (per_domain() > 1) sends[n++] = {h.gather_first(), domain_next()};
  if (next_step >= 0) sends[n++] = {next_step, inter_next()};
  if (tree_) {
    const int t = tree_of(first);
    for (int k = 0; k < h.tree_children(t, domain()); ++k)
      sends[n++] = {h.inter_first() + 1, tree_gpu(h.tree_child(t, domain(), k))};
  }
  for (int k = 1; k < n; ++k) payloads().retain(payload);
  for (int k = 0; k < n; ++k) send_on(sends[k].first, sends[k].second, first, count, payload);
  if (n == 0) payloads().release(payload);
  if ((final_left_ -= count) == 0) sweep().mark_inter(id(), now());
  output_done(count);
}

// Tree, going up: a child's subtree sum of a slice. We fold in a fixed
// order, our own sum first, then the children's (early arrivals wait), and
// send the result to our parent, or, at the root, it is final.
void HierarchicalAlgorithm::tree_up(const Packet& in) {
  const HierPlan& h = sweep().hier();
  const std::uint64_t first = in.addr / es();
  const std::uint64_t count = in.bytes / es();
  const std::size_t bytes = static_cast<std::size_t>(count) * es();
  const int d = domain();
  const int t = tree_of(first);
  const int n = 1 + h.tree_children(t, d);
  int child = 0;
  while (child + 1 < n && h.tree_child(t, d, child) != in.src / per_domain()) ++child;
  if (child + 1 >= n)
    throw InvariantError(name() + ": GPU " + std::to_string(in.src) + " is not our child in tree " +
                         std::to_string(t) + " across the domains");
  Fold& f = folds_[first];
  if (f.early.empty()) f.early.assign(static_cast<size_t>(n), kNoPayload);
  if (f.early[static_cast<size_t>(child + 1)] != kNoPayload || child + 1 < f.next)
    throw InvariantError(name() + ": GPU " + std::to_string(in.src) + " sent element " +
                         std::to_string(first) + " up twice");
  f.early[static_cast<size_t>(child + 1)] = in.payload;
  if (f.next == 0) {  // our own sum starts the fold
    f.acc = payloads().alloc();
    const std::uint8_t* mine = chunk_data(first, count);
    copy(mine, bytes, payloads().data(f.acc));
    f.next = 1;
  }
  while (f.next < n && f.early[static_cast<size_t>(f.next)] != kNoPayload) {
    const PayloadId p = f.early[static_cast<size_t>(f.next)];
    reduce(payloads().data(f.acc), payloads().data(p), bytes);
    payloads().release(p);
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

void HierarchicalAlgorithm::receive(const Packet& in) {
  const HierPlan& h = sweep().hier();
  const int t = in.step;
  const std::uint64_t first = in.addr / es();
  const std::uint64_t count = in.bytes / es();
  const PayloadId payload = in.payload;
  std::uint8_t* values = payloads().data(payload);
  if (in.step == kMcStep) {  // SHARP: the leaf's sum across the domains (a multicast copy)
    hier_final(first, count, payload, -1);
    return;
  }
  if (tree_ && (t == h.inter_first() || t == h.inter_first() + 1)) {
    if (t == h.inter_first() + 1) {  // down from our parent: final
      hier_final(first, count, payload, -1);
    } else if (!inter_ready_) {  // up from a child before our chunk is ready
      inter_stash_.push_back(in);
    } else {
      tree_up(in);
    }
    return;
  }
  if (t <= h.intra_last()) {  // phase 1: the ring's reduce-scatter in the domain
    add_own_input(first, count, values);
    if (t < h.intra_last()) {
      send_on(t + 1, domain_next(), first, count, payload);
      return;
    }
    const std::uint64_t base = sweep().plan().chunk_begin(rank());
    if (first < base || first + count > base + sweep().plan().chunk_elements(rank()) ||
        count > chunk_left_)
      throw InvariantError(name() + ": element " + std::to_string(first) +
                           " reduced inside the domain twice or outside our chunk");
    if (data()) copy(values, count * es(), chunk_.data() + (first - base) * es());
    payloads().release(payload);
    if ((chunk_left_ -= count) == 0) begin_inter();
    return;
  }
  if (t <= h.inter_rs_last()) {  // phase 2, reduce-scatter across the domains
    if (!inter_ready_) {
      inter_stash_.push_back(in);
      return;
    }
    const std::uint8_t* mine = chunk_data(first, count);
    reduce(values, mine, count * es());
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
  sweep().check(first, count, values, gpus(), call().group);
  if (t < h.last())
    send_on(t + 1, domain_next(), first, count, payload);
  else
    payloads().release(payload);
  output_done(count);
}

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_hierarchical_algorithm(Gpu& gpu) {
  return std::make_unique<HierarchicalAlgorithm>(gpu);
}

}  // namespace fabricsim
