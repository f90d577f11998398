#include "runtime/cuda/nccl_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/mutex.h"

#if __has_include(<nccl.h>)
#include <nccl.h>
// Returns whether NCCL's value `theirs` is ours.
constexpr bool same(int theirs, int ours) { return theirs == ours; }
static_assert(same(ncclInt32, mt::cuda::kNcclInt32) && same(ncclInt64, mt::cuda::kNcclInt64) &&
              same(ncclFloat16, mt::cuda::kNcclFloat16) &&
              same(ncclFloat32, mt::cuda::kNcclFloat32) &&
              same(ncclFloat64, mt::cuda::kNcclFloat64) &&
              same(ncclBfloat16, mt::cuda::kNcclBfloat16));
static_assert(same(ncclSum, mt::cuda::kNcclSum) && same(ncclAvg, mt::cuda::kNcclAvg));
#endif

namespace mt::cuda {
namespace {

constexpr int kMinVersion = 21000;  // 2.10: ncclAvg

template <typename Fn>
absl::Status resolve(void* library, const char* symbol, const std::string& file, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (*out != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(file, " has no ", symbol));
}

absl::StatusOr<NcclLibrary> load(const std::string& file) {
  void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load ", file, ": ", error != nullptr ? error : "unknown error"));
  }
  NcclLibrary nccl;
  int (*get_version)(int*) = nullptr;
  for (absl::Status status : {
           resolve(library, "ncclGetVersion", file, &get_version),
           resolve(library, "ncclCommInitAll", file, &nccl.comm_init_all),
           resolve(library, "ncclCommDestroy", file, &nccl.comm_destroy),
           resolve(library, "ncclAllReduce", file, &nccl.all_reduce),
           resolve(library, "ncclGroupStart", file, &nccl.group_start),
           resolve(library, "ncclGroupEnd", file, &nccl.group_end),
           resolve(library, "ncclGetErrorString", file, &nccl.error_string),
       }) {
    if (!status.ok()) return status;
  }
  if (get_version(&nccl.version) != 0 || nccl.version < kMinVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(file, " is NCCL ", nccl.version, "; the runtime needs 2.10 or later"));
  }
  return nccl;  // the library stays loaded for the process
}

}  // namespace

absl::Status NcclLibrary::check(const char* call, int result) const {
  if (result == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, " failed: ", error_string(result)));
}

// Note [NCCL connects at initialisation]
// NCCL 2.22 and later connect the GPUs of a communicator lazily, at the first collective
// that needs each algorithm. On two H100s (NCCL 2.28.9) that hung the strategy's all-reduce
// twice, at the first call of a new size (16 and 64 MiB), the first calls of smaller sizes
// having run; with NCCL_RUNTIME_CONNECT=0 (connect everything in ncclCommInitAll) every size
// from 1 MiB to 1 GiB and the training step ran. The runtime therefore asks for that,
// unless the user set the variable, before NCCL reads its environment.
absl::StatusOr<const NcclLibrary*> nccl_library() {
  static internal::Mutex* const mu = new internal::Mutex;
  static auto* const loaded = new std::map<std::string, absl::StatusOr<NcclLibrary>>;
  const char* named = std::getenv("MT_NCCL_LIBRARY");
  const std::string file = named != nullptr && *named != '\0' ? named : "libnccl.so.2";
  internal::MutexLock lock(mu);
  setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0);
  auto it = loaded->find(file);
  if (it == loaded->end()) it = loaded->emplace(file, load(file)).first;
  if (!it->second.ok()) return it->second.status();
  return &*it->second;
}

}  // namespace mt::cuda
