#include "runtime/eager/context.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "allocator/pools.h"
#include "core/status.h"
#include "kernels/cpu/thread_pool.h"
#include "placement/small_op_rule.h"
#include "runtime/eager/gpu_backend.h"
#include "runtime/eager/op_observer.h"
#include "runtime/eager/remote.h"

namespace mt::internal {
namespace {

// Reads TF_FORCE_GPU_ALLOW_GROWTH: exactly "true" or "false"; anything else is reported
// and ignored.
std::optional<bool> read_allow_growth_env() {
  const char* value = std::getenv("TF_FORCE_GPU_ALLOW_GROWTH");
  if (value == nullptr) return std::nullopt;
  if (std::strcmp(value, "true") == 0) return true;
  if (std::strcmp(value, "false") == 0) return false;
  std::fprintf(stderr,
               "minitensor: ignoring TF_FORCE_GPU_ALLOW_GROWTH='%s': expected 'true' or "
               "'false'\n",
               value);
  return std::nullopt;
}

std::string logical_name(DeviceType type, int id) {
  return canonical_name(local_device_spec(type, id));
}

}  // namespace

absl::Status Runtime::add_cpu_devices(const PhysicalDeviceConfig& cpu, bool gpus_visible) {
  std::vector<LogicalDeviceConfiguration> logical = cpu.logical;
  if (logical.empty()) logical.emplace_back();
  for (const LogicalDeviceConfiguration& config : logical) {
    int id = static_cast<int>(devices_.size());
    std::optional<int64_t> limit;
    if (config.memory_limit_mb) limit = *config.memory_limit_mb * kMiB;
    // With a GPU in use, CPU tensors live in pinned memory (Note [Pinned host tensors]).
    bool pinned = gpus_visible;
    std::unique_ptr<Allocator> pool = make_cpu_pool(id, limit, &pinned);
    devices_.push_back(make_cpu_device(id, logical_name(DeviceType::kCPU, id), std::move(pool)));
    devices_.back()->set_pinned_host_memory(pinned);
  }
  return absl::OkStatus();
}

absl::Status Runtime::add_gpu_devices(const Settings& settings, const PhysicalDeviceConfig& gpu) {
  std::vector<LogicalDeviceConfiguration> logical = gpu.logical;
  if (logical.empty()) logical.emplace_back();
  bool growth = settings.memory_growth(gpu);
  for (const LogicalDeviceConfiguration& config : logical) {
    int id = 0;
    for (const auto& d : devices_) id += d->type() == DeviceType::kGPU;
    GpuDeviceOptions options{id, gpu.index, logical_name(DeviceType::kGPU, id), std::nullopt,
                             growth};
    if (config.memory_limit_mb) {
      options.limit_bytes = *config.memory_limit_mb * kMiB;
    } else if (settings.gpu_options.per_process_gpu_memory_fraction) {
      options.limit_bytes = static_cast<int64_t>(
          *settings.gpu_options.per_process_gpu_memory_fraction * gpu.total_memory);
    }
    MT_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, make_gpu_device(options));
    devices_.push_back(std::move(device));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::create(const Settings& settings) {
  std::unique_ptr<Runtime> rt(new Runtime());
  cpu::set_intra_op_threads(settings.intra_op_threads);
  MT_RETURN_IF_ERROR(register_cpu_kernels(rt->registry_));
  MT_RETURN_IF_ERROR(register_cuda_kernels(rt->registry_));
  bool gpus_visible = false;
  for (const PhysicalDeviceConfig& physical : settings.physical) {
    gpus_visible |= physical.visible && physical.type == DeviceType::kGPU;
  }
  for (const PhysicalDeviceConfig& physical : settings.physical) {
    if (!physical.visible) continue;
    MT_RETURN_IF_ERROR(physical.type == DeviceType::kCPU
                           ? rt->add_cpu_devices(physical, gpus_visible)
                           : rt->add_gpu_devices(settings, physical));
  }
  std::vector<DeviceInfo> infos;
  for (const auto& d : rt->devices_) infos.push_back(DeviceInfo{d->type(), d->id()});
  if (settings.cluster != nullptr) {
    for (RemoteDeviceEntry& entry : settings.cluster->make_devices()) {
      rt->devices_.push_back(std::move(entry.device));
      infos.push_back(std::move(entry.info));
    }
  }
  rt->placer_ = std::make_unique<Placer>(std::move(infos), &rt->registry_);
  for (int op = 0; op < kNumOps; ++op) {
    for (int dtype = 0; dtype < kNumDTypes; ++dtype) {
      rt->defaults_.push_back(rt->placer_->place(static_cast<OpId>(op), static_cast<DType>(dtype),
                                                 DeviceSpec{}, /*soft_placement=*/false));
    }
  }
  rt->set_up_small_op_rule();
  install_features();
  if (PolicyFactory make_policy = policy_factory()) rt->policy_ = make_policy(*rt);
  return rt;
}

void Runtime::set_up_small_op_rule() {
  if (!small_op_pinning_enabled(std::getenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING"))) return;
  for (int i = 0; i < num_devices(); ++i) {
    Device& d = *devices_[i];
    if (d.remote() != nullptr || d.type() != DeviceType::kCPU || d.id() != 0) continue;
    small_op_host_ = &d;
    for (int op = 0; op < kNumOps; ++op) {
      for (int dtype = 0; dtype < kNumDTypes; ++dtype) {
        KernelFn kernel =
            registry_.find(static_cast<OpId>(op), DeviceType::kCPU, static_cast<DType>(dtype));
        host_placements_.push_back(Placement{i, kernel, PlacementReason::kSmallOpOnHost});
      }
    }
    return;
  }
}

absl::StatusOr<Placement> Runtime::resource_placement(OpId op, DType dtype, int device) const {
  Device& d = *devices_[device];
  if (d.remote() != nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "[", op_name(op), "] variables on remote devices are not supported yet (", d.name(), ")"));
  }
  KernelFn kernel = registry_.find(op, d.type(), dtype);
  if (kernel == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("[", op_name(op), "] no ", dtype_name(dtype), " kernel on ", d.name()));
  }
  return Placement{device, kernel, PlacementReason::kResourceDevice};
}

absl::StatusOr<int> Runtime::find_device(std::string_view name) const {
  MT_ASSIGN_OR_RETURN(DeviceSpec spec, parse_device_name(name));
  // Devices of this process first: "CPU:0" is the local one even when tasks have a CPU:0.
  for (bool remote : {false, true}) {
    int found = -1;
    for (int i = 0; i < num_devices(); ++i) {
      if ((devices_[i]->remote() != nullptr) != remote) continue;
      if (!matches(spec, placer_->device_spec(i))) continue;  // the placer's indices are ours
      if (found >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Device name '", std::string(name), "' must name exactly one device, like 'GPU:0'"));
      }
      found = i;
    }
    if (found >= 0) return found;
  }
  return absl::NotFoundError(absl::StrCat(canonical_name(spec), " unknown device."));
}

Context& Context::get() {
  static Context* context = new Context();  // never destroyed: tensors may outlive main
  return *context;
}

void Context::discover_locked() {
  if (discovered_) return;
  discovered_ = true;
  PhysicalDeviceConfig cpu;
  cpu.device = PhysicalDevice{"/physical_device:CPU:0", "CPU"};
  settings_.physical.push_back(std::move(cpu));
  for (const GpuInfo& gpu : discover_gpus()) {
    PhysicalDeviceConfig config;
    config.device = PhysicalDevice{absl::StrCat("/physical_device:GPU:", gpu.physical_id), "GPU"};
    config.type = DeviceType::kGPU;
    config.index = gpu.physical_id;
    config.total_memory = gpu.total_memory;
    settings_.physical.push_back(std::move(config));
  }
  settings_.env_allow_growth = read_allow_growth_env();
}

absl::StatusOr<Runtime*> Context::initialize() {
  internal::MutexLock lock(&mu_);
  if (Runtime* rt = runtime_.load(std::memory_order_acquire)) return rt;
  discover_locked();
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> rt, Runtime::create(settings_));
  Runtime* raw = rt.release();
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  runtime_.store(raw, std::memory_order_release);
  return raw;
}

