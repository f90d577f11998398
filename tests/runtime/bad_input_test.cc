// What each public function gets for each kind of bad input: one test per row of
// docs/bad-input.md, checking the code and the exact message. Rows that need a GPU skip
// themselves without one.
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::expect_error;

constexpr char kEmpty[] = "[Tensor] the tensor is empty (default-constructed)";
const PhysicalDevice kNoSuchGpu{"/physical_device:GPU:7", "GPU"};

PhysicalDevice host() { return config::list_physical_devices("CPU")[0]; }

using testing::expect;  // the code and exact message of the mt::Error `fn` throws

class BadInputTest : public testing::RuntimeTest {};

// Skips the test on a machine without a GPU, else names the first one `gpu`.
#define SKIP_WITHOUT_GPU()                                                         \
  if (config::list_physical_devices("GPU").empty()) GTEST_SKIP() << "needs a GPU"; \
  const PhysicalDevice gpu = config::list_physical_devices("GPU")[0]

// --- mt::config ---------------------------------------------------------------------

TEST_F(BadInputTest, ListDevicesOfAnUnknownTypeReturnsNothing) {
  EXPECT_TRUE(config::list_physical_devices("TPU").empty());
  EXPECT_TRUE(config::get_visible_devices("TPU").empty());
  EXPECT_TRUE(config::list_logical_devices("TPU").empty());
  EXPECT_TRUE(config::list_physical_devices("cpu").empty());  // types are case-sensitive
}

TEST_F(BadInputTest, SetVisibleDevicesRejectsAnUnknownType) {
  expect([] { config::set_visible_devices(host(), "TPU"); }, absl::StatusCode::kInvalidArgument,
         "[set_visible_devices] unknown device type 'TPU': expected CPU or GPU");
}

TEST_F(BadInputTest, UnprintableBytesAreQuotedInMessages) {
  expect([] { config::set_visible_devices(host(), std::string("GPU\0", 4)); },
         absl::StatusCode::kInvalidArgument,
         "[set_visible_devices] unknown device type 'GPU\\x00': expected CPU or GPU");
  expect(
      [] {
        config::set_visible_devices(PhysicalDevice{"/physical_device:GPU:0\n", "GPU"});
      },
      absl::StatusCode::kInvalidArgument,
      "[set_visible_devices] unknown physical device '/physical_device:GPU:0\\x0a' of type "
      "'GPU'");
  // what() is a C string: a NUL in the message would cut it short.
  expect([] { DeviceScope s(std::string("/GPU\0:0", 7)); }, absl::StatusCode::kInvalidArgument,
         "Malformed device name '/GPU\\x00:0': expected '/job:', '/replica:', '/task:', "
         "'/device:', '/cpu' or '/gpu' at the start");
}

TEST_F(BadInputTest, SetVisibleDevicesRejectsAnUnknownDevice) {
  expect([] { config::set_visible_devices(kNoSuchGpu); }, absl::StatusCode::kInvalidArgument,
         "[set_visible_devices] unknown physical device '/physical_device:GPU:7' of type 'GPU'");
  expect([] { config::set_visible_devices(PhysicalDevice{}); }, absl::StatusCode::kInvalidArgument,
         "[set_visible_devices] unknown physical device '' of type ''");
}

TEST_F(BadInputTest, SetVisibleDevicesRejectsADeviceOfAnotherType) {
  expect([] { config::set_visible_devices(host(), "GPU"); }, absl::StatusCode::kInvalidArgument,
         "[set_visible_devices] '/physical_device:CPU:0' is not of type 'GPU'");
}

TEST_F(BadInputTest, SetVisibleDevicesKeepsTheCpuVisible) {
  expect([] { config::set_visible_devices(std::vector<PhysicalDevice>{}); },
         absl::StatusCode::kInvalidArgument, "[set_visible_devices] the CPU must stay visible");
}

TEST_F(BadInputTest, SetVisibleDevicesAfterInitialisationFails) {
  SKIP_WITHOUT_GPU();
  config::list_logical_devices();  // the fixture hid the GPUs before this
  config::set_visible_devices(std::vector<PhysicalDevice>{}, "GPU");  // unchanged: fine
  expect([] { config::set_visible_devices(config::list_physical_devices("GPU"), "GPU"); },
         absl::StatusCode::kFailedPrecondition,
         "Visible devices cannot be modified after being initialized");
}

TEST_F(BadInputTest, LogicalDeviceConfigurationRejectsAnUnknownDevice) {
  expect([] { config::set_logical_device_configuration(kNoSuchGpu, {{}}); },
         absl::StatusCode::kInvalidArgument,
         "[set_logical_device_configuration] unknown physical device '/physical_device:GPU:7' "
         "of type 'GPU'");
  expect([] { config::get_logical_device_configuration(kNoSuchGpu); },
         absl::StatusCode::kInvalidArgument,
         "[get_logical_device_configuration] unknown physical device '/physical_device:GPU:7' "
         "of type 'GPU'");
}

TEST_F(BadInputTest, MemoryLimitOfZeroOrLessIsRejected) {
  expect([] { config::set_logical_device_configuration(host(), {{.memory_limit_mb = 0}}); },
         absl::StatusCode::kInvalidArgument,
         "[set_logical_device_configuration] memory_limit_mb must be positive, got 0");
  expect(
      [] {
        config::set_logical_device_configuration(host(), {{}, {.memory_limit_mb = -5}});
      },
      absl::StatusCode::kInvalidArgument,
      "[set_logical_device_configuration] memory_limit_mb must be positive, got -5");
  EXPECT_TRUE(config::get_logical_device_configuration(host()).empty());  // nothing changed
}

TEST_F(BadInputTest, MemoryLimitBeyondTheCardIsRejected) {
  SKIP_WITHOUT_GPU();
  const int64_t total_mb = internal::Context::get().with_settings(
      [](internal::Settings& s, bool) { return s.physical[1].total_memory >> 20; });
  expect(
      [&] { config::set_logical_device_configuration(gpu, {{.memory_limit_mb = total_mb + 1}}); },
      absl::StatusCode::kInvalidArgument,
      absl::StrCat("[set_logical_device_configuration] memory_limit_mb ", total_mb + 1,
                   " exceeds the ", total_mb, " MiB of ", gpu.name));
}

// The limit in bytes, memory_limit_mb << 20, must fit in int64. Today a CPU limit of 2^43
// MiB or more is accepted and overflows when the runtime initialises (runtime/eager/context.cc).
TEST_F(BadInputTest, MemoryLimitWhoseByteCountOverflowsIsRejected) {
  const int64_t huge = int64_t{1} << 43;
  expect([&] { config::set_logical_device_configuration(host(), {{.memory_limit_mb = huge}}); },
         absl::StatusCode::kInvalidArgument,
         absl::StrCat("[set_logical_device_configuration] memory_limit_mb ", huge,
                      " is too large: its size in bytes overflows int64"));
}

