// mt::Function on logical CPUs: tracing once per signature, replays equal to the eager body
// bit for bit (random op chains over the op table, a training step), variables, host
// values, errors, and what a replay allocates.
#include <atomic>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "runtime/eager/context.h"
#include "runtime/function/function_cache.h"
#include "tests/runtime/function_checks.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

using ::testing::HasSubstr;

class FunctionTest : public RuntimeTest {};

int64_t cpu_allocations() {
  internal::Runtime* rt = internal::value_or_throw(internal::Context::get().runtime());
  return rt->device(0).allocator().stats().num_allocs;
}

TEST_F(FunctionTest, TracesOncePerSignatureAndReplaysAfter) {
  int calls = 0;
  Function f([&](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    ++calls;  // a side effect of the body: at traces only
    return {add(mul(a[0], a[0]), ones_like(a[0]))};
  });
  EXPECT_EQ(f.replay_kind(), "");
  EXPECT_EQ(f({constant({1.f, 2.f})})[0].to_vector<float>(), (std::vector<float>{2, 5}));
  EXPECT_EQ(f({constant({3.f, 4.f})})[0].to_vector<float>(), (std::vector<float>{10, 17}));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(f.replay_kind(), "steps");
  f({constant({1.f, 2.f, 3.f})});  // a new shape
  f({constant({1.0, 2.0})});       // a new dtype
  EXPECT_EQ(f.tracing_count(), 3);
  EXPECT_EQ(f({constant({5.f, 6.f})})[0].to_vector<float>(), (std::vector<float>{26, 37}));
  EXPECT_EQ(calls, 3);
}

TEST_F(FunctionTest, RandomChainsReplayAsTheirBodyRunsEagerly) {
  EXPECT_GT(check_chains_replay(cpu(0), 150, 1), 800);  // results compared
}

TEST_F(FunctionTest, ChainsAcrossLogicalCpusReplayAsFlatSteps) {
  split_cpu(2);
  EXPECT_GT(check_chains_replay(cpu(1), 40, 500, /*leaf_device=*/cpu(0)), 200);
}

TEST_F(FunctionTest, TrainingStepReplaysAsEagerTraining) {
  EXPECT_EQ(check_training_replay(cpu(0), 5), "steps");
}

TEST_F(FunctionTest, ReplayAllocatesOnlyItsOutputs) {
  Function f([](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    Tensor x = a[0];
    for (int i = 0; i < 50; ++i) x = add(x, a[0]);
    return {x, reduce_sum(x)};
  });
  const Tensor x = constant({1.f, 2.f, 3.f});
  f({x});
  const int64_t before = cpu_allocations();
  const std::vector<Tensor> out = f({x});
  EXPECT_EQ(cpu_allocations() - before, 2);  // the two outputs
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{306}));
  EXPECT_GT(f.arena_bytes(), 0);
}

// A trace frees what its body drops, as an eager call does: 40 temporaries of 1 MiB made
// one after another peak at a few MiB, not 40 (the recorder names its values by weak
// references: Note [Values in a recording]).
TEST_F(FunctionTest, ATraceFreesTheTemporariesItsBodyDrops) {
  Function f([](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    Tensor x = a[0];
    for (int i = 0; i < 40; ++i) x = add(x, a[0]);
    return {reduce_sum(x)};
  });
  const Tensor x = fill({1 << 18}, 1.0f);  // 1 MiB
  config::reset_memory_stats("CPU:0");
  const int64_t before = config::get_memory_info("CPU:0").current;
  EXPECT_EQ(f({x})[0].to_vector<float>(), (std::vector<float>{41 << 18}));
  const int64_t peak = config::get_memory_info("CPU:0").peak - before;
  EXPECT_LT(peak, int64_t{6} << 20) << "the trace held its temporaries";
  // The replay gives the same, from an arena the size of two of them (their lifetimes
  // overlap pairwise).
  EXPECT_EQ(f({x})[0].to_vector<float>(), (std::vector<float>{41 << 18}));
  EXPECT_LE(f.arena_bytes(), int64_t{3} << 20);
}

