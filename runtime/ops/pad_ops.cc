#include "runtime/ops/pad_ops.h"

#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

namespace mt {
namespace {

OpAttrs pad_attrs(const Paddings& paddings, PadMode mode) {
  OpAttrs attrs;
  for (const auto& [before, after] : paddings) {
    attrs.dims.push_back(before);
    attrs.dims.push_back(after);
  }
  attrs.symmetric = mode == PadMode::kSymmetric;
  return attrs;
}

Tensor run(OpId op, const Tensor& x, const OpAttrs& attrs) {
  const Tensor* input = &x;
  return internal::value_or_throw(internal::execute(op, absl::MakeConstSpan(&input, 1), attrs));
}

}  // namespace

Tensor pad(const Tensor& input, const Paddings& paddings, PadMode mode, double constant_values) {
  OpAttrs attrs = pad_attrs(paddings, mode);
  if (mode != PadMode::kConstant) return run(OpId::kMirrorPad, input, attrs);
  if (constant_values == 0) return run(OpId::kPad, input, attrs);
  const double v = constant_values;  // the integer part, within int64 (NaN: 0)
  attrs.value = Scalar{v, v > -9.2e18 && v < 9.2e18 ? static_cast<int64_t>(v) : 0, true};
  return run(OpId::kPadV2, input, attrs);
}

Tensor mirror_pad_grad(const Tensor& grad, const Paddings& paddings, PadMode mode) {
  if (mode == PadMode::kConstant) {
    internal::throw_if_error(
        absl::InvalidArgumentError("[MirrorPadGrad] mode must be REFLECT or SYMMETRIC"));
  }
  return run(OpId::kMirrorPadGrad, grad, pad_attrs(paddings, mode));
}

namespace math {

TopKResult top_k(const Tensor& input, int64_t k, bool sorted) {
  OpAttrs attrs;
  attrs.k = k;
  attrs.sorted = sorted;
  const Tensor* in = &input;
  internal::Tensors out = internal::value_or_throw(
      internal::execute_all(OpId::kTopKV2, absl::MakeConstSpan(&in, 1), attrs));
  return {std::move(out[0]), std::move(out[1])};
}

}  // namespace math
}  // namespace mt
