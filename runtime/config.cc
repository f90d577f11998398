// mt::config: every setter validates, then changes Settings under the context lock, or
// fails with TensorFlow's wording once the runtime has initialised.
#include "runtime/config.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/printable.h"
#include "core/status.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/onednn_gemm.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/kernel_options.h"
#include "runtime/eager/context.h"
#include "runtime/eager/error.h"
#include "runtime/trace/trace_recorder.h"

namespace mt::config {
namespace {

using internal::Context;
using internal::kMiB;
using internal::PhysicalDeviceConfig;
using internal::Settings;

absl::Status too_late(const char* what) {
  return absl::FailedPreconditionError(
      absl::StrCat(what, " cannot be modified after being initialized"));
}

// Returns the configuration of `device`, or InvalidArgument when it is not a device of
// this machine.
absl::StatusOr<PhysicalDeviceConfig*> find(Settings& settings, const PhysicalDevice& device,
                                           const char* fn) {
  for (PhysicalDeviceConfig& p : settings.physical) {
    if (p.device == device) return &p;
  }
  return absl::InvalidArgumentError(absl::StrCat("[", fn, "] unknown physical device '",
                                                 internal::printable(device.name), "' of type '",
                                                 internal::printable(device.device_type), "'"));
}

bool type_matches(std::string_view filter, const std::string& type) {
  return filter.empty() || filter == type;
}

absl::Status check_type(std::string_view type, const char* fn) {
  if (type.empty() || device_type_from_name(type)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "[", fn, "] unknown device type '", internal::printable(type), "': expected CPU or GPU"));
}

absl::Status set_visible(Settings& s, bool initialized, const std::vector<PhysicalDevice>& devices,
                         std::string_view type) {
  for (const PhysicalDevice& d : devices) {
    MT_RETURN_IF_ERROR(find(s, d, "set_visible_devices").status());
    if (!type_matches(type, d.device_type)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "[set_visible_devices] '", d.name, "' is not of type '", internal::printable(type), "'"));
    }
  }
  std::vector<bool> visible;
  for (const PhysicalDeviceConfig& p : s.physical) {
    bool listed = std::find(devices.begin(), devices.end(), p.device) != devices.end();
    visible.push_back(type_matches(type, p.device.device_type) ? listed : p.visible);
  }
  if (!visible[0]) {
    return absl::InvalidArgumentError("[set_visible_devices] the CPU must stay visible");
  }
  bool same = true;
  for (size_t i = 0; i < visible.size(); ++i) same &= visible[i] == s.physical[i].visible;
  if (same) return absl::OkStatus();
  if (initialized) return too_late("Visible devices");
  for (size_t i = 0; i < visible.size(); ++i) s.physical[i].visible = visible[i];
  return absl::OkStatus();
}

absl::Status set_logical(Settings& s, bool initialized, const PhysicalDevice& device,
                         const std::vector<LogicalDeviceConfiguration>& configs) {
  MT_ASSIGN_OR_RETURN(PhysicalDeviceConfig * p,
                      find(s, device, "set_logical_device_configuration"));
  bool gpu = p->type == DeviceType::kGPU;
  for (const LogicalDeviceConfiguration& c : configs) {
    if (c.memory_limit_mb && *c.memory_limit_mb <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("[set_logical_device_configuration] memory_limit_mb must be positive, got ",
                       *c.memory_limit_mb));
    }
    if (c.memory_limit_mb && *c.memory_limit_mb > (std::numeric_limits<int64_t>::max() / kMiB)) {
      return absl::InvalidArgumentError(
          absl::StrCat("[set_logical_device_configuration] memory_limit_mb ", *c.memory_limit_mb,
                       " is too large: its size in bytes overflows int64"));
    }
    if (gpu && p->total_memory > 0 && c.memory_limit_mb &&
        *c.memory_limit_mb > p->total_memory / kMiB) {
      return absl::InvalidArgumentError(
          absl::StrCat("[set_logical_device_configuration] memory_limit_mb ", *c.memory_limit_mb,
                       " exceeds the ", p->total_memory / kMiB, " MiB of ", device.name));
    }
    if (gpu && configs.size() > 1 && !c.memory_limit_mb) {
      return absl::InvalidArgumentError(
          "[set_logical_device_configuration] several logical GPUs on one card each need "
          "memory_limit_mb");
    }
  }
  if (p->logical == configs) return absl::OkStatus();
  if (initialized) return too_late("Virtual devices");
  p->logical = configs;
  return absl::OkStatus();
}

