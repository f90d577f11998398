// The cost policy inside the runtime, on logical CPUs with a fake clock and taught
// estimates: it places by estimate, explains itself (in the log and the trace), skips a pool that
// cannot take the output, leaves scopes and variables their devices, caches its decisions, and
// reads and writes its history file (missing, corrupt and other-machine files are warnings).
#include "runtime/cost/cost_policy.h"

#include <cstdio>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cost/copy_cache.h"
#include "runtime/minitensor.h"
#include "tests/runtime/fake_cost_clock.h"
#include "tests/runtime/json_test_util.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

constexpr int64_t kN = 1024;  // elements of each input: 4 KiB of float32

class CostPolicyTest : public testing::RuntimeTest {
 protected:
  // CPU:0 (the priority device) and CPU:1, or with `limit_mb` a limit on CPU:1.
  void start(std::optional<int64_t> limit_mb = std::nullopt) {
    config::set_logical_device_configuration(config::list_physical_devices("CPU")[0],
                                             {LogicalDeviceConfiguration{}, {limit_mb}});
    rt_ = internal::Context::get().runtime().value();
    internal::cost_policy(*rt_).reset_for_testing(&clock_);
    BusModel bus;
    bus.set(Link::kHostToHost, LinkCost{1000, 1});  // 1 us + 1 ns per byte
    model().set_bus(bus);
    a_ = constant(std::vector<float>(kN, 1.f), {kN});  // on CPU:0, before the policy is on
    b_ = constant(std::vector<float>(kN, 2.f), {kN});
    config::set_placement_policy(config::PlacementPolicy::kCost);
  }
  void TearDown() override {
    a_ = b_ = Tensor();
    config::set_placement_policy(config::PlacementPolicy::kPriority);
    testing::RuntimeTest::TearDown();
  }

  CostModel& model() { return internal::cost_policy(*rt_).model(); }

  // Teaches AddV2 on float32 inputs of `bytes` in all an estimate of `ns` on CPU `device`.
  void teach(int device, double ns, int64_t bytes = 2 * kN * 4) {
    const CostKey key{OpId::kAddV2, DType::kFloat32, footprint_bucket(bytes)};
    for (int i = 0; i < CostModel::kRefreshSamples; ++i) model().record(key, device, bytes, ns);
  }

  // Teaches a Relu of kN floats 30 us on CPU:0 and 0.1 us on CPU:1.
  void teach_relu() {
    const CostKey key{OpId::kRelu, DType::kFloat32, footprint_bucket(kN * 4)};
    for (int i = 0; i < CostModel::kRefreshSamples; ++i) {
      model().record(key, 0, kN * 4, 30000);
      model().record(key, 1, kN * 4, 100);
    }
  }

  testing::FakeCostClock clock_;  // never advances: measured runs take 0 ns
  internal::Runtime* rt_ = nullptr;
  Tensor a_, b_;
};

TEST_F(CostPolicyTest, IsOffByDefaultAndSwitchesAtAnyTime) {
  EXPECT_EQ(config::get_placement_policy(), config::PlacementPolicy::kPriority);
  start();
  EXPECT_EQ(config::get_placement_policy(), config::PlacementPolicy::kCost);
  config::set_placement_policy(config::PlacementPolicy::kPriority);
  EXPECT_EQ(add(a_, b_).device(), cpu(0));
}

TEST_F(CostPolicyTest, RunsTheOpWhereItsEstimatedFinishIsEarliest) {
  start();
  teach(0, 50000);  // 50 us on CPU:0
  teach(1, 100);    // 0.1 us on CPU:1, two copies of 4 KiB in and the sum back: 3 x (1 + 4.096) us
  debugging::PlacementExplanation e = debugging::explain_placement("AddV2", {a_, b_});
  EXPECT_EQ(e.reason, "cost");
  EXPECT_EQ(e.detail, "cost policy: CPU:1 0.1 us + copy 10.2 us + back 5.1 us vs CPU:0 50.0 us");
  EXPECT_EQ(e.copies.size(), 2u);
  EXPECT_EQ(add(a_, b_).device(),
            cpu(1));  // (a second run would keep its copies: Note [The copy cache])
}

