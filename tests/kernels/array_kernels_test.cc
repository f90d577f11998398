// CPU kernels of the array ops (MT_ARRAY_OPS), run through the registry: each op on small
// cases for every dtype (the expected output given as the input elements it picks), larger
// random cases against plain references, 0-sized dimensions, and every error with its code
// and message.
#include <algorithm>
#include <numeric>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using Ints = std::vector<int64_t>;
using testutil::run_cpu_all;

// Returns element i of a test input of T: distinct small integers (exact in every float
// type), or a pattern for bool.
template <typename T>
T element(int64_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return (i * 5 + i / 3) % 3 == 0;
  } else {
    return static_cast<T>(static_cast<float>(i % 251));
  }
}

template <typename T>
HostTensor iota(const Shape& shape) {
  std::vector<T> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = element<T>(i);
  return HostTensor::make<T>(shape, v);
}

// Returns the elements of iota<T> at `picks`, as doubles (the 2-byte floats have no ==).
template <typename T>
std::vector<double> picked(const Ints& picks) {
  std::vector<double> v;
  for (int64_t p : picks) v.push_back(static_cast<float>(element<T>(p)));
  return v;
}

// Returns `values` of T as doubles.
template <typename T>
std::vector<double> doubles(std::initializer_list<T> values) {
  std::vector<double> v;
  for (T x : values) v.push_back(static_cast<float>(x));
  return v;
}

using testutil::as_doubles;

OpAttrs dims(Ints d, Ints d2 = {}, Ints d3 = {}) {
  OpAttrs a;
  a.dims.assign(d.begin(), d.end());
  a.dims2.assign(d2.begin(), d2.end());
  a.dims3.assign(d3.begin(), d3.end());
  return a;
}

OpAttrs axis(int64_t ax) {
  OpAttrs a;
  a.axis = ax;
  return a;
}

template <typename T>
class ArrayKernelTest : public ::testing::Test {
 protected:
  // Runs `op` on iota inputs of `shapes` and expects `shape` holding the picked elements.
  void expect(OpId op, std::vector<Shape> shapes, const OpAttrs& attrs, const Shape& shape,
              const Ints& picks) {
    std::vector<HostTensor> in;
    for (const Shape& s : shapes) in.push_back(iota<T>(s));
    absl::StatusOr<HostTensor> out = run_cpu(op, in, attrs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape(), shape) << op_name(op);
    EXPECT_EQ(as_doubles(*out), picked<T>(picks)) << op_name(op);
  }
};
using AllDTypes = ::testing::Types<float, double, int32_t, int64_t, bool, bfloat16, float16>;
TYPED_TEST_SUITE(ArrayKernelTest, AllDTypes);

TYPED_TEST(ArrayKernelTest, ReshapeExpandDimsAndSqueezeCopyTheElements) {
  this->expect(OpId::kReshape, {S({2, 3})}, dims({3, -1}), S({3, 2}), {0, 1, 2, 3, 4, 5});
  this->expect(OpId::kReshape, {S({0, 3})}, dims({3, 0}), S({3, 0}), {});
  this->expect(OpId::kExpandDims, {S({2, 3})}, axis(-1), S({2, 3, 1}), {0, 1, 2, 3, 4, 5});
  OpAttrs sq;
  this->expect(OpId::kSqueeze, {S({1, 3, 1})}, sq, S({3}), {0, 1, 2});
  sq.axes = {-1};
  this->expect(OpId::kSqueeze, {S({1, 3, 1})}, sq, S({1, 3}), {0, 1, 2});
}

TYPED_TEST(ArrayKernelTest, TransposePermutesDimensions) {
  this->expect(OpId::kTranspose, {S({2, 3})}, dims({1, 0}), S({3, 2}), {0, 3, 1, 4, 2, 5});
  this->expect(OpId::kTranspose, {S({2, 1, 2})}, dims({2, 0, 1}), S({2, 2, 1}), {0, 2, 1, 3});
  this->expect(OpId::kTranspose, {S({})}, dims({}), S({}), {0});
  this->expect(OpId::kTranspose, {S({0, 2})}, dims({1, 0}), S({2, 0}), {});
}

