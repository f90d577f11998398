#pragma once
// Test helpers for kernels/: host tensors that own their buffers, the CPU and GPU kernel
// registries, and run_cpu, which runs one op the way the runtime does (infer_output,
// allocate, look the CPU kernel up in the registry, call it), minus placement and copies.
//
//   HostTensor a = HostTensor::make<float>({2}, {1, 2});
//   absl::StatusOr<HostTensor> c = run_cpu(OpId::kAddV2, {a, a});
//   EXPECT_THAT(c->values<float>(), ElementsAre(2, 4));

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_def.h"

namespace mt::testutil {

// Allocates 256-byte aligned storage, as the runtime's pools do (allocator/allocator.h), so
// that kernels see the alignment they see in the runtime.
template <typename T>
struct PoolAlignedAllocator {
  using value_type = T;
  PoolAlignedAllocator() = default;
  template <typename U>
  PoolAlignedAllocator(const PoolAlignedAllocator<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(256)));
  }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(256)); }
  friend bool operator==(const PoolAlignedAllocator&, const PoolAlignedAllocator&) { return true; }
};

class HostTensor {
 public:
  // Returns a tensor of shape `dims` and dtype `dtype` whose buffer holds poison bytes, so
  // that an element a kernel fails to write shows up in a comparison.
  static HostTensor uninitialized(const Shape& shape, DType dtype) {
    HostTensor t;
    t.shape_ = shape;
    t.dtype_ = dtype;
    t.storage_.resize((shape.num_elements() * dtype_size(dtype) + 7) / 8);
    if (!t.storage_.empty()) std::memset(t.storage_.data(), 0x5a, t.storage_.size() * 8);
    return t;
  }

  // Returns a tensor of shape `dims` holding `values` in row-major order.
  template <typename T>
  static HostTensor make(const Shape& shape, const std::vector<T>& values) {
    EXPECT_EQ(static_cast<int64_t>(values.size()), shape.num_elements());
    HostTensor t = uninitialized(shape, dtype_of<T>());
    for (size_t i = 0; i < values.size(); ++i) static_cast<T*>(t.data())[i] = values[i];
    return t;
  }
  template <typename T>
  static HostTensor make(std::initializer_list<int64_t> dims, const std::vector<T>& values) {
    return make<T>(Shape::make(dims).value(), values);
  }

  // Returns a shape and dtype with no buffer: what Fill takes as its input.
  static HostTensor meta(std::initializer_list<int64_t> dims, DType dtype) {
    HostTensor t;
    t.shape_ = Shape::make(dims).value();
    t.dtype_ = dtype;
    t.has_data_ = false;
    return t;
  }

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  const void* data() const { return has_data_ ? storage_.data() : nullptr; }
  void* data() { return has_data_ ? storage_.data() : nullptr; }

  // Returns the elements; fails the test on a dtype mismatch.
  template <typename T>
  std::vector<T> values() const {
    EXPECT_EQ(dtype_, dtype_of<T>()) << "values<T> with the wrong T";
    std::vector<T> out(shape_.num_elements());
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<const T*>(data())[i];
    return out;
  }

 private:
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  std::vector<int64_t, PoolAlignedAllocator<int64_t>> storage_;  // 256-byte aligned
  bool has_data_ = true;
};

// Returns a new registry filled by `register_kernels` alone; fails the test on an error.
// The caller owns it.
inline KernelRegistry* new_registry(absl::Status (*register_kernels)(KernelRegistry&)) {
  auto* registry = new KernelRegistry;
  absl::Status status = register_kernels(*registry);
  EXPECT_TRUE(status.ok()) << status;
  return registry;
}

// Returns the intra-op thread count kernel tests run at: MT_TEST_INTRA_OP_THREADS, else 0
// (one per hardware thread). ctest also runs kernels_test at 1, 2 and 7 threads and at
// each lower ISA level (tests/CMakeLists.txt).
inline int test_intra_op_threads() {
  const char* env = std::getenv("MT_TEST_INTRA_OP_THREADS");
  return env != nullptr ? std::atoi(env) : 0;
}

