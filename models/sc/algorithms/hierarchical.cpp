// Hierarchical all-reduce (HierPlan in collective.hpp): what a GPU sends and
// does on receipt in each of the three phases. HierarchicalAlgorithm holds
// phases 1 and 3 (rings inside the domain) and one subclass per way of
// doing phase 2 across the domains: RingInter (collective.inter=ring),
// TreeInter (tree, double_tree), SharpInter (scaleout.sharp: the GPUs of
// rank r push their whole chunk to their leaf's reduction engine, multicast
// group 1 + r, which folds the domains in order and multicasts the sum
// back), and LocalOnly with one domain (no phase 2).
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

class HierarchicalAlgorithm : public CollectiveAlgorithm {
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
  PacketId make_first_step(Port& port) override;
  void receive(const Packet& in) override;

 protected:
  // First-step entries made from our reduced chunk carry a tag: phase 2
  // (to the next domain), or phase 3 with one domain (to our domain's next
  // GPU).
  static constexpr std::uint64_t kFromChunkInter = 1ull << 63;
  static constexpr std::uint64_t kFromChunkGather = 1ull << 62;
  using Send = std::pair<int, int>;  // (step, GPU)

  // Phase 2, one subclass per variant. Our chunk is reduced inside the
  // domain: queue its first sends (push_range).
  virtual void queue_inter() = 0;
  // A phase-2 arrival (step in phase 2's range, or kMcStep).
  virtual void receive_inter(const Packet& in) = 0;
  // Where a phase-2 entry's packet ends (`end`: its chunk's end).
  virtual std::uint64_t inter_end(int /*c*/, std::uint64_t /*first*/, std::uint64_t end) const {
    return end;
  }
  // A phase-2 packet made from our chunk: where it goes and what it is.
  virtual void address_inter(Packet& p) const { p.dst = inter_next(); }
  // A final slice's sends beyond our domain and the ring's next (sends[n..]).
  virtual int final_sends(std::uint64_t /*first*/, Send* /*sends*/, int n) const { return n; }

  void push_range(std::uint64_t begin, std::uint64_t end, std::uint64_t tag) const {
    for (std::uint64_t e = begin; e < end; e += plan().slice_elements) push_first_step(e | tag);
  }
  void hier_final(std::uint64_t first, std::uint64_t count, PayloadId payload, int next_step);
  void send_on(int step, int dst, std::uint64_t first, std::uint64_t count, PayloadId payload);
  // Our domain-reduced data at `first` (our input itself with one GPU per domain).
  const std::uint8_t* chunk_data(std::uint64_t first, std::uint64_t count);
  int rank() const { return id() - domain_begin(); }  // in our domain
  int domain_next() const { return domain_begin() + (rank() + 1) % per_domain(); }
  int inter_next() const { return (id() + per_domain()) % gpus(); }
  int domain() const { return id() / per_domain(); }
  int tree_gpu(int d) const { return d * per_domain() + rank(); }  // our rank in domain d
  std::uint64_t chunk_begin() const { return plan().chunk_begin(rank()); }
  std::uint64_t chunk_end() const { return plan().chunk_begin(rank() + 1); }
  // Phase-2 data that arrived before our chunk was complete waits.
  bool wait_for_chunk(const Packet& in) {
    if (!inter_ready_) inter_stash_.push_back(in);
    return !inter_ready_;
  }

 private:
  void begin_inter();  // our chunk is reduced inside the domain
  PacketId make_from_chunk(Port& port, std::uint64_t entry);
  void receive_intra(const Packet& in);  // phase 1

  // Our chunk reduced inside the domain (phase 1's result, phase 2's own
  // input), its elements still to come, and phase-2 data that arrived
  // before it was complete.
  std::vector<std::uint8_t> chunk_;
  std::uint64_t chunk_left_ = 0;
  std::uint64_t final_left_ = 0;  // our chunk's elements not yet fully reduced
  bool inter_ready_ = false;
  std::vector<Packet> inter_stash_;
};

std::uint64_t HierarchicalAlgorithm::first_step_count(std::uint64_t entry) const {
  const std::uint64_t first = entry & kEntryElement;
  const RingPlan& chunks = plan();
  const int c = chunks.chunk_of(first);
  std::uint64_t end = chunks.chunk_begin(c + 1);
  if (entry & kFromChunkInter) end = inter_end(c, first, end);
  return std::min(chunks.slice_elements, end - first);
}

