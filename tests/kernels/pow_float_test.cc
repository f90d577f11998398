// float32 Pow on the CPU (Note [Vectorised pow] in kernels/cpu/isa/pow_float.h): within 1
// ulp of pow in double rounded once, over ranges that stress each step; IEEE's special
// cases exactly as std::pow gives them; scalar operands on either side and run lengths
// that leave every possible tail. kernels_test runs again at each ISA level below the
// CPU's best, so each level's vector width is checked.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

// The distance in ulps between two floats of the same sign (0 for two NaNs); a large
// number when one is NaN or the signs differ.
int64_t ulps(float got, float want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0 : 1 << 30;
  if (got == want) return 0;
  if (std::signbit(got) != std::signbit(want)) return 1 << 30;
  return std::abs(int64_t{std::bit_cast<int32_t>(got)} - std::bit_cast<int32_t>(want));
}

std::vector<float> run_pow(const std::vector<float>& x, const std::vector<float>& y) {
  const auto shape_of = [](const std::vector<float>& v) {
    return v.size() == 1 ? Shape() : Shape::make({static_cast<int64_t>(v.size())}).value();
  };
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kPow, {HostTensor::make<float>(shape_of(x), x),
                                                        HostTensor::make<float>(shape_of(y), y)});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? out->values<float>() : std::vector<float>();
}

// Checks x ** y against pow in double, element by element (a size-1 side broadcasts).
void expect_within_one_ulp(const std::vector<float>& x, const std::vector<float>& y,
                           const std::string& what) {
  const std::vector<float> got = run_pow(x, y);
  const size_t n = std::max(x.size(), y.size());
  ASSERT_EQ(got.size(), n) << what;
  int64_t inexact = 0;
  for (size_t i = 0; i < n; ++i) {
    const float a = x[x.size() == 1 ? 0 : i], b = y[y.size() == 1 ? 0 : i];
    const float want = static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    const int64_t d = ulps(got[i], want);
    ASSERT_LE(d, 1) << what << ": " << a << " ** " << b << " gave " << got[i] << ", want " << want;
    inexact += d;
  }
  EXPECT_LE(inexact, static_cast<int64_t>(n / 100)) << what;  // 1 ulp is the exception
}

TEST(PowFloatTest, IsWithinOneUlpOverEachRange) {
  constexpr int kN = 1 << 16;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> unit(-1, 1), t(-150, 150);
  std::vector<float> x(kN), y(kN);
  const auto check = [&](const char* what, auto fill) {
    for (int i = 0; i < kN; ++i) fill(x[i], y[i]);
    expect_within_one_ulp(x, y, what);
  };
  check("bases in [-1, 1), powers in [0, 1)", [&](float& a, float& b) {
    a = unit(gen);
    b = std::fabs(unit(gen));
  });
  check("results across the float range", [&](float& a, float& b) {
    a = std::exp2(unit(gen) * 60);
    b = static_cast<float>(t(gen) / std::log2(static_cast<double>(a)));
  });
  check("bases near 1, large powers", [&](float& a, float& b) {
    a = 1 + unit(gen) * 1e-3f;
    b = static_cast<float>(t(gen) / std::log2(static_cast<double>(a)));
  });
  check("negative bases, integer powers", [&](float& a, float& b) {
    a = -std::exp2(unit(gen) * 10);
    b = std::round(unit(gen) * 20);
  });
  check("underflow to subnormals and zero, overflow to inf", [&](float& a, float& b) {
    a = std::exp2(unit(gen) * 3);
    b = unit(gen) * 300 - 9;
  });
  check("subnormal bases", [&](float& a, float& b) {
    a = std::ldexp(std::fabs(unit(gen)), -126);
    b = unit(gen) * 1.2f;
  });
  check("any bit pattern", [&](float& a, float& b) {
    a = std::bit_cast<float>(static_cast<uint32_t>(gen()));
    b = std::bit_cast<float>(static_cast<uint32_t>(gen()));
  });
}

TEST(PowFloatTest, SpecialValuesAreTheCLibrarys) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float denorm = std::numeric_limits<float>::denorm_min();
  const std::vector<float> values = {
      0.f,     -0.f,  1.f,    -1.f,        0.5f,           -0.5f,       2.f,
      -2.f,    3.f,   -3.f,   inf,         -inf,           nan,         denorm,
      -denorm, 1e38f, -1e38f, 0x1p24f + 2, -(0x1p24f + 2), 0x1p23f + 1, -(0x1p23f + 1)};
  std::vector<float> x, y;
  for (float a : values) {
    for (float b : values) {
      x.push_back(a);
      y.push_back(b);
    }
  }
  const std::vector<float> got = run_pow(x, y);
  ASSERT_EQ(got.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = std::pow(x[i], y[i]);
    EXPECT_LE(ulps(got[i], want), 1) << x[i] << " ** " << y[i] << " gave " << got[i];
    if (want == 0 || std::isinf(want)) {
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << x[i] << " ** " << y[i];
    }
  }
}

TEST(PowFloatTest, ScalarOperandsAndEveryTailLength) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> base(0.1f, 4), power(-3, 3);
  for (int n : {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 1023, 1024, 1025, 3001}) {
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = base(gen);
      y[i] = power(gen);
    }
    if (n == 0) {
      EXPECT_TRUE(run_pow(x, y).empty());
      continue;
    }
    expect_within_one_ulp(x, y, absl::StrCat("n=", n));
    expect_within_one_ulp({2.5f}, y, absl::StrCat("scalar base, n=", n));
    expect_within_one_ulp(x, {-1.75f}, absl::StrCat("scalar power, n=", n));
    expect_within_one_ulp({-2.f}, {3.f}, "both scalars");
  }
}

}  // namespace
}  // namespace mt
