// A reduction engine's table: one entry per address being reduced, holding
// the running result and the contributions that came before their turn,
// folded in member order (reproducible floating-point sums) or as they
// arrive. Plain C++: the engine model (models/sc/switch_engine.cpp) owns
// the timing, this class the bookkeeping and the fold order; the arithmetic
// is the caller's (a fold callback), so the table works for timing-only
// runs and for any ALU.
//
// An entry's key is (group << 48) | address: one entry per multicast group
// and address. Members are the group's endpoints in the order the group
// lists them; member k's data is folded k-th (reduction.order=member).
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "models/core/key_set.hpp"
#include "models/core/packet.hpp"
#include "models/core/reduction_alu.hpp"
#include "models/core/time.hpp"

namespace fabricsim {

class ReductionTable {
 public:
  struct Entry {
    int next_member = 0;           // fold position (members folded so far)
    PayloadId acc = kNoPayload;    // the running result
    std::vector<PayloadId> early;  // member order: contributions before their turn
    std::vector<bool> seen;        // arrival order: members folded
    Ps first = 0;                  // first contribution folded in
    bool started = false;
    std::uint16_t group = 0;
    std::uint32_t bytes = 0;
    std::uint8_t vc = 0;
    bool pull = false;  // ld_reduce: answer the requester only
    std::int32_t requester = -1;
    RedOp redop = RedOp::kSum;  // from the packet that opened the entry
    DType dtype = DType::kFp32;
  };

  static std::uint64_t key(std::uint16_t group, std::uint64_t addr) {
    return (static_cast<std::uint64_t>(group) << 48) | addr;
  }

  // `capacity` entries at most; contributions folded in arrival order when
  // `arrival_order`, else in member order.
  ReductionTable(std::size_t capacity, bool arrival_order);

  // Multicast groups: group id -> member endpoints (each < `endpoints`).
  void set_groups(const std::vector<std::vector<int>>& groups, std::size_t endpoints);
  // Fold position of `endpoint` in `group`, -1 if not a member.
  int member(std::uint16_t group, int endpoint) const {
    return member_index_[group][static_cast<std::size_t>(endpoint)];
  }
  int members(std::uint16_t group) const { return members_[group]; }

  bool contains(std::uint64_t k) const { return keys_.contains(k); }
  std::size_t size() const { return entries_.size(); }
  std::size_t capacity() const { return capacity_; }
  std::size_t free() const { return capacity_ - std::min(capacity_, entries_.size()); }

  // A new entry for key k (the caller made sure one was free).
  Entry& open(std::uint64_t k);
  // The entry of key k; throws InvariantError when there is none.
  Entry& at(std::uint64_t k);
  // Frees key k's entry (its result has left).
  void close(std::uint64_t k);

  // Endpoint `src` contributes `in` to entry e at time t. Folds every
  // contribution whose turn has come through fold(acc, in) (the first one
  // becomes the accumulator without a fold; `fold` owns `in` afterwards).
  // Returns true when every member is in: e.acc holds the result. Throws
  // InvariantError for a non-member or a member contributing twice.
  template <class FoldFn>
  bool contribute(Entry& e, int src, PayloadId in, Ps t, FoldFn&& fold);

 private:
  int checked_member(const Entry& e, int src) const;
  [[noreturn]] static void twice(int m);

  std::size_t capacity_;
  bool arrival_order_;
  std::unordered_map<std::uint64_t, Entry> entries_;
  KeySet keys_;  // the keys of entries_, for the per-head lookup of allocation
  std::vector<std::vector<int>> member_index_;  // [group][endpoint] -> fold position, -1
  std::vector<int> members_;                    // [group] members
};

template <class FoldFn>
bool ReductionTable::contribute(Entry& e, int src, PayloadId in, Ps t, FoldFn&& fold) {
  const int m = checked_member(e, src);
  const auto n = static_cast<std::size_t>(members_[e.group]);
  if (!e.started) {
    e.started = true;
    e.first = t;
  }
  if (arrival_order_) {
    // Fold each contribution as it comes: no waiting, but a floating-point
    // sum then depends on the arrival order.
    if (e.seen.empty()) e.seen.assign(n, false);
    if (e.seen[static_cast<std::size_t>(m)]) twice(m);
    e.seen[static_cast<std::size_t>(m)] = true;
    if (e.acc == kNoPayload)
      e.acc = in;
    else
      fold(e.acc, in);
    ++e.next_member;
    return static_cast<std::size_t>(e.next_member) >= n;
  }
  if (e.early.empty()) e.early.assign(n, kNoPayload);
  if (e.early[static_cast<std::size_t>(m)] != kNoPayload || m < e.next_member) twice(m);
  e.early[static_cast<std::size_t>(m)] = in;
  while (static_cast<std::size_t>(e.next_member) < n &&
         e.early[static_cast<std::size_t>(e.next_member)] != kNoPayload) {
    const PayloadId next = e.early[static_cast<std::size_t>(e.next_member)];
    e.early[static_cast<std::size_t>(e.next_member)] = kNoPayload;
    if (e.acc == kNoPayload)
      e.acc = next;  // the first member's data starts the fold
    else
      fold(e.acc, next);
    ++e.next_member;
  }
  return static_cast<std::size_t>(e.next_member) >= n;
}

}  // namespace fabricsim
