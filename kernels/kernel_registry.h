#pragma once
// KernelRegistry: which kernel runs (op, device type, dtype). It is the placement engine's
// only view of what a backend can do: a device type "supports" an op for a dtype exactly
// when a kernel is registered here. Backends fill it through explicit calls
// (register_cpu_kernels, register_cuda_kernels), once, before the runtime uses it; after
// that it is read-only and safe to read from any thread.
//
//   KernelRegistry registry;
//   register_cpu_kernels(registry);
//   KernelFn fn = registry.find(OpId::kMatMul, DeviceType::kCPU, DType::kFloat32);

#include "absl/status/status.h"
#include "core/device_type.h"
#include "core/dtype.h"
#include "kernels/kernel.h"
#include "kernels/op_id.h"

namespace mt {

class KernelRegistry {
 public:
  // Registers `fn`. Returns AlreadyExists if (op, device, dtype) already has a kernel.
  absl::Status add(OpId op, DeviceType device, DType dtype, KernelFn fn);

  // Returns the kernel for (op, device, dtype), or nullptr when there is none. O(1).
  KernelFn find(OpId op, DeviceType device, DType dtype) const {
    return table_[static_cast<int>(op)][static_cast<int>(device)][static_cast<int>(dtype)];
  }

 private:
  KernelFn table_[kNumOps][kNumDeviceTypes][kNumDTypes] = {};
};

// Registers every CPU (Eigen) kernel. Fails only on a duplicate registration.
absl::Status register_cpu_kernels(KernelRegistry& registry);

// Registers every CUDA kernel; registers nothing in a build without CUDA.
absl::Status register_cuda_kernels(KernelRegistry& registry);

}  // namespace mt
