#include "runtime/ops/layer_norm_ops.h"

#include <vector>

#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

namespace mt {

OpAttrs internal::layer_norm_attrs(const nn::LayerNormOptions& options) {
  OpAttrs attrs;
  attrs.axis = options.begin_axis;
  attrs.epsilon = options.epsilon;
  return attrs;
}

namespace nn {
namespace {

// Every output of `op`, in a vector (GCC's -Warray-bounds misreads an InlinedVector indexed
// past its inline size).
std::vector<Tensor> outputs(OpId op, absl::Span<const Tensor* const> inputs,
                            const LayerNormOptions& options) {
  const internal::Tensors out = internal::value_or_throw(
      internal::execute_all(op, inputs, internal::layer_norm_attrs(options)));
  return std::vector<Tensor>(out.begin(), out.end());
}

}  // namespace

LayerNormResult layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                           const LayerNormOptions& options) {
  const Tensor* inputs[] = {&x, &gamma, &beta};
  std::vector<Tensor> out = outputs(OpId::kLayerNorm, inputs, options);
  return {std::move(out[0]), std::move(out[1]), std::move(out[2])};
}

AddLayerNormResult add_layer_norm(const Tensor& x, const Tensor& residual, const Tensor& gamma,
                                  const Tensor& beta, const LayerNormOptions& options) {
  const Tensor* inputs[] = {&x, &residual, &gamma, &beta};
  std::vector<Tensor> out = outputs(OpId::kAddLayerNorm, inputs, options);
  return {std::move(out[0]), std::move(out[1]), std::move(out[2]), std::move(out[3])};
}

LayerNormGradResult layer_norm_grad(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& mean, const Tensor& inv_std,
                                    const LayerNormOptions& options) {
  const Tensor* inputs[] = {&dy, &x, &gamma, &mean, &inv_std};
  std::vector<Tensor> out = outputs(OpId::kLayerNormGrad, inputs, options);
  return {std::move(out[0]), std::move(out[1]), std::move(out[2])};
}

}  // namespace nn
}  // namespace mt