TEST_F(BadInputTest, SeveralLogicalGpusEachNeedALimit) {
  SKIP_WITHOUT_GPU();
  expect(
      [&] {
        config::set_logical_device_configuration(gpu, {{}, {}});
      },
      absl::StatusCode::kInvalidArgument,
      "[set_logical_device_configuration] several logical GPUs on one card each need "
      "memory_limit_mb");
}

TEST_F(BadInputTest, LogicalDeviceConfigurationAfterInitialisationFails) {
  split_cpu(2);
  constant(1.f);  // initialises
  split_cpu(2);   // the same value again is fine
  expect([] { split_cpu(3); }, absl::StatusCode::kFailedPrecondition,
         "Virtual devices cannot be modified after being initialized");
}

TEST_F(BadInputTest, MemoryGrowthRejectsCpusAndUnknownDevices) {
  expect([] { config::set_memory_growth(host(), true); }, absl::StatusCode::kInvalidArgument,
         "[set_memory_growth] cannot set memory growth on non-GPU device '/physical_device:CPU:0'");
  expect([] { config::set_memory_growth(kNoSuchGpu, true); }, absl::StatusCode::kInvalidArgument,
         "[set_memory_growth] unknown physical device '/physical_device:GPU:7' of type 'GPU'");
  expect([] { config::get_memory_growth(kNoSuchGpu); }, absl::StatusCode::kInvalidArgument,
         "[get_memory_growth] unknown physical device '/physical_device:GPU:7' of type 'GPU'");
  EXPECT_FALSE(config::get_memory_growth(host()));  // a CPU simply has none
}

TEST_F(BadInputTest, MemoryGrowthAfterInitialisationFails) {
  SKIP_WITHOUT_GPU();
  const bool growth = config::get_memory_growth(gpu);
  config::list_logical_devices();
  config::set_memory_growth(gpu, growth);  // unchanged: fine
  expect([&] { config::set_memory_growth(gpu, !growth); }, absl::StatusCode::kFailedPrecondition,
         "Physical devices cannot be modified after being initialized");
}

TEST_F(BadInputTest, GpuMemoryFractionOutsideZeroToOneIsRejected) {
  const std::pair<double, const char*> cases[] = {
      {0.0, "0"}, {-0.5, "-0.5"}, {1.5, "1.5"}, {std::nan(""), "nan"}};
  for (const auto& [fraction, text] : cases) {
    expect([f = fraction] { config::set_gpu_options(GPUOptions{f}); },
           absl::StatusCode::kInvalidArgument,
           absl::StrCat("[set_gpu_options] per_process_gpu_memory_fraction must be in (0, 1], got ",
                        text));
  }
}

TEST_F(BadInputTest, GpuOptionsAfterInitialisationFail) {
  constant(1.f);
  config::set_gpu_options(GPUOptions{});  // unchanged: fine
  expect([] { config::set_gpu_options(GPUOptions{0.5}); }, absl::StatusCode::kFailedPrecondition,
         "GPU options cannot be modified after being initialized");
}

TEST_F(BadInputTest, RuntimeFlagsMayChangeAtAnyTime) {
  constant(1.f);
  config::set_soft_device_placement(true);
  EXPECT_TRUE(config::get_soft_device_placement());
  const bool tf32 = config::tensor_float_32_execution_enabled();
  config::enable_tensor_float_32_execution(!tf32);
  EXPECT_EQ(config::tensor_float_32_execution_enabled(), !tf32);
  config::enable_tensor_float_32_execution(tf32);  // not reset between tests
  debugging::set_log_device_placement(true);
  EXPECT_TRUE(debugging::get_log_device_placement());
}

TEST_F(BadInputTest, MemoryFunctionsRejectMalformedUnknownAndAmbiguousNames) {
  split_cpu(2);
  const std::function<void(std::string_view)> fns[] = {
      [](std::string_view d) { config::get_memory_info(d); },
      [](std::string_view d) { config::reset_memory_stats(d); },
      [](std::string_view d) { config::release_unused_memory(d); }};
  for (const auto& fn : fns) {
    expect([&] { fn("CPU:x"); }, absl::StatusCode::kInvalidArgument,
           "Malformed device name 'CPU:x': expected a device id >= 0 or '*' after 'CPU:'");
    expect([&] { fn("CPU:9"); }, absl::StatusCode::kNotFound,
           "/job:localhost/replica:0/task:0/device:CPU:9 unknown device.");
    expect([&] { fn("CPU"); }, absl::StatusCode::kInvalidArgument,
           "Device name 'CPU' must name exactly one device, like 'GPU:0'");
  }
}

// --- mt::debugging -------------------------------------------------------------------

TEST_F(BadInputTest, AnEmptyLogSinkRestoresStderr) {
  debugging::set_log_sink(nullptr);
  debugging::set_log_device_placement(true);
  ::testing::internal::CaptureStderr();
  constant(1.f);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "Executing op _EagerConst in device /job:localhost/replica:0/task:0/device:CPU:0\n");
}

// --- mt::DeviceScope -----------------------------------------------------------------

TEST_F(BadInputTest, MalformedScopeNameThrowsAtConstruction) {
  expect([] { DeviceScope s("/GPU:0/CPU:0"); }, absl::StatusCode::kInvalidArgument,
         "Malformed device name '/GPU:0/CPU:0': expected at most one device component after "
         "'/GPU:0'");
  expect(
      [] {
        DeviceScope s(LogicalDevice{"/device:GPU:-1", "GPU"});
      },
      absl::StatusCode::kInvalidArgument,
      "Malformed device name '/device:GPU:-1': expected a device id >= 0 or '*' after "
      "'/device:GPU:'");
  EXPECT_EQ(constant(1.f).device(), cpu(0));  // no scope was left open
}

TEST_F(BadInputTest, UnknownScopeDeviceFailsAtTheFirstOp) {
  config::set_soft_device_placement(false);  // the strict behaviour this test checks
  split_cpu(2);
  DeviceScope s("/CPU:5");  // parses: no error yet
  expect([] { constant(1.f); }, absl::StatusCode::kNotFound,
         "/job:localhost/replica:0/task:0/device:CPU:5 unknown device. Available devices: " +
             cpu(0) + ", " + cpu(1) + ".");
}

TEST_F(BadInputTest, UnknownScopeDeviceRunsOnTheBestDeviceWithSoftPlacement) {
  split_cpu(2);
  config::set_soft_device_placement(true);
  DeviceScope s("/job:worker/CPU:5");
  EXPECT_EQ(constant(1.f).device(), cpu(0));
}

TEST_F(BadInputTest, ScopeFromASpecWithInvalidFieldsNamesNoDevice) {
  config::set_soft_device_placement(false);            // the strict behaviour this test checks
  DeviceScope s(DeviceSpec{.type = "CPU", .id = -1});  // a spec is not validated
  expect([] { zeros({2}); }, absl::StatusCode::kNotFound,
         "/job:localhost/replica:0/task:0/device:CPU:-1 unknown device. Available devices: " +
             cpu(0) + ".");
}

// --- ops -------------------------------------------------------------------------------