// Returns a registry filled by register_cpu_kernels (and nothing else), built once; sets
// the thread count to test_intra_op_threads() the first time.
inline const KernelRegistry& cpu_registry() {
  static const KernelRegistry* registry = [] {
    cpu::set_intra_op_threads(test_intra_op_threads());
    return new_registry(register_cpu_kernels);
  }();
  return *registry;
}

// Returns a registry filled by register_cuda_kernels (and nothing else), built once; it is
// empty in a build without CUDA.
inline const KernelRegistry& gpu_registry() {
  static const KernelRegistry* registry = new_registry(register_cuda_kernels);
  return *registry;
}

// Returns the shape with dimensions `dims`; a short name for tests that list many shapes.
inline Shape S(std::initializer_list<int64_t> dims) { return Shape::make(dims).value(); }

// Expects `result` to be InvalidArgument with exactly `message`.
inline void expect_invalid(const absl::StatusOr<OutputMeta>& result, const std::string& message) {
  ASSERT_FALSE(result.ok()) << "expected: " << message;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), message);
}

// Runs `op` on `inputs` on the CPU and returns every output; the kernel is keyed by the
// input its row names (op_key_input). Returns infer_outputs' error, or NotFound when no CPU
// kernel is registered.
inline absl::StatusOr<std::vector<HostTensor>> run_cpu_all(OpId op,
                                                           const std::vector<HostTensor>& inputs,
                                                           const OpAttrs& attrs = {}) {
  std::vector<TensorMeta> metas;
  std::vector<TensorArg> args;
  for (const HostTensor& t : inputs) {
    metas.push_back({&t.shape(), t.dtype()});
    args.push_back({t.data(), &t.shape(), t.dtype()});
  }
  OutputMetas out_metas;
  absl::Status inferred = infer_outputs(op, metas, attrs, &out_metas);
  if (!inferred.ok()) return inferred;
  const DType key = op_key_input(op) < 0 ? out_metas[0].dtype : inputs[op_key_input(op)].dtype();
  KernelFn fn = cpu_registry().find(op, DeviceType::kCPU, key);
  if (fn == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no CPU kernel for ", op_name(op), " ", dtype_name(key)));
  }
  std::vector<HostTensor> outs;
  std::vector<MutableTensorArg> views;
  for (const OutputMeta& m : out_metas) outs.push_back(HostTensor::uninitialized(m.shape, m.dtype));
  for (HostTensor& o : outs) views.push_back({o.data(), &o.shape(), o.dtype()});
  KernelContext ctx{args, views[0], &attrs, nullptr, views};
  absl::Status status = fn(ctx);
  if (!status.ok()) return status;
  return outs;
}

// run_cpu_all for the first output (the only one of most ops).
inline absl::StatusOr<HostTensor> run_cpu(OpId op, const std::vector<HostTensor>& inputs,
                                          const OpAttrs& attrs = {}) {
  absl::StatusOr<std::vector<HostTensor>> outs = run_cpu_all(op, inputs, attrs);
  if (!outs.ok()) return outs.status();
  return std::move((*outs)[0]);
}

// Returns `values` converted to T (static_cast), for tests typed on T.
template <typename T>
std::vector<T> vec(std::initializer_list<double> values) {
  std::vector<T> out;
  for (double v : values) out.push_back(static_cast<T>(v));
  return out;
}

// Returns the elements of `t`, whatever its dtype, as doubles.
inline std::vector<double> as_doubles(const HostTensor& t) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<double> out;
    for (T v : t.values<T>()) {
      if constexpr (dtype_kind(dtype_of<T>()) == DTypeKind::kHalf) {
        out.push_back(static_cast<float>(v));
      } else {
        out.push_back(static_cast<double>(v));
      }
    }
    return out;
  });
}

// Element types for typed tests.
using NumericTypes = ::testing::Types<float, double, int32_t, int64_t>;
using AllTypes = ::testing::Types<float, double, int32_t, int64_t, bool>;
using FloatTypes = ::testing::Types<float, double>;

}  // namespace mt::testutil

namespace mt {
// The names every kernel test file uses unqualified, declared once here rather than in each
// file. Only tests include this header.
using ::testing::ElementsAre;
using testutil::HostTensor;
using testutil::run_cpu;
using testutil::S;
using testutil::vec;
}  // namespace mt
