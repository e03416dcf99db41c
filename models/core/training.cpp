#include "models/core/training.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/params.hpp"

namespace fabricsim {

namespace {

[[noreturn]] void fail(const std::string& msg) { throw ConfigError(msg); }

// "4x1+2x8" -> {(4, 1), (2, 8)}.
std::vector<std::pair<int, int>> parse_layout(const std::string& text, const std::string& what) {
  std::vector<std::pair<int, int>> dims;
  std::stringstream ss(text);
  std::string part;
  const std::string form = "SIZExSTRIDE[+SIZExSTRIDE...], e.g. 8x1 or 4x1+2x8";
  while (std::getline(ss, part, '+')) {
    part = trim_blanks(part);
    const auto x = part.find('x');
    int size = 0, stride = 0;
    try {
      std::size_t a = 0, b = 0;
      if (x == std::string::npos) throw std::invalid_argument("no x");
      size = std::stoi(part.substr(0, x), &a);
      stride = std::stoi(part.substr(x + 1), &b);
      if (a != x || b != part.size() - x - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      fail(what + ": group layout '" + text + "' is not " + form);
    }
    if (size < 1 || stride < 1)
      fail(what + ": group layout '" + text + "' needs sizes and strides of at least 1");
    dims.emplace_back(size, stride);
  }
  if (dims.empty()) fail(what + ": empty group layout; expected " + form);
  return dims;
}

template <class E>
E enum_named(const std::string& name, const std::vector<E>& values, const std::string& what) {
  std::string allowed;
  for (E v : values) {
    if (to_string(v) == name) return v;
    allowed += (allowed.empty() ? "" : ", ") + to_string(v);
  }
  fail(what + " '" + name + "' is not allowed; allowed: " + allowed);
}

}  // namespace

Partition make_partition(const std::string& name, const std::string& layout, int gpus,
                         const std::string& what) {
  const auto dims = parse_layout(layout, what);
  Partition p;
  p.name = name;
  p.layout = layout;
  p.group_of.assign(static_cast<size_t>(gpus), -1);
  p.rank_of.assign(static_cast<size_t>(gpus), -1);
  // The offsets of a group's members from its first, first dimension fastest.
  std::vector<int> offsets = {0};
  std::int64_t size_all = 1, reach = 0;  // checked before anything is built
  for (const auto& [size, stride] : dims) {
    size_all *= size;
    reach += static_cast<std::int64_t>(size - 1) * stride;
    if (size_all > gpus)
      fail(what + ": group '" + name + "' = " + layout + " has " + std::to_string(size_all) +
           " members, more than the fabric's " + std::to_string(gpus) + " GPUs");
    if (reach >= gpus)
      fail(what + ": group '" + name + "' = " + layout + " spans " + std::to_string(reach + 1) +
           " GPUs, more than the fabric's " + std::to_string(gpus));
    std::vector<int> next;
    for (int i = 0; i < size; ++i)
      for (int o : offsets) next.push_back(o + i * stride);
    offsets = std::move(next);
  }
  for (int g = 0; g < gpus; ++g) {
    if (p.group_of[static_cast<size_t>(g)] >= 0) continue;
    const int id = static_cast<int>(p.groups.size());
    std::vector<int> members;
    for (int o : offsets) {
      const int m = g + o;
      if (m >= gpus || p.group_of[static_cast<size_t>(m)] >= 0)
        fail(what + ": group '" + name + "' = " + layout + " does not tile the " +
             std::to_string(gpus) + " GPUs: the group starting at GPU " + std::to_string(g) +
             " would take GPU " + std::to_string(m) +
             (m >= gpus ? ", which does not exist" : ", already in another group"));
      p.group_of[static_cast<size_t>(m)] = id;
      p.rank_of[static_cast<size_t>(m)] = static_cast<int>(members.size());
      members.push_back(m);
    }
    p.groups.push_back(std::move(members));
  }
  return p;
}

Partition whole_fabric(int gpus) {
  return make_partition("all", std::to_string(gpus) + "x1", gpus, "all GPUs");
}

namespace {

// The file, parsed; ConfigError if it cannot be read or is not JSON.
nlohmann::json read_json(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail("collective.workload: '" + path + "' is a directory, not a JSON file");
  std::ifstream in(path);
  if (!in) fail("collective.workload: cannot open '" + path + "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    fail("collective.workload '" + path + "' is not valid JSON: " + e.what());
  }
  return j;
}

// "groups": {"tp": "8x1", ...}, each layout checked.
void read_groups(const nlohmann::json& value, const std::string& where, TrainingWorkload& w) {
  for (const auto& [g, layout] : value.items()) {
    if (!layout.is_string())
      fail(where + ": groups." + g + " must be a layout string such as \"8x1\"");
    if (g == "all") fail(where + ": group name 'all' is reserved (every GPU)");
    parse_layout(layout.get<std::string>(), where + " groups." + g);
    w.groups.emplace_back(g, layout.get<std::string>());
  }
}

// calls[i]: its fields; op, bytes and group required.
TrainingCall read_call(const nlohmann::json& c, std::size_t i, const std::string& where) {
  const std::string at = where + " calls[" + std::to_string(i) + "]";
  if (!c.is_object()) fail(at + ": expected an object");
  TrainingCall call;
  bool has_bytes = false, has_group = false, has_op = false;
  for (const auto& [f, v] : c.items()) {
    const std::string fw = at + "." + f;
    if (f == "name" && v.is_string()) {
      call.name = v.get<std::string>();
    } else if (f == "op" && v.is_string()) {
      call.op = enum_named(v.get<std::string>(),
                           std::vector<CollectiveOp>{CollectiveOp::kAllReduce,
                                                     CollectiveOp::kReduceScatter,
                                                     CollectiveOp::kAllGather,
                                                     CollectiveOp::kAllToAll},
                           fw);
      has_op = true;
    } else if (f == "algorithm" && v.is_string()) {
      call.algorithm = enum_named(v.get<std::string>(),
                                  std::vector<CollectiveAlgo>{CollectiveAlgo::kRing,
                                                              CollectiveAlgo::kDirect,
                                                              CollectiveAlgo::kHierarchical},
                                  fw);
    } else if (f == "bytes" && v.is_number_unsigned() && v.get<std::uint64_t>() > 0) {
      call.bytes = v.get<std::uint64_t>();
      has_bytes = true;
    } else if (f == "group" && v.is_string()) {
      call.group = v.get<std::string>();
      has_group = true;
    } else if (f == "compute_ns" && v.is_number() && v.get<double>() >= 0) {
      call.compute_ns = v.get<double>();
    } else {
      fail(fw + " = " + v.dump() +
           ": unknown field or wrong type; a call has name (string), op (string), "
           "algorithm (string), bytes (integer > 0, per GPU), group (string), "
           "compute_ns (number >= 0)");
    }
  }
  if (!has_op || !has_bytes || !has_group) fail(at + ": op, bytes and group are required");
  if (call.name.empty()) call.name = "call" + std::to_string(i);
  return call;
}

// The top-level fields: name, description, groups, calls.
void read_fields(const nlohmann::json& j, const std::string& where, TrainingWorkload& w) {
  for (const auto& [key, value] : j.items()) {
    if (key == "name" && value.is_string()) {
      w.name = value.get<std::string>();
    } else if (key == "description" && value.is_string()) {
    } else if (key == "groups" && value.is_object()) {
      read_groups(value, where, w);
    } else if (key == "calls" && value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) w.calls.push_back(read_call(value[i], i, where));
    } else {
      fail(where + ": unknown field '" + key + "' or wrong type; a workload has name (string), "
           "description (string), groups (object of layouts), calls (array)");
    }
  }
}

// The file's name without its directory and .json.
std::string name_from_path(const std::string& path) {
  const auto slash = path.rfind('/');
  std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
  return name;
}

// collective.groups: "name=layout,name=layout" replace the file's layouts.
void apply_overrides(const std::string& overrides, const std::string& where, TrainingWorkload& w) {
  std::stringstream ss(overrides);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim_blanks(item);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string name = trim_blanks(item.substr(0, eq));
    bool found = false;
    for (auto& [g, layout] : w.groups)
      if (g == name && eq != std::string::npos) {
        layout = trim_blanks(item.substr(eq + 1));
        parse_layout(layout, "collective.groups " + name);
        found = true;
      }
    if (!found) {
      std::string names;
      for (const auto& [g, layout] : w.groups) names += (names.empty() ? "" : ", ") + g;
      fail("collective.groups: '" + item + "' is not NAME=LAYOUT for a group of " + where +
           " (its groups: " + names + ")");
    }
  }
}

// Every call names a known group and an algorithm modelled for its op.
void check_calls(const std::string& where, const TrainingWorkload& w) {
  for (std::size_t i = 0; i < w.calls.size(); ++i) {
    const TrainingCall& c = w.calls[i];
    const std::string at = where + " calls[" + std::to_string(i) + "] (" + c.name + ")";
    bool known = c.group == "all";
    for (const auto& [g, layout] : w.groups) known = known || g == c.group;
    if (!known) fail(at + ": group '" + c.group + "' is not defined in \"groups\" (nor 'all')");
    const bool ok = (c.op == CollectiveOp::kAllToAll) == (c.algorithm == CollectiveAlgo::kDirect) &&
                    (c.algorithm != CollectiveAlgo::kHierarchical || c.op == CollectiveOp::kAllReduce);
    if (!ok)
      fail(at + ": algorithm " + to_string(c.algorithm) + " with op " + to_string(c.op) +
           " is not modelled in a workload; use ring (all_reduce, reduce_scatter, all_gather), "
           "hierarchical (all_reduce, group all) or direct (all_to_all)");
    if (c.algorithm == CollectiveAlgo::kHierarchical && c.group != "all")
      fail(at + ": hierarchical runs on every GPU (its groups are the domains and the ranks); "
           "use group 'all'");
  }
}

}  // namespace

TrainingWorkload load_training(const std::string& path, const std::string& overrides) {
  const nlohmann::json j = read_json(path);
  const std::string where = "workload '" + path + "'";
  if (!j.is_object()) fail(where + ": expected a JSON object with \"calls\"");
  TrainingWorkload w;
  w.path = path;
  read_fields(j, where, w);
  if (w.calls.empty()) fail(where + ": no calls");
  if (w.name.empty()) w.name = name_from_path(path);
  apply_overrides(overrides, where, w);
  check_calls(where, w);
  return w;
}

std::vector<Partition> training_partitions(const TrainingWorkload& w, int gpus) {
  std::vector<Partition> ps = {whole_fabric(gpus)};
  for (const auto& [g, layout] : w.groups)
    ps.push_back(make_partition(g, layout, gpus, "workload '" + w.path + "' group"));
  return ps;
}

}  // namespace fabricsim
