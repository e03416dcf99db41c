// Link errors and RS(544,514) FEC (models/core/link_errors.hpp): the codeword
// odds against an independent computation, the sampled frequencies against
// the odds, codeword accounting over a bit stream, bursts, determinism.
#include "models/core/link_errors.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace fabricsim {
namespace {

// Binomial(n, q) tail P(N > t) by the pmf recurrence (no lgamma), and
// P(1 <= N <= t): an independent route to the same numbers.
void binomial_split(int n, double q, int t, double& low, double& high) {
  double pmf = std::pow(1.0 - q, n);  // P(N = 0)
  low = 0;
  high = 0;
  for (int k = 0; k < n; ++k) {
    pmf *= static_cast<double>(n - k) / (k + 1) * q / (1.0 - q);  // P(N = k + 1)
    (k + 1 <= t ? low : high) += pmf;
  }
}

TEST(LinkErrors, Rs544OddsMatchTheBinomialOfSymbolErrors) {
  for (const double ber : {1e-5, 1e-4, 1e-3, 2e-3, 3e-3, 1e-2}) {
    const double q = 1.0 - std::pow(1.0 - ber, 10);  // a 10-bit symbol in error
    double corrected = 0, uncorrectable = 0;
    binomial_split(544, q, 15, corrected, uncorrectable);
    const CodewordOdds o = rs544_odds(ber, 1);
    EXPECT_NEAR(o.corrected, corrected, 1e-12 + 1e-9 * corrected) << ber;
    EXPECT_NEAR(o.uncorrectable, uncorrectable, 1e-300 + 1e-9 * uncorrectable) << ber;
  }
  // KP4's design point: at 1e-4 a codeword almost never fails.
  EXPECT_LT(rs544_odds(1e-4, 1).uncorrectable, 1e-15);
  EXPECT_NEAR(rs544_odds(1e-4, 1).corrected, 1.0 - std::pow(1.0 - 1e-4, 5440), 1e-12);
  EXPECT_EQ(rs544_odds(0, 1).corrected, 0.0);
  EXPECT_EQ(rs544_odds(0, 1).uncorrectable, 0.0);
}

TEST(LinkErrors, BurstsHitSeveralSymbolsPerEvent) {
  // A 20-bit burst spans 3 symbols: 5 events are correctable, 6 are not;
  // events start with probability ber/20 per bit.
  const double ber = 3e-3;
  const double q = 1.0 - std::pow(1.0 - ber / 20, 10);
  double corrected = 0, uncorrectable = 0;
  binomial_split(544, q, 5, corrected, uncorrectable);
  const CodewordOdds o = rs544_odds(ber, 20);
  EXPECT_NEAR(o.corrected, corrected, 1e-9 * corrected);
  EXPECT_NEAR(o.uncorrectable, uncorrectable, 1e-9 * uncorrectable);
  // Bigger than 150 bits: any event defeats the code.
  const CodewordOdds big = rs544_odds(1e-4, 200);
  EXPECT_EQ(big.corrected, 0.0);
  EXPECT_GT(big.uncorrectable, 0.0);
}

TEST(LinkErrors, SampledFrequenciesFollowTheOdds) {
  // 200 000 codewords at 2e-3: uncorrectable ~7%, corrected ~93%; each
  // within 5 standard deviations.
  LinkErrors e(2e-3, 1, Fec::kRs544, Rng(42, 7));
  for (int i = 0; i < 200000; ++i) e.transmit(kRsDataBits, false);
  ASSERT_EQ(e.codewords(), 200000u);
  const double n = 200000;
  for (const auto& [got, p] : {std::pair<double, double>{static_cast<double>(e.uncorrectable_codewords()),
                                                          e.odds().uncorrectable},
                               {static_cast<double>(e.corrected_codewords()), e.odds().corrected}}) {
    const double sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(got, n * p, 5 * sd) << p;
  }
  // Without FEC: a 2304-bit packet at 1e-5 fails with 1 - (1 - 1e-5)^2304.
  LinkErrors raw(1e-5, 1, Fec::kNone, Rng(42, 8));
  int bad = 0;
  for (int i = 0; i < 200000; ++i) bad += raw.transmit(2304, false);
  const double p = packet_error_probability(1e-5, 1, 2304);
  EXPECT_NEAR(p, 1.0 - std::pow(1.0 - 1e-5, 2304), 1e-12);
  EXPECT_NEAR(bad, n * p, 5 * std::sqrt(n * p * (1 - p)));
}

TEST(LinkErrors, PacketsShareCodewordsWhileStreamingAndStartFreshAfterIdle) {
  LinkErrors e(0, 1, Fec::kRs544, Rng(1, 1));
  // 10 packets of 2304 bits back to back: 23 040 bits = 4.48 codewords -> 5.
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(e.transmit(2304, false));
  EXPECT_EQ(e.codewords(), 5u);
  // After idle every packet opens its own codeword.
  for (int i = 0; i < 10; ++i) e.transmit(2304, true);
  EXPECT_EQ(e.codewords(), 15u);
  // A packet longer than a codeword spans several.
  e.transmit(3 * kRsDataBits + 1, true);
  EXPECT_EQ(e.codewords(), 19u);
}

TEST(LinkErrors, AnUncorrectableCodewordCorruptsEveryPacketInIt) {
  // At 1e-2 nearly every codeword fails: all packets sharing it are bad.
  LinkErrors e(1e-2, 1, Fec::kRs544, Rng(3, 3));
  int bad = 0;
  for (int i = 0; i < 1000; ++i) bad += e.transmit(1024, false);
  EXPECT_GT(e.odds().uncorrectable, 0.999);
  EXPECT_GE(bad, 995);
}

TEST(LinkErrors, SameSeedSameErrors) {
  LinkErrors a(1e-4, 1, Fec::kNone, Rng(9, 1)), b(1e-4, 1, Fec::kNone, Rng(9, 1)),
      c(1e-4, 1, Fec::kNone, Rng(9, 2));
  int diff_ab = 0, diff_ac = 0;
  for (int i = 0; i < 10000; ++i) {
    const bool x = a.transmit(2304, false), y = b.transmit(2304, false), z = c.transmit(2304, false);
    diff_ab += x != y;
    diff_ac += x != z;
  }
  EXPECT_EQ(diff_ab, 0);
  EXPECT_GT(diff_ac, 0);
}

TEST(LinkErrors, RejectsImpossibleParameters) {
  EXPECT_THROW(LinkErrors(-1e-3, 1, Fec::kNone, Rng()), std::invalid_argument);
  EXPECT_THROW(LinkErrors(1.0, 1, Fec::kNone, Rng()), std::invalid_argument);
  EXPECT_THROW(LinkErrors(1e-3, 0.5, Fec::kNone, Rng()), std::invalid_argument);
}

}  // namespace
}  // namespace fabricsim
