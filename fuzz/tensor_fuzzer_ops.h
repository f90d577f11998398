#pragma once
// The tensor fuzzer's op calls (tensor_fuzzer.cc): any row of the op table (a byte modulo
// kNumOps) on up to four small tensors of fuzzed dtypes, shapes and values, with every
// attribute fuzzed, through internal::execute_all (internal::execute_source for the source
// ops). The model is the op's own shape function: where infer_outputs rejects the call,
// the op fails with the same code and message; where it accepts it, the op returns outputs
// of the shapes and dtypes it inferred, on CPU:0, whose elements can be read, or fails with
// ResourceExhausted for a large request, or (for the few kernels that check values:
// kernel_may_reject) with InvalidArgument naming the op. Ops that only move elements are
// checked against the bytes of their inputs.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_util.h"
#include "kernels/op_def.h"
#include "kernels/op_id.h"
#include "runtime/eager/execute.h"

namespace mt::fuzz {

// Returns whether `op`'s CPU kernel fails on some values of valid inputs: indices or labels
// out of range (segment ids and scatter index rows too), integer division by zero, integers
// to negative powers.
inline bool kernel_may_reject(OpId op) {
  return op == OpId::kGatherV2 || op == OpId::kSparseSoftmaxCrossEntropyWithLogits ||
         op == OpId::kFloorDiv || op == OpId::kFloorMod || op == OpId::kPow ||
         op == OpId::kUnsortedSegmentSum || op == OpId::kScatterNd ||
         op == OpId::kTensorScatterUpdate || op == OpId::kTensorScatterAdd;
}

// An integer near the range of axes of a rank-`rank` tensor, now and then any.
inline int64_t small_int(FuzzedDataProvider& in, int rank) {
  switch (in.ConsumeIntegralInRange(0, 9)) {
    case 0:
      return in.ConsumeIntegral<int64_t>();
    case 1:
      return in.ConsumeIntegralInRange<int64_t>(-1, 9);
    default:
      return in.ConsumeIntegralInRange<int64_t>(-rank - 1, rank + 1);
  }
}

inline Scalar fuzz_scalar(FuzzedDataProvider& in) {
  static const double kValues[] = {0, 1, -1, 2.5, -0.0, 1e30, INFINITY, NAN};
  const double f = kValues[in.ConsumeIntegralInRange(0, 7)];
  return Scalar{f, in.ConsumeIntegralInRange<int64_t>(-3, 3), in.ConsumeBool()};
}

// A list attribute: of any length or one per dimension of `dims`, of integers near the
// axes, or `dims` itself (one entry may be -1), or 0, 1, ... (a permutation, reversed or not).
inline absl::InlinedVector<int64_t, 4> fuzz_list(FuzzedDataProvider& in,
                                                 const std::vector<int64_t>& dims) {
  const int rank = static_cast<int>(dims.size());
  absl::InlinedVector<int64_t, 4> list;
  switch (in.ConsumeIntegralInRange(0, 4)) {
    case 0:
      list.resize(in.ConsumeIntegralInRange(0, 5));
      break;
    case 1:
      list.resize(rank);
      break;
    case 2:
      list.assign(dims.begin(), dims.end());
      if (rank > 0 && in.ConsumeBool()) list[in.ConsumeIntegralInRange(0, rank - 1)] = -1;
      return list;
    default:
      for (int i = 0; i < rank; ++i) list.push_back(i);
      if (in.ConsumeBool()) std::reverse(list.begin(), list.end());
      return list;
  }
  for (int64_t& v : list) v = small_int(in, rank);
  return list;
}

// An entry of a window's strides, dilations, ksize or explicit pads: small (0 and -1
// included), now and then up to 2^16 (no more: a pool's loops visit every row and column
// of its window, padding included).
inline int32_t window_entry(FuzzedDataProvider& in) {
  if (in.ConsumeIntegralInRange(0, 15) == 0) return in.ConsumeIntegralInRange(-1, 1 << 16);
  return in.ConsumeIntegralInRange(-1, 4);
}

// The window of the convolutions and pools (Note [Convolutions] in kernels/conv_shape.cc),
// mostly 1 in the batch and channel entries; read after every other field, so that those
// decode from saved inputs as they did.
inline void fuzz_window(FuzzedDataProvider& in, OpAttrs& a) {
  a.channels_first = in.ConsumeBool();
  for (std::array<int32_t, 4>* list : {&a.strides, &a.dilations, &a.ksize}) {
    const bool outer_ones = in.ConsumeBool();
    for (size_t i = 0; i < list->size(); ++i) {
      const bool outer = i == 0 || i == (a.channels_first ? 1u : 3u);
      (*list)[i] = outer && outer_ones ? 1 : window_entry(in);
    }
  }
  a.padding = static_cast<Padding>(in.ConsumeIntegralInRange(0, 2));
  if (in.ConsumeBool()) {
    for (int32_t& p : a.explicit_paddings) p = in.ConsumeBool() ? 0 : window_entry(in);
  }
}

// Every field of OpAttrs, each op reading its own; axes and lists near those of `dims`.
inline OpAttrs fuzz_attrs(FuzzedDataProvider& in, const std::vector<int64_t>& dims) {
  const int rank = static_cast<int>(dims.size());
  OpAttrs a;
  a.transpose_a = in.ConsumeBool();
  a.transpose_b = in.ConsumeBool();
  a.axes = fuzz_list(in, dims);
  a.reduce_all = in.ConsumeBool();
  a.keep_dims = in.ConsumeBool();
  a.dst_dtype = static_cast<DType>(in.ConsumeBool() ? in.ConsumeIntegral<uint8_t>()
                                                    : in.ConsumeIntegralInRange(0, kNumDTypes - 1));
  a.value = fuzz_scalar(in);
  a.dims = fuzz_list(in, dims);
  a.dims2 = fuzz_list(in, dims);
  a.dims3 = fuzz_list(in, dims);
  a.axis = small_int(in, rank);
  a.num_split = small_int(in, rank);
  a.depth = small_int(in, rank);
  a.off_value = fuzz_scalar(in);
  int32_t* masks[] = {&a.begin_mask, &a.end_mask, &a.ellipsis_mask, &a.new_axis_mask,
                      &a.shrink_axis_mask};
  for (int32_t* m : masks) *m = in.ConsumeBool() ? 0 : in.ConsumeIntegral<int32_t>() & 0x7f;
  in.ConsumeData(&a.philox, sizeof(a.philox));
  a.minval = fuzz_scalar(in);
  a.maxval = fuzz_scalar(in);
  a.mean = fuzz_scalar(in).f;
  a.stddev = fuzz_scalar(in).f;
  fuzz_scalar(in);  // was the learning rate: saved inputs keep decoding as they did
  a.beta_1 = fuzz_scalar(in).f;
  a.beta_2 = fuzz_scalar(in).f;
  a.epsilon = fuzz_scalar(in).f;
  fuzz_window(in, a);
  // Cumsum's and Range's, read last so that saved inputs keep decoding as they did.
  a.exclusive = in.ConsumeBool();
  a.reverse = in.ConsumeBool();
  a.start = fuzz_scalar(in);
  a.limit = fuzz_scalar(in);
  a.delta = fuzz_scalar(in);
  // MirrorPad's mode and TopKV2's k and sorted (the paddings are `dims`), read after those.
  a.symmetric = in.ConsumeBool();
  a.k = in.ConsumeIntegralInRange<int64_t>(-1, 5);
  a.sorted = in.ConsumeBool();
  a.approximate = in.ConsumeBool();  // Gelu's, read after those for the same reason
  a.scale = fuzz_scalar(in).f;       // DotProductAttention's, read last likewise
  a.causal = in.ConsumeBool();
  return a;
}

// A tensor of `dtype` and `dims` (at most 4^4 elements): raw bytes, or small values (integers
// in [-2, 5], so that indices and labels are in range now and then).
inline Tensor small_tensor(FuzzedDataProvider& in, DType dtype, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (in.ConsumeBool()) {
    std::string bytes = in.ConsumeBytesAsString(n * dtype_size(dtype));
    bytes.resize(n * dtype_size(dtype));
    return make_tensor(dtype, bytes, dims);
  }
  std::vector<float> values(n);
  for (float& v : values) v = in.ConsumeIntegralInRange(-2, 5) * (in.ConsumeBool() ? 1 : 0.5f);
  if (is_floating(dtype)) return constant(values, dims, dtype);
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return constant(std::vector<T>(values.begin(), values.end()), dims);
  });
}

