#pragma once
// The steps of a random op chain (op_chain.h) and what each gave: making a leaf, reading a
// result back, comparing two results (op_chain_run.h runs a step).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/op_id.h"
#include "runtime/minitensor.h"

namespace mt::testing {

// What a step gave: an error code, or a tensor read back as doubles.
struct Outcome {
  absl::StatusCode code = absl::StatusCode::kOk;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<double> values;
  double max_abs = 0;  // over the finite values; +inf when any is not finite
};

std::string compare_outcomes(const Outcome& want, const Outcome& got, bool exact,
                             bool float32_upstream = false, bool half_upstream = false);

enum class StepKind {
  kLeaf,
  kFill,
  kRandom,  // a row of MT_RANDOM_OPS, run on the device under test
  kMatMul,  // MatMul, or BatchMatMulV2 above rank 2
  kAddN,
  kBinary,
  kUnary,
  kReduce,
  kArg,
  kArray,       // a row of MT_ARRAY_OPS (op_chain_array_steps.h)
  kNn,          // a row of MT_NN_OPS
  kSegmentSum,  // UnsortedSegmentSum
  kClip,        // ClipByValue
  kConv,        // a row of MT_CONV_OPS or MT_BATCH_NORM_OPS (op_chain_conv_steps.h)
  kVariable,    // a row of MT_RESOURCE_OPS: a variable made, assigned and read on the device
  kCast,
  kIdentity
};

// The ops of each uniform family of the op table (kernels/op_table.h), with their public
// wrappers: the chains draw from every row.
struct BinaryEntry {
  OpId op;
  Tensor (*fn)(const Tensor&, const Tensor&);
};
struct UnaryEntry {
  OpId op;
  Tensor (*fn)(const Tensor&);
};
struct ReductionEntry {
  OpId op;
  Tensor (*fn)(const Tensor&, const Axes&, bool);
};
#define MT_CHAIN_ENTRY(Name, tf, cc, ...) {OpId::k##Name, &::mt::cc},
inline constexpr BinaryEntry kBinaryOps[] = {MT_BINARY_OPS(MT_CHAIN_ENTRY)};
inline constexpr UnaryEntry kUnaryOps[] = {MT_UNARY_OPS(MT_CHAIN_ENTRY)};
inline constexpr ReductionEntry kReductionOps[] = {MT_REDUCTION_OPS(MT_CHAIN_ENTRY)};
#undef MT_CHAIN_ENTRY

// Returns the row of kBinaryOps that runs `op`.
inline int binary_variant(OpId op) {
  int i = 0;
  while (kBinaryOps[i].op != op) ++i;
  return i;
}

struct Step {
  StepKind kind = StepKind::kLeaf;
  OpId op = OpId::kEagerConst;    // the op the step runs (a fill's is Fill)
  int variant = 0;                // which row of kBinaryOps, kUnaryOps or kReductionOps, or which
                                  // fill (fill zeros ones range)
  std::vector<int> inputs;        // indices of earlier steps
  DType dtype = DType::kFloat32;  // a leaf's or random op's dtype; Cast's, ArgMax's or OneHot's
                                  // output dtype
  std::vector<int64_t> shape;     // a leaf's or random op's shape
  std::vector<double> values;     // a constant's values, fill's value, OneHot's on and off
                                  // values, a random op's bounds or mean and stddev
  int device = 0;                 // the device a leaf is created on
  bool flag_a = false, flag_b = false;       // transpose_a/b, keep_dims; SparseSoftmax...:
                                             // the op itself (both outputs), its gradient
  std::optional<std::vector<int64_t>> axes;  // unset: every axis
  // The attributes of the array ops, ArgMax, ArgMin and the random ops (run_op says which).
  std::vector<int64_t> dims, dims2, dims3;
  int64_t axis = 0;
  int64_t count = 0;  // SplitV's num_split, OneHot's depth
  int pick = 0;       // which output of SplitV
  StridedSliceOptions masks;
  std::optional<int64_t> seed;  // a random op's seed
  // The window of the convolutions and pools (a pool reads all but the dilations) and a
  // pool's ksize; dims holds the shape a gradient op writes.
  nn::Conv2DOptions conv;
  std::array<int32_t, 4> ksize = {1, 1, 1, 1};
  bool is_training = true;  // a batch normalisation step's (data format in conv)
};

// Returns whether `op` is a random op whose numbers depend on what ran before (not one of
// the Stateless* rows): Note [Stateful random steps] below.
inline bool is_stateful_random(OpId op) {
  return op_has_flag(op, kRandom) && std::string_view(op_name(op)).rfind("Stateless", 0) != 0;
}

// Makes a leaf: a constant of `s.values` (floats rounded to 2-byte dtypes).
inline Tensor make_leaf(const Step& s) {
  if (dtype_kind(s.dtype) == DTypeKind::kHalf) {
    return constant(std::vector<float>(s.values.begin(), s.values.end()), s.shape, s.dtype);
  }
  return visit_dtype(s.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> values;
    for (double v : s.values) values.push_back(static_cast<T>(v));
    return constant(values, s.shape);
  });
}

