// mt::trace: the recording, its Chrome Trace Event JSON and its errors.

#include "runtime/trace/trace.h"

#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "tests/runtime/json_test_util.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

class TraceTest : public RuntimeTest {
 protected:
  void TearDown() override {
    if (trace::is_recording()) trace::stop();
    RuntimeTest::TearDown();
  }

  // Returns the events of the last recording with category `cat`.
  static std::vector<Json> events(const Json& trace, const std::string& cat) {
    std::vector<Json> out;
    for (const Json& e : trace["traceEvents"].array) {
      if (e["cat"].string == cat) out.push_back(e);
    }
    return out;
  }

  static Json recorded() {
    std::optional<Json> trace = parse_json(trace::to_json());
    EXPECT_TRUE(trace.has_value()) << trace::to_json();
    return trace.value_or(Json{});
  }

  // Two logical CPUs: a constant on CPU:0, an add on CPU:1 (both inputs copied), a cast
  // back on CPU:0 (copied again).
  static void run_workload() {
    Tensor a = constant({1.f, 2.f, 3.f, 4.f});
    Tensor b;
    {
      DeviceScope scope("/CPU:1");
      b = add(a, a);
    }
    Tensor c = cast(b, DType::kInt32);
    EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{2, 4, 6, 8}));
  }
};

TEST_F(TraceTest, NamesOneTrackPerLogicalDevice) {
  split_cpu(2);
  { trace::Recording recording; }
  std::vector<std::string> tracks;
  const Json trace = recorded();
  for (const Json& e : trace["traceEvents"].array) {
    if (e["name"].string == "thread_name") tracks.push_back(e["args"]["name"].string);
  }
  EXPECT_EQ(tracks, (std::vector<std::string>{cpu(0), cpu(1)}));
}

TEST_F(TraceTest, RecordsEachOpWithItsPlacement) {
  split_cpu(2);
  {
    trace::Recording recording;
    EXPECT_TRUE(trace::is_recording());
    run_workload();
  }
  EXPECT_FALSE(trace::is_recording());
  std::vector<Json> ops = events(recorded(), "op");
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0]["name"].string, "_EagerConst");
  EXPECT_EQ(ops[0]["args"]["reason"].string, "default");
  const Json& add = ops[1];
  EXPECT_EQ(add["name"].string, "AddV2");
  EXPECT_EQ(add["ph"].string, "X");
  EXPECT_EQ(add["tid"].number, 1);
  EXPECT_GE(add["dur"].number, 0);
  EXPECT_GE(add["ts"].number, ops[0]["ts"].number);
  EXPECT_EQ(add["args"]["dtype"].string, "float32");
  EXPECT_EQ(add["args"]["shapes"].string, "(4,), (4,) -> (4,)");
  EXPECT_EQ(add["args"]["device"].string, cpu(1));
  EXPECT_EQ(add["args"]["reason"].string, "scope");
  EXPECT_EQ(add["args"]["detail"].string, "asked for /device:CPU:1");
  EXPECT_EQ(add["args"]["bytes_allocated"].number, 48);  // two copies and the output
  EXPECT_EQ(add["args"]["timing"].string, "host");
  EXPECT_EQ(ops[2]["name"].string, "Cast");
  EXPECT_EQ(ops[2]["args"]["shapes"].string, "(4,) -> (4,)");
}

TEST_F(TraceTest, RecordsEachCopyWithItsBandwidth) {
  split_cpu(2);
  {
    trace::Recording recording;
    run_workload();
  }
  std::vector<Json> copies = events(recorded(), "copy");
  ASSERT_EQ(copies.size(), 3u);
  EXPECT_EQ(copies[0]["name"].string, "copy CPU:0 -> CPU:1");
  EXPECT_EQ(copies[0]["tid"].number, 1);
  EXPECT_EQ(copies[0]["args"]["source"].string, cpu(0));
  EXPECT_EQ(copies[0]["args"]["destination"].string, cpu(1));
  EXPECT_EQ(copies[0]["args"]["bytes"].number, 16);
  EXPECT_TRUE(copies[0]["args"].has("GB/s"));
  EXPECT_EQ(copies[2]["args"]["source"].string, cpu(1));
}

