// The table of gradient functions, one entry per row of the op table (Note [Gradients
// beside their rows] in grad_fns.h).
#include "runtime/autodiff/grad_fns.h"

namespace mt::internal {
namespace {

template <OpId kOp>
constexpr GradFn grad_of() {
  if constexpr (op_has_flag(kOp, kGrad)) {
    return &Grad<kOp>::run;
  } else {
    return nullptr;
  }
}

#define MT_GRAD_ENTRY(Name, ...) grad_of<OpId::k##Name>(),
constexpr GradFn kGradFns[] = {MT_OP_TABLE(MT_GRAD_ENTRY)};
#undef MT_GRAD_ENTRY
static_assert(sizeof(kGradFns) / sizeof(kGradFns[0]) == kNumOps);

}  // namespace

GradFn grad_fn(OpId op) { return kGradFns[static_cast<int>(op)]; }

}  // namespace mt::internal
