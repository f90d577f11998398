#pragma once
// Placer: decides which logical device runs an op. Pure logic: it sees a list of devices
// and the kernel registry, nothing else (no allocation, no CUDA), so it is tested on fake
// device sets that include GPUs.
//
// The rules, in order (docs/design.md, "Placement"):
//   1. The requested spec (the thread's merged device scope) may be partial or empty.
//   2. Candidates are devices that match the spec and have a kernel for (op, dtype),
//      in priority order: this process's devices before other tasks', GPU before CPU,
//      lowest id first.
//   3. An empty spec takes the best device with a kernel (reason kDefault).
//   4. Devices match but none has a kernel: the best device with one runs it
//      (kNoKernelFallback), as the guide's Cast on /GPU:0 does.
//   5. No device matches: NotFound "<full name> unknown device." plus the available
//      devices; with soft placement on, the best device with a kernel (kSoftFallback).
// An op with no kernel for its dtype on any device is InvalidArgument.
//
//   Placer placer(devices, &registry);
//   MT_ASSIGN_OR_RETURN(Placement p, placer.place(OpId::kMatMul, DType::kFloat32, spec, false));
//   devices[p.device]; p.kernel; p.reason;

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/device_type.h"
#include "core/dtype.h"
#include "kernels/kernel_registry.h"
#include "placement/device_name.h"

namespace mt {

// One logical device as the placer sees it. A device of another task (distributed/) names
// its job and task and brings that task's kernel registry.
struct DeviceInfo {
  DeviceType type;
  int id;                                         // logical id within its type: GPU:1 has id 1
  std::optional<std::string> job = std::nullopt;  // unset: this process, job localhost
  int task = 0;
  const KernelRegistry* registry = nullptr;  // unset: the Placer's registry
};

enum class PlacementReason : uint8_t {
  kDefault,           // no device requested: the best device with a kernel
  kScope,             // the best device matching the requested spec
  kNoKernelFallback,  // the requested device has no kernel for (op, dtype)
  kSoftFallback,      // the requested device does not exist; soft placement chose
  kSmallOpOnHost,     // small integer inputs already on the host CPU: pinned there
  kResourceDevice,    // the op reads a variable: pinned to the variable's device
  kCost,              // the cost policy's earliest estimated finish (runtime/cost/cost_model.h)
};

// Returns a short phrase for logs and explanations, e.g. "requested by device scope".
const char* placement_reason_text(PlacementReason reason);

struct Placement {
  int device = -1;  // index into the Placer's device list
  KernelFn kernel = nullptr;
  PlacementReason reason = PlacementReason::kDefault;
  bool measure = false;   // the cost policy wants this run timed
  uint32_t cost_key = 0;  // the cost policy's key of the op (CostModel::pack), 0 for none
  // The cost policy's estimate of the run, queued on the device once the op is launched
  // (CostPolicy::note_launched).
  double cost_exec_ns = 0;
};

class Placer {
 public:
  // `devices` are the logical devices in any order; `registry` (and each device's own
  // registry) must outlive the Placer.
  Placer(std::vector<DeviceInfo> devices, const KernelRegistry* registry);

  // Applies the rules above. Thread-safe (const).
  absl::StatusOr<Placement> place(OpId op, DType dtype, const DeviceSpec& requested,
                                  bool soft_placement) const;

  // Returns the full spec of device `index`.
  const DeviceSpec& device_spec(int index) const { return specs_[index]; }

  // Returns the canonical name of device `index`.
  const std::string& device_name(int index) const { return names_[index]; }

  // Returns the device indices in priority order (rule 2).
  const std::vector<int>& priority() const { return priority_; }

  // Returns the kernel of (op, dtype) on device `index`, or nullptr.
  KernelFn kernel(int index, OpId op, DType dtype) const;

  // Returns whether device `index` belongs to another task.
  bool remote(int index) const { return devices_[index].job.has_value(); }

 private:
  // Returns the first device in priority order that matches `spec` (every device when
  // `spec` is null) and has a kernel, or -1.
  int best_with_kernel(OpId op, DType dtype, const DeviceSpec* spec) const;
  absl::Status unknown_device(const DeviceSpec& requested) const;
  absl::Status no_kernel(OpId op, DType dtype) const;

  std::vector<DeviceInfo> devices_;
  std::vector<DeviceSpec> specs_;   // full spec of each device
  std::vector<std::string> names_;  // canonical name of each device
  std::vector<int> priority_;       // device indices, GPU before CPU, lowest id first
  const KernelRegistry* registry_;
};

}  // namespace mt
