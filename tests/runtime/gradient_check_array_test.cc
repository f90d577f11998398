// GradientTape's gradients of the array ops (and UnsortedSegmentSum) against float64 central
// differences: the cases of gradient_check.h for reshape, transpose, expand_dims, squeeze,
// concat, stack, split, slice, strided_slice, gather, broadcast_to, tile, band_part, cumsum,
// pad (each mode), top_k, where, unsorted_segment_sum and the scatters, with the attrs each
// op takes.
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/runtime/gradient_check.h"

namespace mt::testing {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Returns a case of `op` on one input.
GradCase one(OpId op, std::string name, GradInput in, std::function<Tensor(const Tensor&)> f) {
  return {op, std::move(name), {std::move(in)}, [f = std::move(f)](const std::vector<Tensor>& x) {
            return f(x[0]);
          }};
}

void add_shape_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  cases.push_back(
      one(OpId::kReshape, "Reshape to (4, -1)", r.uniform({2, 3, 4}), [](const Tensor& x) {
        return reshape(x, {4, -1});
      }));
  cases.push_back(
      one(OpId::kReshape, "Reshape a scalar to (1, 1)", r.uniform({}), [](const Tensor& x) {
        return reshape(x, {1, 1});
      }));
  cases.push_back(
      one(OpId::kTranspose, "Transpose perm {2, 0, 1}", r.uniform({2, 3, 4}), [](const Tensor& x) {
        return transpose(x, {2, 0, 1});
      }));
  cases.push_back(one(OpId::kTranspose, "Transpose reversed", r.uniform({3, 4}),
                      [](const Tensor& x) { return transpose(x); }));
  for (int64_t axis : {0, 1, -1}) {
    cases.push_back(one(OpId::kExpandDims, absl::StrCat("ExpandDims axis ", axis),
                        r.uniform({2, 3}),
                        [axis](const Tensor& x) { return expand_dims(x, axis); }));
  }
  for (const Ints& axes : {Ints{}, Ints{1}, Ints{-1, 1}}) {
    cases.push_back(one(OpId::kSqueeze, absl::StrCat("Squeeze ", axes.size(), " axes"),
                        r.uniform({2, 1, 3, 1}),
                        [axes](const Tensor& x) { return squeeze(x, axes); }));
  }
  cases.push_back({OpId::kConcatV2,
                   "ConcatV2 axis 0",
                   {r.uniform({2, 3}), r.uniform({1, 3}), r.uniform({4, 3})},
                   [](const std::vector<Tensor>& x) {
                     return concat({x[0], x[1], x[2]}, 0);
                   }});
  cases.push_back({OpId::kConcatV2,
                   "ConcatV2 axis -1, one input twice",
                   {r.uniform({2, 1}), r.uniform({2, 3})},
                   [](const std::vector<Tensor>& x) {
                     return concat({x[0], x[1], x[0]}, -1);
                   }});
  for (int64_t axis : {0, 1, -1}) {
    cases.push_back({OpId::kPack,
                     absl::StrCat("Pack axis ", axis),
                     {r.uniform({2, 3}), r.uniform({2, 3}), r.uniform({2, 3})},
                     [axis](const std::vector<Tensor>& x) {
                       return stack({x[0], x[1], x[2]}, axis);
                     }});
  }
}

// SplitV has several outputs: the case returns sum_i reduce_sum(part_i * weight_i) over the
// parts it uses, each weight fixed and random.
Fn weighted_parts(std::function<std::vector<Tensor>(const Tensor&)> split_fn,
                  std::vector<Tensor> weights, std::vector<int> used) {
  return [=](const std::vector<Tensor>& x) {
    const std::vector<Tensor> parts = split_fn(x[0]);
    Tensor sum;
    for (int i : used) {
      const Tensor term = reduce_sum(mul(parts[i], weights[i]));
      sum = sum.defined() ? add(sum, term) : term;
    }
    return sum;
  };
}

void add_split_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  std::vector<Tensor> equal;
  for (int i = 0; i < 3; ++i) equal.push_back(tensor_of(r.uniform({2, 4})));
  cases.push_back(
      {OpId::kSplitV,
       "SplitV in 3 along axis 0",
       {r.uniform({6, 4})},
       weighted_parts([](const Tensor& x) { return split(x, 3, 0); }, equal, {0, 1, 2})});
  const std::vector<Tensor> sized = {tensor_of(r.uniform({3, 1})), tensor_of(r.uniform({3, 2})),
                                     tensor_of(r.uniform({3, 2}))};
  cases.push_back({OpId::kSplitV,
                   "SplitV sizes {1, -1, 2} along axis -1, part 1 unused",
                   {r.uniform({3, 5})},
                   weighted_parts(
                       [](const Tensor& x) {
                         return split(x, Ints{1, -1, 2}, -1);
                       },
                       sized, {0, 2})});
}

