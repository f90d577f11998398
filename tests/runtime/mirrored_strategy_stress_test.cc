// MirroredStrategy under ThreadSanitizer (the concurrency label): four replicas on four
// logical CPUs meet at the merge point hundreds of times (all_reduce, optimizer steps with
// slots created on the way), with a replica failing now and then; the copies stay equal
// and every result is the one a single thread computes.
#include <optional>

#include "gmock/gmock.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

using distribute::MirroredStrategy;
using distribute::ReduceOp;
using distribute::ReplicaContext;

class MirroredStrategyStressTest : public RuntimeTest {};

TEST_F(MirroredStrategyStressTest, ManyStepsWithFailuresKeepTheCopiesEqual) {
  split_cpu(4);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1", "/CPU:2", "/CPU:3"});
  std::optional<Variable> v;
  {
    auto scope = strategy.scope();
    v.emplace(constant({0.f, 0.f, 0.f}), true, "v");
  }
  optimizers::SGD sgd(0.5, /*momentum=*/0.5);
  int steps = 0;
  for (int i = 0; i < 60; ++i) {
    const bool fail = i % 7 == 3;
    try {
      strategy.run([&](ReplicaContext& ctx) {
        const int r = ctx.replica_id_in_sync_group();
        Tensor s = ctx.all_reduce(ReduceOp::kSum, constant({1.f, static_cast<float>(r), 2.f}));
        EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{4, 6, 8}));
        if (fail && r == 2) throw Error(absl::StatusCode::kAborted, "replica 2 gave up");
        sgd.apply_gradients({{constant({0.25f, 0.25f, 0.25f}), *v}});
      });
      EXPECT_FALSE(fail);
      ++steps;
    } catch (const Error& e) {
      EXPECT_TRUE(fail);
      EXPECT_EQ(e.code(), absl::StatusCode::kAborted);
    }
  }
  EXPECT_EQ(sgd.iterations(), steps);
  // The reference: the same steps with the summed gradient (4 x 0.25) on one thread.
  Variable one(constant({0.f, 0.f, 0.f}));
  optimizers::SGD reference(0.5, 0.5);
  for (int i = 0; i < steps; ++i) reference.apply_gradients({{constant({1.f, 1.f, 1.f}), one}});
  std::vector<Tensor> copies = strategy.run([&](ReplicaContext&) { return v->read_value(); });
  for (const Tensor& copy : copies) {
    EXPECT_EQ(copy.to_vector<float>(), one.read_value().to_vector<float>());
  }
}

}  // namespace
}  // namespace mt::testing
