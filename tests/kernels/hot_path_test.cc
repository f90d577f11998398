// The per-op hot path allocates nothing: infer_output for ranks up to 6 and the kernel of a
// small binary op. Counted through a replacement of the global operator new.
#include <atomic>
#include <cstdlib>
#include <new>

#include "gtest/gtest.h"
#include "kernels/op_def.h"
#include "tests/kernels/kernel_test_util.h"

namespace {
thread_local int64_t g_allocations = 0;
}  // namespace

void* operator new(size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
// The nothrow forms too (std::stable_sort's buffer), so that every new in the program pairs
// with the deletes below (ASan reports new-vs-free otherwise).
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace mt {
namespace {

// Returns how many heap allocations infer_output makes for `op` on `inputs`.
int64_t allocations_of(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs) {
  const int64_t before = g_allocations;
  absl::StatusOr<OutputMeta> out = infer_output(op, inputs, attrs);
  const int64_t after = g_allocations;
  EXPECT_TRUE(out.ok()) << out.status();
  return after - before;
}

TEST(HotPathTest, CountsAllocations) {
  const int64_t before = g_allocations;
  delete new int(1);
  EXPECT_EQ(g_allocations - before, 1);  // the counter works, so zero below means zero
}

TEST(HotPathTest, InferOutputAllocatesNothingUpToRank6) {
  const Shape one = S({1}), r6 = S({2, 1, 3, 1, 4, 5}), row = S({1, 5}), col = S({4, 1});
  const Shape m = S({3, 4}), n = S({4, 2});
  const OpAttrs none;
  TensorMeta equal[2] = {{&one, DType::kFloat32}, {&one, DType::kFloat32}};
  EXPECT_EQ(allocations_of(OpId::kAddV2, equal, none), 0);
  TensorMeta big[2] = {{&r6, DType::kInt32}, {&r6, DType::kInt32}};
  EXPECT_EQ(allocations_of(OpId::kMul, big, none), 0);
  TensorMeta bcast[2] = {{&row, DType::kFloat64}, {&col, DType::kFloat64}};
  EXPECT_EQ(allocations_of(OpId::kSub, bcast, none), 0);
  TensorMeta mm[2] = {{&m, DType::kFloat32}, {&n, DType::kFloat32}};
  EXPECT_EQ(allocations_of(OpId::kMatMul, mm, none), 0);
  EXPECT_EQ(allocations_of(OpId::kAddN, big, none), 0);
  const TensorMeta unary{&r6, DType::kFloat32};
  EXPECT_EQ(allocations_of(OpId::kExp, {&unary, 1}, none), 0);
  OpAttrs axes;
  axes.axes = {0, -1, 2};
  axes.keep_dims = true;
  EXPECT_EQ(allocations_of(OpId::kSum, {&unary, 1}, axes), 0);
}

TEST(HotPathTest, BinaryKernelAllocatesNothing) {
  using testutil::HostTensor;
  const HostTensor a = HostTensor::make<float>({1}, {2});
  const HostTensor b = HostTensor::make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor out = HostTensor::uninitialized(b.shape(), DType::kFloat32);
  KernelFn add = testutil::cpu_registry().find(OpId::kAddV2, DeviceType::kCPU, DType::kFloat32);
  ASSERT_NE(add, nullptr);
  const OpAttrs attrs;
  for (const HostTensor* x : {&a, &b}) {
    TensorArg args[2] = {{x->data(), &x->shape(), x->dtype()}, {b.data(), &b.shape(), b.dtype()}};
    KernelContext ctx{args, {out.data(), &out.shape(), out.dtype()}, &attrs, nullptr};
    const int64_t before = g_allocations;
    ASSERT_TRUE(add(ctx).ok());
    EXPECT_EQ(g_allocations - before, 0);
  }
  EXPECT_EQ(out.values<float>(), std::vector<float>({2, 4, 6, 8, 10, 12}));
}

}  // namespace
}  // namespace mt
