// The timeline's spans and instants (--timeline): made at the end of the
// run from what the sweep and the fault injector recorded, so the hot paths
// carry no tracing. Per GPU, lane "collective": one span per call (from its
// start, delayed for a straggler, to when the GPU had its whole output),
// the phases inside it, and "wait" until the slowest GPU finished; lane
// "events": late starts. Faults: an instant on each target's module.
#include <string>

#include "models/core/params.hpp"
#include "models/sc/fabric.hpp"

namespace fabricsim {

namespace {

std::string size_name(std::uint64_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

// fabric.gpu0.tx3 -> fabric.gpu0 (the timeline's process of a name).
std::string module_name(const std::string& name) {
  const std::size_t a = name.find('.');
  const std::size_t b = a == std::string::npos ? a : name.find('.', a + 1);
  return b == std::string::npos ? name : name.substr(0, b);
}

}  // namespace

void Fabric::timeline_events() {
  if (wave_->options().timeline.empty()) return;
  if (sweep_) {
    const auto& calls = sweep_->calls();
    const TrainingWorkload* w = sweep_->workload();
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const CollectiveCall& c = calls[i];
      if (!c.finished) break;
      std::string name = to_string(c.op) + " " + size_name(c.bytes);
      if (w) name = w->calls[static_cast<size_t>(c.workload_call)].name + ": " + name;
      const bool hier = c.algorithm == CollectiveAlgo::kHierarchical;
      for (int g = 0; g < sweep_->gpus(); ++g) {
        const std::string track = "fabric.gpu" + std::to_string(g);
        const Ps delay = sweep_->start_delay(i, g);
        const Ps begin = c.start + delay;
        if (c.ff.used && !c.ff.whole) {
          // Its times are extrapolated: the timeline shows its last probe,
          // as simulated.
          wave_->span(track, "collective", name + " (fast-forwarded: its last probe)", begin,
                      c.ff.simulated_end);
          continue;
        }
        const Ps done = c.gpu_done[static_cast<size_t>(g)];
        const Ps mid = c.gpu_mid[static_cast<size_t>(g)];
        const Ps inter = c.gpu_inter[static_cast<size_t>(g)];
        wave_->span(track, "collective", name, begin, done);
        if (mid > 0) {
          wave_->span(track, "collective", hier ? "reduce-scatter in domain" : "reduce-scatter",
                      begin, mid);
          const Ps second = hier && inter > 0 ? inter : done;
          wave_->span(track, "collective", hier ? "all-reduce across domains" : "all-gather", mid,
                      second);
          if (hier && inter > 0) wave_->span(track, "collective", "all-gather in domain", inter, done);
        }
        if (done < c.end) wave_->span(track, "collective", "wait for the slowest GPU", done, c.end);
        if (delay > 0)
          wave_->instant(track, "late start +" + format_real(ps_to_ns(delay)) + " ns", begin);
      }
    }
  }
  if (faults_)
    for (const auto& f : faults_->applied())
      for (const std::string& target : f.targets)
        wave_->instant(module_name(target), "fault: " + f.fault, f.t);
}

}  // namespace fabricsim
