#include "models/core/params.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace fabricsim {

std::string ParamInfo::type_name() const {
  switch (type) {
    case ParamType::kInt:
      return "int";
    case ParamType::kReal:
      return "real";
    case ParamType::kBool:
      return "bool";
    case ParamType::kChoice:
      return "choice";
    case ParamType::kIntList:
      return "int list";
    case ParamType::kCustom:
      return custom_type;
  }
  return "?";
}

std::string format_real(double v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}

std::string ParamInfo::allowed() const {
  switch (type) {
    case ParamType::kInt:
      return "integer in [" + std::to_string(imin) + ", " + std::to_string(imax) + "]";
    case ParamType::kReal:
      return std::string("number in ") + (min_exclusive ? "(" : "[") + format_real(min) + ", " +
             format_real(max) + "]";
    case ParamType::kBool:
      return "true or false";
    case ParamType::kChoice: {
      std::string s;
      for (size_t i = 0; i < choices.size(); ++i) s += (i ? " | " : "") + choices[i];
      return s;
    }
    case ParamType::kIntList:
      return "list of integers in [" + std::to_string(imin) + ", " + std::to_string(imax) + "]";
    case ParamType::kCustom:
      return custom_allowed;
  }
  return "?";
}

namespace {
[[noreturn]] void bad_value(const ParamInfo& p, const std::string& text, const std::string& why) {
  throw ConfigError("config key '" + p.key + "': value '" + text + "' " + why +
                    "; allowed: " + p.allowed());
}
}  // namespace

std::int64_t parse_int(const ParamInfo& p, const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (text.empty() || end == s || *end != '\0' || errno == ERANGE)
    bad_value(p, text, "is not an integer");
  if (v < p.imin || v > p.imax) bad_value(p, text, "is out of range");
  return v;
}

bool parse_finite(const std::string& text, double& v) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  v = std::strtod(s, &end);
  return !text.empty() && end != s && *end == '\0' && errno != ERANGE && std::isfinite(v);
}

double parse_real(const ParamInfo& p, const std::string& text) {
  double v = 0;
  if (!parse_finite(text, v)) bad_value(p, text, "is not a finite number");
  if (v > p.max || v < p.min || (p.min_exclusive && v == p.min))
    bad_value(p, text, "is out of range");
  return v;
}

std::vector<std::int64_t> parse_int_list(const ParamInfo& p, const std::string& text) {
  std::vector<std::int64_t> out;
  std::string item;
  auto flush = [&] {
    if (item.empty()) return;
    const char* s = item.c_str();
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE)
      bad_value(p, text, "has an item '" + item + "' that is not an integer");
    if (v < p.imin || v > p.imax) bad_value(p, text, "has an item " + item + " out of range");
    out.push_back(v);
    item.clear();
  };
  for (char ch : text) {
    if (ch == ',' || ch == ';' || ch == ' ' || ch == '\t' || ch == '[' || ch == ']')
      flush();
    else
      item += ch;
  }
  flush();
  return out;
}

std::string format_int_list(const std::vector<std::int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

bool parse_bool(const ParamInfo& p, const std::string& text) {
  if (text == "true" || text == "True" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "False" || text == "no" || text == "off") return false;
  bad_value(p, text, "is not a boolean");
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {
// Joins the scalars of a (possibly nested) sequence with ','.
void join_sequence(const YAML::Node& n, const std::string& key, const std::string& origin,
                   std::string& out) {
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node item = *it;  // by value: the iterator yields a proxy
    if (item.IsSequence()) {
      join_sequence(item, key, origin, out);
    } else if (item.IsScalar()) {
      if (!out.empty()) out += ",";
      out += item.Scalar();
    } else {
      throw ConfigError(origin + ": config key '" + key +
                        "' is a list whose items must be numbers (or lists of numbers)");
    }
  }
}

void flatten(const YAML::Node& n, const std::string& prefix, const std::string& origin,
             std::vector<YamlLeaf>& out) {
  for (auto it = n.begin(); it != n.end(); ++it) {
    // A key must be a plain name: YAML allows lists or maps as keys ('? ...').
    if (!it->first.IsScalar())
      throw ConfigError(origin + ": line " + std::to_string(it->first.Mark().line + 1) +
                        ": a key that is not a plain name" +
                        (prefix.empty() ? std::string() : " under '" + prefix + "'") +
                        " (keys are names like 'link' or 'lanes')");
    const std::string key = prefix.empty() ? it->first.Scalar() : prefix + "." + it->first.Scalar();
    const YAML::Node v = it->second;  // by value: the iterator yields a proxy
    if (v.IsMap()) {
      flatten(v, key, origin, out);
    } else if (v.IsScalar()) {
      out.push_back(YamlLeaf{key, v.Scalar(), false});
    } else if (v.IsNull()) {
      throw ConfigError(origin + ": config key '" + key + "' has no value");
    } else {
      std::string text;
      join_sequence(v, key, origin, text);
      out.push_back(YamlLeaf{key, text, true});
    }
  }
}
}  // namespace

std::vector<YamlLeaf> flatten_yaml(const YAML::Node& root, const std::string& origin) {
  std::vector<YamlLeaf> out;
  if (!root || root.IsNull()) return out;  // an empty file: all defaults
  if (!root.IsMap())
    throw ConfigError(origin + ": the top level must be a mapping of keys (e.g. 'link:')");
  flatten(root, "", origin, out);
  return out;
}

std::string trim_blanks(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

}  // namespace fabricsim