TYPED_TEST(ArrayKernelTest, ConcatStackAndSplitMoveRows) {
  // (2, 2) and (2, 1) joined on axis 1: the second input's elements come after 4.
  std::vector<HostTensor> in = {iota<TypeParam>(S({2, 2})), iota<TypeParam>(S({2, 1}))};
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kConcatV2, in, axis(-1));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), S({2, 3}));
  const auto e = [](int64_t i) { return element<TypeParam>(i); };
  EXPECT_EQ(as_doubles(*out), doubles<TypeParam>({e(0), e(1), e(0), e(2), e(3), e(1)}));
  out = run_cpu(OpId::kPack, {in[0], in[0]}, axis(1));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), S({2, 2, 2}));
  EXPECT_EQ(as_doubles(*out), picked<TypeParam>({0, 1, 0, 1, 2, 3, 2, 3}));
  OpAttrs sizes = dims({1, -1});
  sizes.axis = 1;
  absl::StatusOr<std::vector<HostTensor>> parts =
      run_cpu_all(OpId::kSplitV, {iota<TypeParam>(S({2, 3}))}, sizes);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ(as_doubles((*parts)[0]), picked<TypeParam>({0, 3}));
  EXPECT_EQ((*parts)[1].shape(), S({2, 2}));
  EXPECT_EQ(as_doubles((*parts)[1]), picked<TypeParam>({1, 2, 4, 5}));
}

TYPED_TEST(ArrayKernelTest, SliceAndStridedSlicePickBlocks) {
  this->expect(OpId::kSlice, {S({3, 4})}, dims({1, 1}, {2, -1}), S({2, 3}), {5, 6, 7, 9, 10, 11});
  // t[::-1, 1:3]
  OpAttrs a = dims({0, 1}, {0, 3}, {-1, 1});
  a.begin_mask = a.end_mask = 1;
  this->expect(OpId::kStridedSlice, {S({3, 4})}, a, S({3, 2}), {9, 10, 5, 6, 1, 2});
  // t[..., None, -1]: ellipsis, new axis, shrink
  a = dims({0, 0, -1}, {0, 0, 0}, {1, 1, 1});
  a.ellipsis_mask = 1;
  a.new_axis_mask = 2;
  a.shrink_axis_mask = 4;
  this->expect(OpId::kStridedSlice, {S({3, 4})}, a, S({3, 1}), {3, 7, 11});
  // t[1, 3:0:-2]
  a = dims({1, 3}, {2, 0}, {1, -2});
  a.shrink_axis_mask = 1;
  this->expect(OpId::kStridedSlice, {S({3, 4})}, a, S({2}), {7, 5});
  // t[0:3:INT64_MAX]: one element, so the stride never steps (x 4 elements it overflowed)
  a = dims({0}, {3}, {INT64_MAX});
  this->expect(OpId::kStridedSlice, {S({3, 4})}, a, S({1, 4}), {0, 1, 2, 3});
  // t[1:]: an ellipsis bit past the entries is none, so one covers the rest (it once left
  // dimension 1 out of the output, and a scalar read from an empty input).
  a = dims({1}, {0}, {1});
  a.end_mask = 1;
  a.ellipsis_mask = 4;
  this->expect(OpId::kStridedSlice, {S({3, 4})}, a, S({2, 4}), {4, 5, 6, 7, 8, 9, 10, 11});
  a = dims({}, {}, {});
  a.ellipsis_mask = a.new_axis_mask = a.shrink_axis_mask = 64;
  this->expect(OpId::kStridedSlice, {S({0})}, a, S({0}), {});
}

