// The gradient of FusedBatchNormV3 (Note [Gradients beside their rows] in grad_fns.h):
// TensorFlow's, FusedBatchNormGradV3 with the forward call's attributes on its saved
// statistics (reserve_space_1 and reserve_space_2). The mean and variance inputs get none,
// and gradients reaching batch_mean, batch_variance or the reserve spaces are not
// propagated, as in TensorFlow.
#include "runtime/autodiff/grad_fns.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

namespace mt::internal {

template <>
Grads Grad<OpId::kFusedBatchNormV3>::run(const GradContext& c) {
  if (!c.needs(0) && !c.needs(1) && !c.needs(2)) return Grads(5);
  const Tensor* inputs[] = {&c.output_grads[0], &c.inputs[0], &c.inputs[1], &c.outputs[3],
                            &c.outputs[4]};
  Tensors d = value_or_throw(execute_all(OpId::kFusedBatchNormGradV3, inputs, c.attrs));
  return {std::move(d[0]), std::move(d[1]), std::move(d[2]), Tensor(), Tensor()};
}

}  // namespace mt::internal
