// Several fabrics in one simulation: SystemC allows one elaboration per
// process, so a test that compares configurations builds them all, runs the
// kernel once to the latest window end, and finishes each (end-of-run
// checks, statistics). Collective sweeps must not stop the kernel for the
// others, and must each have finished.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/core/config.hpp"
#include "models/sc/fabric.hpp"

namespace fabricsim {

inline std::vector<nlohmann::json> run_fabrics(const std::vector<Config>& cfgs) {
  std::vector<std::unique_ptr<Fabric>> fs;
  Ps end = 0;
  for (std::size_t i = 0; i < cfgs.size(); ++i) {
    fs.push_back(std::make_unique<Fabric>(("f" + std::to_string(i)).c_str(), cfgs[i]));
    if (fs.back()->sweep()) fs.back()->sweep()->set_stop_kernel_when_done(false);
    end = std::max(end, fs.back()->window().end);
  }
  sc_core::sc_start(sc_core::sc_time::from_value(end));
  std::vector<nlohmann::json> out;
  for (auto& f : fs) {
    if (f->sweep()) {
      EXPECT_TRUE(f->sweep()->done()) << f->error();
    }
    EXPECT_TRUE(f->finish()) << f->error();
    out.push_back(f->stats());
  }
  return out;
}

// A collective run's rows: every output element of every GPU and iteration
// checked (n GPUs), none wrong.
inline void expect_every_element_checked(const nlohmann::json& s, int n) {
  const auto& rows = s["collectives"]["rows"];
  ASSERT_GT(rows.size(), 0u);
  for (const auto& r : rows) {
    EXPECT_EQ(r["wrong"].get<std::uint64_t>(), 0u) << r.dump();
    EXPECT_EQ(r["checked_elements"].get<std::uint64_t>(),
              r["count"].get<std::uint64_t>() * static_cast<std::uint64_t>(n) *
                  r["iterations"].get<std::uint64_t>())
        << r.dump();
  }
}

// Flits the GPUs sent: the sum over the links whose name has ".gpu" and ".tx".
inline std::uint64_t gpu_tx_flits(const nlohmann::json& s) {
  std::uint64_t f = 0;
  for (const auto& [name, l] : s["links"].items())
    if (name.find(".gpu") != std::string::npos && name.find(".tx") != std::string::npos)
      f += l["flits"].get<std::uint64_t>();
  return f;
}

}  // namespace fabricsim