// Reads `t` back: dtype, shape, values as doubles and their largest finite magnitude.
inline Outcome read_outcome(const Tensor& t) {
  Outcome o;
  o.dtype = t.dtype();
  o.shape.assign(t.shape().dims().begin(), t.shape().dims().end());
  visit_dtype(o.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T v : t.to_vector<T>()) {
      if constexpr (dtype_kind(dtype_of<T>()) == DTypeKind::kHalf) {
        o.values.push_back(static_cast<double>(static_cast<float>(v)));
      } else {
        o.values.push_back(static_cast<double>(v));
      }
    }
  });
  for (double v : o.values)
    o.max_abs = std::max(o.max_abs, std::isfinite(v) ? std::fabs(v) : INFINITY);
  return o;
}

// Returns why `got` differs from `want`, or "" when it does not: the error code, the dtype
// and shape, then the values (NaN equals NaN; without `exact`, within a relative tolerance:
// float32's when the value is float32 or was computed from float32 values upstream, since
// one float32 rounding apart on two devices stays that far apart after a cast).
// Note [Fuzzing 2-byte dtypes]: across device types, one op's bfloat16 or float16 results
// may differ by an ulp (2^-7 or 2^-10 relative: a float32 sum taken in another order rounds
// the other way), and later ops amplify that: exp turns an ulp of x = 10 into 6 % of the
// result in bfloat16. So steps fed by 2-byte values get a relative tolerance of 1/8 (of the
// scale), loose enough for chains of 12 steps and still far below what a wrong element,
// index or sign gives.
inline std::string compare_outcomes(const Outcome& want, const Outcome& got, bool exact,
                                    bool float32_upstream, bool half_upstream) {
  if (want.code != got.code) {
    return absl::StrCat("error code ", absl::StatusCodeToString(got.code), ", reference ",
                        absl::StatusCodeToString(want.code));
  }
  if (want.dtype != got.dtype || want.shape != got.shape) {
    return absl::StrCat("got ", dtype_name(got.dtype), " (", absl::StrJoin(got.shape, ", "),
                        "), reference ", dtype_name(want.dtype), " (",
                        absl::StrJoin(want.shape, ", "), ")");
  }
  const bool float32 = want.dtype == DType::kFloat32 || float32_upstream;
  const bool half =
      want.dtype == DType::kBFloat16 || want.dtype == DType::kFloat16 || half_upstream;
  const double tolerance = exact ? 0 : (half ? 0.125 : float32 ? 1e-4 : 1e-10);
  const double scale = 1 + (std::isfinite(want.max_abs) ? want.max_abs : 0);
  for (size_t i = 0; i < want.values.size(); ++i) {
    const double w = want.values[i], g = got.values[i];
    if (std::isnan(w) && std::isnan(g)) continue;
    // Relative to the element too: with an inf elsewhere, max_abs gives no scale.
    const double local = std::isfinite(w) ? std::max(scale, 1 + std::fabs(w)) : scale;
    if (w == g || std::fabs(w - g) <= tolerance * local) continue;
    return absl::StrCat("element ", i, " is ", g, ", reference ", w);
  }
  return "";
}

// Note [Stateful random steps]: RandomUniform and the other stateful random ops give the
// same numbers on every device only for the same place in a stream, and a stream moves on
// at every call of the process (Note [Seeds of the stateful random ops] in
// kernels/random_seed.h), so a replay gets other numbers. Such a step is compared by code,
// dtype, shape and the range of its values, [lo, hi]; later steps read the reference values.
inline std::string compare_random_outcomes(const Outcome& want, const Outcome& got, double lo,
                                           double hi) {
  Outcome got_shape = got;
  got_shape.values = want.values;  // compared below, by range
  if (std::string why = compare_outcomes(want, got_shape, /*exact=*/true); !why.empty()) {
    return why;
  }
  for (size_t i = 0; i < got.values.size(); ++i) {
    if (!(got.values[i] >= lo && got.values[i] <= hi)) {
      return absl::StrCat("element ", i, " is ", got.values[i], ", outside [", lo, ", ", hi, "]");
    }
  }
  return "";
}

}  // namespace mt::testing