TEST_F(BadInputTest, OpsRejectEmptyTensors) {
  Tensor a = constant({1.f});
  Tensor moved = std::move(a);
  expect([&] { relu(a); }, absl::StatusCode::kInvalidArgument, "[Relu] input 0 is an empty tensor");
  expect([&] { moved + Tensor(); }, absl::StatusCode::kInvalidArgument,
         "[AddV2] input 1 is an empty tensor");
  expect([] { identity(Tensor()); }, absl::StatusCode::kInvalidArgument,
         "[Identity] input 0 is an empty tensor");
}

TEST_F(BadInputTest, MatMulRejectsRanksOtherThanTwo) {
  Tensor v = constant({1.f, 2.f, 3.f});
  expect([&] { matmul(v, v); }, absl::StatusCode::kInvalidArgument,
         "[MatMul] expects rank-2 inputs, got shapes (3,) and (3,)");
}

TEST_F(BadInputTest, BatchedMatMulRejectsLowRanksMismatchesAndDoubleTransposes) {
  Tensor v = constant({1.f, 2.f, 3.f}), a = zeros({2, 2, 3}), b = zeros({3, 3, 4});
  expect([&] { matmul(v, a); }, absl::StatusCode::kInvalidArgument,
         "[BatchMatMulV2] In[0] ndims must be >= 2: 1");
  expect([&] { matmul(a, a); }, absl::StatusCode::kInvalidArgument,
         "[BatchMatMulV2] Matrix size-incompatible: In[0]: (2, 2, 3), In[1]: (2, 2, 3)");
  expect([&] { matmul(a, b); }, absl::StatusCode::kInvalidArgument,
         "[BatchMatMulV2] In[0] and In[1] must have compatible batch dimensions: (2, 2, 3) vs. "
         "(3, 3, 4)");
  expect([&] { matmul(a, a, false, true, false, true); }, absl::StatusCode::kInvalidArgument,
         "[matmul] Only one of transpose_b and adjoint_b can be True.");
  EXPECT_EQ(matmul(a, zeros({3, 4})).shape(), Shape::make({2, 2, 4}).value());
  EXPECT_EQ(matmul(a, a, false, false, false, /*adjoint_b=*/true).shape(),
            Shape::make({2, 2, 2}).value());
}

TEST_F(BadInputTest, SoftmaxRejectsScalarsAndIntegers) {
  expect([&] { nn::softmax(constant(1.f)); }, absl::StatusCode::kInvalidArgument,
         "[Softmax] logits must have >= 1 dimension, got shape ()");
  expect(
      [&] {
        nn::log_softmax(constant({1, 2}));
      },
      absl::StatusCode::kInvalidArgument,
      "[LogSoftmax] dtype int32 is not supported; expected one of float32, float64, "
      "bfloat16, float16");
}

TEST_F(BadInputTest, MatMulRejectsInnerDimensionMismatch) {
  Tensor a = zeros({2, 3}), b = zeros({4, 3});
  expect([&] { matmul(a, b); }, absl::StatusCode::kInvalidArgument,
         "[MatMul] inner dimensions differ: (2, 3) vs (4, 3)");
  expect([&] { matmul(a, b, /*transpose_a=*/true); }, absl::StatusCode::kInvalidArgument,
         "[MatMul] inner dimensions differ: (2, 3) vs (4, 3) with transpose_a");
}

TEST_F(BadInputTest, OpsRejectMixedDtypes) {
  Tensor f = constant({{1.f}}), i = constant({{1}});
  expect([&] { matmul(f, i); }, absl::StatusCode::kInvalidArgument,
         "[MatMul] dtypes differ: float32 vs int32");
  expect([&] { f - i; }, absl::StatusCode::kInvalidArgument,
         "[Sub] dtypes differ: float32 vs int32");
  expect(
      [&] {
        add_n({f, i});
      },
      absl::StatusCode::kInvalidArgument,
      "[AddN] dtypes differ: input 0 is float32, input 1 is int32");
}

TEST_F(BadInputTest, OpsRejectDtypesWithoutAKernel) {
  Tensor b = constant({true}), i = constant({1});
  expect([&] { matmul(b, b); }, absl::StatusCode::kInvalidArgument,
         "[MatMul] dtype bool is not supported; expected one of float32, float64, int32, "
         "int64, bfloat16, float16");
  expect([&] { i / i; }, absl::StatusCode::kInvalidArgument,
         "[RealDiv] dtype int32 is not supported; expected one of float32, float64, "
         "bfloat16, float16");
  expect([&] { exp(i); }, absl::StatusCode::kInvalidArgument,
         "[Exp] dtype int32 is not supported; expected one of float32, float64, bfloat16, "
         "float16");
  expect([&] { -b; }, absl::StatusCode::kInvalidArgument,
         "[Neg] dtype bool is not supported; expected one of float32, float64, int32, int64, "
         "bfloat16, float16");
  expect([&] { reduce_max(b); }, absl::StatusCode::kInvalidArgument,
         "[Max] dtype bool is not supported; expected one of float32, float64, int32, int64, "
         "bfloat16, float16");
}

// Note [Integer division by zero] in kernels/cpu/binary_kernels.cc: the CPU kernels reject
// a zero integer divisor and a negative integer exponent; the GPU kernels give values.
TEST_F(BadInputTest, IntegerDivisionByZeroAndNegativePowersFailOnTheCpu) {
  DeviceScope cpu("/CPU:0");
  Tensor a = constant({7, 8}), zero = constant({1, 0}), negative = constant({2, -1});
  expect([&] { floordiv(a, zero); }, absl::StatusCode::kInvalidArgument,
         "[FloorDiv] Integer division by zero");
  expect([&] { floormod(a, zero); }, absl::StatusCode::kInvalidArgument,
         "[FloorMod] Integer division by zero");
  expect([&] { mt::pow(a, negative); }, absl::StatusCode::kInvalidArgument,
         "[Pow] Integers to negative integer powers are not allowed");
}

TEST_F(BadInputTest, LogicalOpsTakeOnlyBool) {
  Tensor f = constant({1.f});
  expect([&] { logical_and(f, f); }, absl::StatusCode::kInvalidArgument,
         "[LogicalAnd] dtype float32 is not supported; expected one of bool");
  expect([&] { logical_not(f); }, absl::StatusCode::kInvalidArgument,
         "[LogicalNot] dtype float32 is not supported; expected one of bool");
}

// Validate, then place: a bad call is the op's own error even under a scope naming a device
// that does not exist; a good call there is the unknown device.
TEST_F(BadInputTest, InputsAreValidatedBeforeTheDeviceIsLookedUp) {
  config::set_soft_device_placement(false);  // the strict behaviour this test checks
  Tensor b = constant({true}), f = constant({1.f});
  DeviceScope scope("/GPU:7");
  expect([&] { matmul(b, b); }, absl::StatusCode::kInvalidArgument,
         "[MatMul] dtype bool is not supported; expected one of float32, float64, int32, "
         "int64, bfloat16, float16");
  expect([&] { f + b; }, absl::StatusCode::kInvalidArgument,
         "[AddV2] dtypes differ: float32 vs bool");
  Error e = expect_error([&] { f + f; });
  EXPECT_EQ(e.code(), absl::StatusCode::kNotFound) << e.what();
}

