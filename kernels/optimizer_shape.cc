// Shape function of the fused optimizer update, ResourceApplyAdam.
//
// Note [Fused Adam]: ResourceApplyAdam(var, m, v, grad) is one Adam step of Keras's
// optimizer (runtime/optimizers.h) in one pass over memory, written into the buffers of its
// first three inputs (the variable and its two slots, each a variable's value), per element:
//
//   m   += (grad - m) * (1 - beta_1)
//   v   += (grad^2 - v) * (1 - beta_2)
//   var -= learning_rate * m / (sqrt(v) + epsilon)
//
// with learning_rate the step's lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), computed by the
// optimizer in double. The arithmetic runs in the inputs' dtype, bfloat16 and float16 in
// float32 with each result rounded once. TensorFlow's op of this name takes the learning
// rate, the betas' powers and the constants as scalar tensors; here they are attributes,
// since the optimizer holds them on the host. Four separate ops would read and write each
// buffer several times and allocate a temporary per intermediate.
#include "kernels/shape_fns.h"

namespace mt::internal {

// The four inputs have one float dtype and one shape; no output.
absl::Status infer_apply_adam(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                              OutputMetas*) {
  static constexpr const char* kNames[] = {"var", "m", "v", "grad"};
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  for (int i = 1; i < 4; ++i) {
    MT_RETURN_IF_ERROR(check_same_dtype(op, inputs[0].dtype, inputs[i].dtype));
    if (*inputs[i].shape != *inputs[0].shape) {
      return op_error(op, "var and ", kNames[i],
                      " do not have the same shape: ", inputs[0].shape->to_string(), " and ",
                      inputs[i].shape->to_string());
    }
  }
  return absl::OkStatus();
}

}  // namespace mt::internal
