#include "kernels/cuda/cudnn/cudnn_library.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/mutex.h"

namespace mt::cuda {
namespace {

constexpr size_t kMinVersion = 90000;

template <typename Fn>
absl::Status resolve(void* library, const char* symbol, const std::string& file, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (*out != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(file, " has no ", symbol));
}

absl::StatusOr<CudnnLibrary> load(const std::string& file) {
  void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load ", file, ": ", error != nullptr ? error : "unknown error"));
  }
  CudnnLibrary l;
  decltype(&cudnnGetVersion) get_version = nullptr;
  for (absl::Status status : {
           resolve(library, "cudnnGetVersion", file, &get_version),
           resolve(library, "cudnnGetErrorString", file, &l.error_string),
           resolve(library, "cudnnCreate", file, &l.create),
           resolve(library, "cudnnDestroy", file, &l.destroy),
           resolve(library, "cudnnSetStream", file, &l.set_stream),
           resolve(library, "cudnnCreateTensorDescriptor", file, &l.create_tensor),
           resolve(library, "cudnnSetTensor4dDescriptor", file, &l.set_tensor_4d),
           resolve(library, "cudnnDestroyTensorDescriptor", file, &l.destroy_tensor),
           resolve(library, "cudnnCreateFilterDescriptor", file, &l.create_filter),
           resolve(library, "cudnnSetFilter4dDescriptor", file, &l.set_filter_4d),
           resolve(library, "cudnnDestroyFilterDescriptor", file, &l.destroy_filter),
           resolve(library, "cudnnCreateConvolutionDescriptor", file, &l.create_conv),
           resolve(library, "cudnnSetConvolution2dDescriptor", file, &l.set_conv_2d),
           resolve(library, "cudnnSetConvolutionMathType", file, &l.set_math_type),
           resolve(library, "cudnnDestroyConvolutionDescriptor", file, &l.destroy_conv),
           resolve(library, "cudnnGetConvolutionForwardAlgorithm_v7", file, &l.forward_algorithms),
           resolve(library, "cudnnGetConvolutionBackwardDataAlgorithm_v7", file,
                   &l.backward_data_algorithms),
           resolve(library, "cudnnGetConvolutionBackwardFilterAlgorithm_v7", file,
                   &l.backward_filter_algorithms),
           resolve(library, "cudnnConvolutionForward", file, &l.forward),
           resolve(library, "cudnnConvolutionBackwardData", file, &l.backward_data),
           resolve(library, "cudnnConvolutionBackwardFilter", file, &l.backward_filter),
       }) {
    if (!status.ok()) return status;
  }
  l.version = get_version();
  if (l.version < kMinVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(file, " is cuDNN ", l.version, "; the runtime needs 9.0 or later"));
  }
  return l;  // the library stays loaded for the process
}

std::atomic<const CudnnLibrary*> loaded{nullptr};

}  // namespace

absl::Status CudnnLibrary::check(const char* call, cudnnStatus_t status) const {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  std::string message = absl::StrCat(call, " failed: ", error_string(status));
  if (status == CUDNN_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

absl::StatusOr<const CudnnLibrary*> cudnn_library() {
  static internal::Mutex* const mu = new internal::Mutex;
  static absl::StatusOr<CudnnLibrary>* library = nullptr;
  internal::MutexLock lock(mu);
  if (library == nullptr) {
    const char* named = std::getenv("MT_CUDNN_LIBRARY");
    library = new absl::StatusOr<CudnnLibrary>(
        load(named != nullptr && *named != '\0' ? named : "libcudnn.so.9"));
    if (library->ok()) loaded.store(&**library, std::memory_order_release);
  }
  if (!library->ok()) return library->status();
  return &**library;
}

const CudnnLibrary* loaded_cudnn_library() { return loaded.load(std::memory_order_acquire); }

}  // namespace mt::cuda
