// Discovery of the GPUs through cudart, and creation of logical GPU devices.
#include "runtime/eager/gpu_backend.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "allocator/pools.h"
#include "allocator/sub_allocator.h"
#include "core/cuda/cuda_handles.h"
#include "core/status.h"
#include "kernels/cuda/index_fault.h"
#include "runtime/cuda/cuda_device.h"

namespace mt::internal {
namespace {

// Note [Default GPU pool size]
// Without a memory limit or a per-process fraction, a GPU's pool may take the card's free
// memory minus a reserve for the CUDA context, cuBLAS workspaces and other libraries:
// 1 GiB, or a quarter of the free memory on cards with less than 4 GiB free. (TensorFlow
// keeps 1800 MiB on compute capability 9.x; cuBLAS needs far less here, having no cuDNN.)
constexpr int64_t kReserveBytes = int64_t{1} << 30;
// A default pool smaller than this means the card is all but full.
constexpr int64_t kMinDefaultPoolBytes = int64_t{1} << 20;

int64_t default_limit(const GpuMemoryInfo& info) {
  if (info.free_bytes < 4 * kReserveBytes) return info.free_bytes / 4 * 3;
  return info.free_bytes - kReserveBytes;
}

}  // namespace

std::string no_gpu_message(int driver_version, const char* error) {
  if (driver_version == 0) {
    return "minitensor: could not find an NVIDIA driver on this machine; ops run on the CPU";
  }
  return absl::StrCat("minitensor: no GPU visible (", error != nullptr ? error : "no CUDA device",
                      "); ops run on the CPU");
}

std::vector<GpuInfo> discover_gpus() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    cudaGetLastError();
    int driver_version = 0;  // stays 0 when no driver is installed
    cudaDriverGetVersion(&driver_version);
    static std::atomic<bool> reported{false};  // once per process, as TensorFlow
    if (!reported.exchange(true)) {
      const std::string line = no_gpu_message(
          driver_version, error != cudaSuccess ? cudaGetErrorString(error) : nullptr);
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    return {};
  }
  std::vector<GpuInfo> gpus;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    gpus.push_back(
        GpuInfo{i, prop.name, static_cast<int64_t>(prop.totalGlobalMem), prop.major, prop.minor});
  }
  return gpus;
}

namespace {

absl::StatusOr<std::unique_ptr<Device>> create_gpu_device(const GpuDeviceOptions& options) {
  int64_t limit = 0;
  if (options.limit_bytes) {
    limit = *options.limit_bytes;
  } else {
    MT_ASSIGN_OR_RETURN(GpuMemoryInfo info, query_gpu_memory(options.physical_id));
    limit = default_limit(info);
    if (limit < kMinDefaultPoolBytes) {  // Note [A card filled by another process]
      return absl::ResourceExhaustedError(absl::StrCat(
          "the card has too little memory free for a pool: ", limit, " bytes after the reserve"));
    }
  }
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Allocator> pool,
                      make_gpu_pool(GpuPoolOptions{options.logical_id, options.physical_id, limit,
                                                   options.allow_growth}));
  cuda::ScopedDevice on(options.physical_id);
  MT_RETURN_IF_ERROR(on.status());
  CudaDevice::Handles handles;
  MT_ASSIGN_OR_RETURN(handles.stream, cuda::Stream::create());
  MT_ASSIGN_OR_RETURN(handles.cublas, cuda::CublasHandle::create(handles.stream.get()));
  // Kernel temporaries (split reductions) and the zeroed reduction tickets; outside the
  // pool, within the reserve.
  MT_ASSIGN_OR_RETURN(handles.scratch,
                      cuda::DeviceBuffer::create(cuda::kScratchBytes + cuda::kTicketBytes));
  // On the device's own stream, so that every kernel enqueued there later sees the zeros.
  MT_RETURN_IF_ERROR(cuda::cuda_check(
      "cudaMemsetAsync",
      cudaMemsetAsync(static_cast<char*>(handles.scratch.get()) + cuda::kScratchBytes, 0,
                      cuda::kTicketBytes, handles.stream.get())));
  handles.cudnn = cuda::make_cudnn_state(options.physical_id, handles.stream.get());
  // Note [GPU index faults] in kernels/cuda/index_fault.h.
  MT_ASSIGN_OR_RETURN(handles.index_fault,
                      cuda::MappedHostBuffer::create(sizeof(cuda::IndexFault)));
  MT_RETURN_IF_ERROR(
      cuda::cuda_check("cudaDeviceGetAttribute",
                       cudaDeviceGetAttribute(&handles.num_sms, cudaDevAttrMultiProcessorCount,
                                              options.physical_id)));
  return std::unique_ptr<Device>(new CudaDevice(options, std::move(pool), std::move(handles)));
}

}  // namespace

// Note [A card filled by another process]
// When another process holds most of a card, creating the CUDA context, the stream, cuBLAS
// or the scratch buffer can run out of memory before any tensor exists. That failure stays
// ResourceExhausted and names the logical device and the card's free bytes, so that the
// first op reports it plainly; the pool's own shortfalls are OOM errors at allocation.
absl::StatusOr<std::unique_ptr<Device>> make_gpu_device(const GpuDeviceOptions& options) {
  absl::StatusOr<std::unique_ptr<Device>> device = create_gpu_device(options);
  if (device.ok() || device.status().code() != absl::StatusCode::kResourceExhausted) {
    return device;
  }
  absl::StatusOr<GpuMemoryInfo> info = query_gpu_memory(options.physical_id);
  const std::string free_text =
      info.ok() ? absl::StrCat(info->free_bytes, " bytes free of ", info->total_bytes)
                : std::string("free memory unknown");
  return absl::ResourceExhaustedError(absl::StrCat("OOM when creating ", options.name,
                                                   " (physical GPU ", options.physical_id, "; ",
                                                   free_text, "): ", device.status().message()));
}

}  // namespace mt::internal