TEST_F(FunctionTest, TheArenaIsNamedForItsFunctionInMemorySnapshots) {
  auto arenas = [] {
    std::vector<int64_t> sizes;
    for (const MemoryRegion& r : config::memory_snapshot("CPU:0").regions) {
      for (const MemoryChunk& c : r.chunks) {
        if (c.op == "function 'chain'") sizes.push_back(c.size);
      }
    }
    return sizes;
  };
  {
    Function f(
        [](absl::Span<const Tensor> a) -> std::vector<Tensor> {
          return {mul(add(a[0], a[0]), a[0])};
        },
        "chain");
    f({constant({1.f, 2.f, 3.f})});
    const std::vector<int64_t> sizes = arenas();
    ASSERT_EQ(sizes.size(), 1u);
    EXPECT_GE(sizes[0], f.arena_bytes());
  }
  EXPECT_TRUE(arenas().empty());  // gone with its function
}

TEST_F(FunctionTest, OutputsOutliveTheNextReplay) {
  Function f([](absl::Span<const Tensor> a) -> std::vector<Tensor> { return {mul(a[0], a[0])}; });
  f({constant(1.f)});
  const Tensor first = f({constant(2.f)})[0];
  const Tensor second = f({constant(3.f)})[0];
  EXPECT_EQ(first.to_vector<float>(), (std::vector<float>{4}));
  EXPECT_EQ(second.to_vector<float>(), (std::vector<float>{9}));
}

// A flat step writes its output straight into the tensor returned (Note [Function
// replay]): an output a later step reads, and one returned twice, are still right, and
// each call's outputs are its own.
TEST_F(FunctionTest, OutputsWrittenInPlaceAreReadByLaterStepsAndOutliveTheNextReplay) {
  Function f([](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    const Tensor y = mul(a[0], a[0]);
    return {y, add(y, a[0]), y};
  });
  f({constant({1.f, 2.f})});
  const std::vector<Tensor> first = f({constant({2.f, 3.f})});
  const std::vector<Tensor> second = f({constant({4.f, 5.f})});
  EXPECT_EQ(first[0].to_vector<float>(), (std::vector<float>{4, 9}));
  EXPECT_EQ(first[1].to_vector<float>(), (std::vector<float>{6, 12}));
  EXPECT_EQ(first[2].to_vector<float>(), (std::vector<float>{4, 9}));
  EXPECT_EQ(second[0].to_vector<float>(), (std::vector<float>{16, 25}));
  EXPECT_EQ(second[1].to_vector<float>(), (std::vector<float>{20, 30}));
  EXPECT_EQ(second[2].to_vector<float>(), (std::vector<float>{16, 25}));
}

TEST_F(FunctionTest, VariablesAreReadAndWrittenAtEveryReplay) {
  Variable v(constant(1.f));
  Function f([&](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    v.assign_add(a[0]);
    return {v.read_value()};
  });
  EXPECT_EQ(f({constant(2.f)})[0].to_vector<float>(), (std::vector<float>{3}));
  EXPECT_EQ(f({constant(2.f)})[0].to_vector<float>(), (std::vector<float>{5}));
  v.assign(constant(10.f));  // from outside, between calls
  EXPECT_EQ(f({constant(1.f)})[0].to_vector<float>(), (std::vector<float>{11}));
  EXPECT_EQ(v.read_value().to_vector<float>(), (std::vector<float>{11}));
}

// Note [Variables moved during a trace]: a value read before an assignment keeps the old
// value, in the replay as eagerly.
TEST_F(FunctionTest, AValueReadBeforeAnAssignmentKeepsTheOldValue) {
  Variable v(constant(1.f));
  Function f([&](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    const Tensor before = v.read_value();
    v.assign(add(before, a[0]));
    v.assign_add(a[0]);
    return {before, v.read_value()};
  });
  std::vector<Tensor> out = f({constant(1.f)});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{3}));
  out = f({constant(1.f)});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{3}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{5}));
  const Tensor held = v.read_value();  // a read held outside: the replay must not write it
  f({constant(1.f)});
  EXPECT_EQ(held.to_vector<float>(), (std::vector<float>{5}));
  EXPECT_EQ(v.read_value().to_vector<float>(), (std::vector<float>{7}));
}

