#pragma once
// Its code: tensor.cc.
// TensorImpl: what a Tensor handle points to (internal). The dtype, shape and device never
// change; the buffer comes from the device's pool and goes back to it with the last
// reference.

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "allocator/allocator.h"
#include "core/dtype.h"
#include "core/mutex.h"
#include "core/shape.h"
#include "runtime/eager/device.h"

namespace mt::internal {

struct TensorImpl {
  TensorImpl(DType dtype, Shape shape, Device* device, void* data)
      : dtype(dtype), shape(std::move(shape)), device(device), data(data) {}

  size_t bytes() const { return static_cast<size_t>(shape.num_elements()) * dtype_size(dtype); }

  std::atomic<int32_t> refs{1};
  // Note [Weak tensor references]: the strong references (refs, the Tensor handles) hold the
  // buffer and, all together, one weak reference; a GradientTape holds weak ones to the
  // tensors whose gradients need only their identity and meta (weak_ref). The buffer goes
  // back to its pool with the last strong reference (data becomes nullptr); the impl, its
  // address, dtype, shape and device, lives until the last weak one, so no later tensor
  // can take its address while a tape keys gradients by it.
  std::atomic<int32_t> weak{1};
  DType dtype;
  Shape shape;
  Device* device;
  void* data;  // nullptr when the tensor has no elements
  // A copy still reading `data` (Note [Pinned host tensors]); guarded by pending_mu.
  internal::Mutex pending_mu;
  PendingUse pending;
  // Set for a tensor over memory another framework owns (DLPack import): `data` is not the
  // pool's, and the last reference calls external_release(external_arg) instead.
  void (*external_release)(void* arg) = nullptr;
  void* external_arg = nullptr;
  // Its copy on another device, holding a strong reference (runtime/cost/copy_cache.h), and the
  // device a copy of it went to last (where the cached copy is, when there is one). Both are
  // written under pending_mu; without it, only whether there is a cached copy and the device
  // may be read, never the cached copy itself.
  std::atomic<TensorImpl*> cached_copy{nullptr};
  std::atomic<const Device*> copied_to{nullptr};
  bool shared = false;  // its buffer was handed to other code (DLPack): never mirrored;
                        // guarded by pending_mu
  // The cost policy's key of the op that made it (Note [Looking along the data] in
  // runtime/cost/cost_model.h); 0 when the policy did not place that op.
  std::atomic<uint32_t> producer{0};
};

// Waits until `use` has completed and releases it; an empty use is a no-op.
void wait_for_use(PendingUse use);

// Makes `impl`'s buffer wait for `use` before it returns to its pool. An earlier use is
// waited for first (a tensor copied to several GPUs at once is rare).
void attach_pending_use(TensorImpl* impl, PendingUse use);

inline void ref(TensorImpl* impl) { impl->refs.fetch_add(1, std::memory_order_relaxed); }

// Drops a weak reference (Note [Weak tensor references]); the last one frees the impl.
inline void weak_unref(TensorImpl* impl) {
  if (impl->weak.fetch_sub(1, std::memory_order_acq_rel) == 1) delete impl;
}

// Adds a weak reference to a tensor the caller holds a strong or weak reference to.
inline void weak_ref(TensorImpl* impl) { impl->weak.fetch_add(1, std::memory_order_relaxed); }

inline void unref(TensorImpl* impl) {
  if (impl->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // The last reference: no other thread can attach a use or look for the cached copy any more
    // (a load, not an exchange: most tensors have none, and this runs for every one).
    if (TensorImpl* m = impl->cached_copy.load(std::memory_order_acquire)) {
      impl->cached_copy.store(nullptr, std::memory_order_relaxed);
      unref(m);
    }
    if (impl->external_release != nullptr) {
      if (impl->pending.handle != nullptr) attach_pending_use(impl, PendingUse{});  // waits
      impl->external_release(impl->external_arg);
    } else if (impl->pending.handle != nullptr) {
      impl->device->allocator().deallocate_after(impl->data, impl->pending);
    } else {
      impl->device->allocator().deallocate(impl->data);
    }
    // Only the strong references' weak one left (the common case): no tape can add another.
    if (impl->weak.load(std::memory_order_acquire) == 1) {
      delete impl;
    } else {
      impl->data = nullptr;  // the impl outlives its buffer
      weak_unref(impl);
    }
  }
}

// Allocates an uninitialised tensor of `dtype` and `shape` from `device`'s pool. Returns
// ResourceExhausted with TensorFlow's OOM message when the pool cannot supply it.
absl::StatusOr<TensorImpl*> allocate_tensor(Device& device, DType dtype, Shape shape);

}  // namespace mt::internal