TYPED_TEST(ArrayKernelTest, BroadcastToTileAndGatherRepeatElements) {
  this->expect(OpId::kBroadcastTo, {S({3, 1})}, dims({2, 3, 2}), S({2, 3, 2}),
               {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
  this->expect(OpId::kTile, {S({2, 2})}, dims({1, 2}), S({2, 4}), {0, 1, 0, 1, 2, 3, 2, 3});
  this->expect(OpId::kTile, {S({2, 2})}, dims({0, 2}), S({0, 4}), {});
  const HostTensor idx = HostTensor::make<int64_t>({2, 1}, {2, 0});
  absl::StatusOr<HostTensor> out =
      run_cpu(OpId::kGatherV2, {iota<TypeParam>(S({2, 3})), idx}, axis(1));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), S({2, 2, 1}));
  EXPECT_EQ(as_doubles(*out), picked<TypeParam>({2, 0, 5, 3}));
}

TYPED_TEST(ArrayKernelTest, ZerosLikeOnesLikeAndOneHotWriteConstants) {
  using T = TypeParam;
  absl::StatusOr<HostTensor> z = run_cpu(OpId::kZerosLike, {iota<T>(S({3}))});
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_THAT(as_doubles(*z), ElementsAre(0, 0, 0));
  absl::StatusOr<HostTensor> o = run_cpu(OpId::kOnesLike, {iota<T>(S({2}))});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_THAT(as_doubles(*o), ElementsAre(1, 1));
  OpAttrs a;
  a.depth = 3;
  a.axis = -1;
  a.value = {.f = 5, .i = 5, .b = true};
  a.dst_dtype = dtype_of<T>();
  const HostTensor idx = HostTensor::make<int32_t>({3}, {1, -1, 2});
  absl::StatusOr<HostTensor> h = run_cpu(OpId::kOneHot, {idx}, a);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->shape(), S({3, 3}));
  const double x = std::is_same_v<T, bool> ? 1 : 5;
  EXPECT_THAT(as_doubles(*h), ElementsAre(0, x, 0, 0, 0, 0, 0, 0, x));
}

// A plain reference: the output element at each index reads the input at the permuted one.
std::vector<float> transpose_reference(const Shape& in, const Ints& perm, const float* x) {
  const int rank = in.rank();
  Ints out_dims(rank), in_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * in.dim(i + 1);
  for (int i = 0; i < rank; ++i) out_dims[i] = in.dim(perm[i]);
  std::vector<float> out(in.num_elements());
  for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
    int64_t rest = o, off = 0;
    for (int i = rank - 1; i >= 0; --i) {
      off += rest % out_dims[i] * in_strides[perm[i]];
      rest /= out_dims[i];
    }
    out[o] = x[off];
  }
  return out;
}

TEST(ArrayKernelRandomTest, TransposeMatchesThePlainReference) {
  std::mt19937 rng(7);
  const std::vector<Ints> shapes = {{300, 257}, {3, 130, 70}, {2, 3, 4, 5, 6}, {7, 1, 9, 1},
                                    {5, 0, 3},  {64, 64},     {1, 1000, 3}};
  for (const Ints& d : shapes) {
    const Shape shape = Shape::make(d).value();
    Ints perm(d.size());
    std::iota(perm.begin(), perm.end(), 0);
    for (int round = 0; round < 4; ++round) {
      std::shuffle(perm.begin(), perm.end(), rng);
      const HostTensor in = iota<float>(shape);
      absl::StatusOr<HostTensor> out = run_cpu(OpId::kTranspose, {in}, dims(perm));
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->values<float>(),
                transpose_reference(shape, perm, static_cast<const float*>(in.data())))
          << shape.to_string();
    }
  }
}

