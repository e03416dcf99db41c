// Typed configuration parameters: every key has a type, unit, default,
// allowed range and a one-line description, and is bound to a field of a
// config struct. Reading YAML or `key=value` overrides sets those fields;
// an unknown key, a wrong type or a value out of range is a ConfigError that
// names the key, the value and what is allowed.
//
// A Schema<C> is built by a function each time it is needed: there is no
// global registry, so two configurations (two fabrics) coexist freely.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/core/errors.hpp"

namespace YAML {
class Node;
}

namespace fabricsim {

enum class ParamType { kInt, kReal, kBool, kChoice, kIntList, kCustom };

struct ParamInfo {
  std::string key;
  ParamType type = ParamType::kInt;
  std::string unit;         // "" for dimensionless
  std::string description;  // one line
  double min = 0, max = 0;  // inclusive range for kReal (and kInt, as doubles)
  std::int64_t imin = 0, imax = 0;  // exact inclusive range for kInt and each kIntList item
  bool min_exclusive = false;
  std::vector<std::string> choices;  // kChoice
  std::string custom_type, custom_allowed;  // kCustom: its own grammar

  std::string type_name() const;
  std::string allowed() const;  // human-readable range or choice list
};

// Parsing helpers shared by every schema; each throws ConfigError naming the key.
std::int64_t parse_int(const ParamInfo& p, const std::string& text);
double parse_real(const ParamInfo& p, const std::string& text);
bool parse_bool(const ParamInfo& p, const std::string& text);
std::string format_real(double v);
// The whole of `text` as a finite number (no key to name: the callers with
// their own grammar say what was wrong).
bool parse_finite(const std::string& text, double& v);
// `s` without leading and trailing blanks (items of the custom grammars).
std::string trim_blanks(const std::string& s);
// A list of integers: items separated by ',' ';' or blanks (YAML sequences,
// also nested ones, arrive here joined by ',').
std::vector<std::int64_t> parse_int_list(const ParamInfo& p, const std::string& text);
std::string format_int_list(const std::vector<std::int64_t>& v);

// One leaf of a YAML configuration, with its dotted key.
struct YamlLeaf {
  std::string key;
  std::string text;
  bool is_list = false;
};

// The name of choice `v` in a (name, value) table, "?" if it has none.
template <class E>
std::string name_of(const std::vector<std::pair<std::string, E>>& table, E v) {
  for (const auto& n : table)
    if (n.second == v) return n.first;
  return "?";
}

// Type-erased schema core: keys, how to parse into a config, how to render a value.
template <class Config>
class Schema {
 public:
  struct Entry {
    ParamInfo info;
    std::function<void(Config&, const std::string&)> set;  // parse, range-check, store
    std::function<std::string(const Config&)> get;         // current value as text
  };

  template <class Sec>
  void add_int(std::string key, Sec Config::*sec, std::int64_t Sec::*field, std::string unit,
               std::int64_t lo, std::int64_t hi, std::string desc) {
    ParamInfo p = make(std::move(key), ParamType::kInt, std::move(unit), std::move(desc));
    p.min = static_cast<double>(lo);
    p.max = static_cast<double>(hi);
    p.imin = lo;
    p.imax = hi;
    entries_.push_back({p,
                        [p, sec, field](Config& c, const std::string& t) {
                          (c.*sec).*field = parse_int(p, t);
                        },
                        [sec, field](const Config& c) { return std::to_string((c.*sec).*field); }});
  }

  template <class Sec>
  void add_real(std::string key, Sec Config::*sec, double Sec::*field, std::string unit,
                double lo, double hi, std::string desc, bool lo_exclusive = false) {
    ParamInfo p = make(std::move(key), ParamType::kReal, std::move(unit), std::move(desc));
    p.min = lo;
    p.max = hi;
    p.min_exclusive = lo_exclusive;
    entries_.push_back({p,
                        [p, sec, field](Config& c, const std::string& t) {
                          (c.*sec).*field = parse_real(p, t);
                        },
                        [sec, field](const Config& c) { return format_real((c.*sec).*field); }});
  }

  template <class Sec>
  void add_bool(std::string key, Sec Config::*sec, bool Sec::*field, std::string desc) {
    ParamInfo p = make(std::move(key), ParamType::kBool, "", std::move(desc));
    entries_.push_back({p,
                        [p, sec, field](Config& c, const std::string& t) {
                          (c.*sec).*field = parse_bool(p, t);
                        },
                        [sec, field](const Config& c) {
                          return std::string((c.*sec).*field ? "true" : "false");
                        }});
  }

  template <class Sec>
  void add_int_list(std::string key, Sec Config::*sec, std::vector<std::int64_t> Sec::*field,
                    std::string unit, std::int64_t lo, std::int64_t hi, std::string desc) {
    ParamInfo p = make(std::move(key), ParamType::kIntList, std::move(unit), std::move(desc));
    p.min = static_cast<double>(lo);
    p.max = static_cast<double>(hi);
    p.imin = lo;
    p.imax = hi;
    entries_.push_back({p,
                        [p, sec, field](Config& c, const std::string& t) {
                          (c.*sec).*field = parse_int_list(p, t);
                        },
                        [sec, field](const Config& c) { return format_int_list((c.*sec).*field); }});
  }