TEST_F(BadInputTest, AddNRejectsAnEmptyListAndShapeMismatch) {
  expect([] { add_n(std::vector<Tensor>{}); }, absl::StatusCode::kInvalidArgument,
         "[AddN] expects at least one input");
  expect(
      [] {
        add_n({zeros({2}), zeros({3})});
      },
      absl::StatusCode::kInvalidArgument,
      "[AddN] shapes differ: input 0 has (2,), input 1 has (3,)");
}

TEST_F(BadInputTest, BinaryOpsRejectShapesThatDoNotBroadcast) {
  expect([] { zeros({2}) * zeros({3}); }, absl::StatusCode::kInvalidArgument,
         "[Mul] shapes cannot be broadcast: (2,) vs (3,)");
  // Nine dimensions that alternate which operand spans them cannot be merged into eight.
  Tensor a = zeros({2, 1, 2, 1, 2, 1, 2, 1, 2}), b = zeros({1, 2, 1, 2, 1, 2, 1, 2, 1});
  expect([&] { a + b; }, absl::StatusCode::kInvalidArgument,
         "[AddV2] broadcasting (2, 1, 2, 1, 2, 1, 2, 1, 2) with (1, 2, 1, 2, 1, 2, 1, 2, 1) needs "
         "more than 8 dimensions after merging, which is not supported");
}

TEST_F(BadInputTest, ReductionsRejectBadAxes) {
  Tensor x = zeros({2, 3});
  expect([&] { reduce_sum(x, 2); }, absl::StatusCode::kInvalidArgument,
         "[Sum] axis 2 is out of range for input of shape (2, 3); expected an axis in [-2, 2)");
  expect(
      [&] {
        reduce_mean(x, {0, -2});
      },
      absl::StatusCode::kInvalidArgument, "[Mean] axes [0, -2] name dimension 0 twice");
  expect([] { reduce_max(constant(1.f), 0); }, absl::StatusCode::kInvalidArgument,
         "[Max] axis 0 is out of range for input of shape (); expected an axis in [0, 0)");
}

// A shape may hold no elements and still have dimensions whose product overflows: a zero
// dimension makes it valid. Today reduce_mean multiplies the reduced dimensions in order
// and overflows before it reaches the zero (kernels/cpu/reduction_kernels.cc).
TEST_F(BadInputTest, ReductionsOfNothingWithHugeDimensionsGiveTheIdentity) {
  const int64_t huge = int64_t{1} << 58;
  Tensor x = zeros({huge, huge, 0});
  EXPECT_TRUE(std::isnan(reduce_mean(x).to_vector<float>()[0]));  // 0 / 0
  EXPECT_EQ(reduce_sum(x).to_vector<float>()[0], 0);
  EXPECT_EQ(reduce_max(x).to_vector<float>()[0], -INFINITY);
  expect([&] { reduce_sum(x, 2); }, absl::StatusCode::kInvalidArgument,
         "[Sum] output shape [288230376151711744,288230376151711744] has too many elements: its "
         "byte size overflows int64");
}

TEST_F(BadInputTest, CastRejectsAnInvalidDtype) {
  expect([] { cast(constant({1.f}), static_cast<DType>(9)); }, absl::StatusCode::kInvalidArgument,
         "[Cast] invalid destination dtype 9");
}

TEST_F(BadInputTest, CastOfNanAndInfinitiesToIntegersSaturates) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Tensor x = constant(std::vector<double>{NAN, kInf, -kInf, 1e300, -1e300, -2.5}, {6});
  EXPECT_EQ(cast(x, DType::kInt32).to_vector<int32_t>(),
            (std::vector<int32_t>{0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, -2}));
  EXPECT_EQ(cast(x, DType::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{0, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, -2}));
  EXPECT_EQ(cast(x, DType::kBool).to_vector<bool>(),
            (std::vector<bool>{true, true, true, true, true, true}));
}

// --- constants -------------------------------------------------------------------------

TEST_F(BadInputTest, RaggedNestedListIsRejected) {
  expect(
      [] {
        constant({{1.f, 2.f}, {3.f}});
      },
      absl::StatusCode::kInvalidArgument,
      "[_EagerConst] ragged nested list: a list at depth 1 has 1 elements where its first "
      "sibling has 2");
}

TEST_F(BadInputTest, ValueCountMustMatchTheShape) {
  expect(
      [] {
        constant(std::vector<float>{1, 2, 3}, {2, 2});
      },
      absl::StatusCode::kInvalidArgument,
      "[_EagerConst] 3 values given for shape (2, 2), which holds 4");
  expect([] { constant(std::vector<int32_t>{}, {}); }, absl::StatusCode::kInvalidArgument,
         "[_EagerConst] 0 values given for shape (), which holds 1");
}

TEST_F(BadInputTest, NegativeDimensionsAreRejected) {
  expect(
      [] {
        zeros({2, -3});
      },
      absl::StatusCode::kInvalidArgument, "[Shape] dimension 1 is negative (-3) in [2,-3]");
  expect(
      [] {
        constant(std::vector<float>{}, {0, -1});
      },
      absl::StatusCode::kInvalidArgument, "[Shape] dimension 1 is negative (-1) in [0,-1]");
}

TEST_F(BadInputTest, OverflowingShapesAreRejected) {
  expect(
      [] {
        ones({int64_t{1} << 32, int64_t{1} << 32});
      },
      absl::StatusCode::kInvalidArgument,
      "[Shape] too many elements in [4294967296,4294967296]: the byte size overflows int64");
  expect([] { constant(std::vector<float>{}, {int64_t{1} << 60}); },
         absl::StatusCode::kInvalidArgument,
         "[Shape] too many elements in [1152921504606846976]: the byte size overflows int64");
}

TEST_F(BadInputTest, ShapesTooLargeForThePoolAreOutOfMemory) {
  const int64_t n = (int64_t{1} << 60) - 1;  // the largest count Shape accepts: 8 bytes each
  expect([&] { zeros({n}, DType::kFloat64); }, absl::StatusCode::kResourceExhausted,
         absl::StrCat("OOM when allocating tensor with shape[", n, "] and type double on ", cpu(0),
                      " by allocator CPU_0_bfc\nIn use: 0 bytes; peak: 0 bytes; limit: ",
                      std::numeric_limits<int64_t>::max(),
                      " bytes; largest free block: 0 bytes; "
                      "requested: ",
                      n * 8, " bytes"));
  EXPECT_EQ(config::get_memory_info("CPU:0").current, 0);
}

TEST_F(BadInputTest, FillRejectsAnInt32ValueOutOfRange) {
  expect([] { fill({2}, 3e9, DType::kInt32); }, absl::StatusCode::kInvalidArgument,
         "[Fill] value 3000000000 is out of range for int32");
}

