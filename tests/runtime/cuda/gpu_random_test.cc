// The random ops on GPU:0 give the CPU's bits: every op and dtype, with and without scaling,
// stateless and stateful (the numbers are reserved on the host at the call, so the same
// calls give the same numbers on either device). Skips itself without a GPU.
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

class GpuRandomTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty()) GTEST_SKIP() << "needs a GPU";
  }
};

// Returns the bytes of `t` (copied to the host).
std::vector<uint8_t> bytes(const Tensor& t) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<uint8_t> out;
    if constexpr (!std::is_same_v<T, bool>) {
      const std::vector<T> values = t.to_vector<T>();
      out.resize(values.size() * sizeof(T));
      if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
    }
    return out;
  });
}

// Runs `make` on GPU:0 then on CPU:0 and expects the same bytes and the GPU's placement.
void expect_same_bits(const std::function<Tensor()>& make) {
  Tensor gpu, cpu;
  {
    DeviceScope scope("/GPU:0");
    gpu = make();
  }
  {
    DeviceScope scope("/CPU:0");
    cpu = make();
  }
  EXPECT_NE(gpu.device().find("GPU:0"), std::string::npos) << gpu.device();
  EXPECT_EQ(bytes(gpu), bytes(cpu));
}

constexpr DType kFloats[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16};
// Odd and large sizes: partial groups, unaligned tails and grid-stride loops.
constexpr int64_t kSizes[] = {1, 7, 1001, 1 << 20};

TEST_F(GpuRandomTest, StatelessOpsGiveTheCpusBits) {
  for (int64_t n : kSizes) {
    for (DType dtype : kFloats) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " n " << n);
      expect_same_bits([&] { return random::stateless_uniform({n}, {1, 2}, 0, 1, dtype); });
      expect_same_bits([&] { return random::stateless_uniform({n}, {1, 2}, -2.5, 3, dtype); });
      expect_same_bits([&] { return random::stateless_uniform({n}, {3, 4}, 0, -3, dtype); });
      expect_same_bits([&] { return random::stateless_normal({n}, {5, 6}, 0, 1, dtype); });
      expect_same_bits([&] { return random::stateless_normal({n}, {5, 6}, 1.5, 0.3, dtype); });
      expect_same_bits([&] {
        return random::stateless_truncated_normal({n}, {7, 8}, -1, 2, dtype);
      });
    }
    for (DType dtype : {DType::kInt32, DType::kInt64}) {
      expect_same_bits([&] { return random::stateless_uniform_int({n}, {1, 2}, -5, 17, dtype); });
    }
  }
}

TEST_F(GpuRandomTest, StatefulOpsGiveTheCpusBitsForTheSameCalls) {
  for (DType dtype : kFloats) {
    SCOPED_TRACE(dtype_name(dtype));
    random::set_seed(1);
    for (int call = 0; call < 3; ++call) {  // each device's stream moves on alike
      expect_same_bits([&] { return random::uniform({1001}, -1, 2, dtype, 7); });
      expect_same_bits([&] { return random::normal({1001}, 2, 3, dtype, 7); });
      expect_same_bits([&] { return random::truncated_normal({1001}, 0, 1, dtype, 3); });
    }
  }
  random::set_seed(1);
  expect_same_bits([] { return random::uniform({1001}, -5, 17, DType::kInt32, 7); });
  expect_same_bits(
      [] { return random::uniform_int({1001}, 0, int64_t{1} << 62, DType::kInt64, 9); });
}

}  // namespace
}  // namespace mt
