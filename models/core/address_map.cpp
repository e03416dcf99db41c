#include "models/core/address_map.hpp"

#include <cerrno>
#include <cstdlib>

#include "models/core/errors.hpp"
#include "models/core/params.hpp"

namespace fabricsim {

namespace {


// A whole non-negative integer, decimal or 0x hex.
bool parse_count(const std::string& t, std::int64_t& v) {
  if (t.empty() || t[0] == '-' || t[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(t.c_str(), &end, 0);
  if (errno != 0 || end != t.c_str() + t.size()) return false;
  v = x;
  return true;
}

}  // namespace

std::string multicast_allowed() {
  return "list of BYTES@OFFSET[:FIRST-LAST] (an object of BYTES at local OFFSET in each member's "
         "memory; members GPUs FIRST..LAST, default all)";
}

std::vector<McObject> parse_multicast(const std::string& key, const std::string& text) {
  std::vector<McObject> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = trim_blanks(text.substr(start, comma - start));
    start = comma + 1;
    if (!item.empty()) {
      auto bad = [&](const std::string& why) {
        throw ConfigError("config key '" + key + "': object " + std::to_string(out.size()) + " '" +
                          item + "' " + why + "; allowed: " + multicast_allowed());
      };
      McObject o;
      o.text = item;
      const auto at = item.find('@');
      if (at == std::string::npos) bad("is not BYTES@OFFSET[:FIRST-LAST]");
      const auto colon = item.find(':', at);
      if (!parse_count(trim_blanks(item.substr(0, at)), o.bytes) || o.bytes < 1)
        bad("has a size that is not a whole number of bytes >= 1");
      const std::string off = item.substr(at + 1, colon == std::string::npos ? std::string::npos
                                                                              : colon - at - 1);
      if (!parse_count(trim_blanks(off), o.offset)) bad("has an offset that is not a whole number >= 0");
      if (colon != std::string::npos) {
        const std::string range = item.substr(colon + 1);
        const auto dash = range.find('-');
        if (dash == std::string::npos || !parse_count(trim_blanks(range.substr(0, dash)), o.first) ||
            !parse_count(trim_blanks(range.substr(dash + 1)), o.last) || o.last < o.first)
          bad("has members that are not FIRST-LAST with FIRST <= LAST");
      }
      out.push_back(o);
    }
    if (comma == text.size()) break;
  }
  if (out.size() > 0xFFFF)
    throw ConfigError("config key '" + key + "': at most 65535 multicast objects, got " +
                      std::to_string(out.size()));
  return out;
}

std::string format_multicast(const std::vector<McObject>& objects) {
  std::string s;
  for (const auto& o : objects) s += (s.empty() ? "" : ",") + o.text;
  return s;
}

AddressMap::AddressMap(int gpus, std::uint64_t window, std::uint64_t mc_base,
                       std::vector<McObject> objects)
    : gpus_(gpus), window_(window), mc_base_(mc_base), objects_(std::move(objects)) {
  const auto fail = [](const std::string& m) { throw ConfigError("inconsistent config: " + m); };
  if (window_ == 0) fail("tlm.window_bytes must be positive");
  if (static_cast<std::uint64_t>(gpus_) > mc_base_ / window_)
    fail("tlm.multicast_base=" + std::to_string(mc_base_) + " lies inside the GPU windows (" +
         std::to_string(gpus_) + " GPUs x tlm.window_bytes=" + std::to_string(window_) +
         " end at " + std::to_string(static_cast<std::uint64_t>(gpus_) * window_) + ")");
  for (std::size_t k = 0; k < objects_.size(); ++k) {
    McObject& o = objects_[k];
    const std::string which = "tlm.multicast object " + std::to_string(k) + " '" + o.text + "'";
    if (o.last < 0) {
      o.first = 0;
      o.last = gpus_ - 1;
    }
    if (o.last >= gpus_)
      fail(which + " names GPU " + std::to_string(o.last) + ", but there are " +
           std::to_string(gpus_) + " (0 .. " + std::to_string(gpus_ - 1) + ")");
    if (static_cast<std::uint64_t>(o.offset) + static_cast<std::uint64_t>(o.bytes) > window_)
      fail(which + " does not fit in a GPU's memory (tlm.window_bytes=" + std::to_string(window_) +
           ")");
    for (std::size_t j = 0; j < k; ++j) {
      const McObject& p = objects_[j];
      if (o.offset < p.offset + p.bytes && p.offset < o.offset + o.bytes)
        fail(which + " overlaps object " + std::to_string(j) + " '" + p.text +
             "' (their multicast addresses would be shared)");
    }
  }
}

AddressMap::Target AddressMap::decode(std::uint64_t addr, std::uint64_t len) const {
  Target t;
  if (len == 0 || addr + len < addr) return t;
  if (addr < mc_base_) {
    const std::uint64_t g = addr / window_;
    if (g >= static_cast<std::uint64_t>(gpus_) || (addr + len - 1) / window_ != g) return t;
    t.kind = Kind::kGpu;
    t.gpu = static_cast<int>(g);
    t.local = addr - g * window_;
    return t;
  }
  const std::uint64_t off = addr - mc_base_;
  for (std::size_t k = 0; k < objects_.size(); ++k) {
    const McObject& o = objects_[k];
    const auto lo = static_cast<std::uint64_t>(o.offset), hi = lo + static_cast<std::uint64_t>(o.bytes);
    if (off >= lo && off < hi) {
      if (off + len > hi) return t;  // runs past the object's end
      t.kind = Kind::kMulticast;
      t.object = static_cast<int>(k);
      t.local = off;
      return t;
    }
  }
  return t;
}

std::vector<int> AddressMap::members(int k) const {
  const McObject& o = objects_[static_cast<std::size_t>(k)];
  std::vector<int> m;
  for (std::int64_t g = o.first; g <= o.last; ++g) m.push_back(static_cast<int>(g));
  return m;
}

}  // namespace fabricsim
