// bfloat16 and float16 through the public API: constants, to_vector, printing, cast, ops
// and their errors.
#include <cmath>
#include <limits>
#include <sstream>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::expect_error;

class HalfDtypeTest : public testing::RuntimeTest {};

TEST_F(HalfDtypeTest, ConstantsFromFloatValuesRoundToNearestEven) {
  Tensor b = constant({1.5f, 0.1f}, {2}, DType::kBFloat16);
  EXPECT_EQ(b.dtype(), DType::kBFloat16);
  std::vector<bfloat16> bv = b.to_vector<bfloat16>();
  ASSERT_EQ(bv.size(), 2u);
  EXPECT_EQ(bv[0].bits, 0x3fc0);  // 1.5
  EXPECT_EQ(bv[1].bits, 0x3dcd);  // 0.1 rounds up to 0.10009765625
  Tensor h = constant({70000.f, -0.f}, {2}, DType::kFloat16);
  std::vector<float16> hv = h.to_vector<float16>();
  EXPECT_EQ(hv[0].bits, 0x7c00);  // past 65504: inf
  EXPECT_EQ(hv[1].bits, 0x8000);
}

TEST_F(HalfDtypeTest, ConstantsFromHalfValuesKeepTheirBits) {
  Tensor t = constant({float16::from_bits(0x3c00), float16::from_bits(0x0001)});
  EXPECT_EQ(t.dtype(), DType::kFloat16);
  EXPECT_EQ(cast(t, DType::kFloat32).to_vector<float>(), (std::vector<float>{1.f, 0x1p-24f}));
  Tensor m = constant({{bfloat16(1.f), bfloat16(2.f)}, {bfloat16(3.f), bfloat16(4.f)}});
  EXPECT_EQ(m.shape(), Shape::make({2, 2}).value());
}

TEST_F(HalfDtypeTest, ConstantsFromFloatValuesNeedAFloatingDtype) {
  Error e = expect_error([] { constant({1.f}, {1}, DType::kInt32); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "[_EagerConst] float values need a floating dtype, not int32");
}

// TensorFlow prints "tf.Tensor(...)"; minitensor "Tensor(...)" with the same inside.
TEST_F(HalfDtypeTest, PrintsAsTensorFlow) {
  std::ostringstream b, h;
  b << constant({1.5f, 2.25f}, {2}, DType::kBFloat16);
  h << constant({0.1f, 2.f, 3.f}, {3}, DType::kFloat16);
  EXPECT_EQ(b.str(), "Tensor([1.5 2.25], shape=(2,), dtype=bfloat16)");
  EXPECT_EQ(h.str(), "Tensor([0.1 2.  3. ], shape=(3,), dtype=float16)");
}

TEST_F(HalfDtypeTest, OpsComputeAndKeepTheDtype) {
  Tensor a = constant({1.f, -2.f, 3.f}, {3}, DType::kBFloat16);
  Tensor s = add(a, a);
  EXPECT_EQ(s.dtype(), DType::kBFloat16);
  EXPECT_EQ(cast(s, DType::kFloat32).to_vector<float>(), (std::vector<float>{2.f, -4.f, 6.f}));
  EXPECT_EQ(cast(reduce_sum(relu(a)), DType::kFloat32).to_vector<float>(),
            (std::vector<float>{4.f}));
}

TEST_F(HalfDtypeTest, MixingDtypesIsAnError) {
  Error e = expect_error(
      [] { add(constant({1.f}, {1}, DType::kBFloat16), constant({1.f}, {1}, DType::kFloat16)); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "[AddV2] dtypes differ: bfloat16 vs float16");
  Error r = expect_error([] { constant({1.f}, {1}, DType::kBFloat16).to_vector<float>(); });
  EXPECT_STREQ(r.what(), "[to_vector] the tensor holds bfloat16, not float32");
}

TEST_F(HalfDtypeTest, CastsBetweenEveryDtype) {
  const float kNan = std::numeric_limits<float>::quiet_NaN();
  Tensor f = constant({kNan, 1e9f, -2.75f});
  Tensor h = cast(f, DType::kFloat16);
  EXPECT_EQ(cast(h, DType::kInt32).to_vector<int32_t>(),
            (std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(), -2}));
  EXPECT_EQ(cast(cast(h, DType::kBFloat16), DType::kFloat64).to_vector<double>()[2], -2.75);
  EXPECT_EQ(cast(h, DType::kBool).to_vector<bool>(), (std::vector<bool>{true, true, true}));
}

}  // namespace
}  // namespace mt
