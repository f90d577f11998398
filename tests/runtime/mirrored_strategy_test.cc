// MirroredStrategy on logical CPUs (ReductionToOneDevice): devices and the INFO line,
// mirrored variables and their log lines, run() on one thread per replica, all_reduce,
// reduce, apply_gradients across replicas, data parallelism equal to one big batch, and
// every bad input as a clear error with nothing hung and nothing left in the pools.
#include <cmath>
#include <optional>
#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

using distribute::CrossDeviceOptions;
using distribute::MirroredStrategy;
using distribute::ReduceOp;
using distribute::ReplicaContext;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class MirroredStrategyTest : public RuntimeTest {};

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

TEST_F(MirroredStrategyTest, DefaultsToTheCpuWithoutGpusAndLogsItsDevices) {
  MirroredStrategy strategy;
  EXPECT_EQ(strategy.num_replicas_in_sync(), 1);
  EXPECT_THAT(strategy.devices(), ElementsAre(cpu(0)));
  EXPECT_STREQ(strategy.cross_device_ops_name(), "ReductionToOneDevice");
  EXPECT_THAT(log(), ElementsAre("INFO:minitensor:Using MirroredStrategy with devices "
                                 "('/job:localhost/replica:0/task:0/device:CPU:0',)"));
}

TEST_F(MirroredStrategyTest, ScopeMirrorsVariablesOnEveryDeviceFromReplicaZero) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  debugging::set_log_device_placement(true);
  std::optional<Variable> w;
  {
    auto scope = strategy.scope();
    w.emplace(constant({1.f, 2.f}), true, "w");
  }
  debugging::set_log_device_placement(false);
  EXPECT_THAT(log(), ElementsAre(HasSubstr("Using MirroredStrategy with devices ('" + cpu(0) +
                                           "', '" + cpu(1) + "')"),
                                 "Executing op _EagerConst in device " + cpu(0),
                                 "Executing op VarHandleOp in device " + cpu(0),
                                 "Executing op AssignVariableOp in device " + cpu(0),
                                 "Executing op VarHandleOp in device " + cpu(1),
                                 "Executing op AssignVariableOp in device " + cpu(1)));
  std::vector<Tensor> reads = strategy.run([&](ReplicaContext&) { return w->read_value(); });
  EXPECT_EQ(reads[0].device(), cpu(0));
  EXPECT_EQ(reads[1].device(), cpu(1));
  EXPECT_THAT(values(reads[1]), ElementsAre(1, 2));
  EXPECT_EQ(w->device(), cpu(0));  // outside run(): replica 0's copy
}

TEST_F(MirroredStrategyTest, RunCallsEachReplicaOnItsOwnThreadUnderItsDevice) {
  split_cpu(3);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1", "/CPU:2"});
  std::vector<std::thread::id> threads(3);
  std::vector<Tensor> made = strategy.run([&](ReplicaContext& ctx) {
    threads[ctx.replica_id_in_sync_group()] = std::this_thread::get_id();
    EXPECT_EQ(distribute::get_replica_context(), &ctx);
    EXPECT_EQ(ctx.num_replicas_in_sync(), 3);
    return constant({static_cast<float>(ctx.replica_id_in_sync_group())});
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(made[r].device(), cpu(r));
  EXPECT_EQ(std::set<std::thread::id>(threads.begin(), threads.end()).size(), 3u);
  EXPECT_EQ(threads[0] == std::this_thread::get_id(), false);
  EXPECT_EQ(distribute::get_replica_context(), nullptr);
}

TEST_F(MirroredStrategyTest, AllReduceSumsOrAveragesOntoEveryReplicasDevice) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean}) {
    std::vector<Tensor> out = strategy.run([&](ReplicaContext& ctx) {
      const float r = static_cast<float>(ctx.replica_id_in_sync_group());
      return ctx.all_reduce(op, constant({1 + r, 10 * r}));
    });
    const float scale = op == ReduceOp::kSum ? 1.f : 0.5f;
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(out[r].device(), cpu(r));
      EXPECT_THAT(values(out[r]), ElementsAre(3 * scale, 10 * scale));
    }
  }
}