TEST_F(CostPolicyTest, LogLinesCarryTheEstimates) {
  start();
  teach(0, 50000);
  teach(1, 100);
  debugging::set_log_device_placement(true);
  debugging::set_log_placement_reasons(true);
  add(a_, b_);
  debugging::set_log_placement_reasons(false);
  debugging::set_log_device_placement(false);
  ASSERT_FALSE(log().empty());
  EXPECT_EQ(log().back(), "Executing op AddV2 in device " + cpu(1) +
                              " (cost policy: CPU:1 0.1 us + copy 10.2 us + back 5.1 us vs CPU:0 "
                              "50.0 us; input 0 copied "
                              "from CPU:0, 4 KiB; input 1 copied from CPU:0, 4 KiB)");
}

// A cached decision's line names the device it ran on first, beside the estimates of now,
// even once those would choose the other device (until the entry is decided again).
TEST_F(CostPolicyTest, ALogLineNamesTheDeviceACachedDecisionRanOn) {
  start();
  teach(0, 50000);
  teach(1, 100);
  EXPECT_EQ(add(a_, b_).device(), cpu(1));  // decided and cached
  teach(0, 10);  // CPU:0 gets faster; no new estimate appears, so the entry stays
  debugging::set_log_device_placement(true);
  debugging::set_log_placement_reasons(true);
  EXPECT_EQ(add(a_, b_).device(), cpu(1));
  debugging::set_log_placement_reasons(false);
  debugging::set_log_device_placement(false);
  ASSERT_FALSE(log().empty());
  EXPECT_EQ(
      log().back().rfind("Executing op AddV2 in device " + cpu(1) + " (cost policy: CPU:1 ", 0), 0u)
      << log().back();
}

// Explaining changes nothing: the next real op still calibrates on the priority device,
// where counted tries would have moved it on.
TEST_F(CostPolicyTest, ExplainingTakesNoCalibrationTry) {
  start();
  for (int i = 0; i < 2 * CostModel::kMaxTries; ++i) {
    EXPECT_EQ(debugging::explain_placement("AddV2", {a_, b_}).device, cpu(0));
  }
  EXPECT_EQ(add(a_, b_).device(), cpu(0));
}

TEST_F(CostPolicyTest, TheTraceShowsTheEstimatesBehindEachChoice) {
  start();
  teach(0, 50000);
  teach(1, 100);
  {
    trace::Recording recording;
    add(a_, b_);
  }
  std::optional<testing::Json> json = testing::parse_json(trace::to_json());
  ASSERT_TRUE(json.has_value());
  int ops = 0;
  for (const testing::Json& e : (*json)["traceEvents"].array) {
    if (e["cat"].string != "op" || e["name"].string != "AddV2") continue;
    ++ops;
    EXPECT_EQ(e["args"]["reason"].string, "cost");
    EXPECT_EQ(e["args"]["detail"].string,
              "cost policy: CPU:1 0.1 us + copy 10.2 us + back 5.1 us vs CPU:0 50.0 us");
  }
  EXPECT_EQ(ops, 1);
}

TEST_F(CostPolicyTest, CalibratesOnThePriorityDeviceFirst) {
  start();
  EXPECT_EQ(add(a_, b_).device(), cpu(0));  // nothing measured: priority order
  debugging::PlacementExplanation e = debugging::explain_placement("AddV2", {a_, b_});
  EXPECT_EQ(e.reason, "cost");
  EXPECT_EQ(e.detail.rfind("cost policy: calibrating: ", 0), 0u) << e.detail;
}