TEST_F(TraceTest, CountsEachPoolsBytesOverTime) {
  split_cpu(2);
  {
    trace::Recording recording;
    run_workload();
  }
  int cpu1 = 0;
  const Json trace = recorded();
  for (const Json& e : trace["traceEvents"].array) {
    if (e["ph"].string != "C") continue;
    EXPECT_GE(e["args"]["reserved"].number, e["args"]["in_use"].number);
    if (e["name"].string == "CPU_1_bfc") ++cpu1;
  }
  EXPECT_EQ(cpu1, 1);  // after the add
}

TEST_F(TraceTest, RecordsConfigurationAndChanges) {
  split_cpu(2);
  {
    trace::Recording recording;
    config::set_soft_device_placement(false);
  }
  std::vector<Json> config = events(recorded(), "config");
  ASSERT_EQ(config.size(), 2u);
  EXPECT_EQ(config[0]["args"]["devices"].array.size(), 2u);
  EXPECT_EQ(config[0]["args"]["devices"].array[1]["allocator"].string, "CPU_1_bfc");
  EXPECT_TRUE(config[0]["args"]["soft_device_placement"].boolean);  // the default
  EXPECT_FALSE(config[1]["args"]["soft_device_placement"].boolean);
}

TEST_F(TraceTest, RecordsOutOfMemory) {
  split_cpu(1, /*limit_mb=*/1);
  {
    trace::Recording recording;
    Error e = expect_error([] { constant(std::vector<float>(1 << 19, 1.f), {1 << 19}); });
    EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted);
  }
  std::vector<Json> oom = events(recorded(), "oom");
  ASSERT_EQ(oom.size(), 1u);
  EXPECT_EQ(oom[0]["args"]["device"].string, cpu(0));
  EXPECT_NE(oom[0]["args"]["message"].string.find("OOM when allocating tensor"), std::string::npos);
}

TEST_F(TraceTest, TracedOpsComputeWhatUntracedOpsDo) {
  split_cpu(2);
  auto compute = [] {
    Tensor a = constant({{1.f, -2.f}, {3.f, 4.f}});
    DeviceScope scope("/CPU:1");
    Tensor m = matmul(a, a);
    Tensor i = identity(a);  // a copy from CPU:0
    return reduce_sum(relu(m + i), {0}).to_vector<float>();
  };
  std::vector<float> plain = compute();
  trace::Recording recording;
  EXPECT_EQ(compute(), plain);
}

TEST_F(TraceTest, StartTwiceIsFailedPrecondition) {
  trace::Recording recording;
  Error e = expect_error([] { trace::start(); });
  EXPECT_EQ(e.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_STREQ(e.what(), "[trace] a recording is already running");
}

TEST_F(TraceTest, StopWithoutStartIsFailedPrecondition) {
  Error e = expect_error([] { trace::stop(); });
  EXPECT_EQ(e.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_STREQ(e.what(), "[trace] no recording is running");
}

TEST_F(TraceTest, SaveToAMissingFolderIsNotFound) {
  { trace::Recording recording; }
  Error e = expect_error([] { trace::save("/nonexistent-folder/trace.json"); });
  EXPECT_EQ(e.code(), absl::StatusCode::kNotFound);
  EXPECT_STREQ(e.what(), "[trace] cannot write '/nonexistent-folder/trace.json'");
}

TEST_F(TraceTest, SaveWritesTheJson) {
  { trace::Recording recording; }
  std::string path = ::testing::TempDir() + "/trace_test.json";
  trace::save(path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string text(1 << 16, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  std::remove(path.c_str());
  EXPECT_EQ(text, trace::to_json());
}

}  // namespace
}  // namespace mt::testing
