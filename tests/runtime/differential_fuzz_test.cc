// The differential fuzzer: random op chains (tests/runtime/op_chain.h) run with every op on
// each logical device and compared with the same chain on CPU:0, errors by code.
//
// In CI: fixed seeds, a few hundred short chains over three logical CPUs. A long run, on
// the GPU machine say (scripts/gpu-run.sh):
//   MT_DIFF_FUZZ_SECONDS=300 runtime_test --gtest_filter='DifferentialFuzz*'
// MT_DIFF_FUZZ_SEED sets the first seed (default 1), MT_DIFF_FUZZ_PROGRAMS the chain count
// when no duration is given (default 300). Each test prints one line: chains, ops run,
// errors among them and mismatches, then the first mismatches with their chains.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/runtime/json_test_util.h"
#include "tests/runtime/op_chain.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::compare_outcomes;
using testing::OpChain;
using testing::Outcome;
using testing::Tally;

int64_t env_int(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::atoll(text) : fallback;
}

// Runs chains of 12 steps over `devices` (devices[0] the reference) and checks the tally.
void fuzz(const std::string& label, const std::vector<std::string>& devices) {
  const int64_t seconds = env_int("MT_DIFF_FUZZ_SECONDS", 0);
  const int64_t programs = env_int("MT_DIFF_FUZZ_PROGRAMS", 300);
  const uint64_t first_seed = static_cast<uint64_t>(env_int("MT_DIFF_FUZZ_SEED", 1));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  Tally tally;
  for (uint64_t seed = first_seed;; ++seed) {
    if (seconds > 0 ? std::chrono::steady_clock::now() >= deadline : tally.programs >= programs) {
      break;
    }
    random::set_seed(seed);  // the stateful random ops draw as they do for this seed alone
    OpChain chain(seed, devices);
    chain.generate(12, &tally);
    for (size_t d = 1; d < devices.size(); ++d) chain.replay(devices[d], &tally);
    ++tally.programs;
  }
  std::cout << "[differential fuzz] " << label << ": " << tally.programs << " chains, " << tally.ops
            << " ops run (" << tally.errors << " of them errors), " << tally.mismatches
            << " mismatches\n";
  for (const std::string& report : tally.reports) std::cout << report << "\n";
  ::testing::Test::RecordProperty("ops", std::to_string(tally.ops));
  ::testing::Test::RecordProperty("mismatches", std::to_string(tally.mismatches));
  EXPECT_EQ(tally.mismatches, 0);
  EXPECT_GT(tally.errors, 0);  // the chains do reach the error paths
  for (const std::string& device : devices) {
    EXPECT_EQ(config::get_memory_info(device).current, 0) << device;  // every tensor gone
  }
}

class DifferentialFuzzTest : public testing::RuntimeTest {};

TEST_F(DifferentialFuzzTest, LogicalCpusAgreeWithCpu0) {
  split_cpu(3);
  fuzz("logical CPUs", {cpu(0), cpu(1), cpu(2)});
}