// Note [Where data is born]: a loaded history that measured a random draw on the priority
// device only no longer sends the draw elsewhere to measure it: weights stay where priority
// placement makes them. A scalar draw is still measured on every device.
TEST_F(CostPolicyTest, LargeNewDataIsMadeOnThePriorityDeviceWhateverTheHistory) {
  start();
  const int64_t bytes = 784 * 256 * 4;
  const CostKey key{OpId::kStatelessRandomUniformV2, DType::kFloat32, footprint_bucket(bytes)};
  for (int i = 0; i < CostModel::kRefreshSamples; ++i) model().record(key, 0, bytes, 20000);
  for (int i = 0; i < 2 * CostModel::kMaxTries; ++i) {
    EXPECT_EQ(random::stateless_uniform({784, 256}, {1, 2}, -1.0, 1.0).device(), cpu(0));
  }
  bool measured_on_cpu1 = false;
  for (int i = 0; i < 2 * CostModel::kMaxTries; ++i) {
    measured_on_cpu1 |= random::stateless_uniform({1}, {1, 2}, -1.0, 1.0).device() == cpu(1);
  }
  EXPECT_TRUE(measured_on_cpu1);
}

// Note [The copy cache] (runtime/cost/copy_cache.h): the cost policy's second copy of an input to a
// device is kept beside it and read again, and the estimates count no copy for it there.
TEST_F(CostPolicyTest, ACopyIsKeptAsACachedCopyAndReadAgain) {
  start();
  teach(0, 50000);
  teach(1, 100);
  EXPECT_EQ(add(a_, b_).to_vector<float>(), std::vector<float>(kN, 3.f));
  EXPECT_EQ(a_.impl()->cached_copy.load(), nullptr);  // used once there: no copy kept
  EXPECT_EQ(add(a_, b_).to_vector<float>(), std::vector<float>(kN, 3.f));
  for (const Tensor* t : {&a_, &b_}) {
    const internal::TensorImpl* m = t->impl()->cached_copy.load();
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->device->name(), cpu(1));
  }
  const int64_t allocs = config::get_memory_info("CPU:1").num_allocs;
  Tensor sum = add(a_, b_);
  EXPECT_EQ(sum.device(), cpu(1));
  EXPECT_EQ(config::get_memory_info("CPU:1").num_allocs, allocs + 1);  // the sum alone
  EXPECT_EQ(sum.to_vector<float>(), std::vector<float>(kN, 3.f));
  debugging::PlacementExplanation e = debugging::explain_placement("AddV2", {a_, b_});
  EXPECT_TRUE(e.copies.empty());
  // Both inputs are mirrored on CPU:1: no copy, and no way back (Note [Leaving the inputs'
  // device] in runtime/cost/cost_model.h).
  EXPECT_EQ(e.detail, "cost policy: CPU:1 0.1 us vs CPU:0 50.0 us");
}

TEST_F(CostPolicyTest, ACachedCopyGoesWithItsTensor) {
  start();
  teach(0, 50000);
  teach(1, 100);
  const int64_t before = config::get_memory_info("CPU:1").current;
  {
    Tensor c = constant(std::vector<float>(kN, 5.f), {kN});
    config::set_placement_policy(config::PlacementPolicy::kPriority);
    Tensor on_cpu0 = add(c, c);  // priority placement: CPU:0, no copy, no cached copy
    config::set_placement_policy(config::PlacementPolicy::kCost);
    EXPECT_EQ(c.impl()->cached_copy.load(), nullptr);
    Tensor sum = add(a_, c);
    EXPECT_EQ(sum.device(), cpu(1));
    sum = add(a_, c);
    EXPECT_NE(c.impl()->cached_copy.load(), nullptr);
    EXPECT_GT(config::get_memory_info("CPU:1").current, before);
  }
  a_ = b_ = Tensor();  // their cached copies too
  EXPECT_EQ(config::get_memory_info("CPU:1").current, before);
}

// A variable's buffer is written in place when the variable alone holds it: its cached copy
// must go first, or a later read elsewhere would see the old value.
TEST_F(CostPolicyTest, AVariablesCachedCopyGoesBeforeItIsWritten) {
  config::set_logical_device_configuration(config::list_physical_devices("CPU")[0],
                                           {LogicalDeviceConfiguration{}, {}});
  Variable v(constant(std::vector<float>(kN, 1.f), {kN}));  // on CPU:0
  start();
  teach(0, 50000);
  teach(1, 100);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(add(v.read_value(), b_).to_vector<float>(), std::vector<float>(kN, 3.f));
  }
  EXPECT_NE(v.read_value().impl()->cached_copy.load(), nullptr);  // the variable's buffer
  v.assign(constant(std::vector<float>(kN, 10.f), {kN}));         // in place: nothing else holds it
  Tensor sum = add(v.read_value(), b_);
  EXPECT_EQ(sum.device(), cpu(1));
  EXPECT_EQ(sum.to_vector<float>(), std::vector<float>(kN, 12.f));
}

