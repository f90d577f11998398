// GPU kernel of Gelu (kernels/gelu.h): the element-wise map, the 2-byte floats in float32
// rounded once, as on the CPU (CUDA's erf and tanh are within 2 ulp of the CPU's).
#include "kernels/cuda/elementwise.h"
#include "kernels/gelu.h"

namespace mt::cuda {
namespace {

struct GeluFn {
  bool approximate;
  template <typename T>
  __device__ T operator()(T in) const {
    return from_compute<T>(gelu_value(to_compute(in), approximate));
  }
};

template <typename T>
absl::Status run_gelu(const KernelContext& ctx) {
  MapArgs<T, 1> args;
  args.in[0] = static_cast<const T*>(ctx.inputs[0].data);
  args.out = static_cast<T*>(ctx.output.data);
  args.n = ctx.output.shape->num_elements();
  return launch_map(OpId::kGelu, ctx, args, GeluFn{ctx.attrs->approximate});
}

}  // namespace

MT_OP_KERNELS(Gelu) {
  return add_gpu_kernels(registry, OpId::kGelu, FloatTypes{}, [](auto tag) -> KernelFn {
    return &run_gelu<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
