#pragma once
// SizeFit: a model of an op's execution time as a function of its footprint,
// t(bytes) = a * bytes^b + c, fitted to measured points. The cost policy uses it for a
// footprint it has not measured yet on a device (runtime/cost/cost_model.h).
//
//   SizeFit fit;
//   fit.add(4096, 2100);      // bytes, nanoseconds
//   fit.add(1 << 20, 9800);
//   if (fit.ready()) double ns = fit.predict(1 << 24);
//
// Note [Fitting a * bytes^b + c]
// For a fixed c the model is linear in log space: log(t - c) = log a + b log bytes, solved
// by least squares. c is searched on a few fractions of the smallest time (0, 1/4, 1/2,
// 3/4, 9/10), and the fit with the least squared relative error wins, the smaller offset on
// a tie (two points fit every offset exactly: they get a pure power law). b is clamped to
// [0, 2]: an op does not get faster as its inputs grow, and no op here grows faster than a
// square. Two points with different footprints make a fit. Not thread-safe: the owner locks.

#include <cstdint>
#include <vector>

namespace mt {

class SizeFit {
 public:
  // Adds or replaces the point at `bytes` (one per footprint bucket: the caller keeps a
  // bucket's latest mean). Marks the fit stale.
  void set_point(int bucket, double bytes, double ns);

  // Returns whether at least two footprints have been measured.
  bool ready() const;

  // Returns the fitted time in nanoseconds for `bytes` (ready() must hold).
  double predict(double bytes) const;

  // The fitted parameters (ready() must hold), for tests and explanations.
  double a() const;
  double b() const;
  double c() const;

 private:
  struct Point {
    int bucket;
    double bytes;
    double ns;
  };
  void refit() const;

  std::vector<Point> points_;
  mutable bool stale_ = true;
  mutable double a_ = 0, b_ = 0, c_ = 0;
};

}  // namespace mt
