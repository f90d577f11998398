// Enqueued remote ops (Note [Asynchronous remote ops] in distributed/task_client.h): order,
// errors reported at the next synchronisation, and large tensors sent in pieces.
#include <cstring>

#include "gmock/gmock.h"
#include "tests/distributed/distributed_fixture.h"

namespace mt {
namespace {

using testing::expect_error;
using ::testing::HasSubstr;

class AsyncOpsTest : public testing::DistributedTest {};

// Returns `n` int32 values in [-2^29, 2^29) whose bytes differ from piece to piece.
std::vector<int32_t> pattern(int64_t n) {
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; ++i) {
    v[i] = static_cast<int32_t>((static_cast<uint32_t>(i) * 2654435761u) >> 2) - (1 << 29);
  }
  return v;
}

TEST_F(AsyncOpsTest, RunsEnqueuedOpsInOrder) {
  DeviceScope scope(worker_cpu(0));
  Tensor x = constant({0.f, 1.f});
  Tensor one = constant({1.f, 1.f});
  for (int i = 0; i < 300; ++i) x = x + one;  // each op frees the previous x
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{300.f, 301.f}));
}

TEST_F(AsyncOpsTest, ReportsARemoteErrorAtTheNextSyncWithTheOpsName) {
  Tensor x;
  {
    DeviceScope scope(worker_cpu(0));
    x = constant({2.f});
  }
  // Shape inference passes here; only the task finds it cannot allocate 512 TiB, more than
  // an x86-64 process can address, so it fails even where the kernel overcommits memory (a
  // 4 TiB request succeeded on a machine with vm.overcommit_memory=1, and Fill ran on).
  Error e = expect_error([&] {
    DeviceScope scope(worker_cpu(0));
    Tensor huge = zeros({int64_t{1} << 47});
    (x + x).to_vector<float>();
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted) << e.what();
  EXPECT_THAT(e.what(), HasSubstr("[Fill] task /job:worker/replica:0/task:0 at " + address(0)));
  // Reported once; the task's tensors from before are intact and new ops run.
  DeviceScope scope(worker_cpu(0));
  EXPECT_EQ((x + x).to_vector<float>(), std::vector<float>{4.f});
}

TEST_F(AsyncOpsTest, RoundTripsLargeTensorsBitExact) {
  const int64_t n = (int64_t{5} << 20) / 4 + 3;  // 5 MiB and 12 bytes: two pieces
  std::vector<int32_t> values = pattern(n);
  Tensor local = constant(values, {n});
  int64_t before = config::get_memory_info(worker_cpu(1)).current;
  Tensor on0, on1, sum;
  {
    DeviceScope scope(worker_cpu(0));
    on0 = identity(local);  // uploaded in pieces
  }
  {
    DeviceScope scope(worker_cpu(1));
    on1 = identity(on0);  // task 0 -> client -> task 1
    sum = on1 + local;    // `local` goes up as a temporary, freed after the op
  }
  EXPECT_EQ(on0.to_vector<int32_t>(), values);
  EXPECT_EQ(on1.to_vector<int32_t>(), values);
  std::vector<int32_t> doubled = sum.to_vector<int32_t>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(doubled[i], values[i] * 2) << i;
  on1 = Tensor();
  sum = Tensor();
  EXPECT_EQ(config::get_memory_info(worker_cpu(1)).current, before);  // the temporary too
}

}  // namespace
}  // namespace mt