// Today the value is converted to int64 for every dtype before any check, which is
// undefined behaviour for NaN, infinities and |value| >= 2^63 (runtime/ops/constant.cc).
TEST_F(BadInputTest, FillTakesAnyDoubleForFloatingDtypes) {
  EXPECT_TRUE(std::isinf(fill({1}, 1e300).to_vector<float>()[0]));
  EXPECT_TRUE(std::isnan(fill({1}, std::nan(""), DType::kFloat64).to_vector<double>()[0]));
}

TEST_F(BadInputTest, FillRejectsAnInt64ValueOutOfRange) {
  expect([] { fill({2}, 1e19, DType::kInt64); }, absl::StatusCode::kInvalidArgument,
         "[Fill] value 1e+19 is out of range for int64");
  expect([] { fill({2}, std::nan(""), DType::kInt32); }, absl::StatusCode::kInvalidArgument,
         "[Fill] value nan is out of range for int32");
}

// Today an out-of-range DType indexes past the runtime's placement table (runtime/eager/execute.cc
// via runtime/ops/constant.cc): a heap-buffer-overflow under ASan.
TEST_F(BadInputTest, FillRejectsAnInvalidDtype) {
  expect([] { zeros({2}, static_cast<DType>(200)); }, absl::StatusCode::kInvalidArgument,
         "[Fill] invalid dtype 200");
}

// --- mt::Tensor ------------------------------------------------------------------------

TEST_F(BadInputTest, EmptyTensorAccessorsFail) {
  Tensor t;
  expect([&] { t.dtype(); }, absl::StatusCode::kFailedPrecondition, kEmpty);
  expect([&] { t.shape(); }, absl::StatusCode::kFailedPrecondition, kEmpty);
  expect([&] { t.num_elements(); }, absl::StatusCode::kFailedPrecondition, kEmpty);
  expect([&] { t.device(); }, absl::StatusCode::kFailedPrecondition, kEmpty);
  expect([&] { t.to_vector<float>(); }, absl::StatusCode::kFailedPrecondition, kEmpty);
  std::ostringstream out;
  out << t;
  EXPECT_EQ(out.str(), "Tensor(<empty>)");
}

TEST_F(BadInputTest, ToVectorRejectsTheWrongElementType) {
  expect([] { constant({1.f}).to_vector<int32_t>(); }, absl::StatusCode::kInvalidArgument,
         "[to_vector] the tensor holds float32, not int32");
  expect([] { constant({true}).to_vector<float>(); }, absl::StatusCode::kInvalidArgument,
         "[to_vector] the tensor holds bool, not float32");
}

// On the CPU ops run synchronously: a failing op throws before it returns, so no tensor
// ever refers to a failed producer, and the variable it was assigned to keeps its value.
TEST_F(BadInputTest, AFailedProducerLeavesNoTensorBehind) {
  Tensor a = constant({{1.f, 2.f, 3.f}});
  Tensor c;
  expect([&] { c = matmul(a, a); }, absl::StatusCode::kInvalidArgument,
         "[MatMul] inner dimensions differ: (1, 3) vs (1, 3)");
  EXPECT_FALSE(c.defined());
  expect([&] { c.to_vector<float>(); }, absl::StatusCode::kFailedPrecondition, kEmpty);
  Tensor d = a;
  expect([&] { d = reduce_sum(a, 5); }, absl::StatusCode::kInvalidArgument,
         "[Sum] axis 5 is out of range for input of shape (1, 3); expected an axis in [-2, 2)");
  EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{1, 2, 3}));  // the old value
}

TEST_F(BadInputTest, IntraOpThreadsRejectsNegativeCounts) {
  expect([] { config::threading::set_intra_op_parallelism_threads(-1); },
         absl::StatusCode::kInvalidArgument,
         "[set_intra_op_parallelism_threads] num_threads must be >= 0, got -1");
  EXPECT_EQ(config::threading::get_intra_op_parallelism_threads(), 0);  // unchanged
}

TEST_F(BadInputTest, IntraOpThreadsAfterInitialisationFail) {
  config::threading::set_intra_op_parallelism_threads(2);
  constant(1.f);                                           // initialises
  config::threading::set_intra_op_parallelism_threads(2);  // the same value again is fine
  expect([] { config::threading::set_intra_op_parallelism_threads(3); },
         absl::StatusCode::kFailedPrecondition,
         "Intra op parallelism cannot be modified after initialization.");
  EXPECT_EQ(config::threading::get_intra_op_parallelism_threads(), 2);
}

// --- the array ops (runtime/ops/array_ops.h) ---------------------------------------------

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

Tensor matrix() { return constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}); }

TEST_F(BadInputTest, ReshapeRejectsAnotherElementCount) {
  expect([] { reshape(matrix(), {4}); }, kInvalid,
         "[Reshape] Input to reshape is a tensor with 6 values, but the requested shape has 4");
  expect(
      [] {
        reshape(matrix(), {-1, 4});
      },
      kInvalid,
      "[Reshape] Input to reshape is a tensor with 6 values, but the requested shape "
      "requires a multiple of 4");
  expect(
      [] {
        reshape(matrix(), {-1, -1});
      },
      kInvalid, "[Reshape] Only one input size may be -1, not both 0 and 1");
  expect(
      [] {
        reshape(matrix(), {-2, -3});
      },
      kInvalid, "[Reshape] Size 0 must be non-negative, not -2");
}

TEST_F(BadInputTest, TransposeRejectsABadPermutation) {
  expect([] { transpose(matrix(), {0, 2}); }, kInvalid, "[Transpose] 2 is out of range [0 .. 2)");
  expect([] { transpose(matrix(), {1, 1}); }, kInvalid, "[Transpose] 1 is missing from {1,1}.");
  expect([] { transpose(matrix(), {0}); }, kInvalid,
         "[Transpose] transpose expects a vector of size 2. But input(1) is a vector of size 1");
}

TEST_F(BadInputTest, ExpandDimsAndSqueezeRejectBadAxes) {
  expect([] { expand_dims(matrix(), 3); }, kInvalid,
         "[ExpandDims] Tried to expand dim index 3 for tensor with 2 dimensions.");
  expect([] { squeeze(matrix(), {0}); }, kInvalid,
         "[Squeeze] Can not squeeze dim[0], expected a dimension of 1, got 2");
  expect([] { squeeze(matrix(), {2}); }, kInvalid,
         "[Squeeze] Tried to squeeze dim index 2 for tensor with 2 dimensions.");
}

