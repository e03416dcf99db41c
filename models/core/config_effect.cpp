// Which settings cannot matter in the chosen modes (config_effect.hpp). Each
// rule names the mode that ignores a key and why; a rule is added only where
// the model provably never reads the key in that mode.
#include "models/core/config_effect.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fabricsim {

namespace {

struct Rule {
  std::string key;  // a key, or a section prefix ending in '.' (--set keys only)
  // Empty when the key matters in `c`; else the setting that makes it
  // ignored and why.
  std::function<std::string(const Config&)> ignored_because;
};

std::string workload_name(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::kSynthetic:
      return "synthetic";
    case WorkloadKind::kCollective:
      return "collective";
    case WorkloadKind::kTlm:
      return "tlm";
  }
  return "?";
}

std::string no_straggler(const Config& c) {
  return c.straggler.gpu < 0 ? std::string("straggler.gpu=-1 names no GPU to apply it to")
                             : std::string();
}

std::string not_distributed(const Config& c) {
  return c.reduction.organisation != EngineOrganisation::kDistributed
             ? std::string("they size the slices of reduction.organisation=distributed, and the "
                           "engine is organised otherwise")
             : std::string();
}

std::string ideal_protocol(const Config& c) {
  return c.collective.protocol == Protocol::kIdeal
             ? std::string("collective.protocol=ideal has no GPU side (no channels, staging "
                           "buffers, write responses or launch)")
             : std::string();
}

std::string no_retry(const Config& c) {
  return c.link.retry == Retry::kNone ? std::string("link.retry=none replays nothing")
                                      : std::string();
}

std::string queueing_ignores_allocation(const Config& c, bool iterations) {
  if (c.sw.queueing == Queueing::kOutput)
    return "switch.queueing=output has no input allocator (every packet goes straight to its "
           "output's queue)";
  if (iterations && c.sw.queueing == Queueing::kFifo && c.sw.vcs == 1)
    return "with switch.queueing=fifo and switch.vcs=1 each input asks for one output at a "
           "time (its head packet), so the first iteration already finds every match";
  return {};
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {"switch.iterations", [](const Config& c) { return queueing_ignores_allocation(c, true); }},
      {"switch.allocator", [](const Config& c) { return queueing_ignores_allocation(c, false); }},
      {"traffic.hotspot_endpoint",
       [](const Config& c) {
         return c.traffic.pattern != Pattern::kHotspot
                    ? "traffic.pattern=" + to_string(c.traffic.pattern) + " sends no hotspot share"
                    : std::string();
       }},
      {"traffic.hotspot_fraction",
       [](const Config& c) {
         return c.traffic.pattern != Pattern::kHotspot
                    ? "traffic.pattern=" + to_string(c.traffic.pattern) + " sends no hotspot share"
                    : std::string();
       }},
      {"traffic.burst_packets",
       [](const Config& c) {
         return c.traffic.process != Process::kBursty
                    ? std::string("traffic.process=bernoulli has no bursts")
                    : std::string();
       }},
      {"traffic.outstanding_reads",
       [](const Config& c) {
         return c.traffic.read_fraction == 0 ? std::string("traffic.read_fraction=0 sends no reads")
                                             : std::string();
       }},
      {"traffic.",
       [](const Config& c) {
         return c.workload.kind != WorkloadKind::kSynthetic
                    ? "traffic.* describes synthetic traffic and workload.kind=" +
                          workload_name(c.workload.kind) + " sends none"
                    : std::string();
       }},
      {"collective.inter",
       [](const Config& c) {
         return c.collective.algorithm != CollectiveAlgo::kHierarchical
                    ? "it chooses the inter-domain phase of collective.algorithm=hierarchical, "
                      "and collective.algorithm=" +
                          to_string(c.collective.algorithm)
                    : std::string();
       }},
      {"collective.root",
       [](const Config& c) {
         const bool rooted = c.collective.op == CollectiveOp::kBroadcast ||
                             c.collective.op == CollectiveOp::kReduce;
         return !rooted ? "collective.op=" + to_string(c.collective.op) + " has no root"
                        : std::string();
       }},
      {"gpu.", [](const Config& c) { return ideal_protocol(c); }},
      {"reduction.chip_ports", [](const Config& c) { return not_distributed(c); }},
      {"reduction.slice_ports", [](const Config& c) { return not_distributed(c); }},
      {"collective.channels", [](const Config& c) { return ideal_protocol(c); }},
      {"straggler.delay_ns", [](const Config& c) { return no_straggler(c); }},
      {"straggler.issue_factor", [](const Config& c) { return no_straggler(c); }},
      {"straggler.lanes", [](const Config& c) { return no_straggler(c); }},
      {"link.fec_decode_ns",
       [](const Config& c) {
         return c.link.fec == Fec::kNone ? std::string("link.fec=none decodes nothing")
                                         : std::string();
       }},
      {"link.replay_buffer_flits", [](const Config& c) { return no_retry(c); }},
      {"link.ack_delay_ns", [](const Config& c) { return no_retry(c); }},
      {"scaleout.",
       [](const Config& c) {
         return c.topology.kind != TopologyKind::kScaleOut
                    ? "topology.kind=" + to_string(c.topology.kind) + " has no scale-out tier"
                    : std::string();
       }},
  };
  return r;
}

}  // namespace

UserKeys keys_set_by_user(const std::string& path, const std::vector<std::string>& overrides) {
  UserKeys keys;
  if (!path.empty()) {
    const YAML::Node root = YAML::LoadFile(path);
    if (root.IsMap())
      for (const auto& section : root) {
        const auto name = section.first.as<std::string>();
        if (section.second.IsMap()) {
          for (const auto& kv : section.second)
            keys.in_file.push_back(name + "." + kv.first.as<std::string>());
        } else if (name.find('.') != std::string::npos) {
          keys.in_file.push_back(name);  // a dotted key: `link.lanes: 2`
        }
      }
  }
  for (const auto& o : overrides) keys.overridden.push_back(o.substr(0, o.find('=')));
  return keys;
}

std::vector<std::string> ignored_settings(const Config& c, const UserKeys& keys) {
  const auto values = config_values(c);
  const auto defaults = config_values(Config{});
  auto has = [](const std::vector<std::string>& v, const std::string& k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string& key = values[i].first;
    if (values[i].second == defaults[i].second) continue;
    const bool overridden = has(keys.overridden, key);
    if (!overridden && !has(keys.in_file, key)) continue;
    for (const Rule& r : rules()) {
      const bool section = r.key.back() == '.';
      if (section ? key.rfind(r.key, 0) != 0 || !overridden : key != r.key) continue;
      const std::string why = r.ignored_because(c);
      if (why.empty()) continue;
      out.push_back(key + "=" + values[i].second + " has no effect: " + why);
      break;
    }
  }
  return out;
}

}  // namespace fabricsim
