#pragma once
// Its code: grad_math.cc, grad_array.cc, grad_reduce.cc and grad_table.cc.
// Internal to runtime/autodiff/: the gradient of each differentiable op of the op table.
//
// Note [Gradients beside their rows]: every row flagged kGrad in kernels/op_table.h defines
// Grad<OpId::kName>::run in the grad_*.cc file of its family; grad_table.cc builds the
// table from MT_OP_TABLE, so a row flagged kGrad without one fails to link (an undefined
// Grad<...>::run): the gradient cannot be forgotten.
// A GradFn builds the input gradients from public ops, so a tape recording around
// gradient() records them (higher order), and returns one Tensor per input: an empty one
// where the input gets no gradient (an integer input, a condition, labels).

#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "kernels/op_attrs.h"
#include "kernels/op_id.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

struct GradContext {
  OpId op;
  const OpAttrs& attrs;
  absl::Span<const Tensor> inputs;
  absl::Span<const Tensor> outputs;
  // One per output, each defined (zeros where the target does not depend on the output).
  absl::Span<const Tensor> output_grads;
  // Bit i: input i leads to a source (the tape tracks it); a GradFn may leave the others'
  // gradients empty and skip their work (a MatMul's gradient of constant data).
  uint64_t needed = ~uint64_t{0};
  // Bit i: output i reaches the target, so output_grads[i] may be other than zeros; a GradFn
  // may skip the terms of the others (LayerNorm's statistics).
  uint64_t given = ~uint64_t{0};

  bool needs(size_t input) const { return input >= 64 || ((needed >> input) & 1) != 0; }
  bool has_grad(size_t output) const { return output >= 64 || ((given >> output) & 1) != 0; }
};

using Grads = absl::InlinedVector<Tensor, 3>;
using GradFn = Grads (*)(const GradContext&);

template <OpId kOp>
struct Grad {
  static Grads run(const GradContext& c);
};
// Declared for every row; defined for the kGrad rows only.
#define MT_DECLARE_GRAD(Name, ...) \
  template <>                      \
  Grads Grad<OpId::k##Name>::run(const GradContext& c);
MT_OP_TABLE(MT_DECLARE_GRAD)
#undef MT_DECLARE_GRAD

// Returns the gradient function of `op`, or null when the op is not differentiable.
GradFn grad_fn(OpId op);

// Note [What a gradient reads]: the inputs and outputs of an op whose values its gradient
// reads (bit i of each mask). Of the others the gradient uses at most the dtype, shape and
// device, so the tape holds them weakly (TapeRef) and their buffers go back to the pool as
// soon as the program drops them: the product a bias is then added to, the input of a
// ReLU, the logits of the cross entropy. The row's flags say which (kGradReadsInputs and
// the others in kernels/op_id.h); a row without them reads everything; a gradient
// that reads a value not in its mask gets a tensor without a buffer (the gradient checks
// run every rule).
struct GradReads {
  uint32_t inputs = ~0u;
  uint32_t outputs = ~0u;
  bool input(size_t i) const { return i >= 32 || ((inputs >> i) & 1) != 0; }
  bool output(size_t i) const { return i >= 32 || ((outputs >> i) & 1) != 0; }
};
constexpr GradReads grad_reads(OpId op) {
  return {op_grad_reads_inputs(op), op_grad_reads_outputs(op)};
}

// Returns `g` summed over the dimensions that broadcasting added to reach g's shape from
// `shape`, reshaped to `shape` (the gradient of a broadcasting op's input).
Tensor unbroadcast(const Tensor& g, const Shape& shape);

}  // namespace mt::internal
