#include "models/core/link_errors.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim {

namespace {

// Probability that an event starts within `bits` bits.
double any_event(double ber, double burst_bits, double bits) {
  if (ber <= 0) return 0;
  return -std::expm1(bits * std::log1p(-ber / burst_bits));
}

}  // namespace

CodewordOdds rs544_odds(double ber, double burst_bits) {
  CodewordOdds o;
  if (ber <= 0) return o;
  const double q = any_event(ber, burst_bits, kRsSymbolBits);  // per symbol position
  const int per_event = 1 + static_cast<int>(std::ceil((burst_bits - 1) / kRsSymbolBits));
  const int tolerable = kRsCorrectable / per_event;  // events a codeword survives
  if (q >= 1) {
    o.uncorrectable = 1;
    return o;
  }
  // Binomial(544, q) pmf in log space: tails far below 1e-300 underflow to
  // 0, which is what they are for any run length.
  const double lq = std::log(q), lnq = std::log1p(-q);
  const double lg_n = std::lgamma(kRsSymbols + 1.0);
  for (int k = 1; k <= kRsSymbols; ++k) {
    const double lp = lg_n - std::lgamma(k + 1.0) - std::lgamma(kRsSymbols - k + 1.0) + k * lq +
                      (kRsSymbols - k) * lnq;
    const double p = std::exp(lp);
    (k <= tolerable ? o.corrected : o.uncorrectable) += p;
  }
  return o;
}

double packet_error_probability(double ber, double burst_bits, std::uint64_t bits) {
  return any_event(ber, burst_bits, static_cast<double>(bits));
}

LinkErrors::LinkErrors(double ber, double burst_bits, Fec fec, Rng rng)
    : ber_(ber), burst_(burst_bits), fec_(fec), rng_(rng) {
  if (!(ber >= 0 && ber < 1)) throw std::invalid_argument("LinkErrors: ber must be in [0, 1)");
  if (!(burst_bits >= 1)) throw std::invalid_argument("LinkErrors: burst must be >= 1 bit");
  if (fec_ == Fec::kRs544) odds_ = rs544_odds(ber_, burst_);
}

void LinkErrors::set_ber(double ber) {
  if (!(ber >= 0 && ber < 1)) throw std::invalid_argument("LinkErrors: ber must be in [0, 1)");
  ber_ = ber;
  last_bits_ = 0;
  if (fec_ == Fec::kRs544) odds_ = rs544_odds(ber_, burst_);
}

void LinkErrors::open_codeword() {
  ++codewords_;
  cw_left_ = kRsDataBits;
  cw_bad_ = false;
  if (ber_ <= 0) return;
  const double u = rng_.uniform();
  if (u < odds_.uncorrectable) {
    cw_bad_ = true;
    ++uncorrectable_;
  } else if (u < odds_.uncorrectable + odds_.corrected) {
    ++corrected_;
  }
}

bool LinkErrors::transmit(std::uint64_t bits, bool after_idle) {
  if (fec_ == Fec::kNone) {
    if (ber_ <= 0) return false;
    if (bits != last_bits_) {
      last_bits_ = bits;
      last_p_ = packet_error_probability(ber_, burst_, bits);
    }
    return rng_.uniform() < last_p_;
  }
  if (after_idle || cw_left_ == 0) open_codeword();
  bool bad = cw_bad_;
  while (bits > cw_left_) {
    bits -= cw_left_;
    open_codeword();
    bad = bad || cw_bad_;
  }
  cw_left_ -= bits;
  return bad;
}

}  // namespace fabricsim
