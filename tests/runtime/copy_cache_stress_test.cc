// Cached copies (runtime/cost/copy_cache.h) under threads: several threads run cost-placed ops on
// two logical CPUs over the same inputs, so that their copies race to become the inputs' cached
// copies and to be read, while another thread hands those inputs' buffers out (share_buffer, which
// drops their cached copies) and reads, assigns and reads again a variable of its own (its cached
// copy dropped before each write). ThreadSanitizer runs this file.
#include <atomic>
#include <thread>
#include <vector>

#include "runtime/cost/copy_cache.h"
#include "runtime/cost/cost_policy.h"
#include "runtime/eager/context.h"
#include "runtime/minitensor.h"
#include "tests/runtime/fake_cost_clock.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

using CopyCacheStressTest = RuntimeTest;

constexpr int64_t kN = 256;

TEST_F(CopyCacheStressTest, ThreadsShareCachedCopiesWhileAVariableIsWrittenAndBuffersHandedOut) {
  split_cpu(2);
  internal::Runtime* rt = internal::Context::get().runtime().value();
  FakeCostClock clock;
  internal::cost_policy(*rt).reset_for_testing(&clock);
  CostModel& model = internal::cost_policy(*rt).model();
  BusModel bus;
  bus.set(Link::kHostToHost, LinkCost{1000, 1});
  model.set_bus(bus);
  // AddV2 on two float32 inputs of kN elements: far cheaper on CPU:1, so it runs there.
  const int64_t bytes = 2 * kN * 4;
  const CostKey key{OpId::kAddV2, DType::kFloat32, footprint_bucket(bytes)};
  for (int i = 0; i < CostModel::kRefreshSamples; ++i) {
    model.record(key, 0, bytes, 1e6);
    model.record(key, 1, bytes, 100);
  }
  Variable v(constant(std::vector<float>(kN, 1.f), {kN}));  // on CPU:0
  std::vector<Tensor> shared_inputs;
  for (int i = 0; i < 8; ++i) {
    shared_inputs.push_back(constant(std::vector<float>(kN, static_cast<float>(i)), {kN}));
  }
  config::set_placement_policy(config::PlacementPolicy::kCost);

  constexpr int kUsers = 4, kRounds = 300;
  std::atomic<bool> writing{true};
  std::vector<int> failures(kUsers, 0);
  std::vector<std::thread> users;
  for (int u = 0; u < kUsers; ++u) {
    users.emplace_back([&, u] {
      for (int r = 0; r < kRounds; ++r) {
        const int i = (u + r) % 8;
        Tensor sum = add(shared_inputs[i], shared_inputs[(i + 1) % 8]);
        failures[u] += sum.device() != cpu(1) ||
                       sum.to_vector<float>() != std::vector<float>(kN, 2.f * i + 1 - 8 * (i == 7));
      }
    });
  }
  int writer_failures = 0;
  std::thread writer([&] {
    for (int r = 0; writing.load(); ++r) {
      const float value = static_cast<float>(1 + r % 2);
      v.assign(constant(std::vector<float>(kN, value), {kN}));
      // Read on CPU:1, which cached copies the variable's buffer; the next assignment drops it.
      writer_failures += add(v.read_value(), shared_inputs[0]).to_vector<float>()[0] != value;
      if (r % 50 == 0) internal::share_buffer(*shared_inputs[r / 50 % 8].impl());
    }
  });
  for (std::thread& t : users) t.join();
  writing.store(false);
  writer.join();
  config::set_placement_policy(config::PlacementPolicy::kPriority);
  for (int u = 0; u < kUsers; ++u) EXPECT_EQ(failures[u], 0) << "user thread " << u;
  EXPECT_EQ(writer_failures, 0);
}

}  // namespace
}  // namespace mt::testing