TEST_F(MirroredStrategyTest, ReduceCombinesPerReplicaValuesAlongAnAxis) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  std::vector<Tensor> parts = {constant({1.f, 2.f, 3.f}), constant({4.f, 6.f})};
  EXPECT_THAT(values(strategy.reduce(ReduceOp::kSum, parts, 0)), ElementsAre(16));
  EXPECT_THAT(values(strategy.reduce(ReduceOp::kMean, parts, 0)), ElementsAre(16.f / 5));
  std::vector<Tensor> same = {constant({1.f, 2.f}), constant({3.f, 6.f})};
  EXPECT_THAT(values(strategy.reduce(ReduceOp::kMean, same)), ElementsAre(2, 4));
  expect([&] { strategy.reduce(ReduceOp::kSum, {constant(1.f)}); },
         absl::StatusCode::kInvalidArgument,
         "[MirroredStrategy.reduce] got 1 values for 2 replicas");
}

TEST_F(MirroredStrategyTest, AssignOutsideRunWritesEveryCopy) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  std::optional<Variable> v;
  {
    auto scope = strategy.scope();
    v.emplace(constant({0.f, 0.f}));
  }
  v->assign(constant({5.f, 6.f}));
  v->assign_add(constant({1.f, 1.f}));
  std::vector<Tensor> reads = strategy.run([&](ReplicaContext&) { return v->read_value(); });
  EXPECT_THAT(values(reads[0]), ElementsAre(6, 7));
  EXPECT_THAT(values(reads[1]), ElementsAre(6, 7));
}

TEST_F(MirroredStrategyTest, ApplyGradientsSumsTheReplicasGradientsIntoEveryCopy) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  std::optional<Variable> v;
  {
    auto scope = strategy.scope();
    v.emplace(constant({0.f, 0.f}), true, "v");
  }
  optimizers::SGD sgd(1.0);
  strategy.run([&](ReplicaContext& ctx) {
    const float r = static_cast<float>(ctx.replica_id_in_sync_group());
    sgd.apply_gradients({{constant({1 + r, 10 * r}), *v}});
  });
  EXPECT_EQ(sgd.iterations(), 1);
  std::vector<Tensor> copies = strategy.run([&](ReplicaContext&) { return v->read_value(); });
  EXPECT_EQ(copies[1].device(), cpu(1));
  EXPECT_THAT(values(copies[0]), ElementsAre(-3, -10));
  EXPECT_THAT(values(copies[1]), ElementsAre(-3, -10));
}

// A two-layer model's loss over rows [begin, end) of the batch, divided by the whole
// batch's size, so that the replicas' summed gradients are the one-device mean's.
Tensor shard_loss(const std::vector<float>& x, const std::vector<float>& y, int begin, int end,
                  int batch, Variable& w1, Variable& w2) {
  const int n = end - begin;
  Tensor xs = constant(std::vector<float>(x.begin() + 3 * begin, x.begin() + 3 * end), {n, 3});
  Tensor ys = constant(std::vector<float>(y.begin() + begin, y.begin() + end), {n, 1});
  Tensor out = matmul(relu(matmul(xs, w1)), w2);
  return div(reduce_sum(square(sub(out, ys))), constant(static_cast<float>(batch)));
}

TEST_F(MirroredStrategyTest, TwoReplicasTrainAsOneDeviceWithTheWholeBatch) {
  split_cpu(2);
  const int batch = 8;
  std::vector<float> x, y;
  for (int i = 0; i < batch; ++i) {
    for (int j = 0; j < 3; ++j) x.push_back(std::sin(static_cast<float>(i * 3 + j)));
    y.push_back(std::cos(static_cast<float>(i)));
  }
  Tensor w1_init = random::normal({3, 4}, 0, 1, DType::kFloat32, 1);
  Tensor w2_init = random::normal({4, 1}, 0, 1, DType::kFloat32, 2);

  Variable w1(w1_init), w2(w2_init);  // one device, the whole batch
  optimizers::Adam adam(0.05);
  for (int step = 0; step < 5; ++step) {
    GradientTape tape;
    Tensor loss = shard_loss(x, y, 0, batch, batch, w1, w2);
    std::vector<Tensor> g = tape.gradient(loss, {w1, w2});
    adam.apply_gradients({{g[0], w1}, {g[1], w2}});
  }

  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  std::optional<Variable> m1, m2;
  {
    auto scope = strategy.scope();
    m1.emplace(w1_init);
    m2.emplace(w2_init);
  }
  optimizers::Adam mirrored_adam(0.05);
  for (int step = 0; step < 5; ++step) {
    strategy.run([&](ReplicaContext& ctx) {
      const int r = ctx.replica_id_in_sync_group();
      GradientTape tape;
      Tensor loss = shard_loss(x, y, r * batch / 2, (r + 1) * batch / 2, batch, *m1, *m2);
      std::vector<Tensor> g = tape.gradient(loss, {*m1, *m2});
      mirrored_adam.apply_gradients({{g[0], *m1}, {g[1], *m2}});
    });
  }
  EXPECT_EQ(mirrored_adam.iterations(), 5);
  std::vector<Tensor> copies = strategy.run([&](ReplicaContext&) { return m1->read_value(); });
  const std::vector<float> expected = values(w1.read_value());
  for (const Tensor& copy : copies) {
    std::vector<float> got = values(copy);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-5) << i;
  }
  EXPECT_EQ(values(copies[0]), values(copies[1]));  // the copies are bit for bit equal
}

