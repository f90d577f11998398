#include "core/shape.h"

#include "core/dtype.h"
#include "gtest/gtest.h"

namespace mt {
namespace {

TEST(ShapeTest, CountsElementsAndPrintsLikeTensorFlow) {
  Shape s = Shape::make({2, 3}).value();
  EXPECT_EQ(s.num_elements(), 6);
  EXPECT_EQ(s.rank(), 2);
  EXPECT_EQ(s.to_string(), "(2, 3)");
  EXPECT_EQ(s.to_list_string(), "[2,3]");
  EXPECT_EQ(Shape::make({3}).value().to_string(), "(3,)");
  EXPECT_EQ(Shape().to_string(), "()");
  EXPECT_EQ(Shape().num_elements(), 1);
}

TEST(ShapeTest, ZeroDimensionMeansNoElements) {
  EXPECT_EQ(Shape::make({4, 0, 3}).value().num_elements(), 0);
  // A zero dimension also rescues a product that would otherwise overflow.
  EXPECT_EQ(Shape::make({int64_t{1} << 40, int64_t{1} << 40, 0}).value().num_elements(), 0);
}

TEST(ShapeTest, RejectsNegativeDimension) {
  absl::StatusOr<Shape> s = Shape::make({2, -1});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "[Shape] dimension 1 is negative (-1) in [2,-1]");
}

TEST(ShapeTest, RejectsOverflowingSize) {
  absl::StatusOr<Shape> s = Shape::make({int64_t{1} << 31, int64_t{1} << 31});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(),
            "[Shape] too many elements in [2147483648,2147483648]: the byte size overflows int64");
}

TEST(DTypeTest, NamesAndSizes) {
  EXPECT_STREQ(dtype_name(DType::kFloat32), "float32");
  EXPECT_STREQ(dtype_type_name(DType::kFloat32), "float");
  EXPECT_STREQ(dtype_type_name(DType::kFloat64), "double");
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kBool), 1u);
  size_t size =
      visit_dtype(DType::kFloat64, [](auto tag) { return sizeof(typename decltype(tag)::type); });
  EXPECT_EQ(size, 8u);
}

}  // namespace
}  // namespace mt
