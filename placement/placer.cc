#include "placement/placer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mt {

const char* placement_reason_text(PlacementReason reason) {
  switch (reason) {
    case PlacementReason::kDefault:
      return "default: the best device with a kernel";
    case PlacementReason::kScope:
      return "requested by device scope";
    case PlacementReason::kNoKernelFallback:
      return "requested device has no kernel; fell back";
    case PlacementReason::kSoftFallback:
      return "requested device unknown; soft placement";
    case PlacementReason::kSmallOpOnHost:
      return "small integer inputs on the host CPU; pinned there";
    case PlacementReason::kResourceDevice:
      return "reads a variable; pinned to its device";
    case PlacementReason::kCost:
      return "cost policy: the earliest estimated finish";
  }
  return "unknown";
}

Placer::Placer(std::vector<DeviceInfo> devices, const KernelRegistry* registry)
    : devices_(std::move(devices)), registry_(registry) {
  for (int i = 0; i < static_cast<int>(devices_.size()); ++i) {
    specs_.push_back(local_device_spec(devices_[i].type, devices_[i].id));
    if (devices_[i].job) {
      specs_.back().job = devices_[i].job;
      specs_.back().task = devices_[i].task;
    }
    names_.push_back(canonical_name(specs_.back()));
    priority_.push_back(i);
  }
  // This process first, then GPU before CPU, then lowest id first.
  std::stable_sort(priority_.begin(), priority_.end(), [&](int a, int b) {
    const DeviceInfo& x = devices_[a];
    const DeviceInfo& y = devices_[b];
    if (x.job.has_value() != y.job.has_value()) return !x.job.has_value();
    if (x.job != y.job) return x.job < y.job;
    if (x.task != y.task) return x.task < y.task;
    if (x.type != y.type) return x.type == DeviceType::kGPU;
    return x.id < y.id;
  });
}

KernelFn Placer::kernel(int device, OpId op, DType dtype) const {
  const KernelRegistry* registry = devices_[device].registry;
  return (registry != nullptr ? registry : registry_)->find(op, devices_[device].type, dtype);
}

int Placer::best_with_kernel(OpId op, DType dtype, const DeviceSpec* spec) const {
  for (int i : priority_) {
    if (spec != nullptr && !matches(*spec, specs_[i])) continue;
    if (kernel(i, op, dtype) != nullptr) return i;
  }
  return -1;
}

absl::StatusOr<Placement> Placer::place(OpId op, DType dtype, const DeviceSpec& requested,
                                        bool soft_placement) const {
  auto make = [&](int device, PlacementReason reason) -> absl::StatusOr<Placement> {
    if (device < 0) return no_kernel(op, dtype);
    return Placement{device, kernel(device, op, dtype), reason};
  };
  if (requested == DeviceSpec{}) {
    return make(best_with_kernel(op, dtype, nullptr), PlacementReason::kDefault);
  }
  int chosen = best_with_kernel(op, dtype, &requested);
  if (chosen >= 0) return make(chosen, PlacementReason::kScope);
  bool exists = std::any_of(specs_.begin(), specs_.end(),
                            [&](const DeviceSpec& d) { return matches(requested, d); });
  if (!exists && !soft_placement) return unknown_device(requested);
  return make(best_with_kernel(op, dtype, nullptr),
              exists ? PlacementReason::kNoKernelFallback : PlacementReason::kSoftFallback);
}

absl::Status Placer::unknown_device(const DeviceSpec& requested) const {
  return absl::NotFoundError(
      absl::StrCat(canonical_name(requested),
                   " unknown device. Available devices: ", absl::StrJoin(names_, ", "), "."));
}

absl::Status Placer::no_kernel(OpId op, DType dtype) const {
  std::vector<const char*> supported;
  for (int t = 0; t < kNumDTypes; ++t) {
    for (int d = 0; d < static_cast<int>(devices_.size()); ++d) {
      if (kernel(d, op, static_cast<DType>(t)) != nullptr) {
        supported.push_back(dtype_name(static_cast<DType>(t)));
        break;
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("[", op_name(op), "] no kernel for dtype ", dtype_name(dtype),
                   " on any device; supported: ", absl::StrJoin(supported, ", ")));
}

}  // namespace mt