absl::Status set_growth(Settings& s, bool initialized, const PhysicalDevice& device, bool enable) {
  MT_ASSIGN_OR_RETURN(PhysicalDeviceConfig * p, find(s, device, "set_memory_growth"));
  if (p->type != DeviceType::kGPU) {
    return absl::InvalidArgumentError(absl::StrCat(
        "[set_memory_growth] cannot set memory growth on non-GPU device '", device.name, "'"));
  }
  if (p->memory_growth.value_or(false) == enable) {
    p->memory_growth = enable;
    return absl::OkStatus();
  }
  if (initialized) return too_late("Physical devices");
  p->memory_growth = enable;
  return absl::OkStatus();
}

internal::Runtime* runtime_or_throw() { return internal::value_or_throw(Context::get().runtime()); }

internal::Device& device_or_throw(std::string_view name) {
  internal::Runtime* rt = runtime_or_throw();
  return rt->device(internal::value_or_throw(rt->find_device(name)));
}

}  // namespace

std::vector<PhysicalDevice> list_physical_devices(std::string_view device_type) {
  return Context::get().with_settings([&](Settings& s, bool) {
    std::vector<PhysicalDevice> out;
    for (const PhysicalDeviceConfig& p : s.physical) {
      if (type_matches(device_type, p.device.device_type)) out.push_back(p.device);
    }
    return out;
  });
}

std::vector<PhysicalDevice> get_visible_devices(std::string_view device_type) {
  return Context::get().with_settings([&](Settings& s, bool) {
    std::vector<PhysicalDevice> out;
    for (const PhysicalDeviceConfig& p : s.physical) {
      if (p.visible && type_matches(device_type, p.device.device_type)) out.push_back(p.device);
    }
    return out;
  });
}

std::vector<LogicalDevice> list_logical_devices(std::string_view device_type) {
  internal::Runtime* rt = runtime_or_throw();
  // TensorFlow 2 names devices "/device:CPU:0" in a single process, and by their full names
  // once remote tasks are connected.
  constexpr std::string_view kLocal = "/job:localhost/replica:0/task:0";
  bool cluster = false;
  for (int i = 0; i < rt->num_devices(); ++i) {
    cluster = cluster || std::string_view(rt->device(i).name()).substr(0, kLocal.size()) != kLocal;
  }
  std::vector<LogicalDevice> out;
  for (int i = 0; i < rt->num_devices(); ++i) {
    const internal::Device& d = rt->device(i);
    std::string type = device_type_name(d.type());
    if (!type_matches(device_type, type)) continue;
    out.push_back(
        LogicalDevice{cluster ? d.name() : absl::StrCat("/device:", type, ":", d.id()), type});
  }
  return out;
}

void set_visible_devices(const std::vector<PhysicalDevice>& devices, std::string_view type) {
  internal::throw_if_error(check_type(type, "set_visible_devices"));
  internal::throw_if_error(Context::get().with_settings(
      [&](Settings& s, bool initialized) { return set_visible(s, initialized, devices, type); }));
}

void set_visible_devices(const PhysicalDevice& device, std::string_view type) {
  set_visible_devices(std::vector<PhysicalDevice>{device}, type);
}

void set_logical_device_configuration(const PhysicalDevice& device,
                                      const std::vector<LogicalDeviceConfiguration>& configs) {
  internal::throw_if_error(Context::get().with_settings(
      [&](Settings& s, bool initialized) { return set_logical(s, initialized, device, configs); }));
}

