#include "models/core/nccl_log.hpp"

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/params.hpp"

namespace fabricsim {

namespace {

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

[[noreturn]] void fail(const std::string& origin, int line, const std::string& why) {
  throw ConfigError(origin + ":" + std::to_string(line) + ": " + why);
}

bool to_u64(const std::string& s, std::uint64_t& v) {
  if (s.empty() || s[0] == '-') return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtoull(s.c_str(), &end, 10);
  return end == s.c_str() + s.size() && errno != ERANGE;
}

}  // namespace

NcclLog parse_nccl_log(const std::string& text, const std::string& origin) {
  NcclLog log;
  log.origin = origin;
  std::istringstream in(text);
  std::string line;
  int n = 0, gpus = 0, threads = 1;
  // Column positions in a data row, from the header line.
  int c_size = -1, c_count = -1, c_type = -1, c_redop = -1, c_time = -1, c_algbw = -1, c_busbw = -1;
  std::size_t columns = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto w = words(line);
    if (w.empty()) continue;
    if (w[0][0] == '#') {
      // Header: '#  size  count  type  redop  [root]  time  algbw  busbw  #wrong  ...'
      std::vector<std::string> h = w;
      if (h[0] == "#") h.erase(h.begin()); else h[0] = h[0].substr(1);
      if (!h.empty() && h[0] == "size" && h.size() >= 8) {
        c_size = c_count = c_type = c_redop = c_time = c_algbw = c_busbw = -1;
        for (int i = static_cast<int>(h.size()) - 1; i >= 0; --i) {  // first occurrence wins
          const std::string& k = h[static_cast<size_t>(i)];
          if (k == "size") c_size = i;
          if (k == "count") c_count = i;
          if (k == "type") c_type = i;
          if (k == "redop") c_redop = i;
          if (k == "time") c_time = i;
          if (k == "algbw") c_algbw = i;
          if (k == "busbw") c_busbw = i;
        }
        if (c_size < 0 || c_count < 0 || c_type < 0 || c_time < 0 || c_algbw < 0 || c_busbw < 0)
          fail(origin, n, "a table header without size, count, type, time, algbw and busbw");
        // Columns may come in any order: a row needs the furthest one.
        columns = static_cast<std::size_t>(
                      std::max({c_size, c_count, c_type, c_redop, c_time, c_algbw, c_busbw})) +
                  1;
      }
      for (std::size_t i = 0; i + 1 < h.size(); ++i) {
        if (h[i] == "nGpus") gpus = std::atoi(h[i + 1].c_str());
        if (h[i] == "nThread") threads = std::max(1, std::atoi(h[i + 1].c_str()));
        if (h[i] == "starting:") log.test = h[i + 1];
      }
      if (h.size() >= 2 && h[0] == "Rank" ) ++log.ranks;
      continue;
    }
    if (c_size < 0)
      fail(origin, n, "a result row before the table header ('#  size  count  type ...')");
    if (w.size() < columns)
      fail(origin, n, "a result row with " + std::to_string(w.size()) + " fields; the header needs " +
                          std::to_string(columns));
    NcclRow r;
    r.line = n;
    if (!to_u64(w[static_cast<size_t>(c_size)], r.size) || r.size == 0)
      fail(origin, n, "size '" + w[static_cast<size_t>(c_size)] + "' is not a positive number of bytes");
    if (!to_u64(w[static_cast<size_t>(c_count)], r.count))
      fail(origin, n, "count '" + w[static_cast<size_t>(c_count)] + "' is not a number of elements");
    r.type = w[static_cast<size_t>(c_type)];
    r.redop = c_redop >= 0 ? w[static_cast<size_t>(c_redop)] : "none";
    if (!parse_finite(w[static_cast<size_t>(c_time)], r.time_us) || r.time_us <= 0)
      fail(origin, n, "time '" + w[static_cast<size_t>(c_time)] + "' is not a positive number of us");
    if (!parse_finite(w[static_cast<size_t>(c_algbw)], r.algbw) || r.algbw < 0)
      fail(origin, n, "algbw '" + w[static_cast<size_t>(c_algbw)] + "' is not a bandwidth in GB/s");
    if (!parse_finite(w[static_cast<size_t>(c_busbw)], r.busbw) || r.busbw < 0)
      fail(origin, n, "busbw '" + w[static_cast<size_t>(c_busbw)] + "' is not a bandwidth in GB/s");
    log.rows.push_back(r);
  }
  if (log.rows.empty()) fail(origin, n, "no result rows (is this nccl-tests output?)");
  if (log.ranks == 0 && gpus > 0) log.ranks = gpus * threads;
  return log;
}

CollectiveOp nccl_test_op(const std::string& test, const std::string& origin) {
  static const std::pair<const char*, CollectiveOp> names[] = {
      {"all_reduce_perf", CollectiveOp::kAllReduce},   {"all_gather_perf", CollectiveOp::kAllGather},
      {"reduce_scatter_perf", CollectiveOp::kReduceScatter}, {"alltoall_perf", CollectiveOp::kAllToAll},
      {"broadcast_perf", CollectiveOp::kBroadcast},     {"reduce_perf", CollectiveOp::kReduce}};
  for (const auto& [n, op] : names)
    if (test == n) return op;
  throw ConfigError(origin + ": nccl-tests binary '" + test +
                    "' is not one fabricsim models (all_reduce_perf, all_gather_perf, "
                    "reduce_scatter_perf, alltoall_perf, broadcast_perf, reduce_perf)");
}

DType nccl_type(const std::string& type, const std::string& origin, int line) {
  if (type == "float") return DType::kFp32;
  if (type == "half") return DType::kFp16;
  if (type == "bfloat16") return DType::kBf16;
  if (type == "int32") return DType::kInt32;
  fail(origin, line, "data type '" + type + "' is not one fabricsim models (float, half, bfloat16, int32)");
}

RedOp nccl_redop(const std::string& redop, const std::string& origin, int line) {
  if (redop == "sum") return RedOp::kSum;
  if (redop == "min") return RedOp::kMin;
  if (redop == "max") return RedOp::kMax;
  if (redop == "none") return RedOp::kSum;  // a collective that does not reduce: unused
  fail(origin, line, "reduction '" + redop + "' is not one fabricsim models (sum, min, max, none)");
}

}  // namespace fabricsim
