// Shape function of the fused optimizer update, ResourceApplyAdam.
//
// Note [Fused Adam]: ResourceApplyAdam(var, m, v, grad, lr_t) is one Adam step of Keras's
// optimizer (runtime/train/optimizers.h) in one pass over memory, written into the buffers of its
// first three inputs (the variable and its two slots, each a variable's value), per element:
//
//   m   += (grad - m) * (1 - beta_1)
//   v   += (grad^2 - v) * (1 - beta_2)
//   var -= lr_t * m / (sqrt(v) + epsilon)
//
// with lr_t the step's lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), computed by the optimizer
// in double and passed as a 0-d tensor of apply_adam_lr_dtype (kernels/op_def.h): the
// variable's dtype, float32 for bfloat16 and float16, so that it is not rounded to 2 bytes.
// It is an input, not an attribute, because it changes every step: an mt::Function replays
// the kernel with its recorded attributes and rewrites the tensor before each replay (Note
// [Host values of a step] in runtime/train/optimizers.cc). The arithmetic runs in the inputs'
// dtype, bfloat16 and float16 in float32 with each result rounded once. beta_1, beta_2 and
// epsilon, fixed for an optimizer, are attributes; TensorFlow's op of this name takes them
// and the betas' powers as scalar tensors too. Four separate ops would read and write each
// buffer several times and allocate a temporary per intermediate.
#include "kernels/shape_fns.h"

namespace mt::internal {

// The first four inputs have one float dtype and one shape; lr_t is 0-d, of
// apply_adam_lr_dtype of theirs. No output.
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
  const TensorMeta& lr_t = inputs[4];
  if (lr_t.shape->rank() != 0) {
    return op_error(op, "lr_t must be a scalar, got shape ", lr_t.shape->to_string());
  }
  const DType lr_dtype = apply_adam_lr_dtype(inputs[0].dtype);
  if (lr_t.dtype != lr_dtype) {
    return op_error(op, "lr_t must be ", dtype_name(lr_dtype), " for a variable of ",
                    dtype_name(inputs[0].dtype), ", got ", dtype_name(lr_t.dtype));
  }
  return absl::OkStatus();
}

}  // namespace mt::internal
