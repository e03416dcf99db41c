#include "models/core/credit_counter.hpp"

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

TEST(CreditCounter, StartsFullAndTracksTakeGive) {
  CreditCounter c("l0.vc0", 10);
  EXPECT_EQ(c.capacity(), 10);
  EXPECT_EQ(c.available(), 10);
  EXPECT_TRUE(c.can_take(10));
  c.take(9);
  EXPECT_EQ(c.available(), 1);
  EXPECT_FALSE(c.can_take(2));
  c.give(4);
  EXPECT_EQ(c.available(), 5);
  c.give(5);
  EXPECT_EQ(c.available(), 10);
}

TEST(CreditCounter, UnderflowIsDetectedAndNamesTheCounter) {
  CreditCounter c("sw0.out3.vc1", 4);
  c.take(3);
  try {
    c.take(2);
    FAIL() << "underflow not detected";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("sw0.out3.vc1: credit underflow"), std::string::npos);
  }
  EXPECT_EQ(c.available(), 1);  // unchanged by the failed take
}

TEST(CreditCounter, OverflowIsDetected) {
  CreditCounter c("ep0.tx.vc0", 4);
  c.take(1);
  EXPECT_THROW(c.give(2), InvariantError);
  EXPECT_EQ(c.available(), 3);
  EXPECT_THROW(CreditCounter("x", 4).give(1), InvariantError);
}

TEST(CreditCounter, NonPositiveAmountsAreErrors) {
  CreditCounter c("x", 4);
  EXPECT_THROW(c.take(0), InvariantError);
  EXPECT_THROW(c.take(-1), InvariantError);
  EXPECT_THROW(c.give(0), InvariantError);
  EXPECT_THROW(CreditCounter("y", 0), InvariantError);
}

}  // namespace
}  // namespace fabricsim
