// mt::Function inside MirroredStrategy::run on logical CPUs (Note [Replicas in a function]):
// each replica traces once and replays its own recording, meeting the others at every
// all_reduce and optimizer step; a training step replayed equals the eager strategy's bit
// for bit; run() inside a function's trace runs eagerly after a warning instead of
// replaying what its replicas did at the trace.
#include <cmath>
#include <optional>

#include "gmock/gmock.h"
#include "runtime/function/function.h"
#include "tests/runtime/function_checks.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

using distribute::MirroredStrategy;
using distribute::ReduceOp;
using distribute::ReplicaContext;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FunctionStrategyTest : public RuntimeTest {};

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

TEST_F(FunctionStrategyTest, ATrainingStepReplaysPerReplicaAndEqualsTheEagerStrategyBitForBit) {
  split_cpu(2);
  EXPECT_EQ(check_replica_training_replay({"/CPU:0", "/CPU:1"}, 6), "steps");
}

TEST_F(FunctionStrategyTest, AllReduceInsideAFunctionMeetsTheOtherReplicasAtEveryReplay) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  Function f(
      [](absl::Span<const Tensor> args) -> std::vector<Tensor> {
        ReplicaContext* ctx = distribute::get_replica_context();
        Tensor summed = ctx->all_reduce(ReduceOp::kSum, mul(args[0], constant(2.f)));
        return {add(summed, args[0])};
      },
      "all_reduce_step");
  for (int call = 0; call < 3; ++call) {
    std::vector<Tensor> out = strategy.run([&](ReplicaContext& ctx) {
      const float r = static_cast<float>(ctx.replica_id_in_sync_group());
      return f({constant({r + call, 10 * r})})[0];
    });
    // 2 * (call + (1 + call)) + own value, and 2 * (0 + 10) + own value.
    EXPECT_THAT(values(out[0]), ElementsAre(4 * call + 2 + call, 20)) << call;
    EXPECT_THAT(values(out[1]), ElementsAre(4 * call + 2 + 1 + call, 30)) << call;
    EXPECT_EQ(out[1].device(), cpu(1));
  }
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_EQ(f.replay_kind(), "steps");
}

TEST_F(FunctionStrategyTest, AReplicasErrorAtAReplayReachesTheCallerAndTheOthersStop) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  Function f(
      [](absl::Span<const Tensor> args) -> std::vector<Tensor> {
        return {distribute::get_replica_context()->all_reduce(ReduceOp::kSum, args[0])};
      },
      "all_reduce");
  strategy.run([&](ReplicaContext&) { f({constant({1.f, 2.f})}); });
  // Replica 1 retraces with another shape; the all-reduce refuses the mismatch, nothing hangs.
  Error e = expect_error([&] {
    strategy.run([&](ReplicaContext& ctx) {
      f({ctx.replica_id_in_sync_group() == 0 ? constant({1.f, 2.f}) : constant({1.f})});
    });
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("every replica must reduce"));
  std::vector<Tensor> again = strategy.run([&](ReplicaContext&) {
    return f({constant({3.f, 4.f})})[0];
  });
  EXPECT_THAT(values(again[1]), ElementsAre(6, 8));
}

TEST_F(FunctionStrategyTest, RunInsideAFunctionsTraceRunsEagerlyAfterAWarning) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  Function outer(
      [&](absl::Span<const Tensor> args) -> std::vector<Tensor> {
        std::vector<Tensor> doubled =
            strategy.run([&](ReplicaContext&) { return mul(args[0], constant(2.f)); });
        return {strategy.reduce(ReduceOp::kSum, doubled)};
      },
      "outer");
  EXPECT_THAT(values(outer({constant({1.f})})[0]), ElementsAre(4));
  EXPECT_THAT(log(), Contains(AllOf(HasSubstr("WARNING:minitensor:function 'outer' cannot replay"),
                                    HasSubstr("[MirroredStrategy.run]"))));
  // Not the trace's numbers again: the body runs at every call.
  EXPECT_THAT(values(outer({constant({5.f})})[0]), ElementsAre(20));
  EXPECT_EQ(outer.replay_kind(), "eager");
}

// A value read before the optimizer's merge and returned after it is the value from before
// the update at every replay, as in the eager step, though the merge moves the variable.
TEST_F(FunctionStrategyTest, AReadBeforeTheMergeKeepsItsValueAfterIt) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  std::optional<Variable> w;
  {
    auto scope = strategy.scope();
    w.emplace(constant({1.f, 2.f}));
  }
  optimizers::SGD sgd(0.5);
  auto body = [&](absl::Span<const Tensor> args) -> std::vector<Tensor> {
    Tensor before = w->read_value();
    sgd.apply_gradients({{args[0], *w}});
    return {before, w->read_value()};
  };
  Function f(body, "step");
  std::vector<std::vector<float>> got;
  for (int call = 0; call < 3; ++call) {
    std::vector<std::vector<Tensor>> out = strategy.run([&](ReplicaContext&) {
      return f({constant({1.f, 1.f})});
    });
    got.push_back(values(out[1][0]));
    got.push_back(values(out[1][1]));
  }
  // Each replica's gradient is 1: the sum 2 times 0.5 comes off each step.
  EXPECT_EQ(got,
            (std::vector<std::vector<float>>{{1, 2}, {0, 1}, {0, 1}, {-1, 0}, {-1, 0}, {-2, -1}}));
  EXPECT_EQ(f.tracing_count(), 2);
}

// A function traced under one strategy and called inside another's run() traces again for
// it: its merges meet the replicas of the strategy that calls it, even once the first is
// gone.
TEST_F(FunctionStrategyTest, AnotherStrategysRunTracesAgain) {
  split_cpu(2);
  Function f(
      [](absl::Span<const Tensor> args) -> std::vector<Tensor> {
        return {distribute::get_replica_context()->all_reduce(ReduceOp::kSum, args[0])};
      },
      "all_reduce");
  {
    MirroredStrategy first({"/CPU:0", "/CPU:1"});
    first.run([&](ReplicaContext&) { f({constant({1.f})}); });
    first.run([&](ReplicaContext&) { f({constant({1.f})}); });
  }
  EXPECT_EQ(f.tracing_count(), 2);
  MirroredStrategy second({"/CPU:0", "/CPU:1"});
  for (int call = 0; call < 2; ++call) {
    std::vector<Tensor> out =
        second.run([&](ReplicaContext&) { return f({constant({2.f + call})})[0]; });
    EXPECT_THAT(values(out[0]), ElementsAre(4 + 2 * call));
  }
  EXPECT_EQ(f.tracing_count(), 4);
}

}  // namespace
}  // namespace mt::testing