// Returns the output bytes `metas` need.
inline int64_t output_bytes(const OutputMetas& metas) {
  int64_t bytes = 0;
  for (const OutputMeta& m : metas) {
    bytes += m.shape.num_elements() * static_cast<int64_t>(dtype_size(m.dtype));
  }
  return bytes;
}

// Checks the outputs of `op` against the bytes of its inputs, for ops that only move them.
inline void check_moved(OpId op, const OpAttrs& attrs, absl::Span<const Tensor> in,
                        absl::Span<const Tensor> out) {
  const int rank = in[0].shape().rank();
  std::string joined_in, joined_out;
  for (const Tensor& t : in) joined_in += contents(t);
  for (const Tensor& t : out) joined_out += contents(t);
  switch (op) {
    case OpId::kIdentity:
    case OpId::kReshape:
    case OpId::kExpandDims:
    case OpId::kSqueeze:
      FUZZ_CHECK(joined_out == joined_in);
      break;
    case OpId::kConcatV2:  // along the first axis: the inputs one after another
      if (attrs.axis == 0 || attrs.axis == -rank) FUZZ_CHECK(joined_out == joined_in);
      break;
    case OpId::kPack:
      if (attrs.axis == 0 || attrs.axis == -rank - 1) FUZZ_CHECK(joined_out == joined_in);
      break;
    case OpId::kSplitV:
      if (attrs.axis == 0 || attrs.axis == -rank) FUZZ_CHECK(joined_out == joined_in);
      break;
    case OpId::kZerosLike:
      FUZZ_CHECK(joined_out == std::string(joined_out.size(), '\0'));
      break;
    case OpId::kOnesLike:
      FUZZ_CHECK(joined_out == contents(ones(out[0].shape().dims(), out[0].dtype())));
      break;
    default:
      break;
  }
}