TEST_F(CostPolicyTest, ASharedBufferIsNeverMirrored) {
  start();
  teach(0, 50000);
  teach(1, 100);
  internal::share_buffer(*a_.impl());  // as a DLPack export does
  EXPECT_EQ(add(a_, b_).device(), cpu(1));
  EXPECT_EQ(add(a_, b_).device(), cpu(1));
  EXPECT_EQ(a_.impl()->cached_copy.load(), nullptr);
  EXPECT_NE(b_.impl()->cached_copy.load(), nullptr);
  internal::share_buffer(*b_.impl());  // drops the cached copy it has
  EXPECT_EQ(b_.impl()->cached_copy.load(), nullptr);
}

TEST_F(CostPolicyTest, DeviceScopesStillWin) {
  start();
  teach(0, 50000);
  teach(1, 100);
  DeviceScope scope("/CPU:0");
  EXPECT_EQ(add(a_, b_).device(), cpu(0));
  EXPECT_EQ(debugging::explain_placement("AddV2", {a_, b_}).reason, "scope");
}

TEST_F(CostPolicyTest, VariablesStillPinTheirOps) {
  config::set_logical_device_configuration(config::list_physical_devices("CPU")[0],
                                           {LogicalDeviceConfiguration{}, {}});
  Variable v(constant(std::vector<float>(kN, 0.f), {kN}));  // on CPU:0
  start();
  teach(0, 50000);
  teach(1, 100);
  Tensor delta;
  {
    DeviceScope on1("/CPU:1");
    delta = constant(std::vector<float>(kN, 1.f), {kN});
  }
  debugging::set_log_device_placement(true);
  v.assign_add(delta);
  debugging::set_log_device_placement(false);
  ASSERT_FALSE(log().empty());
  EXPECT_EQ(log().back(), "Executing op AssignAddVariableOp in device " + cpu(0));
  EXPECT_EQ(v.read_value().device(), cpu(0));
}

TEST_F(CostPolicyTest, SkipsAPoolThatCannotTakeTheOutputAndLogsIt) {
  start(/*limit_mb=*/2);
  const int64_t n = 128 * 1024;  // 512 KiB per tensor
  Tensor x;
  {
    DeviceScope on0("/CPU:0");
    x = constant(std::vector<float>(n, 1.f), {n});
  }
  teach(0, 5e6, 2 * n * 4);
  teach(1, 1, 2 * n * 4);
  {
    Tensor fill;
    {
      DeviceScope on1("/CPU:1");
      fill = constant(std::vector<float>(2 * n, 1.f), {2 * n});  // 1 MiB of CPU:1's 2 MiB
    }
    // On CPU:1 the op needs two copies of x and its output: 1.5 MiB more.
    EXPECT_EQ(add(x, x).device(), cpu(0));
  }
  bool logged = false;
  for (const std::string& line : log()) {
    logged |= line ==
              "minitensor: cost placement: CPU:1 cannot take 1.5 MiB more (1 MiB of 2 MiB in "
              "use); AddV2 runs on CPU:0 instead";
  }
  EXPECT_TRUE(logged);
  EXPECT_EQ(add(x, x).device(), cpu(1));  // CPU:1 has room again: the skip was not cached
}

