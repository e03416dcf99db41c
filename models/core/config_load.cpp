// Loading a Config: defaults, then a YAML file (after the 'base:' files it
// builds on), then key=value overrides, then validate(); and the reverse,
// every value as text that loads back.
#include "models/core/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace fabricsim {

namespace {
// Why a config file cannot be opened, and the file the user may have meant:
// the YAML file of its folder (configs/ when that folder does not exist)
// whose name is nearest, or the list of them.
std::string unreadable_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (fs::exists(p, ec)) return "cannot read config file '" + path + "': permission denied";
  fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) dir = "configs";
  std::vector<std::string> names;
  if (fs::is_directory(dir, ec))
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".yaml") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string msg = "cannot read config file '" + path + "': no such file";
  const std::string name = p.filename().string();
  std::string best;
  std::size_t best_d = name.size() / 3 + 2;  // a few typos, not a different name
  for (const auto& n : names) {
    const std::size_t d = edit_distance(name, n);
    if (d < best_d) {
      best_d = d;
      best = n;
    }
  }
  const std::string where = dir == fs::path(".") ? std::string() : dir.string() + "/";
  if (!best.empty()) return msg + " (did you mean '" + where + best + "'?)";
  if (names.empty()) return msg;
  msg += "; the YAML files in " + (where.empty() ? std::string("this folder") : where) + ":";
  for (std::size_t i = 0; i < names.size() && i < 16; ++i) msg += " " + names[i];
  return msg + (names.size() > 16 ? " ..." : "");
}

// Applies a YAML file; a top-level `base: other.yaml` (relative to this file)
// is applied first, so a workload can build on a system preset.
void apply_file(const Schema<Config>& schema, Config& c, const std::string& path, int depth) {
  if (depth > 8) throw ConfigError(path + ": 'base' files nest more than 8 deep (a cycle?)");
  // A directory opens like a file on Linux and fails on the first read (the
  // stream then throws std::ios_base::failure): refuse it by name first.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError("cannot read config file '" + path + "': it is a directory");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError(unreadable_file(path));
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ": YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                      ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {  // the stream's own read errors
    throw ConfigError("cannot read config file '" + path + "': " + e.what());
  }
  const auto dir =
      path.find('/') == std::string::npos ? std::string() : path.substr(0, path.rfind('/') + 1);
  if (root && root.IsMap() && root["base"]) {
    const YAML::Node base = root["base"];
    if (!base.IsScalar() || base.Scalar().empty())
      throw ConfigError(
          path + ": 'base' must name one YAML file (got " +
          (base.IsScalar() ? std::string("an empty value") : std::string("a list or map")) + ")");
    apply_file(schema, c, base.Scalar().front() == '/' ? base.Scalar() : dir + base.Scalar(),
               depth + 1);
    root.remove("base");
  }
  // A workload file named in a config file is found next to it.
  const std::string workload = c.collective.workload;
  schema.apply_yaml(c, root, path);
  std::string& w = c.collective.workload;
  if (w != workload && !w.empty() && w.front() != '/') w = dir + w;
}
}  // namespace

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  const Schema<Config> schema = config_schema();
  Config c;
  if (!path.empty()) apply_file(schema, c, path, 0);
  for (const auto& o : overrides) {
    try {
      schema.set_assignment(c, o);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string("--set ") + o + ": " + e.what());
    }
  }
  validate(c);
  return c;
}

std::vector<std::pair<std::string, std::string>> config_values(const Config& c) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto schema = config_schema();
  for (const auto& e : schema.entries()) out.emplace_back(e.info.key, e.get(c));
  return out;
}

}  // namespace fabricsim
