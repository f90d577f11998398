#pragma once
// Mirrors: a tensor's copy on another device, kept beside it (internal).
//
// Note [Mirrors]
// An eager tensor never changes after its op wrote it, so a copy of it to another device
// stays a copy of it for the tensor's life. While the cost policy places ops, a copy an op
// made of an input is kept as that input's mirror, and a later op there reads the mirror
// instead of copying again: the batch-1 MLP's weights, made on the GPU, are copied to the
// host once when the policy measures MatMul on the CPU, not at every CPU run, and the
// policy's estimates count no copy for an input mirrored on the candidate (CostInput::
// mirror). One mirror per tensor (the first copy kept), of at most kMaxMirrorBytes, on a
// device of this process; it goes with the tensor's last reference.
//
// What is never mirrored, because its bytes can change: a tensor whose buffer another
// framework owns (DLPack import) or was handed to (DLPack export, which also drops the
// mirror); and a variable's buffer, which its assignments overwrite when the variable alone
// holds it: a resource op drops its inputs' mirrors before it runs (execute.cc), and so
// does writable_value() before a function's replay writes the buffer. Copies
// made while an mt::Function records are not kept, nor used: its replay repeats the copies
// it recorded.

#include <cstdint>

#include "runtime/tensor_impl.h"

namespace mt::internal {

inline constexpr int64_t kMaxMirrorBytes = int64_t{64} << 20;

// Returns `src`'s mirror on `device` with a reference for the caller, or nullptr.
TensorImpl* mirror_on(TensorImpl& src, const Device& device);

// Keeps `copy` (a copy of `src` on another local device) as `src`'s mirror, unless `src`
// has one or cannot have one (Note [Mirrors]).
void keep_mirror(TensorImpl& src, TensorImpl& copy);

// Drops `src`'s mirror: its bytes are about to change.
void drop_mirror(TensorImpl& src);

// Marks `src`'s buffer as handed to other code, which may write it: no mirror from now on.
void share_buffer(TensorImpl& src);

// Returns the device `src` is mirrored on, or nullptr (a hint: it may change meanwhile).
inline const Device* mirror_device(const TensorImpl& src) {
  const TensorImpl* m = src.mirror.load(std::memory_order_acquire);
  return m == nullptr ? nullptr : m->device;
}

}  // namespace mt::internal