TEST_F(MirroredStrategyTest, AReplicasErrorReachesTheCallerAndTheOthersStop) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  Error e = expect_error([&] {
    strategy.run([&](ReplicaContext& ctx) {
      if (ctx.replica_id_in_sync_group() == 1) matmul(constant({1.f}), constant({1.f}));
      ctx.all_reduce(ReduceOp::kSum, constant({1.f}));  // replica 0 waits here
    });
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("[MatMul]"));
  // The strategy still works after a failed run.
  std::vector<Tensor> out = strategy.run(
      [&](ReplicaContext& ctx) { return ctx.all_reduce(ReduceOp::kSum, constant({2.f})); });
  EXPECT_THAT(values(out[1]), ElementsAre(4));
}

TEST_F(MirroredStrategyTest, AReplicaThatSkipsACollectiveFailsTheOthersInsteadOfHanging) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  Error e = expect_error([&] {
    strategy.run([&](ReplicaContext& ctx) {
      if (ctx.replica_id_in_sync_group() == 0) ctx.all_reduce(ReduceOp::kSum, constant({1.f}));
    });
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(e.what(), HasSubstr("a replica returned while others wait at a collective"));
}

TEST_F(MirroredStrategyTest, ValuesOfDifferentShapesAcrossReplicasAreInvalid) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  Error e = expect_error([&] {
    strategy.run([&](ReplicaContext& ctx) {
      const int r = ctx.replica_id_in_sync_group();
      ctx.all_reduce(ReduceOp::kSum, fill({r + 1}, 1.0));
    });
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(e.what()),
            "[all_reduce] replica 1's value 0 is float32 (2,), replica 0's float32 (1,): every "
            "replica must reduce values of one shape and dtype");
}

TEST_F(MirroredStrategyTest, TrainingAVariableCreatedOutsideTheScopeIsInvalid) {
  split_cpu(2);
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  Variable plain(constant({1.f}), true, "plain");
  optimizers::SGD sgd(0.1);
  Error e = expect_error([&] {
    strategy.run([&](ReplicaContext&) { sgd.apply_gradients({{constant({1.f}), plain}}); });
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("variable 'plain' is not mirrored by this MirroredStrategy"));
  EXPECT_THAT(values(plain.read_value()), ElementsAre(1));
  EXPECT_EQ(sgd.iterations(), 0);
}

TEST_F(MirroredStrategyTest, BadDevicesAndCallsFromInsideAReplicaAreClearErrors) {
  split_cpu(2);
  expect(
      [] {
        MirroredStrategy s({"/CPU:0", "/CPU:0"});
      },
      absl::StatusCode::kInvalidArgument,
      "[MirroredStrategy] device " + cpu(0) + " is named twice");
  EXPECT_EQ(expect_error([] { MirroredStrategy s({"/GPU:3"}); }).code(),
            absl::StatusCode::kNotFound);
  CrossDeviceOptions nccl;
  nccl.kind = CrossDeviceOptions::Kind::kNcclAllReduce;
  expect(
      [&] {
        MirroredStrategy s({"/CPU:0", "/CPU:1"}, nccl);
      },
      absl::StatusCode::kFailedPrecondition,
      "[MirroredStrategy] NCCL all-reduce cannot run: " + cpu(0) + " is not a local GPU");
  MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
  Error e = expect_error(
      [&] { strategy.run([&](ReplicaContext&) { strategy.run([](ReplicaContext&) {}); }); });
  EXPECT_EQ(e.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(e.what(), HasSubstr("[MirroredStrategy.run] called inside run()"));
  MirroredStrategy other({"/CPU:1"});
  auto scope = strategy.scope();
  EXPECT_EQ(expect_error([&] { auto inner = other.scope(); }).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mt::testing
