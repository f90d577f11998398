#pragma once
// Its code: cpu_device.cc (CPUs), runtime/cuda/cuda_device.cc (GPUs).
// Device: one logical device the runtime runs ops on (internal). It owns the device's
// memory pool and knows how to move bytes to and from it. The CPU implementation copies
// with memcpy; the CUDA backend (runtime/cuda/) adds its stream and cuBLAS handle.
//
// Thread safety: every method may be called from any thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "allocator/allocator.h"
#include "core/device_type.h"

namespace mt::internal {

class Device;
class RemoteOps;

// What a graph capture hands its body (Device::capture_graph).
class GraphCapture {
 public:
  virtual ~GraphCapture() = default;
  // Returns the kernel state through which a kernel on `device` enqueues into the capture;
  // InvalidArgument for a device the capture was not opened over.
  virtual absl::StatusOr<void*> kernel_state(Device& device) = 0;
  // Enqueues into the capture a copy of `bytes` from `src` on `from` to `dst` on `to`,
  // after what the capture holds for either device and before what it gets for either
  // after.
  virtual absl::Status copy(Device& to, void* dst, Device& from, const void* src, size_t bytes) = 0;
};

class Device {
 public:
  Device(DeviceType type, int id, std::string name, std::unique_ptr<Allocator> allocator)
      : type_(type), id_(id), name_(std::move(name)), allocator_(std::move(allocator)) {}
  virtual ~Device() = default;

  DeviceType type() const { return type_; }
  int id() const { return id_; }
  // Returns the canonical name, "/job:localhost/replica:0/task:0/device:CPU:0".
  const std::string& name() const { return name_; }
  Allocator& allocator() const { return *allocator_; }

  // Returns the backend state handed to kernels (KernelContext::device_state).
  virtual void* kernel_state() { return nullptr; }

  // Prepares the calling thread to launch this device's kernels (on a GPU: makes it the
  // current CUDA device). A no-op on the CPU.
  virtual absl::Status make_current() { return absl::OkStatus(); }

  // Copies `bytes` from host memory into this device's buffer `dst`. `src` may be reused
  // as soon as this returns.
  virtual absl::Status copy_from_host(void* dst, const void* src, size_t bytes) = 0;

  // Copies `bytes` of this device's buffer `src` to host memory, waiting for the work that
  // produces `src` and for the copy itself. On a GPU, then returns InvalidArgument for an
  // index out of range that a kernel met since the last wait (Note [GPU index faults] in
  // kernels/cuda/index_fault.h), the bytes copied all the same.
  virtual absl::Status copy_to_host(void* dst, const void* src, size_t bytes) = 0;

  // Copies `bytes` from `src`, a buffer of device `from`, into `dst` on this device,
  // ordered after the work that produced `src`. Returns an empty PendingUse when `src` is
  // no longer read on return, else the use that `src`'s buffer must wait for before it is
  // reused (Note [Pinned host tensors] in runtime/cuda/cuda_device.cc).
  virtual absl::StatusOr<PendingUse> copy_from_device(void* dst, Device& from, const void* src,
                                                      size_t bytes) = 0;

  // Returns whether this device's buffers are pinned host memory, which a GPU can read
  // asynchronously.
  bool pinned_host_memory() const { return pinned_host_memory_; }
  void set_pinned_host_memory(bool pinned) { pinned_host_memory_ = pinned; }

  // Waits for everything enqueued on this device; on a GPU, then reports a bad index as
  // copy_to_host does.
  virtual absl::Status synchronize() = 0;
  // Waits as synchronize() does but leaves a bad-index report to the next wait: for
  // callers that drop the status (the trace's clock alignment, the bus timings).
  virtual absl::Status wait_idle() { return synchronize(); }

  // For DLPack: the CUDA device ordinal of a GPU (0 on the CPU), and the stream its work
  // runs on as an integer (0 on the CPU).
  virtual int hardware_ordinal() const { return 0; }
  virtual uintptr_t stream_handle() const { return 0; }
  // Trace support (Note [Device time] in runtime/trace/trace_recorder.h). Records a timing mark
  // after the work enqueued so far and returns it; nullptr where host time is device time
  // (the CPU) or on failure.
  virtual void* record_mark() { return nullptr; }
  // Returns the milliseconds from mark `from` to mark `to`, waiting for both; -1 on failure.
  virtual double mark_elapsed_ms(void* /*from*/, void* /*to*/) { return -1; }
  // Frees a mark from record_mark(); nullptr is a no-op.
  virtual void release_mark(void* /*mark*/) {}
  // The cost policy's timings (runtime/cost/cost_policy.h). Returns the milliseconds from mark
  // `from` to mark `to` once the device has passed `to`, without waiting for it: nullopt
  // while it has not, -1 on failure. The CPU has no marks (its time is the host clock).
  virtual std::optional<double> try_mark_elapsed_ms(void* /*from*/, void* /*to*/) { return -1; }
  // Returns whether the device has completed everything enqueued on it, without waiting
  // (the cost policy's queue: Note [A queue that follows the device] in
  // runtime/cost/cost_model.h). A CPU runs its ops inline: always.
  virtual bool idle() const { return true; }
  // CUDA graphs (runtime/function/concrete_function.cc). Captures what `body` enqueues
  // through the capture it is handed (streams of the capture's own, so that no other
  // thread's work lands in it) on this device and on `others` (GPUs of this process) into
  // one executable graph, and returns the graph; Unimplemented on a device without graphs
  // (the CPU), the CUDA error when the devices cannot share a graph.
  virtual absl::StatusOr<void*> capture_graph(
      absl::Span<Device* const> /*others*/,
      const std::function<absl::Status(GraphCapture&)>& /*body*/) {
    return absl::UnimplementedError("this device has no graphs");
  }
  // Enqueues a graph from capture_graph() on this device's stream, after the work the
  // other devices' streams hold and before what they get next.
  virtual absl::Status launch_graph(void* /*graph*/) {
    return absl::UnimplementedError("this device has no graphs");
  }
  // Frees a graph from capture_graph() once the work enqueued so far is done with it.
  virtual void release_graph(void* /*graph*/) {}
  // Returns how ops run on a device of another process (runtime/eager/remote.h), or nullptr.
  virtual RemoteOps* remote() { return nullptr; }

 private:
  DeviceType type_;
  int id_;
  std::string name_;
  std::unique_ptr<Allocator> allocator_;
  bool pinned_host_memory_ = false;
};

// Creates logical CPU device `id` over `allocator`.
std::unique_ptr<Device> make_cpu_device(int id, std::string name,
                                        std::unique_ptr<Allocator> allocator);

}  // namespace mt::internal
