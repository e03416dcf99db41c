// The address map of a fabric driven by TLM initiators (workload.kind=tlm):
// which GPU's memory, or which multicast object, a global address falls in.
// Plain C++ (no SystemC), so it is unit-tested on its own.
//
//   GPU g's memory   [g * window, (g + 1) * window)          unicast loads and stores
//   object k         [mc_base + offset_k, + bytes_k)         multimem.st / ld_reduce
//
// A multicast object is backed in each member's memory at the same local
// offset (offset_k), as NVLS binds one physical range per GPU to a
// multicast handle; its members are a contiguous range of GPUs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

struct McObject {
  std::int64_t bytes = 0;
  std::int64_t offset = 0;  // local offset in each member's memory
  std::int64_t first = 0;   // members: GPUs first .. last
  std::int64_t last = -1;   // -1: every GPU
  std::string text;         // as written in the config
};

// "BYTES@OFFSET" (every GPU) or "BYTES@OFFSET:FIRST-LAST", comma separated;
// numbers in decimal or 0x hex. Throws ConfigError naming `key`.
std::vector<McObject> parse_multicast(const std::string& key, const std::string& text);
std::string format_multicast(const std::vector<McObject>& objects);
std::string multicast_allowed();

class AddressMap {
 public:
  enum class Kind { kNone, kGpu, kMulticast };
  struct Target {
    Kind kind = Kind::kNone;
    int gpu = -1;             // kGpu: whose memory
    int object = -1;          // kMulticast: which object (its multicast group)
    std::uint64_t local = 0;  // offset in the GPU's memory (members' for an object)
  };

  // `objects` with last = -1 stand for every GPU; throws ConfigError if
  // windows and objects overlap or do not fit (the keys are named).
  AddressMap(int gpus, std::uint64_t window, std::uint64_t mc_base, std::vector<McObject> objects);

  // Where [addr, addr + len) lies; kNone if it is not wholly inside one GPU
  // window or one object (a transaction may not straddle two).
  Target decode(std::uint64_t addr, std::uint64_t len) const;

  int gpus() const { return gpus_; }
  std::uint64_t window() const { return window_; }
  std::uint64_t gpu_base(int g) const { return static_cast<std::uint64_t>(g) * window_; }
  std::uint64_t multicast_base() const { return mc_base_; }
  const std::vector<McObject>& objects() const { return objects_; }
  // The global address of object k's first byte.
  std::uint64_t object_base(int k) const {
    return mc_base_ + static_cast<std::uint64_t>(objects_[static_cast<std::size_t>(k)].offset);
  }
  // Members of object k, in member order (GPU numbers).
  std::vector<int> members(int k) const;

 private:
  int gpus_;
  std::uint64_t window_;
  std::uint64_t mc_base_;
  std::vector<McObject> objects_;  // in config order: object k is multicast group k
};

}  // namespace fabricsim
