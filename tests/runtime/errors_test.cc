// What bad input gets from the public API: the code and the message.
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::expect_error;

class ErrorsTest : public testing::RuntimeTest {};

TEST_F(ErrorsTest, MatMulInnerDimensionMismatch) {
  Tensor a = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Error e = expect_error([&] { matmul(a, a); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(e.what()).rfind("[MatMul] ", 0), 0u) << e.what();
  EXPECT_NE(std::string(e.what()).find("(2, 3)"), std::string::npos) << e.what();
}

TEST_F(ErrorsTest, DtypeMismatch) {
  Error e = expect_error([] { add(constant({1.f}), constant({1})); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "[AddV2] dtypes differ: float32 vs int32");
}

TEST_F(ErrorsTest, EmptyAddN) {
  Error e = expect_error([] { add_n(std::vector<Tensor>{}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(e.what()).rfind("[AddN] ", 0), 0u) << e.what();
}

TEST_F(ErrorsTest, EmptyTensorInput) {
  Error e = expect_error([] { relu(Tensor()); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "[Relu] input 0 is an empty tensor");
  e = expect_error([] { Tensor().shape(); });
  EXPECT_EQ(e.code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(ErrorsTest, RaggedConstant) {
  Error e = expect_error([] { constant({{1.f, 2.f}, {3.f}}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(),
               "[_EagerConst] ragged nested list: a list at depth 1 has 1 elements where its "
               "first sibling has 2");
}

TEST_F(ErrorsTest, ValueCountDoesNotMatchShape) {
  Error e = expect_error([] { constant(std::vector<float>{1, 2, 3}, {2, 2}); });
  EXPECT_STREQ(e.what(), "[_EagerConst] 3 values given for shape (2, 2), which holds 4");
}

TEST_F(ErrorsTest, NegativeAndOverflowingShapes) {
  Error e = expect_error([] { zeros({2, -3}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "[Shape] dimension 1 is negative (-3) in [2,-3]");
  e = expect_error([] { zeros({int64_t{1} << 40, int64_t{1} << 40}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ErrorsTest, ReadingWithTheWrongType) {
  Error e = expect_error([] { constant({1.f}).to_vector<int32_t>(); });
  EXPECT_STREQ(e.what(), "[to_vector] the tensor holds float32, not int32");
}

TEST_F(ErrorsTest, NoKernelForDtype) {
  Error e = expect_error([] { div(constant({1}), constant({1})); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(),
               "[RealDiv] dtype int32 is not supported; expected one of float32, float64, "
               "bfloat16, float16");
}

TEST_F(ErrorsTest, OutOfMemoryOnLimitedPoolAndRecovery) {
  split_cpu(2, /*limit_mb=*/1);
  DeviceScope s("/CPU:1");
  MemoryInfo start = config::get_memory_info("CPU:1");
  Tensor held = zeros({192, 1024});  // 768 KiB of the 1 MiB
  MemoryInfo before = config::get_memory_info("CPU:1");
  Error e = expect_error([] { zeros({128, 1024}); });  // 512 KiB more does not fit
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted);
  std::string what = e.what();
  EXPECT_EQ(what.substr(0, what.find('\n')),
            "OOM when allocating tensor with shape[128,1024] and type float on "
            "/job:localhost/replica:0/task:0/device:CPU:1 by allocator CPU_1_bfc");
  EXPECT_EQ(what.substr(what.find('\n') + 1),
            "In use: 786432 bytes; peak: 786432 bytes; limit: 1048576 bytes; largest free "
            "block: 262144 bytes; requested: 524288 bytes");
  MemoryInfo after = config::get_memory_info("CPU:1");
  EXPECT_EQ(after.current, before.current);  // the failure changed nothing
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  EXPECT_EQ(held.to_vector<float>().size(), 192u * 1024u);  // nothing lost
  held = Tensor();
  {
    Tensor retry = zeros({128, 1024});  // the same request succeeds once memory is freed
    EXPECT_EQ(config::get_memory_info("CPU:1").current, 128 * 1024 * 4);
  }
  EXPECT_EQ(config::get_memory_info("CPU:1").current, start.current);
}

}  // namespace
}  // namespace mt