void add_slice_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  cases.push_back(
      one(OpId::kSlice, "Slice begin {1, 2} size {2, -1}", r.uniform({4, 5}), [](const Tensor& x) {
        return slice(x, {1, 2}, {2, -1});
      }));
  cases.push_back(one(OpId::kSlice, "Slice begin {0, 1, 1} size {3, 2, 3}", r.uniform({3, 4, 5}),
                      [](const Tensor& x) {
                        return slice(x, {0, 1, 1}, {3, 2, 3});
                      }));
  cases.push_back(one(OpId::kStridedSlice, "StridedSlice [0:6:2, 4:0:-1]", r.uniform({6, 5}),
                      [](const Tensor& x) {
                        return strided_slice(x, {0, 4}, {6, 0}, {2, -1});
                      }));
  cases.push_back(one(OpId::kStridedSlice, "StridedSlice [6:0:-2]", r.uniform({7}),
                      [](const Tensor& x) { return strided_slice(x, {6}, {0}, {-2}); }));
  cases.push_back(
      one(OpId::kStridedSlice, "StridedSlice [::-1]", r.uniform({5}), [](const Tensor& x) {
        return strided_slice(x, {0}, {0}, {-1}, {.begin_mask = 1, .end_mask = 1});
      }));
  cases.push_back(one(OpId::kStridedSlice, "StridedSlice [1, ::2] (shrink axis 0)",
                      r.uniform({4, 5}), [](const Tensor& x) {
                        return strided_slice(x, {1, 0}, {2, 5}, {1, 2}, {.shrink_axis_mask = 1});
                      }));
}

void add_gather_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  const Tensor repeated = constant({4, 0, 2, 0});  // index 0 twice: its rows add up
  cases.push_back(one(OpId::kGatherV2, "GatherV2 axis 0", r.uniform({5, 3}),
                      [repeated](const Tensor& x) { return gather(x, repeated, 0); }));
  const Tensor along_1 = constant({3, 1, 1});
  cases.push_back(one(OpId::kGatherV2, "GatherV2 axis 1", r.uniform({2, 4, 3}),
                      [along_1](const Tensor& x) { return gather(x, along_1, 1); }));
  cases.push_back(one(OpId::kGatherV2, "GatherV2 axis -1", r.uniform({3, 4}),
                      [along_1](const Tensor& x) { return gather(x, along_1, -1); }));
  const Tensor matrix = constant(std::vector<int64_t>{1, 4, 4, 0}, {2, 2});
  cases.push_back(one(OpId::kGatherV2, "GatherV2 int64 (2, 2) indices", r.uniform({5, 2}),
                      [matrix](const Tensor& x) { return gather(x, matrix, 0); }));

  const Tensor ids = constant({0, 2, 0, 3, 1});  // segment 4 empty
  cases.push_back(one(OpId::kUnsortedSegmentSum, "UnsortedSegmentSum int32 ids", r.uniform({5, 3}),
                      [ids](const Tensor& x) { return unsorted_segment_sum(x, ids, 5); }));
  const Tensor ids_2d = constant(std::vector<int64_t>{1, 0, 1, 2, 2, 0}, {2, 3});
  cases.push_back(one(OpId::kUnsortedSegmentSum, "UnsortedSegmentSum int64 (2, 3) ids",
                      r.uniform({2, 3, 2}),
                      [ids_2d](const Tensor& x) { return unsorted_segment_sum(x, ids_2d, 3); }));
  const Tensor dropped = constant({0, -1, 1, 0});  // a negative id drops its row
  cases.push_back(one(OpId::kUnsortedSegmentSum, "UnsortedSegmentSum with a negative id",
                      r.uniform({4, 2}),
                      [dropped](const Tensor& x) { return unsorted_segment_sum(x, dropped, 2); }));
}