  // A value with its own grammar: `parse` throws ConfigError naming the key.
  template <class Sec, class T>
  void add_custom(std::string key, Sec Config::*sec, T Sec::*field, std::string type_name,
                  std::string allowed, std::string desc,
                  std::function<T(const std::string& key, const std::string& text)> parse,
                  std::function<std::string(const T&)> format) {
    ParamInfo p = make(std::move(key), ParamType::kCustom, "", std::move(desc));
    p.custom_type = std::move(type_name);
    p.custom_allowed = std::move(allowed);
    entries_.push_back({p,
                        [p, sec, field, parse](Config& c, const std::string& t) {
                          (c.*sec).*field = parse(p.key, t);
                        },
                        [sec, field, format](const Config& c) { return format((c.*sec).*field); }});
  }

  // An enum chosen by name; `names` lists (name, value) in documentation order.
  template <class Sec, class E>
  void add_choice(std::string key, Sec Config::*sec, E Sec::*field,
                  std::vector<std::pair<std::string, E>> names, std::string desc) {
    ParamInfo p = make(std::move(key), ParamType::kChoice, "", std::move(desc));
    for (auto& n : names) p.choices.push_back(n.first);
    entries_.push_back({p,
                        [p, sec, field, names](Config& c, const std::string& t) {
                          for (auto& n : names)
                            if (n.first == t) {
                              (c.*sec).*field = n.second;
                              return;
                            }
                          throw ConfigError("config key '" + p.key + "': value '" + t +
                                            "' is not allowed; allowed: " + p.allowed());
                        },
                        [sec, field, names](const Config& c) {
                          return name_of(names, (c.*sec).*field);
                        }});
  }

  const std::vector<Entry>& entries() const { return entries_; }

  // Sets `key` from its text form. Unknown keys are an error naming the
  // closest known key; a list given to a single-valued key is an error.
  void set(Config& c, const std::string& key, const std::string& text,
           bool is_list = false) const;
  // Parses "key=value".
  void set_assignment(Config& c, const std::string& assignment) const;
  // Applies every leaf of a YAML mapping; nested maps join keys with '.'.
  void apply_yaml(Config& c, const YAML::Node& root, const std::string& origin) const;

  std::string closest_key(const std::string& key) const;

 private:
  static ParamInfo make(std::string key, ParamType t, std::string unit, std::string desc) {
    ParamInfo p;
    p.key = std::move(key);
    p.type = t;
    p.unit = std::move(unit);
    p.description = std::move(desc);
    return p;
  }
  std::vector<Entry> entries_;
};

// Edit distance, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);

// Flattens a YAML mapping into leaves (dotted key, text), in file order.
// Sequences of scalars (nested at any depth) become one leaf with the items
// joined by ','. Throws ConfigError for null values, maps inside sequences or
// a non-mapping root.
std::vector<YamlLeaf> flatten_yaml(const YAML::Node& root, const std::string& origin);

template <class Config>
std::string Schema<Config>::closest_key(const std::string& key) const {
  std::string best;
  std::size_t best_d = key.size() / 2 + 2;
  for (auto& e : entries_) {
    const std::size_t d = edit_distance(key, e.info.key);
    if (d < best_d) {
      best_d = d;
      best = e.info.key;
    }
  }
  return best;
}

template <class Config>
void Schema<Config>::set(Config& c, const std::string& key, const std::string& text,
                         bool is_list) const {
  for (auto& e : entries_)
    if (e.info.key == key) {
      if (is_list && e.info.type != ParamType::kIntList && e.info.type != ParamType::kCustom)
        throw ConfigError("config key '" + key + "' is a list; a single value (" +
                          e.info.allowed() + ") is expected");
      e.set(c, text);
      return;
    }
  std::string msg = "unknown config key '" + key + "'";
  const std::string near = closest_key(key);
  if (!near.empty()) msg += " (did you mean '" + near + "'?)";
  msg += "; 'fabricsim params' lists every key";
  throw ConfigError(msg);
}

template <class Config>
void Schema<Config>::set_assignment(Config& c, const std::string& assignment) const {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("override '" + assignment + "' is not of the form key=value");
  set(c, assignment.substr(0, eq), assignment.substr(eq + 1));
}

template <class Config>
void Schema<Config>::apply_yaml(Config& c, const YAML::Node& root,
                                const std::string& origin) const {
  for (auto& leaf : flatten_yaml(root, origin)) {
    try {
      set(c, leaf.key, leaf.text, leaf.is_list);
    } catch (const ConfigError& e) {
      throw ConfigError(origin + ": " + e.what());
    }
  }
}

}  // namespace fabricsim
