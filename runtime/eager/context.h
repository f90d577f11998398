#pragma once
// The process-wide runtime state (internal).
//
// Context holds what mt::config sets before initialisation (Settings) and, once the first
// op, tensor or list_logical_devices initialises it, the immutable Runtime: the logical
// devices with their pools, the kernel registry and the Placer. Settings are guarded by
// Context::mu; the Runtime pointer is published once with release/acquire, so the per-op
// path reads it with one atomic load and no lock.

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "core/mutex.h"
#include "kernels/kernel_registry.h"
#include "kernels/random_seed.h"
#include "placement/placer.h"
#include "runtime/config.h"
#include "runtime/eager/device.h"
#include "runtime/eager/placement_policy.h"

namespace mt::internal {

// One physical device and what has been configured for it.
struct PhysicalDeviceConfig {
  PhysicalDevice device;
  DeviceType type = DeviceType::kCPU;
  int index = 0;             // among devices of its type, in CUDA's visible order
  int64_t total_memory = 0;  // bytes (GPUs)
  bool visible = true;
  std::vector<LogicalDeviceConfiguration> logical;  // empty: one default logical device
  std::optional<bool> memory_growth;
};

class RemoteCluster;

struct Settings {
  std::vector<PhysicalDeviceConfig> physical;  // CPU:0 first, then the GPUs
  std::shared_ptr<RemoteCluster> cluster;      // remote devices come after local ones
  GPUOptions gpu_options;
  std::optional<bool> env_allow_growth;  // TF_FORCE_GPU_ALLOW_GROWTH, when valid
  int intra_op_threads = 0;              // threads per CPU op; 0: one per hardware thread

  // Returns whether `gpu`'s pools grow: the environment variable overrides
  // set_memory_growth, and the default is off.
  bool memory_growth(const PhysicalDeviceConfig& gpu) const {
    return env_allow_growth.value_or(gpu.memory_growth.value_or(false));
  }
};

inline constexpr int64_t kMiB = int64_t{1} << 20;

// The initialised runtime. Immutable after create(); safe to read from any thread.
class Runtime {
 public:
  static absl::StatusOr<std::unique_ptr<Runtime>> create(const Settings& settings);

  int num_devices() const { return static_cast<int>(devices_.size()); }
  Device& device(int index) const { return *devices_[index]; }
  const Placer& placer() const { return *placer_; }
  const KernelRegistry& registry() const { return registry_; }

  // Returns the placement of (op, dtype) outside any device scope (computed once).
  const absl::StatusOr<Placement>& default_placement(OpId op, DType dtype) const {
    return defaults_[static_cast<int>(op) * kNumDTypes + static_cast<int>(dtype)];
  }

  // Returns the index of the one logical device `name` denotes, or NotFound /
  // InvalidArgument (malformed, or several devices match).
  absl::StatusOr<int> find_device(std::string_view name) const;

  // The host CPU (this process's logical CPU:0), where TensorFlow's small-op rule pins ops
  // (placement/small_op_rule.h); null when the rule is off.
  const Device* small_op_host() const { return small_op_host_; }

  // Returns the placement of (op, dtype) on the host CPU by the small-op rule (every op
  // has a CPU kernel for each dtype it accepts).
  const Placement& host_placement(OpId op, DType dtype) const {
    return host_placements_[static_cast<int>(op) * kNumDTypes + static_cast<int>(dtype)];
  }

  // Returns the placement of a kResource op on `device`, the variable's (reason
  // kResourceDevice); Unimplemented on a remote device.
  absl::StatusOr<Placement> resource_placement(OpId op, DType dtype, int device) const;

  // Returns the placement policy of unscoped ops while Context::cost_placement() is on
  // (runtime/eager/placement_policy.h); null when no factory was registered.
  PlacementPolicy* policy() const { return policy_.get(); }

 private:
  Runtime() = default;
  absl::Status add_cpu_devices(const PhysicalDeviceConfig& cpu, bool gpus_visible);
  absl::Status add_gpu_devices(const Settings& settings, const PhysicalDeviceConfig& gpu);
  // Finds the host CPU and precomputes host_placements_, unless the environment turns the
  // small-op rule off.
  void set_up_small_op_rule();

  KernelRegistry registry_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<Placer> placer_;
  std::vector<absl::StatusOr<Placement>> defaults_;
  const Device* small_op_host_ = nullptr;
  std::vector<Placement> host_placements_;
  std::unique_ptr<PlacementPolicy> policy_;
};

class Context {
 public:
  static Context& get();

  // Returns the runtime, initialising it on first use.
  absl::StatusOr<Runtime*> runtime() {
    Runtime* rt = runtime_.load(std::memory_order_acquire);
    if (__builtin_expect(rt != nullptr, 1)) return rt;
    return initialize();
  }
  // Returns the runtime if it is initialised, else nullptr.
  Runtime* runtime_if_initialized() const { return runtime_.load(std::memory_order_acquire); }

  // Runs `fn(settings, initialized)` under the configuration lock; discovers devices first.
  template <typename Fn>
  auto with_settings(Fn&& fn) {
    internal::MutexLock lock(&mu_);
    discover_locked();
    return fn(settings_, runtime_.load(std::memory_order_acquire) != nullptr);
  }

  bool soft_placement() const { return soft_placement_.load(std::memory_order_relaxed); }
  void set_soft_placement(bool enable);
  bool log_placement() const { return log_placement_.load(std::memory_order_relaxed); }
  void set_log_placement(bool enable) { log_placement_.store(enable, std::memory_order_relaxed); }
  // Whether unscoped ops are placed by the cost policy (mt::config::set_placement_policy).
  bool cost_placement() const { return cost_placement_.load(std::memory_order_relaxed); }
  void set_cost_placement(bool enable);

  // Changes whenever a cached placement decision may no longer hold.
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  // Returns the seeds of the stateful random ops (tf.random.set_seed's state). It outlives
  // the runtime, as set_seed may come first; reset_for_testing clears it.
  RandomSeedState& random_seeds() { return random_seeds_; }

  // Drops the runtime and the configuration (tests only; no op may run meanwhile). Fails
  // with FailedPrecondition while any pool still has bytes in use.
  absl::Status reset_for_testing();

 private:
  absl::StatusOr<Runtime*> initialize();
  void discover_locked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  internal::Mutex mu_;
  bool discovered_ ABSL_GUARDED_BY(mu_) = false;
  Settings settings_ ABSL_GUARDED_BY(mu_);
  // Runtimes dropped by reset_for_testing stay alive: tensors may still name their devices.
  std::vector<std::unique_ptr<Runtime>> retired_ ABSL_GUARDED_BY(mu_);
  std::atomic<Runtime*> runtime_{nullptr};
  std::atomic<bool> soft_placement_{true};  // TensorFlow 2's default
  std::atomic<bool> log_placement_{false};
  std::atomic<bool> cost_placement_{false};
  std::atomic<uint64_t> epoch_{1};
  RandomSeedState random_seeds_;
};

// Returns the index of `device` in the running runtime (0 when it is none of its devices).
int device_index(const Device& device);

}  // namespace mt::internal
