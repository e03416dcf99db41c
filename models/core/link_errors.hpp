// Bit errors on a link and what FEC makes of them (plain C++, no SystemC).
//
// Error process: error events start at each bit with probability ber / burst
// and corrupt `burst` consecutive bits (burst = 1: independent bit errors),
// so the long-run bit error rate is `ber`. Draws come from the link's own
// seeded stream: same seed, same errors.
//
// FEC none: a packet of B bits arrives corrupted with probability
//   1 - (1 - ber/burst)^B (an event anywhere in it); its CRC catches it.
// FEC rs544 = RS(544,514) over 10-bit symbols (802.3 "KP4"): the link's
//   bit stream is cut into codewords of 514 data symbols (5140 data bits);
//   a codeword with at most 15 symbols in error is corrected, with more it
//   is uncorrectable and every packet with bits in it arrives corrupted.
//   An event hits 1 + ceil((burst - 1) / 10) symbols; the number of events
//   in a codeword is Binomial(544, q), q = 1 - (1 - ber/burst)^10, so with
//   burst = 1 the symbol-error count is exactly binomial. Packets share
//   codewords while the link streams; after an idle gap a new codeword
//   starts (idle fill closes the old one; idle symbols are not modelled).
// CRC: every corrupted packet is detected (a 32-bit CRC misses ~2^-32 of
//   them: not modelled).
#pragma once
#include <cstdint>
#include <string>

#include "models/core/rng.hpp"

namespace fabricsim {

enum class Fec { kNone, kRs544 };

// RS(544,514) geometry.
constexpr int kRsSymbols = 544;
constexpr int kRsDataSymbols = 514;
constexpr int kRsSymbolBits = 10;
constexpr int kRsCorrectable = 15;
constexpr std::uint64_t kRsDataBits = static_cast<std::uint64_t>(kRsDataSymbols) * kRsSymbolBits;
constexpr std::uint64_t kRsCodewordBits = static_cast<std::uint64_t>(kRsSymbols) * kRsSymbolBits;

// Probabilities that one codeword is corrected (1..15 symbols in error)
// and uncorrectable (more), for a bit error rate and mean burst length.
struct CodewordOdds {
  double corrected = 0;
  double uncorrectable = 0;
};
CodewordOdds rs544_odds(double ber, double burst_bits);

// Probability that `bits` bits without FEC contain an error event.
double packet_error_probability(double ber, double burst_bits, std::uint64_t bits);

class LinkErrors {
 public:
  LinkErrors(double ber, double burst_bits, Fec fec, Rng rng);

  // One transmission of `bits` bits; `after_idle`: the link was idle before
  // it (FEC starts a new codeword). Returns true if it arrives corrupted.
  bool transmit(std::uint64_t bits, bool after_idle);

  Fec fec() const { return fec_; }
  double ber() const { return ber_; }
  // A new bit error rate from now on (a fault); the current codeword keeps
  // the outcome it was drawn with.
  void set_ber(double ber);
  std::uint64_t codewords() const { return codewords_; }
  std::uint64_t corrected_codewords() const { return corrected_; }
  std::uint64_t uncorrectable_codewords() const { return uncorrectable_; }
  const CodewordOdds& odds() const { return odds_; }

 private:
  void open_codeword();

  double ber_;
  double burst_;
  Fec fec_;
  Rng rng_;
  CodewordOdds odds_;
  std::uint64_t cw_left_ = 0;  // data bits left in the current codeword
  bool cw_bad_ = false;
  std::uint64_t codewords_ = 0, corrected_ = 0, uncorrectable_ = 0;
  // Without FEC: error probability per packet size in flits is recomputed
  // only when the size changes (a run has few sizes).
  std::uint64_t last_bits_ = 0;
  double last_p_ = 0;
};

}  // namespace fabricsim
