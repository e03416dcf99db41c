#include "models/core/reduction_table.hpp"

#include <string>

#include "models/core/errors.hpp"

namespace fabricsim {

ReductionTable::ReductionTable(std::size_t capacity, bool arrival_order)
    : capacity_(capacity), arrival_order_(arrival_order), keys_(capacity) {}

void ReductionTable::set_groups(const std::vector<std::vector<int>>& groups,
                                std::size_t endpoints) {
  member_index_.assign(groups.size(), std::vector<int>(endpoints, -1));
  members_.assign(groups.size(), 0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    members_[g] = static_cast<int>(groups[g].size());
    for (std::size_t k = 0; k < groups[g].size(); ++k)
      member_index_[g][static_cast<std::size_t>(groups[g][k])] = static_cast<int>(k);
  }
}

ReductionTable::Entry& ReductionTable::open(std::uint64_t k) {
  keys_.insert(k);
  return entries_[k];
}

ReductionTable::Entry& ReductionTable::at(std::uint64_t k) {
  auto it = entries_.find(k);
  if (it == entries_.end()) throw InvariantError("reduction engine: contribution without an entry");
  return it->second;
}

void ReductionTable::close(std::uint64_t k) {
  entries_.erase(k);
  keys_.erase(k);
}

int ReductionTable::checked_member(const Entry& e, int src) const {
  const int m = member_index_[e.group][static_cast<std::size_t>(src)];
  if (m < 0)
    throw InvariantError("reduction engine: endpoint " + std::to_string(src) +
                         " is not a member of group " + std::to_string(e.group));
  return m;
}

void ReductionTable::twice(int m) {
  throw InvariantError("reduction engine: member " + std::to_string(m) +
                       " contributed twice to one entry");
}

}  // namespace fabricsim
