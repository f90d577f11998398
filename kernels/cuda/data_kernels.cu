// GPU kernels of the data ops: _EagerConst (host to device), Identity and StopGradient
// (device to device) and Fill, and the variables' VarHandleOp, ReadVariableOp and
// AssignVariableOp. Cast has its own file (cast_kernels.cu).
#include <cstring>
#include <type_traits>

#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

// _EagerConst: inputs[0].data is pageable host memory. cudaMemcpyAsync from pageable
// memory returns once the source has been staged, so the caller may free it at once.
absl::Status run_eager_const(const KernelContext& ctx) {
  const size_t bytes = ctx.output.shape->num_elements() * dtype_size(ctx.output.dtype);
  if (bytes == 0) return absl::OkStatus();
  return cuda_status(OpId::kEagerConst, "cudaMemcpyAsync",
                     cudaMemcpyAsync(ctx.output.data, ctx.inputs[0].data, bytes,
                                     cudaMemcpyHostToDevice, gpu_state(ctx).stream));
}

// Identity: the input is already on the op's GPU; a device-to-device copy on the stream.
absl::Status run_identity(const KernelContext& ctx) {
  const size_t bytes = ctx.output.shape->num_elements() * dtype_size(ctx.output.dtype);
  if (bytes == 0) return absl::OkStatus();
  return cuda_status(OpId::kIdentity, "cudaMemcpyAsync",
                     cudaMemcpyAsync(ctx.output.data, ctx.inputs[0].data, bytes,
                                     cudaMemcpyDeviceToDevice, gpu_state(ctx).stream));
}

// Returns Fill's value as T, read as the CPU kernel reads it.
template <typename T>
T fill_value(const Scalar& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value.b;
  } else if constexpr (kIsHalf<T>) {
    return T(static_cast<float>(value.f));  // the double rounds to float, then to T
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(value.f);
  } else {
    return static_cast<T>(value.i);
  }
}

// Returns whether every byte of `v` is the same (zeros, most often): then a memset fills.
template <typename T>
bool has_uniform_bytes(T v, unsigned char* byte) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  *byte = bytes[0];
  for (unsigned char b : bytes) {
    if (b != bytes[0]) return false;
  }
  return true;
}

template <typename T>
absl::Status run_fill(const KernelContext& ctx) {
  const T value = fill_value<T>(ctx.attrs->value);
  MapArgs<T, 0> args;
  args.out = static_cast<T*>(ctx.output.data);
  args.n = ctx.output.shape->num_elements();
  unsigned char byte = 0;
  if (args.n != 0 && has_uniform_bytes(value, &byte)) {
    return cuda_status(OpId::kFill, "cudaMemsetAsync",
                       cudaMemsetAsync(args.out, byte, args.n * sizeof(T), gpu_state(ctx).stream));
  }
  return launch_map(OpId::kFill, ctx, args, ConstantFn<T>{value});
}

// AssignVariableOp: input 1 into input 0's buffer (the variable's), on the stream.
absl::Status run_assign(const KernelContext& ctx) {
  const size_t bytes = ctx.inputs[0].shape->num_elements() * dtype_size(ctx.inputs[0].dtype);
  if (bytes == 0) return absl::OkStatus();
  return cuda_status(OpId::kAssignVariableOp, "cudaMemcpyAsync",
                     cudaMemcpyAsync(const_cast<void*>(ctx.inputs[0].data), ctx.inputs[1].data,
                                     bytes, cudaMemcpyDeviceToDevice, gpu_state(ctx).stream));
}

// VarHandleOp: the output is the variable's new buffer, written by AssignVariableOp next.
absl::Status run_var_handle(const KernelContext&) { return absl::OkStatus(); }

// ReadVariableOp returns its input without a kernel (execute.cc); registered for the placer.
absl::Status run_read_variable(const KernelContext&) {
  return absl::InternalError("[ReadVariableOp] the kernel is not meant to run");
}

}  // namespace

MT_OP_KERNELS(EagerConst) {
  return add_gpu_kernels(registry, OpId::kEagerConst, AllTypes{},
                         [](auto) -> KernelFn { return &run_eager_const; });
}
MT_OP_KERNELS(Identity) {
  return add_gpu_kernels(registry, OpId::kIdentity, AllTypes{},
                         [](auto) -> KernelFn { return &run_identity; });
}
MT_OP_KERNELS(StopGradient) {
  return add_gpu_kernels(registry, OpId::kStopGradient, AllTypes{},
                         [](auto) -> KernelFn { return &run_identity; });
}
MT_OP_KERNELS(VarHandleOp) {
  return add_gpu_kernels(registry, OpId::kVarHandleOp, AllTypes{},
                         [](auto) -> KernelFn { return &run_var_handle; });
}
MT_OP_KERNELS(ReadVariableOp) {
  return add_gpu_kernels(registry, OpId::kReadVariableOp, AllTypes{},
                         [](auto) -> KernelFn { return &run_read_variable; });
}
MT_OP_KERNELS(AssignVariableOp) {
  return add_gpu_kernels(registry, OpId::kAssignVariableOp, AllTypes{},
                         [](auto) -> KernelFn { return &run_assign; });
}
MT_OP_KERNELS(Fill) {
  return add_gpu_kernels(registry, OpId::kFill, AllTypes{}, [](auto tag) -> KernelFn {
    return &run_fill<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