TEST(ArrayKernelRandomTest, ConcatThenSplitGivesTheInputsBack) {
  for (int64_t ax : {0, 1, 2}) {
    std::vector<HostTensor> in;
    Ints sizes;
    for (int64_t n : {3, 0, 70, 1}) {
      Ints d = {4, 5, 6};
      d[ax] = n;
      in.push_back(iota<double>(Shape::make(d).value()));
      sizes.push_back(n);
    }
    absl::StatusOr<HostTensor> joined = run_cpu(OpId::kConcatV2, in, axis(ax));
    ASSERT_TRUE(joined.ok()) << joined.status();
    OpAttrs a = dims(sizes);
    a.axis = ax;
    absl::StatusOr<std::vector<HostTensor>> parts = run_cpu_all(OpId::kSplitV, {*joined}, a);
    ASSERT_TRUE(parts.ok()) << parts.status();
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ((*parts)[i].shape(), in[i].shape());
      EXPECT_EQ((*parts)[i].values<double>(), in[i].values<double>()) << "axis " << ax;
    }
  }
}

TEST(ArrayKernelRandomTest, TileAndBroadcastToMatchModularIndexing) {
  const HostTensor in = iota<float>(S({3, 1, 5}));
  absl::StatusOr<HostTensor> t = run_cpu(OpId::kTile, {in}, dims({2, 40, 3}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), S({6, 40, 15}));
  const std::vector<float> v = t->values<float>();
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t j = 0; j < 40; ++j) {
      for (int64_t k = 0; k < 15; ++k) {
        ASSERT_EQ(v[(i * 40 + j) * 15 + k], element<float>(i % 3 * 5 + k % 5));
      }
    }
  }
  absl::StatusOr<HostTensor> b = run_cpu(OpId::kBroadcastTo, {in}, dims({2, 3, 100, 5}));
  ASSERT_TRUE(b.ok()) << b.status();
  const std::vector<float> w = b->values<float>();
  for (int64_t i = 0; i < static_cast<int64_t>(w.size()); ++i) {
    ASSERT_EQ(w[i], element<float>(i / 500 % 3 * 5 + i % 5));
  }
}

// Found by the tensor fuzzer: outputs with no element whose other dimensions are huge, and
// split sizes whose sum passes int64 (each was signed overflow, and OneHot counted through
// outer x depth rows of nothing); 2^40 parts of an empty dimension aborted.
TEST(ArrayKernelEdgeTest, HugeDimensionsBesideAZeroAndHugeSplitSizes) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  absl::StatusOr<HostTensor> b =
      run_cpu(OpId::kBroadcastTo, {iota<float>(S({1, 1}))}, dims({kHuge, kHuge, 0}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->shape(), S({kHuge, kHuge, 0}));
  OpAttrs hot;
  hot.depth = kHuge;
  hot.axis = 1;
  absl::StatusOr<HostTensor> h =
      run_cpu(OpId::kOneHot, {HostTensor::make<int32_t>({2, 0}, {})}, hot);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->shape(), S({2, kHuge, 0}));
  OpAttrs parts_of_nothing;
  parts_of_nothing.num_split = kHuge;
  EXPECT_EQ(run_cpu_all(OpId::kSplitV, {iota<float>(S({0}))}, parts_of_nothing).status().message(),
            "[SplitV] num_split 1099511627776 is more than the 65536 parts supported");
  OpAttrs sizes = dims({INT64_MAX, INT64_MAX});
  absl::StatusOr<std::vector<HostTensor>> parts =
      run_cpu_all(OpId::kSplitV, {iota<float>(S({3}))}, sizes);
  EXPECT_EQ(parts.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parts.status().message()),
              ::testing::EndsWith("Got: 9223372036854775807"));
}

