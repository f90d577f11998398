#pragma once
// IndexFault: how a GPU kernel that meets an index outside its range reports it without a
// synchronisation, and how the runtime reads the report at the next one.
//
// Note [GPU index faults]
// A kernel cannot return an error for an index it reads from device memory: the host has
// moved on when the kernel runs. So GatherV2 and UnsortedSegmentSum, meeting an index out
// of range, still write what TensorFlow's GPU kernels write (zeros; a dropped row) and never
// read or write outside their tensors, and they also record the op and the bad index in
// their logical device's IndexFault, a record in mapped pinned host memory. The first bad
// index met since the last report claims the record (atomicMax of a claim word in device
// memory, from `taken` to `taken + 1`), writes its fields, then `ready`; any other is
// dropped. Nothing is written while indices are good, so the hot path costs nothing.
// Whenever the host waits for the device (a copy to the host, a synchronize), it loads
// `ready` once; when set, it takes the report (take_index_fault), clears `ready`, counts
// it in `taken` so that a later bad index claims the record again, and returns the
// InvalidArgument the CPU gives for that index, naming the device and saying it was
// reported at the next synchronisation. Kernels replayed from a CUDA graph write the
// same record (a capture's state is a copy of the device's). With several threads on one
// device, the report goes to whichever thread waits first. The report stays with the
// device whose kernel met the index: a wait for another GPU that a copy of the output
// reached does not take it. Waits that drop their status (the trace's, the bus timings')
// use Device::wait_idle, which leaves it.
//
//   if (fault_pending(*fault)) return take_index_fault(*fault, device_name);

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace mt::cuda {

// The most dimensions of the indices a report names one by one; a position in indices
// of higher rank is given as a flat offset.
inline constexpr int kIndexFaultDims = 6;

struct IndexFault {
  uint64_t taken = 0;  // written by the host: reports taken so far
  // Written by the kernel thread that claims the record, `ready` last.
  int32_t op = 0;    // the OpId
  int32_t rank = 0;  // of the indices, whose dims follow; -1: `position` is a flat offset
  int64_t dims[kIndexFaultDims] = {};
  int64_t position = 0;  // flat offset of the bad index in the indices
  int64_t value = 0;     // the bad index
  int64_t bound = 0;     // the valid range is [0, bound)
  uint32_t ready = 0;    // 1 once a report waits
};

// Returns whether a report waits: one load (Note [GPU index faults]).
inline bool fault_pending(const IndexFault& fault) {
  return __atomic_load_n(&fault.ready, __ATOMIC_ACQUIRE) != 0;
}

// Takes the waiting report and returns its InvalidArgument, "[GatherV2] indices[0] = 3 is
// not in [0, 3) (on <device>; reported at the next synchronisation)"; OK when none waits.
// Callers on one record serialise their calls.
absl::Status take_index_fault(IndexFault& fault, std::string_view device);

}  // namespace mt::cuda
