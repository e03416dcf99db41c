#include "models/core/nccl_log.hpp"

#include <cerrno>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
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

// Bound of a GPU or rank count (keeps products of counts inside an int).
constexpr int kMaxRanks = 1000000;

// A GPU count: a positive number that fits an int.
bool to_count(const std::string& s, int& v) {
  std::uint64_t u = 0;
  if (!to_u64(s, u) || u == 0 || u > static_cast<std::uint64_t>(kMaxRanks)) return false;
  v = static_cast<int>(u);
  return true;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string without_trailing(std::string s, const char* chars) {
  while (!s.empty() && std::string(chars).find(s.back()) != std::string::npos) s.pop_back();
  return s;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Lower case without '_' or '-': the key NCCL's names are matched on.
std::string name_key(const std::string& s) {
  std::string k;
  for (char ch : s)
    if (ch != '_' && ch != '-') k += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return k;
}

std::string spelled(const std::vector<std::string>& names, const std::string& name,
                    const std::string& origin, int line, const char* what) {
  for (const auto& n : names)
    if (name_key(n) == name_key(name)) return n;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  fail(origin, line, std::string(what) + " '" + name + "' is not one NCCL has (" + list + ")");
}

// Where a column is in a row: from the table header, or nccl-tests' own
// order when a section's rows come without one.
struct Columns {
  int size = -1, count = -1, type = -1, redop = -1, time = -1, algbw = -1, busbw = -1;
  int in_place_time = -1;  // the second 'time' (optional: a row may end before it)
  std::size_t needed = 0;  // fields a row must have
};

// nccl-tests since 2.13: size count type redop root time algbw busbw #wrong
// (then in-place: time algbw busbw #wrong); before: no root.
std::optional<Columns> default_columns(std::size_t fields) {
  if (fields != 13 && fields != 12) return std::nullopt;
  const int root = fields == 13 ? 1 : 0;
  Columns c;
  c.size = 0;
  c.count = 1;
  c.type = 2;
  c.redop = 3;
  c.time = 4 + root;
  c.algbw = 5 + root;
  c.busbw = 6 + root;
  c.in_place_time = 8 + root;
  c.needed = fields;
  return c;
}

// A setting read from the log, and the line that said it.
struct Said {
  std::string value;
  int line = 0;
};

class Parser {
 public:
  explicit Parser(std::string origin) { log_.origin = std::move(origin); }

  void line(int n, const std::string& text) {
    const auto w = words(text);
    if (w.empty()) return;
    if (starts_with(w[0], "###")) return marker(n, trim(text.substr(text.find("###") + 3)));
    if (w[0][0] == '#') return comment(n, w, trim(trim(text).substr(1)));
    row(n, w);
  }

  NcclLog finish(int last) {
    if (log_.rows.empty()) fail(log_.origin, last, "no result rows (is this nccl-tests output?)");
    resolve_ranks();
    for (auto& r : log_.rows) resolve_choice(r);
    return std::move(log_);
  }

 private:
  // '### KEY=VALUE ... [note]': a section; without KEY=VALUE a heading.
  void marker(int n, const std::string& text) {
    const auto w = words(text);
    NcclSection s;
    s.title = text;
    s.line = n;
    std::size_t i = 0;
    for (; i < w.size() && w[i].find('=') != std::string::npos; ++i) {
      const std::string key = w[i].substr(0, w[i].find('='));
      const std::string value = without_trailing(w[i].substr(w[i].find('=') + 1), ":,;");
      if (key == "GPUS") {
        if (!to_count(value, s.ranks)) fail(log_.origin, n, "GPUS=" + value + " is not a GPU count");
      } else if (key == "ALGO") {
        s.algorithm = nccl_algorithm_name(value, log_.origin, n);
      } else if (key == "PROTO") {
        s.protocol = nccl_protocol_name(value, log_.origin, n);
      } else if (key == "size") {
        std::uint64_t b = 0;
        if (!to_u64(value, b) || b == 0)
          fail(log_.origin, n, "size=" + value + " is not a positive number of bytes");
        sizes_.resize(log_.sections.size() + 1);
        sizes_.back() = Said{std::to_string(b), n};
      } else {
        fail(log_.origin, n, "section key '" + key + "' is not one of GPUS, ALGO, PROTO, size");
      }
    }
    if (i == 0) return;  // a heading
    for (; i < w.size(); ++i) s.note += (s.note.empty() ? "" : " ") + w[i];
    open(s);
    marked_ = true;
  }

  void open(NcclSection s) {
    s.first = log_.rows.size();
    log_.sections.push_back(std::move(s));
    sizes_.resize(log_.sections.size());
    table_ranks_.push_back(table_ranks());
    current_ = true;
  }

  // nccl-tests' banner numbers (nGpus, nThread, graph:): 0 .. kMaxRanks.
  int banner_count(int n, const std::string& key, const std::string& value) const {
    std::uint64_t u = 0;
    if (!to_u64(value, u) || u > static_cast<std::uint64_t>(kMaxRanks))
      fail(log_.origin, n, "banner '" + key + " " + value + "': expected a whole number from 0 to " +
                               std::to_string(kMaxRanks));
    return static_cast<int>(u);
  }

  int table_ranks() const { return rank_lines_ > 0 ? rank_lines_ : gpus_ * threads_; }

  void comment(int n, const std::vector<std::string>& w, const std::string& text) {
    if (starts_with(text, "GPUS (n):")) return header_gpus(n, text.substr(9));
    registration_flag(n, w, text);
    if (starts_with(text, "ALGO/ENV:")) return algo_env(n, trim(text.substr(9)));
    if (starts_with(text, "NCCL tuner choice per size")) return tuner(n, text);
    if (starts_with(text, "COLLECTIVE:") && words(text).size() > 1) {  // '# COLLECTIVE: all_reduce_perf ...'
      if (log_.test.empty()) log_.test = words(text)[1];
      return;
    }
    // Header: '#  size  count  type  redop  [root]  time  algbw  busbw  #wrong  ...'
    std::vector<std::string> h = w;
    if (h[0] == "#") h.erase(h.begin()); else h[0] = h[0].substr(1);
    if (!h.empty() && h[0] == "size" && h.size() >= 8) table_header(n, h);
    for (std::size_t i = 0; i + 1 < h.size(); ++i) {
      if (h[i] == "nGpus") {
        gpus_ = banner_count(n, "nGpus", h[i + 1]);
        rank_lines_ = 0;  // a new banner: its own Rank lines follow
      }
      if (h[i] == "nThread") threads_ = std::max(1, banner_count(n, "nThread", h[i + 1]));
      if (static_cast<std::int64_t>(gpus_) * threads_ > kMaxRanks)
        fail(log_.origin, n, "nGpus " + std::to_string(gpus_) + " x nThread " + std::to_string(threads_) +
                                 " is more than " + std::to_string(kMaxRanks) + " ranks");
      if (h[i] == "graph:" && !h[i + 1].empty() && std::isdigit(static_cast<unsigned char>(h[i + 1][0])))
        log_.graph = banner_count(n, "graph:", h[i + 1]);
      if (h[i] == "starting:") log_.test = h[i + 1];  // nccl-tests' own banner wins
    }
    if (h.size() >= 2 && h[0] == "Rank") ++rank_lines_;
  }

  void table_header(int n, const std::vector<std::string>& h) {
    Columns c;
    for (int i = static_cast<int>(h.size()) - 1; i >= 0; --i) {  // first occurrence wins
      const std::string& k = h[static_cast<size_t>(i)];
      if (k == "size") c.size = i;
      if (k == "count") c.count = i;
      if (k == "type") c.type = i;
      if (k == "redop") c.redop = i;
      if (k == "time") {
        if (c.time >= 0) c.in_place_time = c.time;  // the later 'time' is the in-place one
        c.time = i;
      }
      if (k == "algbw") c.algbw = i;
      if (k == "busbw") c.busbw = i;
    }
    if (c.size < 0 || c.count < 0 || c.type < 0 || c.time < 0 || c.algbw < 0 || c.busbw < 0)
      fail(log_.origin, n, "a table header without size, count, type, time, algbw and busbw");
    // Columns may come in any order: a row needs the furthest one.
    c.needed =
        static_cast<std::size_t>(std::max({c.size, c.count, c.type, c.redop, c.time, c.algbw, c.busbw})) + 1;
    columns_ = c;
    // A table after rows is another sweep: its rows are a section of their own.
    if (current_ && log_.sections.back().count > 0) current_ = false;
  }

  // '# GPUS (n): 4   single node ...' or '# GPUS (n): 2, 4, 6 (three sections)'.
  void header_gpus(int n, const std::string& rest) {
    header_gpus_.clear();
    for (const auto& x : words(rest)) {
      int g = 0;
      if (!to_count(without_trailing(x, ",;"), g)) break;
      header_gpus_.push_back(g);
    }
    if (header_gpus_.empty())
      fail(log_.origin, n, "'# GPUS (n):' without a GPU count (e.g. '# GPUS (n): 4' or '2, 4, 6')");
    header_gpus_line_ = n;
  }

  // nccl-tests' buffer registration flag, '-R N' or '--local_register N', on a
  // comment line that gives its command ('./all_reduce_perf ... -R 2') or its
  // flags ('nccl-tests flags -R 2'); two lines that disagree are refused.
  void registration_flag(int n, const std::vector<std::string>& w, const std::string& text) {
    const bool said = text.find("command:") != std::string::npos || text.find("nccl-tests flags") != std::string::npos;
    const bool command =
        said ||
        std::any_of(w.begin(), w.end(), [](const std::string& x) {
          return x.size() > 5 && x.compare(x.size() - 5, 5, "_perf") == 0;
        });
    if (!command) return;
    for (std::size_t i = 0; i < w.size(); ++i) {
      std::string flag = w[i], v;
      while (!flag.empty() && flag.front() == '(') flag.erase(0, 1);  // '(-R 2)'
      if (flag == "-R" || flag == "--local_register") {
        if (i + 1 == w.size()) {
          if (!said) continue;  // prose mentioning the flag, not a command
          fail(log_.origin, n, "nccl-tests' " + flag + " flag without its value (0, 1 or 2)");
        }
        v = w[i + 1];
      } else if (starts_with(flag, "--local_register=")) {
        v = flag.substr(17);
        flag = "--local_register";
      } else if (starts_with(flag, "-R") && flag.size() > 2 && std::isdigit(static_cast<unsigned char>(flag[2]))) {
        v = flag.substr(2);  // getopt's attached form, -R2
        flag = "-R";
      } else {
        continue;
      }
      while (!v.empty() && (v.back() == ',' || v.back() == ';' || v.back() == ')')) v.pop_back();
      if (v != "0" && v != "1" && v != "2") {
        if (!said) continue;  // prose on a line naming a test: not a flag
        fail(log_.origin, n, "nccl-tests' " + flag + " flag with '" + v + "': it takes 0, 1 or 2");
      }
      const int r = v[0] - '0';
      if (log_.registration >= 0 && log_.registration != r)
        fail(log_.origin, n, "-R " + v + " after -R " + std::to_string(log_.registration) + " on line " +
                                 std::to_string(registration_line_) + ": one registration per log");
      log_.registration = r;
      registration_line_ = n;
    }
  }

  // '# ALGO/ENV: NCCL_ALGO=Ring; NCCL_DEBUG=INFO': a single name forces it;
  // a list ('Ring,NVLS') or an exclusion ('^Tree') leaves the tuner a choice.
  void algo_env(int n, const std::string& rest) {
    if (starts_with(rest, "default") || starts_with(rest, "sections")) return;
    for (const auto& x : words(rest)) {
      const std::string v = without_trailing(x, ";,.");
      const bool algo = starts_with(v, "NCCL_ALGO="), proto = starts_with(v, "NCCL_PROTO=");
      if (!algo && !proto) continue;
      const std::string value = v.substr(v.find('=') + 1);
      if (value.find(',') != std::string::npos || starts_with(value, "^")) continue;
      if (algo) forced_algo_ = Said{nccl_algorithm_name(value, log_.origin, n), n};
      if (proto) forced_proto_ = Said{nccl_protocol_name(value, log_.origin, n), n};
    }
    log_.forced_algorithm = forced_algo_.value;
    log_.forced_protocol = forced_proto_.value;
  }

  // '# NCCL tuner choice per size (how it was read): 268435456:RING/SIMPLE, ...'.
  void tuner(int n, const std::string& text) {
    auto colon = text.find("):");
    colon = colon == std::string::npos ? text.find(':') : colon + 1;
    if (colon == std::string::npos) fail(log_.origin, n, "a tuner choice line without ':' before its list");
    std::istringstream items(text.substr(colon + 1));
    for (std::string item; std::getline(items, item, ',');) {
      item = trim(item);
      if (item.empty()) continue;
      const auto c = item.find(':'), s = item.find('/');
      std::uint64_t size = 0;
      if (c == std::string::npos || s == std::string::npos || s < c || !to_u64(item.substr(0, c), size) ||
          size == 0)
        fail(log_.origin, n, "tuner choice '" + item + "' is not SIZE:ALGORITHM/PROTOCOL (e.g. 268435456:RING/SIMPLE)");
      NcclChoice k{nccl_algorithm_name(item.substr(c + 1, s - c - 1), log_.origin, n),
                   nccl_protocol_name(item.substr(s + 1), log_.origin, n), n};
      const auto [it, fresh] = log_.tuner.emplace(size, k);
      if (!fresh && (it->second.algorithm != k.algorithm || it->second.protocol != k.protocol))
        fail(log_.origin, n, "tuner choice for size " + std::to_string(size) + " given twice, differently");
    }
  }

  const Columns& row_columns(int n, const std::vector<std::string>& w) {
    if (columns_) return *columns_;
    if (!marked_) fail(log_.origin, n, "a result row before the table header ('#  size  count  type ...')");
    headerless_ = default_columns(w.size());
    if (!headerless_)
      fail(log_.origin, n, "a result row with " + std::to_string(w.size()) +
                               " fields; rows without a table header need nccl-tests' 13 (size count "
                               "type redop root time algbw busbw #wrong, then in-place) or the 12 of "
                               "versions without root");
    return *headerless_;
  }

  void row(int n, const std::vector<std::string>& w) {
    const Columns& c = row_columns(n, w);
    if (w.size() < c.needed)
      fail(log_.origin, n, "a result row with " + std::to_string(w.size()) + " fields; the header needs " +
                               std::to_string(c.needed));
    auto at = [&w](int i) { return w[static_cast<size_t>(i)]; };
    NcclRow r;
    r.line = n;
    if (!to_u64(at(c.size), r.size) || r.size == 0)
      fail(log_.origin, n, "size '" + at(c.size) + "' is not a positive number of bytes");
    if (!to_u64(at(c.count), r.count))
      fail(log_.origin, n, "count '" + at(c.count) + "' is not a number of elements");
    r.type = at(c.type);
    r.redop = c.redop >= 0 ? at(c.redop) : "none";
    if (!parse_finite(at(c.time), r.time_us) || r.time_us <= 0)
      fail(log_.origin, n, "time '" + at(c.time) + "' is not a positive number of us");
    if (!parse_finite(at(c.algbw), r.algbw) || r.algbw < 0)
      fail(log_.origin, n, "algbw '" + at(c.algbw) + "' is not a bandwidth in GB/s");
    if (!parse_finite(at(c.busbw), r.busbw) || r.busbw < 0)
      fail(log_.origin, n, "busbw '" + at(c.busbw) + "' is not a bandwidth in GB/s");
    if (c.in_place_time >= 0 && static_cast<std::size_t>(c.in_place_time) < w.size() &&
        at(c.in_place_time) != "N/A" &&
        (!parse_finite(at(c.in_place_time), r.in_place_time_us) || r.in_place_time_us <= 0))
      fail(log_.origin, n,
           "in-place time '" + at(c.in_place_time) + "' is not a positive number of us (or N/A)");
    // A size not above the last one: another sweep, a section of its own.
    if (!current_ || (log_.sections.back().count > 0 && r.size <= log_.rows.back().size)) {
      NcclSection s;
      s.line = n;
      open(s);
    }
    const std::size_t k = log_.sections.size() - 1;
    if (k < sizes_.size() && !sizes_[k].value.empty() && sizes_[k].value != std::to_string(r.size))
      fail(log_.origin, n, "size " + std::to_string(r.size) + " in a section of size=" + sizes_[k].value +
                               " (line " + std::to_string(sizes_[k].line) + ")");
    r.section = k;
    ++log_.sections[k].count;
    log_.rows.push_back(r);
  }

  // Each section's GPU count: its GPUS=, the header's '# GPUS (n)' list (one
  // count for all, or one per section in order) and nccl-tests' own banner
  // must agree where they say.
  void resolve_ranks() {
    auto& secs = log_.sections;
    const std::size_t listed = header_gpus_.size();
    if (listed > 1 && listed != secs.size())
      fail(log_.origin, header_gpus_line_,
           "'# GPUS (n)' lists " + std::to_string(listed) + " GPU counts for " + std::to_string(secs.size()) +
               " sections (one count for all, or one per section in order)");
    int common = -1;
    for (std::size_t k = 0; k < secs.size(); ++k) {
      auto& s = secs[k];
      const int header = listed == 0 ? 0 : header_gpus_[listed == 1 ? 0 : k];
      const int table = table_ranks_[k];
      if (s.ranks > 0 && header > 0 && s.ranks != header)
        fail(log_.origin, s.line, "GPUS=" + std::to_string(s.ranks) + ", but '# GPUS (n)' (line " +
                                      std::to_string(header_gpus_line_) + ") gives " + std::to_string(header));
      if (s.ranks == 0) s.ranks = header;
      if (s.ranks > 0 && table > 0 && s.ranks != table)
        fail(log_.origin, s.line, "the section ran on " + std::to_string(s.ranks) +
                                      " GPUs by the header, but nccl-tests' banner says " + std::to_string(table));
      if (s.ranks == 0) s.ranks = table;
      common = common == -1 ? s.ranks : (common == s.ranks ? common : 0);
      for (std::size_t i = s.first; i < s.first + s.count; ++i) log_.rows[i].ranks = s.ranks;
    }
    log_.ranks = std::max(common, 0);
  }

  // One of algorithm or protocol: the section's, else the forced one, else
  // the tuner's; any two that disagree are an error.
  void choose(const NcclRow& r, const std::string& section, const Said& forced, const char* forced_name,
              const std::string* tuned, int tuner_line, std::string& value, std::string& from) const {
    const NcclSection& s = log_.sections[r.section];
    if (!section.empty()) {
      value = section;
      from = "section";
    } else if (!forced.value.empty()) {
      value = forced.value;
      from = forced_name;
    }
    if (!tuned) return;
    if (!value.empty() && value != *tuned)
      fail(log_.origin, r.line,
           "the tuner chose " + *tuned + " for size " + std::to_string(r.size) + " (line " +
               std::to_string(tuner_line) + "), but " +
               (from == "section" ? "the section (line " + std::to_string(s.line) + ")"
                                  : std::string(forced_name) + " (line " + std::to_string(forced.line) + ")") +
               " says " + value);
    if (value.empty()) {
      value = *tuned;
      from = "tuner";
    }
  }

  void resolve_choice(NcclRow& r) const {
    const NcclSection& s = log_.sections[r.section];
    const auto t = log_.tuner.find(r.size);
    const bool tuned = t != log_.tuner.end();
    choose(r, s.algorithm, forced_algo_, "NCCL_ALGO", tuned ? &t->second.algorithm : nullptr,
           tuned ? t->second.line : 0, r.algorithm, r.algorithm_from);
    choose(r, s.protocol, forced_proto_, "NCCL_PROTO", tuned ? &t->second.protocol : nullptr,
           tuned ? t->second.line : 0, r.protocol, r.protocol_from);
  }

  NcclLog log_;
  std::optional<Columns> columns_, headerless_;
  bool marked_ = false;   // a '###' section has been seen: rows may lack a header
  bool current_ = false;  // the last section still takes rows
  std::vector<Said> sizes_;      // per section: its size=, if any
  std::vector<int> table_ranks_;  // per section: nccl-tests' banner when it began
  std::vector<int> header_gpus_;
  int header_gpus_line_ = 0;
  int registration_line_ = 0;
  int gpus_ = 0, threads_ = 1, rank_lines_ = 0;
  Said forced_algo_, forced_proto_;
};

}  // namespace

NcclLog parse_nccl_log(const std::string& text, const std::string& origin) {
  Parser p(origin);
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    p.line(n, line);
  }
  return p.finish(n);
}

std::string nccl_algorithm_name(const std::string& name, const std::string& origin, int line) {
  static const std::vector<std::string> names = {"Ring",          "Tree",         "NVLS", "NVLSTree",
                                                 "CollNetDirect", "CollNetChain", "PAT"};
  return spelled(names, name, origin, line, "algorithm");
}

std::string nccl_protocol_name(const std::string& name, const std::string& origin, int line) {
  static const std::vector<std::string> names = {"Simple", "LL", "LL128"};
  return spelled(names, name, origin, line, "protocol");
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
