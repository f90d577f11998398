// mt::config::memory_snapshot and last_oom_snapshot.

#include "runtime/trace/memory_snapshot.h"

#include "gtest/gtest.h"
#include "runtime/trace/trace.h"
#include "tests/runtime/json_test_util.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

using MemorySnapshotTest = RuntimeTest;

TEST_F(MemorySnapshotTest, ChunksCoverEachRegionInOrder) {
  Tensor a = constant(std::vector<float>(100000, 1.f), {100000});
  Tensor b = constant(std::vector<float>(300000, 2.f), {300000});
  MemorySnapshot s = config::memory_snapshot("CPU:0");
  EXPECT_EQ(s.device, cpu(0));
  EXPECT_EQ(s.allocator, "CPU_0_bfc");
  ASSERT_FALSE(s.regions.empty());
  int64_t in_use = 0, reserved = 0;
  for (const MemoryRegion& r : s.regions) {
    int64_t offset = 0;
    for (const MemoryChunk& c : r.chunks) {
      EXPECT_EQ(c.offset, offset);
      offset += c.size;
      if (c.state == "in_use") in_use += c.size;
      EXPECT_TRUE(c.state == "in_use" || c.state == "free" || c.state == "cached") << c.state;
    }
    EXPECT_EQ(offset, r.size);
    reserved += r.size;
  }
  EXPECT_EQ(reserved, s.totals.reserved);
  EXPECT_GE(in_use, 1600000);
  EXPECT_EQ(s.totals.current, config::get_memory_info("CPU:0").current);
}

TEST_F(MemorySnapshotTest, ChunksNameTheOpThatAllocatedThemWhileRecording) {
  Tensor a = constant({{1.f, 2.f}, {3.f, 4.f}});
  trace::Recording recording;
  Tensor m = matmul(a, a);
  MemorySnapshot s = config::memory_snapshot("CPU:0");
  int named = 0;
  for (const MemoryRegion& r : s.regions) {
    for (const MemoryChunk& c : r.chunks) {
      if (c.op != "MatMul") continue;
      ++named;
      EXPECT_EQ(c.dtype, "float32");
      EXPECT_EQ(c.shape, "(2, 2)");
      EXPECT_GE(c.time_us, 0);
      EXPECT_EQ(c.state, "in_use");
    }
  }
  EXPECT_EQ(named, 1);
}

TEST_F(MemorySnapshotTest, JsonHasTheTotalsRegionsAndChunks) {
  Tensor a = constant({1.f, 2.f});
  MemorySnapshot s = config::memory_snapshot("CPU:0");
  std::optional<Json> json = parse_json(s.to_json());
  ASSERT_TRUE(json.has_value()) << s.to_json();
  EXPECT_EQ((*json)["device"].string, cpu(0));
  EXPECT_EQ((*json)["allocator"].string, "CPU_0_bfc");
  EXPECT_EQ((*json)["totals"]["current"].number, s.totals.current);
  EXPECT_EQ((*json)["totals"]["reserved"].number, s.totals.reserved);
  ASSERT_EQ((*json)["regions"].array.size(), s.regions.size());
  const Json& chunk = (*json)["regions"].array[0]["chunks"].array[0];
  EXPECT_EQ(chunk["size"].number, s.regions[0].chunks[0].size);
  EXPECT_EQ(chunk["state"].string, s.regions[0].chunks[0].state);
  EXPECT_TRUE(chunk.has("op") && chunk.has("dtype") && chunk.has("shape") && chunk.has("time_us"));
}

TEST_F(MemorySnapshotTest, OutOfMemoryKeepsTheFailingPoolsSnapshot) {
  split_cpu(2, /*limit_mb=*/4);
  EXPECT_FALSE(config::last_oom_snapshot("CPU:1").has_value());
  DeviceScope scope("/CPU:1");
  Tensor a = constant(std::vector<float>(300000, 1.f), {300000});  // 1.2 MB
  Tensor b = constant(std::vector<float>(300000, 1.f), {300000});
  Error e = expect_error([] { constant(std::vector<float>(600000, 1.f), {600000}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted);
  std::optional<MemorySnapshot> s = config::last_oom_snapshot("CPU:1");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->device, cpu(1));
  EXPECT_GE(s->totals.current, 2400000);
  EXPECT_FALSE(s->regions.empty());
  EXPECT_FALSE(config::last_oom_snapshot("CPU:0").has_value());
}

TEST_F(MemorySnapshotTest, UnknownDeviceIsNotFound) {
  Error e = expect_error([] { config::memory_snapshot("GPU:7"); });
  EXPECT_EQ(e.code(), absl::StatusCode::kNotFound);
  Error o = expect_error([] { config::last_oom_snapshot("CPU:9"); });
  EXPECT_EQ(o.code(), absl::StatusCode::kNotFound);
}

TEST_F(MemorySnapshotTest, MalformedDeviceIsInvalidArgument) {
  Error e = expect_error([] { config::memory_snapshot("/device:CPU:x"); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mt::testing