// Runs `op` (a source op: execute_source) and returns its outputs or its error.
inline absl::StatusOr<internal::Tensors> execute_any(OpId op, absl::Span<const Tensor> in,
                                                     const OpAttrs& attrs, DType dtype,
                                                     const Shape& shape, const std::string& host) {
  if (op_has_flag(op, kSource)) {
    absl::StatusOr<Tensor> t = internal::execute_source(op, dtype, shape, host.data(), attrs);
    if (!t.ok()) return t.status();
    return internal::Tensors{*std::move(t)};
  }
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : in) ptrs.push_back(&t);
  return internal::execute_all(op, ptrs, attrs);
}

// Returns `op`'s inputs: the arity's count (now and then another), the first of `dtype`
// and `dims`, the others of that dtype or another and of those dims, their first or last
// ones (labels, a bias) or ones (broadcasting).
inline std::vector<Tensor> fuzz_inputs(FuzzedDataProvider& in, OpId op,
                                       const std::vector<int64_t>& dims, DType first) {
  const int arity = op_info(op).arity;
  int n = op_has_flag(op, kSource) ? 0
          : arity == kVariadic     ? in.ConsumeIntegralInRange(1, 4)
                                   : arity;
  if (in.ConsumeProbability<float>() < 0.03f) n = in.ConsumeIntegralInRange(0, 4);
  std::vector<Tensor> inputs;
  for (int i = 0; i < n; ++i) {
    DType dtype = first;
    std::vector<int64_t> shape = dims;
    if (i > 0 && in.ConsumeBool()) {
      dtype = static_cast<DType>(in.ConsumeIntegralInRange(0, kNumDTypes - 1));
    }
    const int k = in.ConsumeIntegralInRange(0, static_cast<int>(dims.size()));
    switch (i > 0 ? in.ConsumeIntegralInRange(0, 3) : 0) {
      case 1:
        shape.resize(k);
        break;
      case 2:
        shape.erase(shape.begin(), shape.end() - k);
        break;
      case 3:
        shape.assign(in.ConsumeIntegralInRange(0, 4), 1);
        break;
    }
    inputs.push_back(small_tensor(in, dtype, shape));
  }
  return inputs;
}

