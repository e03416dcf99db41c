// The TLM address map: GPU windows, multicast objects, what straddles, and
// the tlm.multicast grammar's errors.
#include <gtest/gtest.h>

#include "models/core/address_map.hpp"
#include "models/core/errors.hpp"

namespace fabricsim {
namespace {

AddressMap map8() {
  return {8, 1 << 20, 1ull << 40, parse_multicast("tlm.multicast", "4096@0, 8192@65536:2-5")};
}

TEST(AddressMap, DecodesGpuWindows) {
  const AddressMap m = map8();
  const auto t = m.decode(3 * (1 << 20) + 100, 16);
  EXPECT_EQ(t.kind, AddressMap::Kind::kGpu);
  EXPECT_EQ(t.gpu, 3);
  EXPECT_EQ(t.local, 100u);
  EXPECT_EQ(m.decode(8ull << 20, 4).kind, AddressMap::Kind::kNone);           // no GPU 8
  EXPECT_EQ(m.decode((1 << 20) - 8, 16).kind, AddressMap::Kind::kNone);      // straddles 0 and 1
  EXPECT_EQ(m.decode(0, 0).kind, AddressMap::Kind::kNone);                   // empty
}

TEST(AddressMap, DecodesMulticastObjects) {
  const AddressMap m = map8();
  const auto a = m.decode((1ull << 40) + 4000, 96);
  EXPECT_EQ(a.kind, AddressMap::Kind::kMulticast);
  EXPECT_EQ(a.object, 0);
  EXPECT_EQ(a.local, 4000u);
  EXPECT_EQ(m.decode((1ull << 40) + 4000, 97).kind, AddressMap::Kind::kNone);  // past its end
  EXPECT_EQ(m.decode((1ull << 40) + 5000, 4).kind, AddressMap::Kind::kNone);   // between objects
  const auto b = m.decode(m.object_base(1) + 8, 8);
  EXPECT_EQ(b.object, 1);
  EXPECT_EQ(b.local, 65536u + 8);
  EXPECT_EQ(m.members(0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(m.members(1), (std::vector<int>{2, 3, 4, 5}));
}

TEST(AddressMap, RefusesWhatCannotBeMapped) {
  EXPECT_THROW(AddressMap(8, 1 << 20, 1 << 22, {}), ConfigError);  // base inside the windows
  EXPECT_THROW(AddressMap(8, 1 << 20, 1ull << 40, parse_multicast("k", "4096@1048000")),
               ConfigError);  // past the window
  EXPECT_THROW(AddressMap(8, 1 << 20, 1ull << 40, parse_multicast("k", "4096@0,16@4095")),
               ConfigError);  // overlap
  EXPECT_THROW(AddressMap(8, 1 << 20, 1ull << 40, parse_multicast("k", "16@0:6-8")),
               ConfigError);  // no GPU 8
}

TEST(AddressMap, MulticastGrammar) {
  const auto v = parse_multicast("tlm.multicast", "0x100@0x200:1-3,64@512");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].bytes, 256);
  EXPECT_EQ(v[0].offset, 512);
  EXPECT_EQ(v[0].first, 1);
  EXPECT_EQ(v[0].last, 3);
  EXPECT_EQ(v[1].last, -1);
  EXPECT_EQ(format_multicast(v), "0x100@0x200:1-3,64@512");
  for (const char* bad : {"64", "0@0", "64@-1", "64@0:3-1", "64@0:3", "x@0", "64@0:1-x"}) {
    try {
      parse_multicast("tlm.multicast", bad);
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("tlm.multicast"), std::string::npos) << bad;
    }
  }
}

}  // namespace
}  // namespace fabricsim