PacketId HierarchicalAlgorithm::make_first_step(Port& port) {
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

void HierarchicalAlgorithm::begin_call() {
  const std::uint64_t mine = plan().chunk_elements(rank());
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
  return chunk_.data() + (first - chunk_begin()) * es();
}

// Our chunk is reduced inside the domain: phase 2 starts on it (or, with
// one domain, it is final and goes round the domain); the phase-2 data that
// came early is handled now.
void HierarchicalAlgorithm::begin_inter() {
  inter_ready_ = true;
  sweep().mark_mid(id(), now());
  queue_inter();
  std::vector<Packet> early;
  early.swap(inter_stash_);
  for (const Packet& p : early) receive(p);
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
  p.dst = domain_next();
  p.flits = flits_on(port, p.bytes);
  if (inter) address_inter(p);
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
  Send sends[3];  // at most the domain and two children
  int n = 0;
  if (per_domain() > 1) sends[n++] = {h.gather_first(), domain_next()};
  if (next_step >= 0) sends[n++] = {next_step, inter_next()};
  n = final_sends(first, sends, n);
  for (int k = 1; k < n; ++k) payloads().retain(payload);
  for (int k = 0; k < n; ++k) send_on(sends[k].first, sends[k].second, first, count, payload);
  if (n == 0) payloads().release(payload);
  if ((final_left_ -= count) == 0) sweep().mark_inter(id(), now());
  output_done(count);
}

void HierarchicalAlgorithm::receive(const Packet& in) {
  const HierPlan& h = sweep().hier();
  const int t = in.step;
  if (t <= h.intra_last()) {
    receive_intra(in);
    return;
  }
  if (t <= h.inter_last() || t == kMcStep) {
    receive_inter(in);
    return;
  }
  // Phase 3: the all-gather inside the domain.
  const std::uint64_t first = in.addr / es();
  const std::uint64_t count = in.bytes / es();
  sweep().check(first, count, payloads().data(in.payload), gpus(), call().group);
  if (t < h.last())
    send_on(t + 1, domain_next(), first, count, in.payload);
  else
    payloads().release(in.payload);
  output_done(count);
}

// Phase 1: the ring's reduce-scatter in the domain.
void HierarchicalAlgorithm::receive_intra(const Packet& in) {
  const int t = in.step;
  const std::uint64_t first = in.addr / es();
  const std::uint64_t count = in.bytes / es();
  std::uint8_t* values = payloads().data(in.payload);
  add_own_input(first, count, values);
  if (t < sweep().hier().intra_last()) {
    send_on(t + 1, domain_next(), first, count, in.payload);
    return;
  }
  const std::uint64_t base = chunk_begin();
  if (first < base || first + count > chunk_end() || count > chunk_left_)
    throw InvariantError(name() + ": element " + std::to_string(first) +
                         " reduced inside the domain twice or outside our chunk");
  if (data()) copy(values, count * es(), chunk_.data() + (first - base) * es());
  payloads().release(in.payload);
  if ((chunk_left_ -= count) == 0) begin_inter();
}

// One domain: no phase 2; our reduced chunk is final and goes round the
// domain (phase 3).
class LocalOnly final : public HierarchicalAlgorithm {
 public:
  using HierarchicalAlgorithm::HierarchicalAlgorithm;

 private:
  void queue_inter() override { push_range(chunk_begin(), chunk_end(), kFromChunkGather); }
  void receive_inter(const Packet& in) override {
    throw InvariantError(name() + ": step " + std::to_string(in.step) +
                         " across the domains, but there is one domain");
  }
};

// collective.inter=ring: chunk r is cut into one sub-chunk per domain and
// all-reduced by a ring over the domains (its GPUs of rank r): a
// reduce-scatter, then an all-gather.
class RingInter final : public HierarchicalAlgorithm {
 public:
  using HierarchicalAlgorithm::HierarchicalAlgorithm;

 private:
  // The ring's reduce-scatter step 0 sends sub-chunk (domain - 1).
  void queue_inter() override {
    const HierPlan& h = sweep().hier();
    const RingPlan sub = h.inter(rank());
    const int k = (domain() + h.domains - 1) % h.domains;
    push_range(chunk_begin() + sub.chunk_begin(k), chunk_begin() + sub.chunk_begin(k + 1),
               kFromChunkInter);
  }
  // A sub-chunk's packets end with it.
  std::uint64_t inter_end(int c, std::uint64_t first, std::uint64_t /*end*/) const override {
    const RingPlan sub = sweep().hier().inter(c);
    const std::uint64_t base = plan().chunk_begin(c);
    return base + sub.chunk_begin(sub.chunk_of(first - base) + 1);
  }
  void receive_inter(const Packet& in) override {
    const HierPlan& h = sweep().hier();
    const int t = in.step;
    const std::uint64_t first = in.addr / es();
    const std::uint64_t count = in.bytes / es();
    if (t > h.inter_rs_last()) {  // all-gather across the domains
      hier_final(first, count, in.payload, t < h.inter_last() ? t + 1 : -1);
      return;
    }
    if (wait_for_chunk(in)) return;  // reduce-scatter: our chunk is an input
    reduce(payloads().data(in.payload), chunk_data(first, count), count * es());
    if (t < h.inter_rs_last())
      send_on(t + 1, inter_next(), first, count, in.payload);
    else
      hier_final(first, count, in.payload, t + 1);
  }
};

// collective.inter=tree or double_tree: the domains' sums go up a binary
// tree over the domains (each node folds its own sum, then its children's
// in order) and the result comes down it. With two trees, the first part
// of each chunk (HierPlan::tree_split) takes tree 0, the rest tree 1.
class TreeInter final : public HierarchicalAlgorithm {
 public:
  using HierarchicalAlgorithm::HierarchicalAlgorithm;

 private:
  // The tree element `first` of our chunk takes.
  int tree_of(std::uint64_t first) const {
    return sweep().hier().tree_of(rank(), first - chunk_begin());
  }
  // A leaf of a tree sends its part of the chunk (all of it with one tree)
  // up; an inner node folds it with its children's as their slices come.
  void queue_inter() override {
    const HierPlan& h = sweep().hier();
    const std::uint64_t split = chunk_begin() + h.tree_split(rank());
    if (h.tree_children(0, domain()) == 0) push_range(chunk_begin(), split, kFromChunkInter);
    if (h.double_tree && h.tree_children(1, domain()) == 0)
      push_range(split, chunk_end(), kFromChunkInter);
  }
  // Double tree: tree 0's part ends at the split.
  std::uint64_t inter_end(int c, std::uint64_t first, std::uint64_t end) const override {
    const std::uint64_t split = plan().chunk_begin(c) + sweep().hier().tree_split(c);
    return first < split ? split : end;
  }
  void address_inter(Packet& p) const override {
    p.dst = tree_gpu(sweep().hier().tree_parent(tree_of(p.addr / es()), domain()));
  }
  int final_sends(std::uint64_t first, Send* sends, int n) const override {
    const HierPlan& h = sweep().hier();
    const int t = tree_of(first);
    for (int k = 0; k < h.tree_children(t, domain()); ++k)
      sends[n++] = {h.inter_first() + 1, tree_gpu(h.tree_child(t, domain(), k))};
    return n;
  }
  void receive_inter(const Packet& in) override {
    if (in.step == sweep().hier().inter_first() + 1)  // down from our parent: final
      hier_final(in.addr / es(), in.bytes / es(), in.payload, -1);
    else if (!wait_for_chunk(in))  // up from a child
      tree_up(in);
  }
  void tree_up(const Packet& in);

  std::unordered_map<std::uint64_t, Fold> folds_;  // by first element
};

// Going up: a child's subtree sum of a slice. We fold in a fixed order, our
// own sum first, then the children's (early arrivals wait), and send the
// result to our parent, or, at the root, it is final.
void TreeInter::tree_up(const Packet& in) {
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
  const auto slot = static_cast<size_t>(child) + 1;
  if (f.early[slot] != kNoPayload || child + 1 < f.next)
    throw InvariantError(name() + ": GPU " + std::to_string(in.src) + " sent element " +
                         std::to_string(first) + " up twice");
  f.early[slot] = in.payload;
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

// scaleout.sharp: phase 2 in the leaves' engines. Our whole chunk goes as
// contributions to rank r's group at our leaf; the engine's sum comes back
// as a multicast copy, final.
class SharpInter final : public HierarchicalAlgorithm {
 public:
  using HierarchicalAlgorithm::HierarchicalAlgorithm;

 private:
  void queue_inter() override { push_range(chunk_begin(), chunk_end(), kFromChunkInter); }
  void address_inter(Packet& p) const override {
    p.kind = PacketKind::kReduceContrib;
    p.group = static_cast<std::uint16_t>(1 + rank());
    p.dst = -1;
    p.step = kMcStep;
  }
  void receive_inter(const Packet& in) override {
    if (in.step != kMcStep)
      throw InvariantError(name() + ": step " + std::to_string(in.step) +
                           " across the domains with scaleout.sharp");
    hier_final(in.addr / es(), in.bytes / es(), in.payload, -1);
  }
};

}  // namespace

// The phase-2 variant is fixed for a fabric: by its domains, scaleout.sharp
// and collective.inter (CollectiveSweep's HierPlan).
std::unique_ptr<CollectiveAlgorithm> make_hierarchical_algorithm(Gpu& gpu, const Config& cfg,
                                                                 const CollectiveSweep& sweep) {
  const HierPlan& h = sweep.hier();
  if (h.domains == 1) return std::make_unique<LocalOnly>(gpu);
  if (cfg.topology.kind == TopologyKind::kScaleOut && cfg.scaleout.sharp)
    return std::make_unique<SharpInter>(gpu);
  if (h.tree) return std::make_unique<TreeInter>(gpu);
  return std::make_unique<RingInter>(gpu);
}

}  // namespace fabricsim