TEST_F(BadInputTest, ConcatAndStackRejectMismatchedInputs) {
  expect(
      [] {
        concat({matrix(), constant({1.f})}, 0);
      },
      kInvalid,
      "[ConcatV2] ConcatOp : Ranks of all input tensors should match: shape[0] = [2,3] vs. "
      "shape[1] = [1]");
  expect(
      [] {
        concat({matrix(), transpose(matrix())}, 0);
      },
      kInvalid,
      "[ConcatV2] ConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [2,3] vs. "
      "shape[1] = [3,2]");
  expect([] { concat({matrix()}, 2); }, kInvalid,
         "[ConcatV2] ConcatOp : Expected concatenating dimensions in the range [-2, 2), but "
         "got 2");
  expect(
      [] {
        concat({matrix(), constant({{1, 2, 3}})}, 0);
      },
      kInvalid, "[ConcatV2] dtypes differ: float32 vs int32");
  expect(
      [] {
        stack({matrix(), transpose(matrix())});
      },
      kInvalid,
      "[Pack] Shapes of all inputs must match: values[0].shape = [2,3] != values[1].shape = "
      "[3,2]");
  expect([] { stack({matrix()}, 3); }, kInvalid, "[Pack] axis = 3 not in [-3, 3)");
}

TEST_F(BadInputTest, SplitRejectsSizesThatDoNotAddUp) {
  expect([] { split(matrix(), 2, 1); }, kInvalid,
         "[SplitV] Number of ways to split should evenly divide the split dimension, but got "
         "split_dim 1 (size = 3) and num_split 2");
  expect(
      [] {
        split(matrix(), Ints{1, 1}, 1);
      },
      kInvalid,
      "[SplitV] Determined shape must either match input shape along split_dim exactly if "
      "fully specified, or be less than the size of the input along split_dim if not fully "
      "specified.  Got: 2");
}

TEST_F(BadInputTest, SliceAndStridedSliceRejectOutOfRangeBounds) {
  expect(
      [] {
        slice(matrix(), {0, 4}, {1, 1});
      },
      kInvalid, "[Slice] Expected begin[1] in [0, 3], but got 4");
  expect(
      [] {
        slice(matrix(), {1, 1}, {2, 1});
      },
      kInvalid, "[Slice] Expected size[0] in [0, 1], but got 2");
  expect([] { strided_slice(matrix(), {0}, {2}, {0}); }, kInvalid,
         "[StridedSlice] strides[0] must be non-zero");
  StridedSliceOptions shrink;
  shrink.shrink_axis_mask = 1;
  expect([&] { strided_slice(matrix(), {2}, {3}, {1}, shrink); }, kInvalid,
         "[StridedSlice] slice index 2 of dimension 0 out of bounds.");
}

TEST_F(BadInputTest, GatherRejectsIndicesOutOfRangeOnTheCpu) {
  expect(
      [] {
        gather(matrix(), constant({{0, 1}, {5, 0}}), 1);
      },
      kInvalid, "[GatherV2] indices[1,0] = 5 is not in [0, 3)");
  expect([] { gather(matrix(), constant({0.f})); }, kInvalid,
         "[GatherV2] indices must be int32 or int64, got float32");
}

TEST_F(BadInputTest, OneHotRejectsFloatIndicesAndNegativeDepth) {
  expect([] { one_hot(matrix(), 3); }, kInvalid,
         "[OneHot] dtype float32 is not supported; expected one of int32, int64");
  expect(
      [] {
        one_hot(constant({1, 2}), -1);
      },
      kInvalid, "[OneHot] depth must be non-negative, got: -1");
}

TEST_F(BadInputTest, BroadcastToAndTileRejectIncompatibleShapes) {
  expect(
      [] {
        broadcast_to(matrix(), {4, 3});
      },
      kInvalid, "[BroadcastTo] Unable to broadcast tensor of shape [2,3] to tensor of shape [4,3]");
  expect([] { tile(matrix(), {2}); }, kInvalid,
         "[Tile] Expected multiples argument to be a vector of length 2 but got length 1");
  expect(
      [] {
        tile(matrix(), {1, -1});
      },
      kInvalid, "[Tile] Expected multiples[1] >= 0, but got -1");
}

TEST_F(BadInputTest, PadAndTopKRejectBadPaddingsAndK) {
  expect(
      [] {
        pad(matrix(), {{1, 1}, {-1, 0}});
      },
      kInvalid, "[Pad] Paddings must be non-negative: -1 0");
  expect(
      [] {
        pad(matrix(), {{1, 1}}, PadMode::kConstant, 2);
      },
      kInvalid, "[PadV2] The first dimension of paddings must be the rank of inputs[1,2] [2,3]");
  expect(
      [] {
        pad(matrix(), {{0, 0}, {3, 0}}, PadMode::kReflect);
      },
      kInvalid, "[MirrorPad] paddings must be less than the dimension size: 3, 0 not less than 3");
  expect(
      [] {
        pad(matrix(), {{0, 0}, {4, 0}}, PadMode::kSymmetric);
      },
      kInvalid,
      "[MirrorPad] paddings must be no greater than the dimension size: 4, 0 greater than 3");
  expect(
      [] {
        mirror_pad_grad(matrix(), {{0, 0}, {2, 1}}, PadMode::kConstant);
      },
      kInvalid, "[MirrorPadGrad] mode must be REFLECT or SYMMETRIC");
  expect(
      [] {
        math::top_k(constant({{1.f, 2.f, 3.f}}), 5);
      },
      kInvalid, "[TopKV2] input must have at least k columns. Had 3, needed 5");
  expect([] { math::top_k(matrix(), -1); }, kInvalid, "[TopKV2] Need k >= 0, got -1");
  expect([] { math::top_k(constant(1.f)); }, kInvalid,
         "[TopKV2] input must be >= 1-D, got shape []");
}

TEST_F(BadInputTest, BandPartAndCumsumRejectBadRanksBoundsAndAxes) {
  expect(
      [] {
        linalg::band_part(constant({1.f, 2.f}), 1, -1);
      },
      kInvalid, "[MatrixBandPart] input must be at least 2-dim, received shape: [2]");
  expect([] { linalg::band_part(matrix(), 3, 0); }, kInvalid,
         "[MatrixBandPart] num_lower must be negative or less or equal to number of rows (2) "
         "got: 3");
  expect([] { cumsum(matrix(), -3); }, kInvalid,
         "[Cumsum] ScanOp: Expected scan axis in the range [-2, 2), but got -3");
  expect([] { cumsum(constant({true})); }, kInvalid,
         "[Cumsum] dtype bool is not supported; expected one of float32, float64, int32, int64, "
         "bfloat16, float16");
  expect(
      [] {
        sin(constant({1, 2}));
      },
      kInvalid,
      "[Sin] dtype int32 is not supported; expected one of float32, float64, bfloat16, "
      "float16");
}

TEST_F(BadInputTest, ScattersRejectRowsOutsideTheOutputAndMismatchedUpdates) {
  expect(
      [] {
        scatter_nd(constant({{1}, {5}}), constant({1.f, 2.f}), {4});
      },
      kInvalid, "[ScatterNd] indices[1] = [5] does not index into shape [4]");
  expect(
      [] {
        scatter_nd(constant({{0}, {2}}), constant({1.f, 2.f, 3.f}), {3});
      },
      kInvalid,
      "[ScatterNd] Dimensions [0,1) of indices[shape=[2,1]] must match dimensions [0,1) of "
      "updates[shape=[3]]");
  expect(
      [] {
        tensor_scatter_nd_update(matrix(), constant({{0, 3}}), constant({1.f}));
      },
      kInvalid, "[TensorScatterUpdate] indices[0] = [0, 3] does not index into shape [2,3]");
  expect(
      [] {
        tensor_scatter_nd_add(matrix(), constant({{0.f}}), constant({{1.f, 2.f, 3.f}}));
      },
      kInvalid, "[TensorScatterAdd] indices must be int32 or int64, got float32");
}

