#include "runtime/ops/batch_norm_ops.h"

#include <vector>

#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

namespace mt {

OpAttrs internal::batch_norm_attrs(const nn::FusedBatchNormOptions& options) {
  OpAttrs attrs;
  attrs.epsilon = options.epsilon;
  attrs.exponential_avg_factor = options.exponential_avg_factor;
  attrs.channels_first = options.channels_first;
  attrs.is_training = options.is_training;
  return attrs;
}

namespace nn {
namespace {

// Every output of `op`, in a vector (GCC's -Warray-bounds misreads an InlinedVector indexed
// past its inline size).
std::vector<Tensor> outputs(OpId op, absl::Span<const Tensor* const> inputs,
                            const FusedBatchNormOptions& options) {
  const internal::Tensors out = internal::value_or_throw(
      internal::execute_all(op, inputs, internal::batch_norm_attrs(options)));
  return std::vector<Tensor>(out.begin(), out.end());
}

}  // namespace

FusedBatchNormResult fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset,
                                      const Tensor& mean, const Tensor& variance,
                                      const FusedBatchNormOptions& options) {
  const Tensor* inputs[] = {&x, &scale, &offset, &mean, &variance};
  internal::Tensors out = internal::value_or_throw(
      internal::execute_all(OpId::kFusedBatchNormV3, inputs, internal::batch_norm_attrs(options)));
  return {std::move(out[0]), std::move(out[1]), std::move(out[2]), std::move(out[3]),
          std::move(out[4])};
}

FusedBatchNormGradResult fused_batch_norm_grad(const Tensor& y_backprop, const Tensor& x,
                                               const Tensor& scale, const Tensor& reserve_space_1,
                                               const Tensor& reserve_space_2,
                                               const FusedBatchNormOptions& options) {
  const Tensor* inputs[] = {&y_backprop, &x, &scale, &reserve_space_1, &reserve_space_2};
  std::vector<Tensor> out = outputs(OpId::kFusedBatchNormGradV3, inputs, options);
  return {std::move(out[0]), std::move(out[1]), std::move(out[2])};
}

}  // namespace nn
}  // namespace mt
