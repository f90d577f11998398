// Recording while several threads run ops on two logical CPUs, the recording started,
// stopped, written and snapshotted meanwhile by another thread. ThreadSanitizer runs this
// file.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runtime/trace/trace.h"
#include "tests/runtime/json_test_util.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

using TraceStressTest = RuntimeTest;

// Returns the number of op events in `json`, or -1 when it does not parse.
int count_ops(const std::string& json) {
  std::optional<Json> trace = parse_json(json);
  if (!trace.has_value()) return -1;
  int ops = 0;
  for (const Json& e : (*trace)["traceEvents"].array) ops += e["cat"].string == "op";
  return ops;
}

TEST_F(TraceStressTest, ThreadsRecordWhileTheRecordingStartsStopsAndIsRead) {
  split_cpu(2);
  constexpr int kUsers = 4, kRounds = 12;
  std::atomic<bool> done{false};
  std::vector<int> failures(kUsers, 0);
  std::vector<std::thread> users;
  for (int u = 0; u < kUsers; ++u) {
    users.emplace_back([u, &done, &failures] {
      Tensor a = constant({1.f, 2.f});  // on CPU:0; ops on CPU:1 copy it
      DeviceScope scope(u % 2 == 0 ? "/CPU:0" : "/CPU:1");
      while (!done.load()) {
        Tensor c = add(a, a);
        failures[u] += c.to_vector<float>() != std::vector<float>{2.f, 4.f};
        std::this_thread::sleep_for(std::chrono::microseconds(20));  // keeps recordings small
      }
    });
  }
  int recorded_ops = 0;
  for (int round = 0; round < kRounds; ++round) {
    trace::start();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_GE(count_ops(trace::to_json()), 0) << "the running recording's JSON does not parse";
    MemorySnapshot snapshot = config::memory_snapshot("CPU:1");
    EXPECT_EQ(snapshot.allocator, "CPU_1_bfc");
    trace::stop();
    const int ops = count_ops(trace::to_json());
    EXPECT_GE(ops, 0) << "the stopped recording's JSON does not parse";
    recorded_ops += ops;
  }
  done.store(true);
  for (std::thread& t : users) t.join();
  for (int u = 0; u < kUsers; ++u) EXPECT_EQ(failures[u], 0) << "user thread " << u;
  EXPECT_GT(recorded_ops, 0);
}

}  // namespace
}  // namespace mt::testing