TEST_F(BadInputTest, ClipByValueAndGeluRejectBadBoundsAndDtypes) {
  expect(
      [] {
        clip_by_value(constant({1.f, 2.f, 3.f}), constant({0.f, 1.f}), constant(2.f));
      },
      kInvalid,
      "[ClipByValue] clip_value_min and clip_value_max must broadcast to the shape of t "
      "without growing it. t shape: [3] clip_value_min shape: [2] clip_value_max shape: []");
  expect([] { clip_by_value(constant({1.f}), constant(0), constant(2.f)); }, kInvalid,
         "[ClipByValue] dtypes differ: float32 vs int32");
  expect(
      [] {
        nn::gelu(constant({1, 2}));
      },
      kInvalid,
      "[Gelu] dtype int32 is not supported; expected one of float32, float64, bfloat16, "
      "float16");
}

TEST_F(BadInputTest, LayerNormRejectsBadParametersAxesEpsilonAndDtypes) {
  const Tensor x = fill({2, 3}, 1.0);
  expect([&] { nn::layer_norm(x, fill({4}, 1.0), fill({3}, 0.0)); }, kInvalid,
         "[LayerNorm] gamma must have the shape of the normalised axes of x, (3,), got (4,)");
  expect([&] { nn::layer_norm(x, fill({3}, 1.0, DType::kFloat64), fill({3}, 0.0)); }, kInvalid,
         "[LayerNorm] gamma must be float32 for x of this dtype, got float64");
  expect(
      [&] {
        nn::layer_norm(x, fill({3}, 1.0), fill({3}, 0.0), {-3, 1e-3});
      },
      kInvalid, "[LayerNorm] axis -3 is out of range for x of shape (2, 3) (rank 2)");
  expect(
      [&] {
        nn::layer_norm(x, fill({3}, 1.0), fill({3}, 0.0), {-1, -1});
      },
      kInvalid, "[LayerNorm] epsilon must be a finite number >= 0, got -1");
  expect(
      [&] {
        nn::layer_norm(constant({1, 2}), fill({2}, 1.0), fill({2}, 0.0));
      },
      kInvalid,
      "[LayerNorm] dtype int32 is not supported; expected one of float32, float64, bfloat16, "
      "float16");
  expect(
      [&] {
        nn::layer_norm_grad(fill({3, 2}, 1.0), x, fill({3}, 1.0), fill({2}, 0.0), fill({2}, 1.0));
      },
      kInvalid, "[LayerNormGrad] x and dy must have the same shape, got (2, 3) and (3, 2)");
  expect(
      [&] {
        nn::add_layer_norm(x, fill({3, 2}, 1.0), fill({3}, 1.0), fill({3}, 0.0));
      },
      kInvalid, "[AddLayerNorm] x and residual must have the same shape, got (2, 3) and (3, 2)");
}

TEST_F(BadInputTest, DotProductAttentionRejectsBadShapesDtypesAndScale) {
  const Tensor q = fill({1, 3, 4, 8}, 0.5), k = fill({1, 5, 2, 8}, 0.5),
               v = fill({1, 5, 2, 6}, 1.0);
  expect(
      [&] {
        nn::dot_product_attention(fill({3, 4, 8}, 0.5), k, v);
      },
      kInvalid,
      "[DotProductAttention] q (batch, queries, heads, depth) must have rank 4, got shape "
      "(3, 4, 8)");
  expect(
      [&] {
        nn::dot_product_attention(q, fill({1, 5, 3, 8}, 0.5), fill({1, 5, 3, 6}, 1.0));
      },
      kInvalid,
      "[DotProductAttention] the heads of k and v must divide those of q, got 3 and 4 (shapes "
      "(1, 3, 4, 8) and (1, 5, 3, 8))");
  expect(
      [&] {
        nn::dot_product_attention(q, fill({1, 5, 2, 7}, 0.5), v);
      },
      kInvalid,
      "[DotProductAttention] q and k must have the same depth, got shapes (1, 3, 4, 8) and "
      "(1, 5, 2, 7)");
  expect(
      [&] {
        nn::dot_product_attention(q, k, fill({1, 5, 2, 6}, 1.0, DType::kFloat64));
      },
      kInvalid, "[DotProductAttention] dtypes differ: float32 vs float64");
  expect(
      [&] {
        nn::dot_product_attention(q, k, v, {std::nan(""), false});
      },
      kInvalid, "[DotProductAttention] scale must be a finite number, got nan");
  expect(
      [&] {
        nn::dot_product_attention(fill({1, 3, 4, 8}, 1.0, DType::kInt32),
                                  fill({1, 5, 2, 8}, 1.0, DType::kInt32),
                                  fill({1, 5, 2, 6}, 1.0, DType::kInt32));
      },
      kInvalid,
      "[DotProductAttention] dtype int32 is not supported; expected one of float32, float64, "
      "bfloat16, float16");
  const nn::DotProductAttentionResult r = nn::dot_product_attention(q, k, v);
  expect(
      [&] {
        nn::dot_product_attention_grad(fill({1, 3, 4, 8}, 1.0), q, k, v, r.o, r.lse);
      },
      kInvalid,
      "[DotProductAttentionGrad] do must have the output's shape (1, 3, 4, 6), got (1, 3, 4, "
      "8)");
  expect(
      [&] {
        nn::dot_product_attention_grad(r.o, q, k, v, r.o, fill({1, 3, 4}, 0.0));
      },
      kInvalid,
      "[DotProductAttentionGrad] lse must have shape (batch, heads, queries) (1, 4, 3), got "
      "(1, 3, 4)");
}

TEST_F(BadInputTest, RangeRejectsZeroAndWrongSignedDeltas) {
  expect([] { range(0, 5, 0, DType::kInt32); }, kInvalid, "[Range] Requires delta != 0: 0");
  expect([] { range(5, 0, 1, DType::kInt32); }, kInvalid,
         "[Range] Requires start <= limit when delta > 0: 5/0");
  expect([] { range(0, 5, -0.5); }, kInvalid,
         "[Range] Requires start >= limit when delta < 0: 0/5");
  expect([] { range(3, 5.5, 1, DType::kInt32); }, kInvalid, "[Range] Cannot convert 5.5 to int32");
  expect([] { range(0, 2, 1, DType::kBool); }, kInvalid,
         "[Range] dtype bool is not supported; expected one of float32, float64, int32, int64, "
         "bfloat16, float16");
}

