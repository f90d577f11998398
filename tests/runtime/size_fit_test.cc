// SizeFit: t = a * bytes^b + c recovered from measured points (Note [Fitting a * bytes^b + c]).
#include "runtime/cost/size_fit.h"

#include <cmath>

#include "gtest/gtest.h"

namespace mt {
namespace {

TEST(SizeFitTest, NeedsTwoFootprints) {
  SizeFit fit;
  EXPECT_FALSE(fit.ready());
  fit.set_point(13, 4096, 100);
  fit.set_point(13, 4096, 120);  // the same bucket replaces its point
  EXPECT_FALSE(fit.ready());
  fit.set_point(20, 1 << 19, 900);
  EXPECT_TRUE(fit.ready());
}

TEST(SizeFitTest, RecoversALinearCostWithAFixedOverhead) {
  // 0.5 ns per byte plus 2048 ns, half the smallest time: one of the offsets searched.
  SizeFit fit;
  for (int bucket : {13, 17, 21}) {
    double bytes = std::ldexp(1.0, bucket - 1);
    fit.set_point(bucket, bytes, 0.5 * bytes + 2048);
  }
  EXPECT_NEAR(fit.a(), 0.5, 1e-6);
  EXPECT_NEAR(fit.b(), 1.0, 1e-6);
  EXPECT_NEAR(fit.c(), 2048, 1e-3);
  EXPECT_NEAR(fit.predict(1 << 26), 0.5 * (1 << 26) + 2048, 1);
}

TEST(SizeFitTest, RecoversAPowerOfTheFootprint) {
  // A product of n x n matrices: 3 n^2 floats of footprint, 2 n^3 flops.
  SizeFit fit;
  for (int n : {64, 256, 1024}) {
    double bytes = 12.0 * n * n;
    fit.set_point(n, bytes, 0.01 * std::pow(bytes, 1.5));
  }
  EXPECT_NEAR(fit.b(), 1.5, 1e-6);
  double bytes = 12.0 * 4096 * 4096;
  EXPECT_NEAR(fit.predict(bytes) / (0.01 * std::pow(bytes, 1.5)), 1.0, 1e-6);
}

TEST(SizeFitTest, NeverPredictsAnOpGettingFasterAsItGrows) {
  SizeFit fit;
  fit.set_point(10, 1000, 5000);
  fit.set_point(20, 1000000, 4000);  // noise: the larger footprint measured faster
  EXPECT_GE(fit.b(), 0);
  EXPECT_GE(fit.predict(1e9), fit.predict(1e3) - 1e-9);
}

}  // namespace
}  // namespace mt