// Note [Looking along the data] in runtime/cost/cost_model.h: an op the policy placed marks
// its output, the next decision of an op reading it notes that reader, and decisions of the
// first op then count the reader where each candidate would run it.
TEST_F(CostPolicyTest, AnOpsReaderIsNotedAndCountedWhereItWouldRun) {
  start();
  teach(0, 15000);
  teach(1, 1000);
  teach_relu();
  EXPECT_EQ(debugging::explain_placement("AddV2", {a_, b_}).detail,
            "cost policy: CPU:0 15.0 us vs CPU:1 1.0 us + copy 10.2 us + back 5.1 us");
  Tensor sum = add(a_, b_);
  EXPECT_EQ(sum.device(), cpu(0));
  EXPECT_NE(sum.impl()->producer.load(), 0u);
  EXPECT_EQ(a_.impl()->producer.load(), 0u);  // made before the policy was on
  EXPECT_EQ(relu(sum).device(), cpu(1));      // and noted as the sum's reader
  debugging::PlacementExplanation e = debugging::explain_placement("AddV2", {a_, b_});
  EXPECT_EQ(e.device, cpu(1));
  // From CPU:0 the Relu's cheapest way is to copy the sum to CPU:1 (1 us + 4096 bytes at a
  // byte a ns) and run there. (CPU:0's own estimate moved with the add's run, which the fake
  // clock timed at 0 ns.)
  EXPECT_THAT(e.detail, ::testing::StartsWith("cost policy: CPU:1 1.0 us + copy 10.2 us + back "
                                              "5.1 us + next 0.1 us vs CPU:0 "));
  EXPECT_THAT(e.detail, ::testing::EndsWith(" us + next 5.2 us"));
}

// Note [Read rates] in runtime/cost/cost_model.h: the policy tells the model how many uses each
// decision stands for (kReevaluateEvery for a cached one), so a reader seen once after many
// uses of the op before it counts by that rate, and one reading every output in full.
TEST_F(CostPolicyTest, AReaderCountsByItsReadsPerUseOfTheOpBeforeIt) {
  start();
  teach(0, 15000);
  teach(1, 1000);
  teach_relu();
  const CostKey add_key{OpId::kAddV2, DType::kFloat32, footprint_bucket(2 * kN * 4)};
  const std::vector<int> candidates = {0, 1};
  const bool fits[2] = {true, true};
  // From CPU:0 the Relu's cheapest way is a copy to CPU:1 and its run there: 5.2 us.
  auto next_from_cpu0 = [&] {
    return model()
        .choose(add_key, 2 * kN * 4, candidates, fits, {}, kN * 4, /*counts=*/false)
        .estimates[0]
        .next_ns;
  };
  const int every = internal::CostPolicy::kReevaluateEvery;
  Tensor sum;
  for (int i = 0; i < 3 * every; ++i) sum = add(a_, b_);
  EXPECT_EQ(relu(sum).device(), cpu(1));                  // one read ...
  for (int i = 0; i < 2 * every; ++i) sum = add(a_, b_);  // ... in more than a hundred sums
  EXPECT_GT(next_from_cpu0(), 0);
  EXPECT_LT(next_from_cpu0(), 5200.0 / 32);
  for (int i = 0; i < 10 * every; ++i) (void)relu(add(a_, b_));  // now every sum is read
  EXPECT_GT(next_from_cpu0(), 5200.0 / 2);
}

TEST_F(CostPolicyTest, CachesADecisionAndReevaluatesItPeriodically) {
  start();
  teach(0, 50000);
  teach(1, 100);
  EXPECT_EQ(add(a_, b_).device(), cpu(1));  // copies a_ and b_
  EXPECT_EQ(add(a_, b_).device(),
            cpu(1));  // a cached decision; the copies are kept as cached copies
  EXPECT_EQ(add(a_, b_).device(), cpu(1));  // decided anew (the inputs are mirrored), cached
  // CPU:0 becomes fast; no new estimate appears, so the cached decision stands for a while.
  const CostKey key{OpId::kAddV2, DType::kFloat32, footprint_bucket(2 * kN * 4)};
  for (int i = 0; i < 40; ++i) model().record(key, 0, 2 * kN * 4, 1);
  int on_cpu1 = 0;
  for (int i = 0; i < internal::CostPolicy::kReevaluateEvery - 1; ++i) {
    on_cpu1 += add(a_, b_).device() == cpu(1);
  }
  EXPECT_EQ(on_cpu1, internal::CostPolicy::kReevaluateEvery - 1);
  EXPECT_EQ(add(a_, b_).device(), cpu(0));  // re-evaluated
}

