#pragma once
// NCCL, loaded at run time (internal). NCCL is an optional dependency: the runtime opens
// `libnccl.so.2` with dlopen on first use (MT_NCCL_LIBRARY names another file), so a build
// needs no NCCL and a machine without it falls back to another all-reduce (Note [Choosing
// the cross-device ops] in runtime/strategy/mirrored_strategy.cc).
//
// The few types the runtime uses are declared here with NCCL's values, which its ABI
// keeps stable across releases; nccl_library.cc checks them against nccl.h when the
// toolkit has one.

#include <cuda_runtime.h>

#include <cstddef>

#include "absl/status/statusor.h"

namespace mt::cuda {

struct NcclComm;  // ncclComm
using NcclCommHandle = NcclComm*;

enum NcclDataType : int {
  kNcclInt32 = 2,
  kNcclInt64 = 4,
  kNcclFloat16 = 6,
  kNcclFloat32 = 7,
  kNcclFloat64 = 8,
  kNcclBfloat16 = 9,
};
enum NcclRedOp : int { kNcclSum = 0, kNcclAvg = 4 };

// The entry points the runtime calls; each returns ncclResult_t (0 is success).
struct NcclLibrary {
  int version = 0;  // ncclGetVersion: 22809 is 2.28.9
  int (*comm_init_all)(NcclCommHandle* comms, int ndev, const int* devlist) = nullptr;
  int (*comm_destroy)(NcclCommHandle comm) = nullptr;
  int (*all_reduce)(const void* send, void* recv, size_t count, int dtype, int op,
                    NcclCommHandle comm, cudaStream_t stream) = nullptr;
  int (*group_start)() = nullptr;
  int (*group_end)() = nullptr;
  const char* (*error_string)(int result) = nullptr;

  // Returns OK, or `call`'s failure with NCCL's message (Internal).
  absl::Status check(const char* call, int result) const;
};

// Returns NCCL, loading it on the first call for its file (once per process and file).
// FailedPrecondition naming the file and dlopen's or dlsym's message when it cannot be loaded, or
// when it is older than 2.10 (ncclAvg).
absl::StatusOr<const NcclLibrary*> nccl_library();

}  // namespace mt::cuda
