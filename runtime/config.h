#pragma once
// mt::config: the devices the runtime sees and how it uses them, with TensorFlow's names.
//
//   auto gpus = mt::config::list_physical_devices("GPU");
//   if (!gpus.empty()) {
//     mt::config::set_memory_growth(gpus[0], true);
//     mt::config::set_logical_device_configuration(
//         gpus[0], {{.memory_limit_mb = 1024}, {.memory_limit_mb = 1024}});
//   }
//   auto logical = mt::config::list_logical_devices("GPU");   // initialises the runtime
//
// Configuration (visible devices, logical devices, memory growth, GPU options) may change
// until the runtime initialises: the first op, the first tensor, or the first
// list_logical_devices. After that a change throws mt::Error (FailedPrecondition) with
// TensorFlow's wording; setting the same value again is not an error. Every function is
// thread-safe. Errors are thrown as mt::Error.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mt {

// A device the machine has: name "/physical_device:GPU:0", device_type "GPU".
struct PhysicalDevice {
  std::string name;
  std::string device_type;
  friend bool operator==(const PhysicalDevice&, const PhysicalDevice&) = default;
};

// A device ops run on: name "/device:GPU:0", as TensorFlow 2 names it (the full name once
// remote tasks are connected). DeviceScope and
// get_memory_info take it; Tensor::device() gives the full "/job:localhost/.../device:GPU:0".
struct LogicalDevice {
  std::string name;
  std::string device_type;
  friend bool operator==(const LogicalDevice&, const LogicalDevice&) = default;
};

// One logical device carved out of a physical one. On a GPU, memory_limit_mb caps its
// pool; on a CPU it is optional (unlimited when unset), which makes OOM testable anywhere.
struct LogicalDeviceConfiguration {
  std::optional<int64_t> memory_limit_mb;
  friend bool operator==(const LogicalDeviceConfiguration&,
                         const LogicalDeviceConfiguration&) = default;
};

// Process-wide GPU options, as TensorFlow 1's GPUOptions.
struct GPUOptions {
  // When set, each GPU's pool is capped at this fraction (0, 1] of the card's total memory.
  std::optional<double> per_process_gpu_memory_fraction;
  friend bool operator==(const GPUOptions&, const GPUOptions&) = default;
};

// A pool's accounting in bytes (allocator/allocator.h has the definitions).
struct MemoryInfo {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t reserved = 0;
  int64_t limit = 0;
  int64_t num_allocs = 0;
  int64_t largest_free_block = 0;
  double fragmentation = 0;
};

namespace config {

// Lists physical devices of `device_type` ("CPU", "GPU"; "" for all). Does not initialise.
std::vector<PhysicalDevice> list_physical_devices(std::string_view device_type = "");
// Lists the logical devices of `device_type` ("" for all). Initialises the runtime.
std::vector<LogicalDevice> list_logical_devices(std::string_view device_type = "");

// Makes only `devices` of `device_type` ("" for every type) visible. The CPU stays visible.
void set_visible_devices(const std::vector<PhysicalDevice>& devices,
                         std::string_view device_type = "");
void set_visible_devices(const PhysicalDevice& device, std::string_view device_type = "");
std::vector<PhysicalDevice> get_visible_devices(std::string_view device_type = "");

// Splits `device` into one logical device per entry of `configs`.
void set_logical_device_configuration(const PhysicalDevice& device,
                                      const std::vector<LogicalDeviceConfiguration>& configs);
std::vector<LogicalDeviceConfiguration> get_logical_device_configuration(
    const PhysicalDevice& device);

// Turns memory growth on or off for one GPU; GPUs may differ.
void set_memory_growth(const PhysicalDevice& device, bool enable);
bool get_memory_growth(const PhysicalDevice& device);

// Sets process-wide GPU options (before initialisation).
void set_gpu_options(const GPUOptions& options);

// Soft placement: an op requested on a device that does not exist runs on the best existing
// device instead of failing. On by default, as in TensorFlow 2; may change at any time.
void set_soft_device_placement(bool enable);
bool get_soft_device_placement();

// TensorFloat-32 for float32 matmul on GPUs: off by default (full fp32 precision).
void enable_tensor_float_32_execution(bool enable);
bool tensor_float_32_execution_enabled();

// Returns the accounting of logical device `device` ("GPU:0", "/device:CPU:1", a full name).
MemoryInfo get_memory_info(std::string_view device);
// Sets the peak of `device`'s pool to its current use.
void reset_memory_stats(std::string_view device);
// Returns the regions of `device`'s pool that hold no tensor to the system; returns bytes.
int64_t release_unused_memory(std::string_view device);

// CPU threading, as tf.config.threading.
namespace threading {

// Sets how many threads one op may use on the CPU: 0 (the default) means one per hardware
// thread, 1 runs every op on the calling thread. All logical CPUs share these threads.
// Throws InvalidArgument for a negative count, and FailedPrecondition ("Intra op
// parallelism cannot be modified after initialization.") once the runtime has initialised
// with another value.
void set_intra_op_parallelism_threads(int num_threads);
// Returns the value set (0 when unset), as TensorFlow does.
int get_intra_op_parallelism_threads();

// Returns the instruction-set level the CPU kernels run at: "avx512", "avx2" or "baseline"
// (the best this CPU supports; MT_CPU_ISA=baseline|avx2 in the environment lowers it).
const char* get_cpu_isa();
// Returns where the CPU kernels' threads come from: "openmp" (OpenMP's team, the default
// build) or "eigen" (Eigen's ThreadPool, builds without OpenMP).
const char* get_intra_op_thread_backend();
// Returns what runs float32 matmul on the CPU: "onednn <version> (<isa>)" where the build
// has oneDNN, else "eigen".
const char* get_cpu_float32_gemm();

}  // namespace threading
}  // namespace config
}  // namespace mt