TEST_F(DifferentialFuzzTest, ComparisonCatchesCodesShapesAndValues) {
  Outcome want;
  want.shape = {2};
  want.values = {1.0, NAN};
  want.max_abs = 1;
  EXPECT_EQ(compare_outcomes(want, want, /*exact=*/true), "");
  Outcome error = want;
  error.code = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(compare_outcomes(want, error, true), "error code INVALID_ARGUMENT, reference OK");
  Outcome shape = want;
  shape.shape = {1, 2};
  EXPECT_EQ(compare_outcomes(want, shape, true), "got float32 (1, 2), reference float32 (2)");
  Outcome close = want;
  close.values[0] = 1.00001;
  EXPECT_EQ(compare_outcomes(want, close, true), "element 0 is 1.00001, reference 1");
  EXPECT_EQ(compare_outcomes(want, close, /*exact=*/false), "");  // across device types
  Outcome wide = want;  // float64 values one float32 rounding apart (exp(-1) on two devices)
  wide.dtype = DType::kFloat64;
  Outcome narrow = wide;
  narrow.values[0] = 1 + 0x1p-23;
  EXPECT_EQ(compare_outcomes(wide, narrow, false), "element 0 is 1, reference 1");
  EXPECT_EQ(compare_outcomes(wide, narrow, false, /*float32_upstream=*/true), "");
  Outcome with_inf = want;  // exp(exp(2)) one float32 rounding apart, beside an overflow
  with_inf.values = {1618.1779, INFINITY};
  with_inf.max_abs = INFINITY;
  Outcome near = with_inf;
  near.values[0] = 1618.1781;
  EXPECT_EQ(compare_outcomes(with_inf, near, false), "");
  Outcome nan = want;
  nan.values[1] = 0;
  EXPECT_EQ(compare_outcomes(want, nan, false), "element 1 is 0, reference nan");
  Outcome half = want;  // bfloat16 values amplified by later ops (Note [Fuzzing 2-byte dtypes])
  half.dtype = DType::kBFloat16;
  Outcome half_near = half, half_far = half;
  half_near.values[0] = 1.2;
  half_far.values[0] = -1;
  EXPECT_EQ(compare_outcomes(half, half_near, false), "");
  EXPECT_EQ(compare_outcomes(half, half_far, false), "element 0 is -1, reference 1");
  EXPECT_EQ(compare_outcomes(half, half_near, /*exact=*/true), "element 0 is 1.2, reference 1");
  EXPECT_EQ(compare_outcomes(want, close, false, false, /*half_upstream=*/true), "");
}

// Note [Stateful random steps] in op_chain_steps.h: code, dtype, shape, then each value
// within the op's range.
TEST_F(DifferentialFuzzTest, StatefulRandomStepsAreComparedByRange) {
  testing::Step uniform;
  uniform.kind = testing::StepKind::kRandom;
  uniform.op = OpId::kRandomUniformInt;
  uniform.values = {-2, 3};
  EXPECT_TRUE(testing::is_stateful_random(uniform.op));
  EXPECT_FALSE(testing::is_stateful_random(OpId::kStatelessRandomUniformIntV2));
  const auto [lo, hi] = testing::random_range(uniform);
  EXPECT_EQ(lo, -2);
  EXPECT_EQ(hi, 2);
  Outcome want;
  want.dtype = DType::kInt32;
  want.shape = {2};
  want.values = {-2, 2};
  Outcome other = want;
  other.values = {1, 0};
  EXPECT_EQ(testing::compare_random_outcomes(want, other, lo, hi), "");
  other.values = {1, 3};
  EXPECT_EQ(testing::compare_random_outcomes(want, other, lo, hi),
            "element 1 is 3, outside [-2, 2]");
  other.shape = {1, 2};
  EXPECT_EQ(testing::compare_random_outcomes(want, other, lo, hi),
            "got int32 (1, 2), reference int32 (2)");
}

// The chains draw every op of the op table (kernels/op_table.h): each one runs with inputs
// and attributes it accepts, and the ops beyond the uniform families also fail now and
// then (attributes drawn invalid on purpose).
TEST_F(DifferentialFuzzTest, ChainsDrawEveryOpOfTheTable) {
  std::vector<int> ran(kNumOps), failed(kNumOps);
  Tally tally;
  trace::start();  // the ops that ran, by the runtime's own account
  // (Enough chains that every op with attributes draws a bad one: at 110 ops, 1000 chains
  // left ExpandDims and Tile without a failure, 1500 Tile, drawn 57 times.)
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    OpChain chain(seed, {cpu(0)});
    chain.generate(12, &tally);
    for (size_t i = 0; i < chain.steps().size(); ++i) {
      const int op = static_cast<int>(chain.steps()[i].op);
      ++(chain.reference()[i].code == absl::StatusCode::kOk ? ran : failed)[op];
    }
  }
  trace::stop();
  std::set<std::string> traced;
  std::optional<testing::Json> trace = testing::parse_json(trace::to_json());
  ASSERT_TRUE(trace.has_value());
  for (const testing::Json& e : (*trace)["traceEvents"].array) {
    if (e["cat"].string == "op") traced.insert(e["name"].string);
  }
  int rarest = 0;
  for (int i = 0; i < kNumOps; ++i) {
    const char* name = op_name(static_cast<OpId>(i));
    EXPECT_GT(ran[i], 0) << name << " never ran (" << failed[i] << " errors)";
    EXPECT_EQ(traced.count(name), 1u) << name << " is not in the trace";
    if (ran[i] < ran[rarest]) rarest = i;
  }
  std::cout << "[op coverage] " << kNumOps << " ops in " << tally.ops << " steps; the rarest, "
            << op_name(static_cast<OpId>(rarest)) << ", ran " << ran[rarest] << " times\n";
  for (auto family : {MT_OP_LIST(MT_ARRAY_OPS), MT_OP_LIST(MT_NN_OPS), MT_OP_LIST(MT_ARG_OPS),
                      MT_OP_LIST(MT_RANDOM_OPS), MT_OP_LIST(MT_CONV_OPS)}) {
    for (OpId op : family) {
      if (op == OpId::kZerosLike || op == OpId::kOnesLike) continue;  // no attribute to spoil
      EXPECT_GT(failed[static_cast<int>(op)], 0)
          << op_name(op) << " never failed (ran " << ran[static_cast<int>(op)] << " times)";
    }
  }
}