TEST_F(FunctionTest, ASchedulesLearningRateIsReadAtEveryReplay) {
  Variable eager_w(constant({1.f, -2.f})), traced_w(constant({1.f, -2.f}));
  auto schedule = [](int64_t step) { return 0.5 / (1 + step); };
  optimizers::SGD eager_sgd(schedule, 0.9), traced_sgd(schedule, 0.9);
  Function f([&](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    traced_sgd.apply_gradients({{a[0], traced_w}});
    return {};
  });
  for (int i = 0; i < 4; ++i) {
    const Tensor g = constant({0.5f * i, 1.f});
    eager_sgd.apply_gradients({{g, eager_w}});
    f({g});
  }
  EXPECT_EQ(traced_sgd.iterations(), 4);
  EXPECT_EQ(traced_w.read_value().to_vector<float>(), eager_w.read_value().to_vector<float>());
}

// optimizer.set_learning_rate between calls (Keras's `optimizer.learning_rate = x`): the
// replays of a function traced before the change use the new rate, as eager steps do.
TEST_F(FunctionTest, ASetLearningRateReachesLaterReplays) {
  Variable eager_w(constant({1.f, -2.f})), traced_w(constant({1.f, -2.f}));
  Variable fixed_w(constant({1.f, -2.f}));  // at 0.1 throughout: the rates must matter
  optimizers::Adam eager_adam(0.1), traced_adam(0.1), fixed_adam(0.1);
  Function f([&](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    traced_adam.apply_gradients({{a[0], traced_w}});
    return {};
  });
  const double rates[] = {0.1, 0.5, 0.01};
  for (int i = 0; i < 6; ++i) {
    const Tensor g = constant({0.5f * i - 1, 1.f});
    eager_adam.set_learning_rate(rates[i / 2]);
    traced_adam.set_learning_rate(rates[i / 2]);
    eager_adam.apply_gradients({{g, eager_w}});
    fixed_adam.apply_gradients({{g, fixed_w}});
    f({g});
  }
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_NE(fixed_w.read_value().to_vector<float>(), eager_w.read_value().to_vector<float>());
  EXPECT_EQ(traced_adam.learning_rate(), 0.01);
  EXPECT_EQ(traced_w.read_value().to_vector<float>(), eager_w.read_value().to_vector<float>());
}

