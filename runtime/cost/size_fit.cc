#include "runtime/cost/size_fit.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace mt {
namespace {

struct Fit {
  double a = 0, b = 0, c = 0, error = 0;
};

// Least squares of log(y - c) on log x (Note [Fitting a * bytes^b + c]).
template <typename Points>
Fit fit_with_offset(const Points& points, double c) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(points.size());
  for (const auto& p : points) {
    double x = std::log(std::max(p.bytes, 1.0));
    double y = std::log(std::max(p.ns - c, 1e-3));
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  double denom = n * sxx - sx * sx;
  Fit f;
  f.c = c;
  f.b = denom > 0 ? std::clamp((n * sxy - sx * sy) / denom, 0.0, 2.0) : 0.0;
  f.a = std::exp((sy - f.b * sx) / n);
  for (const auto& p : points) {
    double pred = f.a * std::pow(std::max(p.bytes, 1.0), f.b) + f.c;
    double rel = (pred - p.ns) / std::max(p.ns, 1e-3);
    f.error += rel * rel;
  }
  return f;
}

}  // namespace

void SizeFit::set_point(int bucket, double bytes, double ns) {
  stale_ = true;
  for (Point& p : points_) {
    if (p.bucket == bucket) {
      p.bytes = bytes;
      p.ns = ns;
      return;
    }
  }
  points_.push_back(Point{bucket, bytes, ns});
}

bool SizeFit::ready() const { return points_.size() >= 2; }

void SizeFit::refit() const {
  MT_CHECK(ready());
  if (!stale_) return;
  double min_ns = points_[0].ns;
  for (const Point& p : points_) min_ns = std::min(min_ns, p.ns);
  Fit best;
  bool first = true;
  for (double fraction : {0.0, 0.25, 0.5, 0.75, 0.9}) {
    Fit f = fit_with_offset(points_, fraction * min_ns);
    if (first || f.error < best.error - 1e-9) best = f;  // a tie keeps the smaller offset
    first = false;
  }
  a_ = best.a;
  b_ = best.b;
  c_ = best.c;
  stale_ = false;
}

double SizeFit::predict(double bytes) const {
  refit();
  return a_ * std::pow(std::max(bytes, 1.0), b_) + c_;
}

double SizeFit::a() const {
  refit();
  return a_;
}
double SizeFit::b() const {
  refit();
  return b_;
}
double SizeFit::c() const {
  refit();
  return c_;
}

}  // namespace mt
