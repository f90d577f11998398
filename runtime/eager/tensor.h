#pragma once
// mt::Tensor: a ref-counted handle to an immutable n-dimensional array on one device.
// Copying a Tensor copies the handle, not the data; the buffer returns to its device's
// pool when the last handle goes.
//
//   mt::Tensor t = mt::constant({{1.f, 2.f}, {3.f, 4.f}});
//   t.dtype();                   // DType::kFloat32
//   t.shape().to_string();       // "(2, 2)"
//   t.device();                  // "/job:localhost/replica:0/task:0/device:CPU:0"
//   t.to_vector<float>();        // {1, 2, 3, 4}, waiting for the producing op if needed
//   std::cout << t;              // Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)
//
// A default-constructed Tensor is empty: its accessors and ops taking it throw mt::Error
// (FailedPrecondition / InvalidArgument). Handles may be shared between threads.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace mt {
namespace internal {
struct TensorImpl;
}

class Tensor {
 public:
  Tensor() = default;
  Tensor(const Tensor& other);
  Tensor(Tensor&& other) noexcept : impl_(other.impl_) { other.impl_ = nullptr; }
  Tensor& operator=(const Tensor& other);
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor();

  // Returns false for an empty (default-constructed or moved-from) handle.
  bool defined() const { return impl_ != nullptr; }

  DType dtype() const;
  const Shape& shape() const;
  int64_t num_elements() const { return shape().num_elements(); }
  // Returns the canonical name of the device holding the data.
  const std::string& device() const;

  // Copies the elements to the host, row-major. Throws InvalidArgument when T is not the
  // tensor's element type.
  template <typename T>
  std::vector<T> to_vector() const;

  // Internal: adopts one reference to `impl`.
  explicit Tensor(internal::TensorImpl* impl) : impl_(impl) {}
  internal::TensorImpl* impl() const { return impl_; }

 private:
  // Copies the elements to `dst` after checking that the dtype is `expected`.
  void read(void* dst, DType expected) const;

  internal::TensorImpl* impl_ = nullptr;
};

template <typename T>
std::vector<T> Tensor::to_vector() const {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(static_cast<size_t>(num_elements()));
    read(bytes.data(), DType::kBool);
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else {
    std::vector<T> out(static_cast<size_t>(num_elements()));
    read(out.data(), dtype_of<T>());
    return out;
  }
}

// Prints like TensorFlow: "Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)".
std::ostream& operator<<(std::ostream& os, const Tensor& tensor);

}  // namespace mt
