// Ops large enough to be split across the intra-op pool, run from several user threads at
// once on two logical CPUs that share the pool (Note [One pool for all logical CPUs] in
// kernels/cpu/thread_pool.cc). Every result is checked; ThreadSanitizer runs this file.
#include <thread>
#include <vector>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using ParallelOpsStressTest = testing::RuntimeTest;

TEST_F(ParallelOpsStressTest, ThreadsSharingThePoolGetExactResults) {
  split_cpu(2);
  config::threading::set_intra_op_parallelism_threads(3);
  constexpr int kUsers = 4, kRounds = 6;
  constexpr int64_t kN = 100000;  // above every kernel's grain
  std::vector<std::thread> users;
  std::vector<int> failures(kUsers, 0);
  for (int u = 0; u < kUsers; ++u) {
    users.emplace_back([u, &failures] {
      DeviceScope scope(u % 2 == 0 ? "/CPU:0" : "/CPU:1");
      for (int round = 0; round < kRounds; ++round) {
        const float v = float(u + 1), w = float(round + 1);
        Tensor a = fill({kN}, v), b = fill({kN}, w);
        Tensor sum = reduce_sum(add_n({a, b, a}));                     // kN * (2v + w)
        Tensor prod = matmul(fill({64, 300}, v), fill({300, 70}, w));  // each 300 * v * w
        Tensor e = reduce_max(exp(cast(cast(a, DType::kInt32), DType::kFloat32)));
        failures[u] += sum.to_vector<float>()[0] != float(kN) * (2 * v + w);
        for (float x : prod.to_vector<float>()) failures[u] += x != 300 * v * w;
        failures[u] += e.to_vector<float>()[0] != std::exp(v);
      }
    });
  }
  for (std::thread& t : users) t.join();
  for (int u = 0; u < kUsers; ++u) EXPECT_EQ(failures[u], 0) << "user thread " << u;
}

}  // namespace
}  // namespace mt
