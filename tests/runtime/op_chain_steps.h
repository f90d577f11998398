#pragma once
// The steps of a random op chain (op_chain.h) and what each gave: running one on given
// inputs, reading its result back, comparing two results.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
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

enum class StepKind { kLeaf, kFill, kMatMul, kAddN, kBinary, kUnary, kReduce, kCast, kIdentity };

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
  int variant = 0;                // which row of kBinaryOps, kUnaryOps or kReductionOps, or which
                                  // fill (fill zeros ones stateless_uniform stateless_normal)
  std::vector<int> inputs;        // indices of earlier steps
  DType dtype = DType::kFloat32;  // a leaf's dtype, or Cast's destination
  std::vector<int64_t> shape;     // a leaf's shape
  std::vector<double> values;     // a constant's values, or fill's value
  int device = 0;                 // the device a leaf is created on
  bool flag_a = false, flag_b = false;       // transpose_a/b, or keep_dims
  std::optional<std::vector<int64_t>> axes;  // unset: every axis
};

template <typename T>
Tensor make_leaf(const Step& s) {
  std::vector<T> values(s.values.begin(), s.values.end());
  return constant(values, s.shape);
}

template <typename T>
void read_values(const Tensor& t, Outcome* o) {
  for (T v : t.to_vector<T>()) o->values.push_back(static_cast<double>(v));
}

inline Tensor run_op(const Step& s, const std::vector<Tensor>& in) {
  switch (s.kind) {
    case StepKind::kMatMul:
      return matmul(in[0], in[1], s.flag_a, s.flag_b);
    case StepKind::kAddN:
      return add_n(in);
    case StepKind::kBinary:
      return kBinaryOps[s.variant].fn(in[0], in[1]);
    case StepKind::kUnary:
      return kUnaryOps[s.variant].fn(in[0]);
    case StepKind::kReduce: {
      const Axes axes = s.axes ? Axes(absl::MakeConstSpan(*s.axes)) : Axes();
      return kReductionOps[s.variant].fn(in[0], axes, s.flag_a);
    }
    case StepKind::kCast:
      return cast(in[0], s.dtype);
    default:
      return identity(in[0]);
  }
}

// Runs a random op (MT_RANDOM_OPS) of fill variant 3 or 4: a stateless one, whose bits
// are the same on every device; fill's value seeds it. Normal integers and bool fail alike
// everywhere.
inline Tensor make_random(const Step& s) {
  const random::StatelessSeed seed = {static_cast<int64_t>(s.values[0]), 7};
  const bool integer = s.dtype == DType::kInt32 || s.dtype == DType::kInt64;
  if (s.variant == 4) return random::stateless_normal(s.shape, seed, 0, 2, s.dtype);
  if (integer) return random::stateless_uniform_int(s.shape, seed, -4, 5, s.dtype);
  return random::stateless_uniform(s.shape, seed, -2, 2, s.dtype);
}

inline Tensor make_source(const Step& s) {
  if (s.kind == StepKind::kFill) {
    if (s.variant == 1) return zeros(s.shape, s.dtype);
    if (s.variant == 2) return ones(s.shape, s.dtype);
    if (s.variant >= 3) return make_random(s);
    return fill(s.shape, s.values[0], s.dtype);
  }
  switch (s.dtype) {
    case DType::kFloat32:
      return make_leaf<float>(s);
    case DType::kFloat64:
      return make_leaf<double>(s);
    case DType::kInt32:
      return make_leaf<int32_t>(s);
    case DType::kInt64:
      return make_leaf<int64_t>(s);
    default:
      return make_leaf<bool>(s);
  }
}

// Reads `t` back: dtype, shape, values as doubles and their largest finite magnitude.
inline Outcome read_outcome(const Tensor& t) {
  Outcome o;
  o.dtype = t.dtype();
  o.shape.assign(t.shape().dims().begin(), t.shape().dims().end());
  switch (o.dtype) {
    case DType::kFloat32:
      read_values<float>(t, &o);
      break;
    case DType::kFloat64:
      read_values<double>(t, &o);
      break;
    case DType::kInt32:
      read_values<int32_t>(t, &o);
      break;
    case DType::kInt64:
      read_values<int64_t>(t, &o);
      break;
    default:
      read_values<bool>(t, &o);
  }
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

}  // namespace mt::testing
