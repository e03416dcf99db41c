// The `faults` grammar (models/core/faults.hpp): every kind, lists, and an
// error naming the key, the item and what is allowed for each kind of mistake.
#include "models/core/faults.hpp"

#include <gtest/gtest.h>

#include "models/core/config.hpp"
#include "models/core/errors.hpp"

namespace fabricsim {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_faults("faults", text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(Faults, ParsesEveryKind) {
  const auto f = parse_faults("faults",
                              "lane_down@5000:fabric.gpu0.tx3=1, link_down@2e3:fabric.sw1.out*,"
                              "ber@0:fabric.*=1e-5,port_stall@100.5:fabric.sw0.out2=250,"
                              "slow@7:fabric.gpu[0-3]=0.5");
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[0].kind, FaultKind::kLaneDown);
  EXPECT_EQ(f[0].at_ns, 5000);
  EXPECT_EQ(f[0].target, "fabric.gpu0.tx3");
  EXPECT_EQ(f[0].value, 1);
  EXPECT_EQ(f[1].kind, FaultKind::kLinkDown);
  EXPECT_EQ(f[1].at_ns, 2000);
  EXPECT_EQ(f[1].target, "fabric.sw1.out*");
  EXPECT_EQ(f[2].kind, FaultKind::kBer);
  EXPECT_EQ(f[2].value, 1e-5);
  EXPECT_EQ(f[3].kind, FaultKind::kPortStall);
  EXPECT_EQ(f[3].at_ns, 100.5);
  EXPECT_EQ(f[4].kind, FaultKind::kSlow);
  EXPECT_EQ(f[4].target, "fabric.gpu[0-3]");
  EXPECT_EQ(format_faults(f),
            "lane_down@5000:fabric.gpu0.tx3=1,link_down@2e3:fabric.sw1.out*,ber@0:fabric.*=1e-5,"
            "port_stall@100.5:fabric.sw0.out2=250,slow@7:fabric.gpu[0-3]=0.5");
  EXPECT_TRUE(parse_faults("faults", "").empty());
}

TEST(Faults, EachMistakeIsNamed) {
  EXPECT_NE(error_of("melt@1:fabric.sw0.out0").find("fault 0 'melt@1:fabric.sw0.out0' has an unknown kind 'melt'"),
            std::string::npos);
  EXPECT_NE(error_of("link_down:fabric.sw0.out0").find("is not KIND@AT_NS:TARGET[=VALUE]"), std::string::npos);
  EXPECT_NE(error_of("link_down@soon:fabric.sw0.out0").find("time that is not a number"), std::string::npos);
  EXPECT_NE(error_of("link_down@-5:fabric.sw0.out0").find("[0, 1e12]"), std::string::npos);
  EXPECT_NE(error_of("lane_down@1:fabric.sw0.out0").find("needs =VALUE"), std::string::npos);
  EXPECT_NE(error_of("link_down@1:fabric.sw0.out0=3").find("takes no value"), std::string::npos);
  EXPECT_NE(error_of("lane_down@1:fabric.sw0.out0=0").find("whole number of lanes left"), std::string::npos);
  EXPECT_NE(error_of("lane_down@1:fabric.sw0.out0=1.5").find("whole number of lanes left"), std::string::npos);
  EXPECT_NE(error_of("ber@1:fabric.sw0.out0=0.5").find("bit error rate in [0, 0.1]"), std::string::npos);
  EXPECT_NE(error_of("port_stall@1:fabric.sw0.out0=0").find("stall in ns"), std::string::npos);
  EXPECT_NE(error_of("slow@1:fabric.gpu0=2").find("issue fraction in (0, 1]"), std::string::npos);
  EXPECT_NE(error_of("link_down@1:").find("names no target"), std::string::npos);
  // The second item is the one named.
  EXPECT_NE(error_of("link_down@1:a,bogus").find("fault 1 'bogus'"), std::string::npos);
}

TEST(Faults, ConfigChecksThemAgainstTheRest) {
  auto msg = [](const std::vector<std::string>& sets) {
    try {
      load_config("", sets);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(msg({"faults=lane_down@1:fabric.ep0.tx0=2"}).find("leaves 2 lanes, not fewer than link.lanes=2"),
            std::string::npos);
  EXPECT_NE(msg({"faults=slow@1:fabric.ep0=0.5"}).find("slow applies to GPUs"), std::string::npos);
  EXPECT_NE(msg({"faults=ber@1:fabric.*=1e-6"}).find("set link.retry=go_back_n"), std::string::npos);
  EXPECT_EQ(msg({"faults=ber@1:fabric.*=1e-6", "link.retry=go_back_n"}), "");
  EXPECT_EQ(load_config("", {"faults=link_down@5:fabric.sw0.out1"}).faults.list.size(), 1u);
}

}  // namespace
}  // namespace fabricsim
