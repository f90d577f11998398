#include "runtime/cost/copy_cache.h"

#include "runtime/function/function_recorder.h"

namespace mt::internal {

bool uses_copy_cache(OpId op) {
  return !op_has_flag(op, kCopyIsResult) && active_recorder() == nullptr;
}

TensorImpl* cached_copy_on(TensorImpl& src, const Device& device) {
  if (src.cached_copy.load(std::memory_order_acquire) == nullptr) return nullptr;
  MutexLock lock(&src.pending_mu);
  TensorImpl* m = src.cached_copy.load(std::memory_order_acquire);
  if (m == nullptr || m->device != &device) return nullptr;
  ref(m);
  return m;
}

void keep_cached_copy(TensorImpl& src, TensorImpl& copy) {
  if (src.external_release != nullptr || src.device->remote() != nullptr ||
      copy.device->remote() != nullptr || static_cast<int64_t>(src.bytes()) > kMaxCachedCopyBytes) {
    return;
  }
  MutexLock lock(&src.pending_mu);
  if (src.shared || src.cached_copy.load(std::memory_order_relaxed) != nullptr) return;
  if (src.copied_to.load(std::memory_order_relaxed) != copy.device) {  // the first copy there
    src.copied_to.store(copy.device, std::memory_order_release);
    return;
  }
  ref(&copy);
  src.cached_copy.store(&copy, std::memory_order_release);
}

void drop_cached_copy(TensorImpl& src) {
  if (src.cached_copy.load(std::memory_order_acquire) == nullptr &&
      src.copied_to.load(std::memory_order_acquire) == nullptr) {
    return;
  }
  TensorImpl* m;
  {
    MutexLock lock(&src.pending_mu);
    m = src.cached_copy.exchange(nullptr, std::memory_order_acq_rel);
    src.copied_to.store(nullptr, std::memory_order_release);
  }
  if (m != nullptr) unref(m);
}

void share_buffer(TensorImpl& src) {
  {
    MutexLock lock(&src.pending_mu);
    src.shared = true;
  }
  drop_cached_copy(src);
}

}  // namespace mt::internal
