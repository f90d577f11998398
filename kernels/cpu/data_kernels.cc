// CPU kernels of the data ops: _EagerConst, Identity and StopGradient (copies), Fill and
// Cast, and the variables' VarHandleOp, ReadVariableOp and AssignVariableOp, each split
// across threads when large.
#include <cstring>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

// Bytes per thread below which a copy or fill stays on the calling thread.
constexpr int64_t kByteGrain = 256 * 1024;

// _EagerConst (host constant to output) and Identity: a byte copy of the input.
absl::Status copy_kernel(const KernelContext& ctx) {
  const int64_t bytes = ctx.output.shape->num_elements() * dtype_size(ctx.output.dtype);
  const char* in = static_cast<const char*>(ctx.inputs[0].data);
  char* out = static_cast<char*>(ctx.output.data);
  parallel_for(bytes, kByteGrain, [&](int64_t begin, int64_t end) {
    std::memcpy(out + begin, in + begin, end - begin);
  });
  return absl::OkStatus();
}

// AssignVariableOp: input 1's bytes into input 0's buffer, the variable's (in place).
absl::Status assign_kernel(const KernelContext& ctx) {
  const int64_t bytes = ctx.inputs[0].shape->num_elements() * dtype_size(ctx.inputs[0].dtype);
  const char* in = static_cast<const char*>(ctx.inputs[1].data);
  char* out = static_cast<char*>(const_cast<void*>(ctx.inputs[0].data));
  parallel_for(bytes, kByteGrain, [&](int64_t begin, int64_t end) {
    std::memcpy(out + begin, in + begin, end - begin);
  });
  return absl::OkStatus();
}

// VarHandleOp: the output is the variable's new buffer, written by AssignVariableOp next.
absl::Status var_handle_kernel(const KernelContext&) { return absl::OkStatus(); }

// ReadVariableOp returns its input without running a kernel (execute.cc); this one is
// registered so that the placer sees the op on every device.
absl::Status read_variable_kernel(const KernelContext&) {
  return absl::InternalError("[ReadVariableOp] the kernel is not meant to run");
}

// Fill: the value comes from attrs.value, `f` for floats, `i` for integers, `b` for bool.
template <typename T>
absl::Status fill_kernel(const KernelContext& ctx) {
  const Scalar& value = ctx.attrs->value;
  T v;
  if constexpr (std::is_same_v<T, bool>) {
    v = value.b;
  } else if constexpr (is_floating(dtype_of<T>())) {
    v = static_cast<T>(value.f);  // bfloat16 and float16 round to nearest even
  } else {
    v = static_cast<T>(value.i);
  }
  T* out = output_data<T>(ctx);
  parallel_for(ctx.output.shape->num_elements(), kByteGrain / sizeof(T),
               [&](int64_t begin, int64_t end) {
                 for (int64_t i = begin; i < end; ++i) out[i] = v;
               });
  return absl::OkStatus();
}

// Cast, keyed by the input dtype; the output's dtype is attrs.dst_dtype.
template <typename Src>
absl::Status cast_kernel(const KernelContext& ctx) {
  const int src = static_cast<int>(dtype_of<Src>());
  const CastLoop loop = cpu_loops().cast[src][static_cast<int>(ctx.output.dtype)];
  const size_t out_size = dtype_size(ctx.output.dtype);
  const Src* in = input_data<Src>(ctx, 0);
  char* out = static_cast<char*>(ctx.output.data);
  parallel_for(ctx.output.shape->num_elements(), 32768, [&](int64_t begin, int64_t end) {
    loop(in + begin, out + begin * out_size, end - begin);
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(EagerConst) {
  return add_kernels(registry, OpId::kEagerConst, AllTypes{},
                     [](auto) -> KernelFn { return &copy_kernel; });
}
MT_OP_KERNELS(Identity) {
  return add_kernels(registry, OpId::kIdentity, AllTypes{},
                     [](auto) -> KernelFn { return &copy_kernel; });
}
MT_OP_KERNELS(StopGradient) {
  return add_kernels(registry, OpId::kStopGradient, AllTypes{},
                     [](auto) -> KernelFn { return &copy_kernel; });
}
MT_OP_KERNELS(VarHandleOp) {
  return add_kernels(registry, OpId::kVarHandleOp, AllTypes{},
                     [](auto) -> KernelFn { return &var_handle_kernel; });
}
MT_OP_KERNELS(ReadVariableOp) {
  return add_kernels(registry, OpId::kReadVariableOp, AllTypes{},
                     [](auto) -> KernelFn { return &read_variable_kernel; });
}
MT_OP_KERNELS(AssignVariableOp) {
  return add_kernels(registry, OpId::kAssignVariableOp, AllTypes{},
                     [](auto) -> KernelFn { return &assign_kernel; });
}
MT_OP_KERNELS(Fill) {
  return add_kernels(registry, OpId::kFill, AllTypes{}, [](auto tag) -> KernelFn {
    return &fill_kernel<typename decltype(tag)::type>;
  });
}
MT_OP_KERNELS(Cast) {
  return add_kernels(registry, OpId::kCast, AllTypes{}, [](auto tag) -> KernelFn {
    return &cast_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