std::vector<LogicalDeviceConfiguration> get_logical_device_configuration(
    const PhysicalDevice& device) {
  return internal::value_or_throw(Context::get().with_settings(
      [&](Settings& s, bool) -> absl::StatusOr<std::vector<LogicalDeviceConfiguration>> {
        MT_ASSIGN_OR_RETURN(PhysicalDeviceConfig * p,
                            find(s, device, "get_logical_device_configuration"));
        return p->logical;
      }));
}

void set_memory_growth(const PhysicalDevice& device, bool enable) {
  internal::throw_if_error(Context::get().with_settings(
      [&](Settings& s, bool initialized) { return set_growth(s, initialized, device, enable); }));
}

bool get_memory_growth(const PhysicalDevice& device) {
  return internal::value_or_throw(
      Context::get().with_settings([&](Settings& s, bool) -> absl::StatusOr<bool> {
        MT_ASSIGN_OR_RETURN(PhysicalDeviceConfig * p, find(s, device, "get_memory_growth"));
        return s.memory_growth(*p);
      }));
}

void set_gpu_options(const GPUOptions& options) {
  if (options.per_process_gpu_memory_fraction) {
    double f = *options.per_process_gpu_memory_fraction;
    if (!(f > 0 && f <= 1)) {
      internal::throw_error(absl::InvalidArgumentError(absl::StrCat(
          "[set_gpu_options] per_process_gpu_memory_fraction must be in (0, 1], got ", f)));
    }
  }
  internal::throw_if_error(Context::get().with_settings([&](Settings& s, bool initialized) {
    if (s.gpu_options == options) return absl::OkStatus();
    if (initialized) return too_late("GPU options");
    s.gpu_options = options;
    return absl::OkStatus();
  }));
}

void set_soft_device_placement(bool enable) {
  Context::get().set_soft_placement(enable);
  if (internal::tracing()) {
    internal::trace_config(
        absl::StrCat("{\"soft_device_placement\":", enable ? "true" : "false", "}"));
  }
}
bool get_soft_device_placement() { return Context::get().soft_placement(); }

void enable_tensor_float_32_execution(bool enable) { internal::set_tf32_enabled(enable); }
bool tensor_float_32_execution_enabled() { return internal::tf32_enabled(); }

MemoryInfo get_memory_info(std::string_view device) {
  MemoryStats s = device_or_throw(device).allocator().stats();
  return MemoryInfo{s.bytes_in_use, s.peak_bytes_in_use,  s.bytes_reserved, s.bytes_limit,
                    s.num_allocs,   s.largest_free_block, s.fragmentation};
}

void reset_memory_stats(std::string_view device) {
  device_or_throw(device).allocator().reset_peak();
}

int64_t release_unused_memory(std::string_view device) {
  return device_or_throw(device).allocator().release_unused();
}

namespace threading {

void set_intra_op_parallelism_threads(int num_threads) {
  if (num_threads < 0) {
    internal::throw_error(absl::InvalidArgumentError(absl::StrCat(
        "[set_intra_op_parallelism_threads] num_threads must be >= 0, got ", num_threads)));
  }
  internal::throw_if_error(Context::get().with_settings([&](Settings& s, bool initialized) {
    if (s.intra_op_threads == num_threads) return absl::OkStatus();
    if (initialized) {
      return absl::FailedPreconditionError(
          "Intra op parallelism cannot be modified after initialization.");
    }
    s.intra_op_threads = num_threads;
    return absl::OkStatus();
  }));
}

int get_intra_op_parallelism_threads() {
  return internal::value_or_throw(Context::get().with_settings(
      [](Settings& s, bool) -> absl::StatusOr<int> { return s.intra_op_threads; }));
}

const char* get_cpu_isa() { return cpu::cpu_isa_name(cpu::cpu_isa()); }
const char* get_intra_op_thread_backend() { return cpu::intra_op_thread_backend(); }
const char* get_cpu_float32_gemm() { return cpu::float32_gemm_name(); }

}  // namespace threading
}  // namespace mt::config