// Checks a call's outcome against its shape function's verdict `valid` and outputs `want`.
inline void check_outcome(OpId op, const absl::Status& valid, const OutputMetas& want,
                          const absl::StatusOr<internal::Tensors>& got) {
  if (!valid.ok()) {
    FUZZ_CHECK_MSG(got.status() == valid,
                   absl::StrCat(got.status().ToString(), "\n  wanted: ", valid.ToString()));
    return;
  }
  if (!got.ok()) {
    const absl::Status& s = got.status();
    const bool oom = s.code() == absl::StatusCode::kResourceExhausted &&
                     starts_with(std::string(s.message()), "OOM when allocating tensor") &&
                     output_bytes(want) > (int64_t{1} << 20);
    const bool rejected =
        s.code() == absl::StatusCode::kInvalidArgument && kernel_may_reject(op) &&
        starts_with(std::string(s.message()), absl::StrCat("[", op_name(op), "]"));
    FUZZ_CHECK_MSG(oom || rejected, absl::StrCat(op_name(op), ": ", s.ToString()));
    return;
  }
  FUZZ_CHECK(got->size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const Tensor& t = (*got)[i];
    FUZZ_CHECK(t.shape() == want[i].shape && t.dtype() == want[i].dtype);
    FUZZ_CHECK(t.device() == "/job:localhost/replica:0/task:0/device:CPU:0");
    // Readable; VarHandleOp's buffer is uninitialised until AssignVariableOp fills it.
    if (t.num_elements() <= 4096 && op != OpId::kVarHandleOp) contents(t);
  }
}

// Calls one op of the table on fuzzed inputs and attributes and checks the outcome.
inline void call_any_op(FuzzedDataProvider& in) {
  const OpId op = static_cast<OpId>(in.ConsumeIntegral<uint8_t>() % kNumOps);
  std::vector<int64_t> dims(in.ConsumeIntegralInRange(0, 4));
  for (int64_t& d : dims) d = in.ConsumeIntegralInRange(0, 4);
  const DType first = static_cast<DType>(in.ConsumeIntegralInRange(0, kNumDTypes - 1));
  const std::vector<Tensor> inputs = fuzz_inputs(in, op, dims, first);
  std::vector<TensorMeta> metas;
  for (const Tensor& t : inputs) metas.push_back(TensorMeta{&t.shape(), t.dtype()});
  const OpAttrs attrs = fuzz_attrs(in, dims);
  // A source op's output: the dims above, the dtype any byte (EagerConst's host elements
  // are zeros).
  const DType dtype = in.ConsumeBool() ? static_cast<DType>(in.ConsumeIntegral<uint8_t>()) : first;
  absl::StatusOr<Shape> shape = Shape::make(dims);
  FUZZ_CHECK(shape.ok());
  const std::string host(shape->num_elements() * 8, '\0');
  if (op_has_flag(op, kSource)) {
    if (static_cast<int>(dtype) >= kNumDTypes) return;  // the callers check the dtype
    metas = {TensorMeta{&*shape, dtype}};
  }
  OutputMetas want;
  const absl::Status valid = infer_outputs(op, metas, attrs, &want);
  const absl::StatusOr<internal::Tensors> got = execute_any(op, inputs, attrs, dtype, *shape, host);
  check_outcome(op, valid, want, got);
  if (got.ok() && !inputs.empty()) check_moved(op, attrs, inputs, absl::MakeConstSpan(*got));
}

}  // namespace mt::fuzz