void add_broadcast_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  const std::pair<Ints, Ints> to[] = {{{3, 1}, {2, 3, 4}}, {{}, {2, 2}}, {{4}, {3, 4}}};
  for (const auto& [from, shape] : to) {
    cases.push_back(one(OpId::kBroadcastTo, absl::StrCat("BroadcastTo ", from.size(), "-d"),
                        r.uniform(from),
                        [shape = shape](const Tensor& x) { return broadcast_to(x, shape); }));
  }
  cases.push_back(one(OpId::kTile, "Tile {2, 3}", r.uniform({2, 3}), [](const Tensor& x) {
    return tile(x, {2, 3});
  }));
  cases.push_back(one(OpId::kTile, "Tile {1, 4, 2}", r.uniform({2, 1, 3}), [](const Tensor& x) {
    return tile(x, {1, 4, 2});
  }));
  for (const auto& [lower, upper] : {std::pair{1, -1}, std::pair{0, 0}, std::pair{-1, 2}}) {
    cases.push_back(one(OpId::kMatrixBandPart, absl::StrCat("MatrixBandPart ", lower, " ", upper),
                        r.uniform({2, 3, 4}), [lower = lower, upper = upper](const Tensor& x) {
                          return linalg::band_part(x, lower, upper);
                        }));
  }
  for (const auto& [axis, exclusive, reverse] :
       {std::tuple{0, false, false}, std::tuple{1, true, false}, std::tuple{-1, false, true},
        std::tuple{1, true, true}}) {
    cases.push_back(one(OpId::kCumsum,
                        absl::StrCat("Cumsum axis ", axis, exclusive ? " exclusive" : "",
                                     reverse ? " reverse" : ""),
                        r.uniform({3, 4}),
                        [axis = axis, exclusive = exclusive, reverse = reverse](const Tensor& x) {
                          return cumsum(x, axis, exclusive, reverse);
                        }));
  }
  // The pads: a constant pad's gradient is a slice, MirrorPad's is MirrorPadGrad (each mode);
  // TopKV2's goes to the picked elements (distinct random values: no ties to break).
  cases.push_back(one(OpId::kPad, "Pad", r.uniform({2, 3}), [](const Tensor& x) {
    return pad(x, {{1, 0}, {2, 1}});
  }));
  cases.push_back(one(OpId::kPadV2, "PadV2", r.uniform({2, 3}), [](const Tensor& x) {
    return pad(x, {{0, 2}, {1, 1}}, PadMode::kConstant, 3);
  }));
  for (PadMode mode : {PadMode::kReflect, PadMode::kSymmetric}) {
    cases.push_back(one(OpId::kMirrorPad,
                        mode == PadMode::kReflect ? "MirrorPad REFLECT" : "MirrorPad SYMMETRIC",
                        r.uniform({3, 4}), [mode](const Tensor& x) {
                          return pad(x, {{2, 1}, {1, 3}}, mode);
                        }));
  }
  for (bool sorted : {true, false}) {
    cases.push_back(one(OpId::kTopKV2, sorted ? "TopKV2 sorted" : "TopKV2 unsorted",
                        r.uniform({3, 5}),
                        [sorted](const Tensor& x) { return math::top_k(x, 3, sorted).values; }));
  }
  const Tensor full = constant({{true, false, true}, {false, false, true}});
  cases.push_back({OpId::kSelectV2,
                   "SelectV2 y broadcast",
                   {r.uniform({2, 3}), r.uniform({1, 3})},
                   [full](const std::vector<Tensor>& x) { return where(full, x[0], x[1]); }});
  const Tensor column = constant({{true}, {false}});
  cases.push_back({OpId::kSelectV2,
                   "SelectV2 condition and x broadcast",
                   {r.uniform({3}), r.uniform({2, 3})},
                   [column](const std::vector<Tensor>& x) { return where(column, x[0], x[1]); }});
}

// The scatters: ScatterNd with a duplicate row (its updates add) and with rows of two
// indices (int64); TensorScatterUpdate with distinct rows (of duplicates only one update
// reaches the output, which TensorFlow's gradient ignores); TensorScatterAdd with a
// duplicate.
void add_scatter_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  const Tensor dup = constant({{1}, {3}, {1}});
  cases.push_back(
      one(OpId::kScatterNd, "ScatterNd duplicate rows", r.uniform({3, 2}), [dup](const Tensor& u) {
        return scatter_nd(dup, u, {5, 2});
      }));
  const Tensor pairs = constant(std::vector<int64_t>{0, 2, 1, 1, 1, 0}, {3, 2});
  cases.push_back(
      one(OpId::kScatterNd, "ScatterNd int64 rows of 2", r.uniform({3}), [pairs](const Tensor& u) {
        return scatter_nd(pairs, u, {2, 3});
      }));
  const Tensor rows = constant({{2}, {0}});
  cases.push_back({OpId::kTensorScatterUpdate,
                   "TensorScatterUpdate of rows",
                   {r.uniform({4, 3}), r.uniform({2, 3})},
                   [rows](const std::vector<Tensor>& x) {
                     return tensor_scatter_nd_update(x[0], rows, x[1]);
                   }});
  cases.push_back(
      {OpId::kTensorScatterAdd,
       "TensorScatterAdd duplicate rows",
       {r.uniform({5, 2}), r.uniform({3, 2})},
       [dup](const std::vector<Tensor>& x) { return tensor_scatter_nd_add(x[0], dup, x[1]); }});
}

}  // namespace

std::vector<GradCase> array_grad_cases() {
  RandomInputs r(4202);
  std::vector<GradCase> cases;
  add_shape_cases(cases, r);
  add_split_cases(cases, r);
  add_slice_cases(cases, r);
  add_gather_cases(cases, r);
  add_broadcast_cases(cases, r);
  add_scatter_cases(cases, r);
  return cases;
}

namespace {

class GradientCheckArrayTest : public GradientCheckTest {};

TEST_F(GradientCheckArrayTest, ArrayGradientsMatchFiniteDifferences) {
  for (const GradCase& c : array_grad_cases()) check(c);
}

}  // namespace
}  // namespace mt::testing