TEST_F(CostPolicyTest, KeepsTheDecisionsOfOneOpOnSeveralSizesAndDTypes) {
  // Four AddV2 keys that differ only in footprint bucket or dtype, used in turn, as a
  // workload's layers use one op on several sizes: each must stay cached (a hit is not
  // timed, so the model's sample counts stand still). A direct-mapped cache indexed by the
  // op and the devices alone kept one of them and decided (and timed) every other run anew.
  start();
  std::vector<Tensor> xs;
  for (int64_t n : {kN, 4 * kN, 16 * kN}) {
    teach(0, 100, 2 * n * 4);
    teach(1, 50000, 2 * n * 4);
    xs.push_back(constant(std::vector<float>(n, 1.f), {n}));
  }
  const CostKey int_key{OpId::kAddV2, DType::kInt32, footprint_bucket(2 * kN * 4)};
  for (int i = 0; i < CostModel::kRefreshSamples; ++i) {
    model().record(int_key, 0, 2 * kN * 4, 100);
    model().record(int_key, 1, 2 * kN * 4, 50000);
  }
  xs.push_back(constant(std::vector<int32_t>(kN, 1), {kN}));
  for (const Tensor& x : xs) EXPECT_EQ(add(x, x).device(), cpu(0));  // decided, cached
  auto samples = [&] {
    int64_t n = 0;
    for (const CostRecord& r : model().history()) n += r.count;
    return n;
  };
  const int64_t before = samples();
  for (int round = 0; round < 10; ++round) {
    for (const Tensor& x : xs) EXPECT_EQ(add(x, x).device(), cpu(0));
  }
  EXPECT_EQ(samples(), before);
}

TEST_F(CostPolicyTest, TheCacheKeysOnWhereTheInputsLive) {
  start();
  teach(0, 20000);
  teach(1, 20000);
  EXPECT_EQ(add(a_, b_).device(), cpu(0));  // the inputs are there: no copies
  Tensor a1, b1;
  {
    DeviceScope on1("/CPU:1");
    a1 = identity(a_);
    b1 = identity(b_);
  }
  EXPECT_EQ(add(a1, b1).device(), cpu(1));
}

TEST_F(CostPolicyTest, SavesAndLoadsItsHistory) {
  start();
  teach(0, 50000);
  teach(1, 100);
  std::string path = ::testing::TempDir() + "/cost_policy_test_history.txt";
  config::save_placement_history(path);
  model().load_history({});
  EXPECT_TRUE(config::load_placement_history(path));
  EXPECT_EQ(add(a_, b_).device(), cpu(1));
  std::remove(path.c_str());
}

TEST_F(CostPolicyTest, IgnoresAMissingCorruptOrForeignHistoryWithAWarning) {
  start();
  teach(0, 50000);
  teach(1, 100);
  const std::string dir = ::testing::TempDir();
  struct Case {
    std::string name, text, warning;
  } cases[] = {
      {"missing.txt", "", "cannot open it"},
      {"corrupt.txt",
       "minitensor-placement-history 1\nmachine " + internal::cost_policy(*rt_).machine() +
           "\nCPU:0 AddV2 float32 x\n",
       "line 3 does not parse"},
      {"foreign.txt", "minitensor-placement-history 1\nmachine elsewhere,CPU:0\n",
       "written on another machine ('elsewhere,CPU:0'"},
  };
  for (const Case& c : cases) {
    std::string path = dir + "/cost_policy_test_" + c.name;
    std::remove(path.c_str());
    if (!c.text.empty()) std::ofstream(path) << c.text;
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(config::load_placement_history(path));
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("minitensor: placement history '" + path + "' not loaded: " + c.warning),
              std::string::npos)
        << err;
    std::remove(path.c_str());
  }
  EXPECT_EQ(add(a_, b_).device(), cpu(1));  // the estimates are unchanged
}

TEST_F(CostPolicyTest, ReportsAHistoryFileItCannotWrite) {
  start();
  Error e =
      testing::expect_error([] { config::save_placement_history("/nonexistent-dir/history.txt"); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(e.what()),
            "[save_placement_history] cannot write '/nonexistent-dir/history.txt'");
}

}  // namespace
}  // namespace mt
