// Minimising a measured error over a few bounded parameters, for
// `fabricsim calibrate`. Each evaluation is whole simulations (seconds), so
// the search is frugal and never evaluates a point twice; it needs no
// derivative and no smoothness.
//
// Per parameter: a grid of evenly spaced points over its range, then
// golden-section search inside the bracket around the best grid point until
// the bracket is narrower than the tolerance. Several parameters: first the
// joint grid over the box (every combination of the parameters' grid
// points, while that is at most kMaxJointGrid points), then one such line
// search per parameter in turn (coordinate descent) from its best point,
// repeated until a round moves none of them or the rounds run out. The joint
// grid finds valleys that run across the axes (two parameters that trade
// against each other), where line searches from the start would stop. The
// result is a local minimum of the function on the grid's resolution; a
// function with several minima narrower than a grid step may hide one (a
// finer grid finds it).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fabricsim {

struct FitParam {
  std::string key;
  double lo = 0, hi = 0;  // the range searched, inclusive
  double step = 0;        // values tried are lo + k x step (1: an integer parameter); 0: any
  double tolerance = 0;   // stop when the bracket is narrower; 0: (hi - lo) / 1000, at least 2 steps
};

// The most points the joint grid of several parameters may have; beyond it
// the search starts its line searches from the start point.
constexpr long kMaxJointGrid = 1000;

struct FitOptions {
  int grid = 9;    // grid points per parameter and round (>= 3)
  int rounds = 3;  // coordinate-descent rounds at most (one parameter: one)
};

struct FitPoint {
  std::vector<double> x;
  double value = 0;
};

struct FitResult {
  FitPoint best;
  std::vector<FitPoint> evaluations;  // in the order they were made
};

// Minimises f over the box of `params`, starting from `start` (clamped into
// the box and onto the steps; it is evaluated first). f may throw: the
// search stops and the exception passes on. Throws std::invalid_argument
// for an empty or inverted range, a negative step or one wider than the
// range, a grid below 3 or fewer than one round.
FitResult fit_minimise(const std::vector<FitParam>& params, std::vector<double> start,
                       const std::function<double(const std::vector<double>&)>& f,
                       const FitOptions& opts = {});

}  // namespace fabricsim