// Note [Sign of zero] in op_chain_rules.h: +0 and -0 compare equal, and a float division by a
// zero that a sum or ReLU produced is not drawn; other divisions by zero are.
TEST_F(DifferentialFuzzTest, ZerosOfEitherSignAreEqualAndOnlyTheirDivisionIsAvoided) {
  Outcome plus;
  plus.shape = {1};
  plus.values = {0.0};
  Outcome minus = plus;
  minus.values = {-0.0};
  EXPECT_EQ(compare_outcomes(plus, minus, /*exact=*/true), "");
  Outcome inf = plus, minus_inf = plus;
  inf.values = {INFINITY};
  minus_inf.values = {-INFINITY};
  EXPECT_EQ(compare_outcomes(inf, minus_inf, false), "element 0 is -inf, reference inf");

  testing::Step div;
  div.kind = testing::StepKind::kBinary;
  div.variant = testing::binary_variant(OpId::kRealDiv);
  div.op = OpId::kRealDiv;
  div.inputs = {0, 1};
  Outcome ones = plus;
  ones.values = {1.0};
  Outcome has_zero = plus;
  has_zero.values = {2.0, -0.0};
  has_zero.shape = {2};
  const std::vector<Outcome> reference = {ones, has_zero};
  EXPECT_TRUE(testing::divides_by_loose_zero(div, reference, {false, true}));
  EXPECT_FALSE(testing::divides_by_loose_zero(div, reference, {true, false}));  // a leaf's zero
  EXPECT_FALSE(testing::divides_by_loose_zero(div, {has_zero, ones}, {true, true}));
  std::vector<Outcome> ints = reference;
  ints[1].dtype = DType::kInt32;
  EXPECT_FALSE(testing::divides_by_loose_zero(div, ints, {false, true}));
  testing::Step mul = div;
  mul.variant = testing::binary_variant(OpId::kMul);
  mul.op = OpId::kMul;
  EXPECT_FALSE(testing::divides_by_loose_zero(mul, reference, {false, true}));
}

class GpuDifferentialFuzzTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
};

TEST_F(GpuDifferentialFuzzTest, EveryGpuAgreesWithTheCpu) {
  if (config::list_physical_devices("GPU").empty()) GTEST_SKIP() << "needs a GPU";
  std::vector<std::string> devices = {cpu(0)};
  for (const LogicalDevice& gpu : config::list_logical_devices("GPU")) {
    devices.push_back("/job:localhost/replica:0/task:0" + gpu.name);
  }
  fuzz("CPU:0 against every GPU", devices);
}

TEST_F(GpuDifferentialFuzzTest, TwoLogicalGpusOfOneCardAgreeWithTheCpu) {
  std::vector<PhysicalDevice> gpus = config::list_physical_devices("GPU");
  if (gpus.empty()) GTEST_SKIP() << "needs a GPU";
  config::set_visible_devices(gpus[0], "GPU");
  config::set_logical_device_configuration(gpus[0], {{1024}, {1024}});
  fuzz("CPU:0 against two logical GPUs of GPU 0",
       {cpu(0), "/job:localhost/replica:0/task:0/device:GPU:0",
        "/job:localhost/replica:0/task:0/device:GPU:1"});
}

}  // namespace
}  // namespace mt
