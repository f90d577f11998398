#include "runtime/eager/tensor.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "runtime/eager/error.h"
#include "runtime/eager/op_observer.h"
#include "runtime/eager/tensor_format.h"
#include "runtime/eager/tensor_impl.h"

namespace mt {
namespace internal {

absl::StatusOr<TensorImpl*> allocate_tensor(Device& device, DType dtype, Shape shape) {
  size_t bytes = static_cast<size_t>(shape.num_elements()) * dtype_size(dtype);
  void* data = nullptr;
  if (bytes > 0) {
    data = device.allocator().allocate(bytes);
    if (__builtin_expect(data == nullptr, 0)) {
      MemoryStats s = device.allocator().stats();
      absl::Status oom = absl::ResourceExhaustedError(absl::StrCat(
          "OOM when allocating tensor with shape", shape.to_list_string(), " and type ",
          dtype_type_name(dtype), " on ", device.name(), " by allocator ",
          std::string(device.allocator().name()), "\nIn use: ", s.bytes_in_use,
          " bytes; peak: ", s.peak_bytes_in_use, " bytes; limit: ", s.bytes_limit,
          " bytes; largest free block: ", s.largest_free_block, " bytes; requested: ", bytes,
          " bytes"));
      notify_oom(device, std::string(oom.message()));  // the pool's last snapshot is kept
      return oom;
    }
  }
  return new TensorImpl(dtype, std::move(shape), &device, data);
}

void wait_for_use(PendingUse use) {
  if (use.handle == nullptr) return;
  while (!use.query(use.handle)) std::this_thread::yield();
  use.release(use.handle);
}

void attach_pending_use(TensorImpl* impl, PendingUse use) {
  internal::MutexLock lock(&impl->pending_mu);
  PendingUse old = impl->pending;
  impl->pending = use;
  wait_for_use(old);
}

}  // namespace internal

namespace {

const internal::TensorImpl& checked(const internal::TensorImpl* impl) {
  if (impl == nullptr) {
    internal::throw_error(
        absl::FailedPreconditionError("[Tensor] the tensor is empty (default-constructed)"));
  }
  return *impl;
}

}  // namespace

Tensor::Tensor(const Tensor& other) : impl_(other.impl_) {
  if (impl_ != nullptr) internal::ref(impl_);
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (other.impl_ != nullptr) internal::ref(other.impl_);
  if (impl_ != nullptr) internal::unref(impl_);
  impl_ = other.impl_;
  return *this;
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    if (impl_ != nullptr) internal::unref(impl_);
    impl_ = other.impl_;
    other.impl_ = nullptr;
  }
  return *this;
}

Tensor::~Tensor() {
  if (impl_ != nullptr) internal::unref(impl_);
}

DType Tensor::dtype() const { return checked(impl_).dtype; }
const Shape& Tensor::shape() const { return checked(impl_).shape; }
const std::string& Tensor::device() const { return checked(impl_).device->name(); }

void Tensor::read(void* dst, DType expected) const {
  const internal::TensorImpl& t = checked(impl_);
  if (t.dtype != expected) {
    internal::throw_error(absl::InvalidArgumentError(absl::StrCat(
        "[to_vector] the tensor holds ", dtype_name(t.dtype), ", not ", dtype_name(expected))));
  }
  if (t.bytes() > 0) internal::throw_if_error(t.device->copy_to_host(dst, t.data, t.bytes()));
}

std::ostream& operator<<(std::ostream& os, const Tensor& tensor) {
  if (!tensor.defined()) return os << "Tensor(<empty>)";
  const internal::TensorImpl& t = *tensor.impl();
  std::vector<char> host(t.bytes());
  if (!host.empty())
    internal::throw_if_error(t.device->copy_to_host(host.data(), t.data, host.size()));
  std::string values = internal::format_values(host.data(), t.dtype, t.shape);
  const char* lead = values.find('\n') != std::string::npos ? "\n" : "";
  return os << "Tensor(" << lead << values << ", shape=" << t.shape.to_string()
            << ", dtype=" << dtype_name(t.dtype) << ")";
}

}  // namespace mt