TEST_F(FunctionTest, ErrorsComeFromTheCallWithTheOpsName) {
  Function f(
      [](absl::Span<const Tensor> a) -> std::vector<Tensor> { return {matmul(a[0], a[1])}; });
  const Error e = expect_error([&] { f({ones({2, 3}), ones({2, 3})}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("MatMul"));
  EXPECT_EQ(f({ones({2, 3}), ones({3, 1})})[0].to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(f.tracing_count(), 2);  // the failed trace kept nothing
}

TEST_F(FunctionTest, AnEmptyArgumentIsInvalidAndTracesNothing) {
  Function f([](absl::Span<const Tensor> a) -> std::vector<Tensor> { return {a[0]}; });
  const Error e = expect_error([&] { f({constant(1.f), Tensor()}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "[function] argument 1 is an empty tensor");
  EXPECT_EQ(f.tracing_count(), 0);
}

TEST_F(FunctionTest, ARandomOpMakesTheSignatureRunEagerly) {
  int calls = 0;
  Function f([&](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    ++calls;
    return {add(a[0], random::uniform({2}))};
  });
  const std::vector<float> first = f({zeros({2})})[0].to_vector<float>();
  const std::vector<float> second = f({zeros({2})})[0].to_vector<float>();
  EXPECT_NE(first, second);  // fresh numbers at every call
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(f.replay_kind(), "eager");
  EXPECT_THAT(log(), ::testing::Contains(HasSubstr("cannot replay this signature")));
}

// FunctionCache::replay, the fast path of Python's calls: outputs only for a traced,
// replayable signature; nothing else (no trace, no body) otherwise.
TEST_F(FunctionTest, ReplayWithoutABodyRunsTracedSignaturesOnly) {
  internal::FunctionCache cache("f");
  int calls = 0;
  const internal::FunctionCache::Body body = [&](absl::Span<const Tensor> a) {
    ++calls;
    return std::vector<Tensor>{add(a[0], a[0])};
  };
  const Tensor x = constant({1.f, 2.f});
  EXPECT_FALSE(cache.replay({x}, "key").has_value());  // not traced: nothing runs
  EXPECT_EQ(cache.tracing_count(), 0);
  cache.call({x}, body, "key");
  EXPECT_FALSE(cache.replay({x}, "other key").has_value());
  EXPECT_FALSE(cache.replay({constant({1.0, 2.0})}, "key").has_value());  // a new dtype
  std::optional<std::vector<Tensor>> out = cache.replay({constant({3.f, 4.f})}, "key");
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].to_vector<float>(), (std::vector<float>{6, 8}));
  EXPECT_EQ(cache.replay_count(), 1);
  EXPECT_EQ(calls, 1);
  config::run_functions_eagerly(true);
  EXPECT_FALSE(cache.replay({x}, "key").has_value());
  config::run_functions_eagerly(false);

  internal::FunctionCache eager("g");  // a random op: the signature runs its body
  const internal::FunctionCache::Body random_body = [&](absl::Span<const Tensor> a) {
    return std::vector<Tensor>{add(a[0], random::uniform({2}))};
  };
  eager.call({x}, random_body, "key");
  EXPECT_FALSE(eager.replay({x}, "key").has_value());
  EXPECT_EQ(eager.replay_count(), 0);
}

TEST_F(FunctionTest, RunFunctionsEagerlyTracesNothing) {
  config::run_functions_eagerly(true);
  int calls = 0;
  Function f([&](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    ++calls;
    return {neg(a[0])};
  });
  f({constant(1.f)});
  f({constant(1.f)});
  config::run_functions_eagerly(false);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(f.tracing_count(), 0);
}

TEST_F(FunctionTest, PlacementIsLoggedAtTheTraceAndFollowsTheScope) {
  split_cpu(2);
  debugging::set_log_device_placement(true);
  Function f([](absl::Span<const Tensor> a) -> std::vector<Tensor> { return {neg(a[0])}; });
  const Tensor x = constant(1.f);
  {
    DeviceScope scope(cpu(1));
    EXPECT_EQ(f({x})[0].device(), cpu(1));
    EXPECT_EQ(f({x})[0].device(), cpu(1));
  }
  EXPECT_EQ(f({x})[0].device(), cpu(0));  // another scope: another signature
  debugging::set_log_device_placement(false);
  EXPECT_EQ(f.tracing_count(), 2);
  int negs = 0;
  for (const std::string& line : log()) negs += line.find("op Neg") != std::string::npos;
  EXPECT_EQ(negs, 2);  // the traces' only
  // And the graph's placement, as TensorFlow logs a function's.
  EXPECT_THAT(
      log(), ::testing::IsSupersetOf(
                 {"args_0: (_Arg): " + cpu(0), "_Recv: (_Recv): " + cpu(1), "Neg: (Neg): " + cpu(1),
                  "identity_RetVal: (_Retval): " + cpu(1), "Neg: (Neg): " + cpu(0)}));
}

TEST_F(FunctionTest, AFunctionCalledInsideAnotherTracesAsPartOfIt) {
  Function inner(
      [](absl::Span<const Tensor> a) -> std::vector<Tensor> { return {add(a[0], a[0])}; });
  Function outer(
      [&](absl::Span<const Tensor> a) -> std::vector<Tensor> { return {mul(inner(a)[0], a[0])}; });
  outer({constant(2.f)});
  EXPECT_EQ(outer({constant(3.f)})[0].to_vector<float>(), (std::vector<float>{18}));
  EXPECT_EQ(inner.tracing_count(), 0);
}

}  // namespace
}  // namespace mt::testing