// Found by the wire fuzzer (fuzz/worker_request_fuzzer.cc): a concat, split or gather of
// nothing whose dimensions after a zero are huge overflowed its rows' byte sizes.
TEST(ArrayKernelEdgeTest, ConcatSplitAndGatherOfNothingWithHugeDimensions) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  OpAttrs axis;
  axis.axis = 1;
  const HostTensor piece = iota<float>(S({0, kHuge, kHuge}));
  absl::StatusOr<HostTensor> joined = run_cpu(OpId::kConcatV2, {piece, piece}, axis);
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_EQ(joined->shape(), S({0, 2 * kHuge, kHuge}));
  axis.num_split = 2;
  absl::StatusOr<std::vector<HostTensor>> parts = run_cpu_all(OpId::kSplitV, {*joined}, axis);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[1].shape(), S({0, kHuge, kHuge}));
  absl::StatusOr<HostTensor> gathered =
      run_cpu(OpId::kGatherV2, {piece, HostTensor::make<int32_t>({0}, {})}, OpAttrs());
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  EXPECT_EQ(gathered->shape(), S({0, kHuge, kHuge}));
}

// Found by the wire fuzzer: SelectV2 and a broadcasting AddV2 whose output is empty but whose
// other dimensions multiply past int64 overflowed while merging them into a plan.
TEST(ArrayKernelEdgeTest, SelectAndBroadcastOfNothingWithHugeDimensions) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  const HostTensor cond = HostTensor::make<bool>({1, 1, 1}, {true});
  const HostTensor x = iota<float>(S({kHuge, kHuge, 0}));
  const HostTensor y = iota<float>(S({1, 1, 1}));
  absl::StatusOr<HostTensor> chosen = run_cpu(OpId::kSelectV2, {cond, x, y}, OpAttrs());
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(chosen->shape(), S({kHuge, kHuge, 0}));
  absl::StatusOr<HostTensor> sum = run_cpu(OpId::kAddV2, {x, y}, OpAttrs());
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->shape(), S({kHuge, kHuge, 0}));
  // With the zero first, an operand's own strides overflowed before the plan saw the empty
  // output (fuzz/corpus/worker_request/worker_request-select-of-nothing-zero-first).
  const HostTensor zero_first = iota<float>(S({0, kHuge, kHuge}));
  chosen = run_cpu(OpId::kSelectV2, {cond, zero_first, y}, OpAttrs());
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(chosen->shape(), S({0, kHuge, kHuge}));
}

// An input with no element whose dimensions after the zero multiply past int64 overflowed
// its row-major strides in the shape functions of Transpose, Slice, StridedSlice,
// BroadcastTo and Tile (the copy plan). The wire sends the same calls in the corpus input
// worker_request-copies-of-nothing-huge-dimensions.
TEST(ArrayKernelEdgeTest, CopiesOfAnInputOfNothingWithHugeDimensions) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  const HostTensor x = iota<float>(S({0, kHuge, kHuge}));
  absl::StatusOr<HostTensor> t = run_cpu(OpId::kTranspose, {x}, dims({2, 0, 1}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), S({kHuge, 0, kHuge}));
  absl::StatusOr<HostTensor> s = run_cpu(OpId::kSlice, {x}, dims({0, 1, 2}, {-1, 3, -1}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->shape(), S({0, 3, kHuge - 2}));
  absl::StatusOr<HostTensor> ss =
      run_cpu(OpId::kStridedSlice, {x}, dims({0, 0, kHuge - 1}, {0, 4, 0}, {1, 1, -2}));
  ASSERT_TRUE(ss.ok()) << ss.status();
  EXPECT_EQ(ss->shape(), S({0, 4, kHuge / 2}));
  absl::StatusOr<HostTensor> b = run_cpu(OpId::kBroadcastTo, {x}, dims({5, 0, kHuge, kHuge}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->shape(), S({5, 0, kHuge, kHuge}));
  absl::StatusOr<HostTensor> tiled = run_cpu(OpId::kTile, {x}, dims({7, 3, 1}));
  ASSERT_TRUE(tiled.ok()) << tiled.status();
  EXPECT_EQ(tiled->shape(), S({0, 3 * kHuge, kHuge}));
}

}  // namespace
}  // namespace mt