absl::Status set_remote_cluster(std::shared_ptr<RemoteCluster> cluster) {
  return Context::get().with_settings([&](Settings& s, bool initialized) {
    if (initialized) {
      return absl::FailedPreconditionError(
          "Cluster cannot be connected after the runtime is initialized; connect before the "
          "first op or tensor");
    }
    s.cluster = std::move(cluster);
    return absl::OkStatus();
  });
}

void Context::set_soft_placement(bool enable) {
  if (soft_placement_.exchange(enable, std::memory_order_acq_rel) != enable) {
    epoch_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void Context::set_cost_placement(bool enable) {
  if (cost_placement_.exchange(enable, std::memory_order_acq_rel) != enable) {
    epoch_.fetch_add(1, std::memory_order_acq_rel);
  }
}

absl::Status Context::reset_for_testing() {
  internal::MutexLock lock(&mu_);
  Runtime* rt = runtime_.load(std::memory_order_acquire);
  if (rt != nullptr) {
    for (int i = 0; i < rt->num_devices(); ++i) {
      // Let copies still reading freed buffers finish, so that those buffers come back.
      MT_RETURN_IF_ERROR(rt->device(i).synchronize());
      rt->device(i).allocator().release_unused();
    }
    for (int i = 0; i < rt->num_devices(); ++i) {
      int64_t in_use = rt->device(i).allocator().stats().bytes_in_use;
      if (in_use != 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "reset_for_testing: ", rt->device(i).name(), " still has ", in_use, " bytes in use"));
      }
    }
    retired_.emplace_back(rt);
  }
  runtime_.store(nullptr, std::memory_order_release);
  settings_ = Settings{};
  discovered_ = false;
  soft_placement_.store(true);
  log_placement_.store(false);
  cost_placement_.store(false);
  random_seeds_.set_global_seed(std::nullopt);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  return absl::OkStatus();
}

int device_index(const Device& device) {
  Runtime* rt = Context::get().runtime_if_initialized();
  for (int i = 0; rt != nullptr && i < rt->num_devices(); ++i) {
    if (&rt->device(i) == &device) return i;
  }
  return 0;
}

}  // namespace mt::internal