TEST_F(BadInputTest, ComparisonsRejectMixedDtypesBoolOrderingsAndUnbroadcastableShapes) {
  expect(
      [] {
        equal(constant({1, 2}), constant({1.f, 2.f}));
      },
      kInvalid, "[Equal] dtypes differ: int32 vs float32");
  expect([] { less(constant({true}), constant({false})); }, kInvalid,
         "[Less] dtype bool is not supported; expected one of float32, float64, int32, int64, "
         "bfloat16, float16");
  expect(
      [] {
        greater(constant({1, 2}), constant({1, 2, 3}));
      },
      kInvalid, "[Greater] shapes cannot be broadcast: (2,) vs (3,)");
}

TEST_F(BadInputTest, WhereRejectsANonBoolConditionAndMismatchedBranches) {
  const Tensor c = constant({true, false});
  expect([] { where(constant({1.f}), constant({1.f}), constant({2.f})); }, kInvalid,
         "[SelectV2] condition must be bool, got float32");
  expect(
      [&] {
        where(c, constant({1.f, 2.f}), constant({1, 2}));
      },
      kInvalid, "[SelectV2] dtypes differ: float32 vs int32");
  expect(
      [&] {
        where(c, constant({1.f, 2.f, 3.f}), constant({1.f}));
      },
      kInvalid, "[SelectV2] shapes cannot be broadcast: condition (2,) vs x and y (3,)");
}

TEST_F(BadInputTest, ArgMaxRejectsBadAxesEmptyAxesAndOutputTypes) {
  expect([] { argmax(matrix(), 2); }, kInvalid,
         "[ArgMax] axis 2 is out of range for input of shape (2, 3); expected an axis in [-2, 2)");
  expect([] { argmin(constant(1.f), 0); }, kInvalid,
         "[ArgMin] axis 0 is out of range for input of shape (); expected an axis in [0, 0)");
  expect(
      [] {
        argmax(zeros({0, 3}), 0);
      },
      kInvalid, "[ArgMax] reduction axis 0 is empty in shape (0, 3)");
  expect([] { argmax(matrix(), 1, DType::kFloat32); }, kInvalid,
         "[ArgMax] output_type must be int32 or int64, got float32");
}

TEST_F(BadInputTest, BiasAddRejectsAVectorValueAndAMismatchedBias) {
  expect(
      [] {
        nn::bias_add(constant({1.f, 2.f}), constant({1.f, 2.f}));
      },
      kInvalid, "[BiasAdd] value must have >= 2 dimensions, got shape (2,)");
  expect([] { nn::bias_add(matrix(), matrix()); }, kInvalid,
         "[BiasAdd] bias must be 1-D, got shape (2, 3)");
  expect(
      [] {
        nn::bias_add(matrix(), constant({1.f, 2.f}));
      },
      kInvalid, "[BiasAdd] bias has 2 elements but the last dimension of (2, 3) is 3");
  expect(
      [] {
        nn::bias_add(matrix(), constant({1, 2, 3}));
      },
      kInvalid, "[BiasAdd] dtypes differ: float32 vs int32");
}

TEST_F(BadInputTest, SparseCrossEntropyRejectsBadLabelsAndShapes) {
  using nn::sparse_softmax_cross_entropy_with_logits;
  expect(
      [] {
        sparse_softmax_cross_entropy_with_logits(constant({0, 5}), matrix());
      },
      kInvalid,
      "[SparseSoftmaxCrossEntropyWithLogits] Received a label value of 5 which is outside "
      "the valid range of [0, 3)");
  expect(
      [] {
        sparse_softmax_cross_entropy_with_logits(constant({0, -1}), matrix());
      },
      kInvalid,
      "[SparseSoftmaxCrossEntropyWithLogits] Received a label value of -1 which is outside "
      "the valid range of [0, 3)");
  expect(
      [] {
        sparse_softmax_cross_entropy_with_logits(constant({0, 1, 2}), matrix());
      },
      kInvalid,
      "[SparseSoftmaxCrossEntropyWithLogits] labels of shape (3,) need logits of that shape "
      "plus a class dimension, got (2, 3)");
  expect(
      [] {
        sparse_softmax_cross_entropy_with_logits(constant({0.f, 1.f}), matrix());
      },
      kInvalid, "[SparseSoftmaxCrossEntropyWithLogits] labels must be int32 or int64, got float32");
  expect(
      [] {
        sparse_softmax_cross_entropy_with_logits(constant({0, 1}), zeros({2, 0}));
      },
      kInvalid,
      "[SparseSoftmaxCrossEntropyWithLogits] logits must have at least one class, got shape "
      "(2, 0)");
}

TEST_F(BadInputTest, SparseCrossEntropyGivesTensorFlowsLossAndGradient) {
  // tensorflow-cpu 2.21: loss [0.407605946, 1.09861231] and the gradient softmax - onehot.
  // (Flat constants reshaped: GCC 12 warns, wrongly, on nested ones here.)
  const Tensor logits = reshape(constant({1.f, 2.f, 3.f, 1.f, 1.f, 1.f}), {2, 3});
  auto [loss, grad] =
      nn::sparse_softmax_cross_entropy_with_logits_and_grad(constant({2, 0}), logits);
  const std::vector<float> want_loss = {0.407605946f, 1.09861231f};
  const std::vector<float> want_grad = {0.0900305733f, 0.244728476f, -0.334759057f,
                                        -0.666666627f, 0.333333343f, 0.333333343f};
  const std::vector<float> got_loss = loss.to_vector<float>(), got_grad = grad.to_vector<float>();
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(got_loss[i], want_loss[i], 1e-6);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(got_grad[i], want_grad[i], 1e-6);
  const Tensor batched = nn::sparse_softmax_cross_entropy_with_logits(
      reshape(constant({2, 0}), {1, 2}), reshape(logits, {1, 2, 3}));
  EXPECT_EQ(batched.shape(), Shape::make({1, 2}).value());
}

TEST_F(BadInputTest, GradientRejectsAnOutputGradientOfAnotherShape) {
  const Tensor x = constant({1.f, 2.f});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = mul(x, x);
  expect(
      [&] {
        tape.gradient(y, {x}, constant({1.f, 1.f, 1.f}));
      },
      kInvalid,
      "[GradientTape] gradient: output_gradients has shape (3,) and float32, the target (2,) and "
      "float32");
}

TEST_F(BadInputTest, UnsortedSegmentSumRejectsAnIdPastTheSegmentsOnTheCpu) {
  expect(
      [] {
        unsorted_segment_sum(constant({1.f, 2.f}), constant({0, 5}), 3);
      },
      kInvalid, "[UnsortedSegmentSum] segment_ids[1] = 5 is out of range [0, 3)");
  expect(
      [] {
        unsorted_segment_sum(constant({1.f, 2.f}), constant({0.f, 1.f}), 3);
      },
      kInvalid, "[UnsortedSegmentSum] segment_ids must be int32 or int64, got float32");
  const Tensor dropped = unsorted_segment_sum(constant({1.f, 2.f}), constant({-1, 1}), 2);
  EXPECT_EQ(dropped.to_vector<float>(), (std::vector<float>{0.f, 2.f}));
}

}  // namespace
}  // namespace mt
