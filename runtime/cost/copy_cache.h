#pragma once
// The copy cache: a tensor's copy on another device, kept beside it (internal).
//
// Note [The copy cache]
// An eager tensor never changes after its op wrote it, so a copy of it to another device
// stays a copy of it for the tensor's life. While the cost policy places ops, a tensor
// copied to the same device a second time keeps that copy as its cached copy, and a later op
// there reads the cached copy instead of copying again: the batch-1 MLP's weights, made on the
// GPU, are copied to the host when the policy measures MatMul on the CPU, and not again at
// every CPU run; the policy's estimates count no copy for an input mirrored on the
// candidate (CostInput::cached_copy). The second copy, not the first: a tensor used once on
// another device (a batch fed to the GPU) keeps no copy there for the rest of its life.
// One cached copy per tensor, of at most kMaxCachedCopyBytes, on a device of this process; it goes
// with the tensor's last reference.
//
// What can change is never mirrored, or loses its cached copy first: a tensor whose buffer
// another framework owns (DLPack import) or was handed to (DLPack export, share_buffer());
// and a variable's buffer, which its assignments overwrite when the variable alone holds
// it: a resource op drops the cached copies of the variables it writes before it runs (the execute
// body tells the policy: PlacementPolicy::writing), and so does writable_value() before a
// function's replay writes them. An
// Identity's copy is its result, a tensor of its own, and an mt::Function that records
// repeats the copies it recorded at each replay: neither keeps nor reads cached copies
// (uses_copy_cache()), and the estimates follow the same rule.

#include <cstdint>

#include "kernels/op_id.h"
#include "runtime/eager/tensor_impl.h"

namespace mt::internal {

inline constexpr int64_t kMaxCachedCopyBytes = int64_t{64} << 20;

// Returns whether `op`, placed by the cost policy on this thread now, keeps and reads
// cached copies (not an Identity, not while an mt::Function records).
bool uses_copy_cache(OpId op);

// Returns `src`'s cached copy on `device` with a reference for the caller, or nullptr.
TensorImpl* cached_copy_on(TensorImpl& src, const Device& device);

// Notes that `copy` was made of `src` (on another local device): the second copy to the
// same device becomes `src`'s cached copy, unless `src` has one or cannot have one.
void keep_cached_copy(TensorImpl& src, TensorImpl& copy);

// Drops `src`'s cached copy: its bytes are about to change.
void drop_cached_copy(TensorImpl& src);

// Marks `src`'s buffer as handed to other code, which may write it: no cached copy from now on.
void share_buffer(TensorImpl& src);

// Returns the device `src` is mirrored on, or nullptr (a hint: it may change meanwhile).
inline const Device* cached_copy_device(const TensorImpl& src) {
  if (src.cached_copy.load(std::memory_order_acquire) == nullptr) return nullptr;
  return src.copied_to.load(std::memory_order_acquire);
}

}  // namespace mt::internal
