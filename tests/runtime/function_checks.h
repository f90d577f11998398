#pragma once
// What the mt::Function tests check on every device kind (function_test.cc on logical
// CPUs, cuda/gpu_function_test.cc on a GPU): a replay gives, bit for bit, what the body gives
// eagerly, for random op chains (every op of the table) and for a training step, alone or
// per replica of a MirroredStrategy.

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/minitensor.h"
#include "tests/runtime/op_chain.h"

namespace mt::testing {

// Whether a chain step can be part of a replayed function: not a variable op (a function
// creates its variables once, so it would not start from a fresh one at each call as the
// chain expects) and not a random op (a function that uses one runs eagerly).
inline bool replayable_step(const Step& s) {
  return s.kind != StepKind::kLeaf && s.kind != StepKind::kFill && !op_has_flag(s.op, kRandom) &&
         !op_has_flag(s.op, kResource) && s.op != OpId::kVarHandleOp;
}

// Runs the replayable steps of `steps` over `leaves` (one per leaf step, in order) and
// returns every result, a failed step's as a 0-d int32 -1 (errors depend on shapes and
// dtypes, which a signature fixes).
inline std::vector<Tensor> run_steps(const std::vector<Step>& steps,
                                     absl::Span<const Tensor> leaves) {
  std::vector<Tensor> values(steps.size());
  size_t next_leaf = 0;
  std::vector<Tensor> results;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.kind == StepKind::kLeaf) {
      values[i] = leaves[next_leaf++];
      continue;
    }
    if (s.kind == StepKind::kFill) {
      try {
        values[i] = make_source(s);
      } catch (const Error&) {  // a bad Range: the steps that read it fail too
      }
      continue;
    }
    if (!replayable_step(s)) continue;
    std::vector<Tensor> in;
    for (int k : s.inputs) in.push_back(values[k]);
    try {
      values[i] = run_op(s, in);
      results.push_back(values[i]);
    } catch (const Error&) {
      results.push_back(constant(-1));
    }
  }
  return results;
}

// Returns the chain's leaves made again on `device`, their floating-point values scaled by
// `scale` (exact in every float dtype for a power of two; index leaves stay in range).
inline std::vector<Tensor> leaves_of(const std::vector<Step>& steps, const std::string& device,
                                     double scale) {
  DeviceScope scope(device);
  std::vector<Tensor> leaves;
  for (const Step& s : steps) {
    if (s.kind != StepKind::kLeaf) continue;
    Tensor t = make_source(s);
    if (dtype_kind(t.dtype()) != DTypeKind::kInt && t.dtype() != DType::kBool) {
      t = mul(t, fill({}, scale, t.dtype()));
    }
    leaves.push_back(t);
  }
  return leaves;
}

// Checks, for `programs` random chains on `device` (their leaves made on `leaf_device`), that a
// function's replay on new leaves equals the body run eagerly on them, bit for bit. Returns how
// many chains replayed (not eagerly) and were compared.
inline int check_chains_replay(const std::string& device, int programs, uint64_t first_seed,
                               std::string leaf_device = "") {
  if (leaf_device.empty()) leaf_device = device;
  int compared = 0;
  for (int p = 0; p < programs; ++p) {
    const uint64_t seed = first_seed + p;
    OpChain chain(seed, {device});
    Tally tally;
    chain.generate(12, &tally);
    const std::vector<Step>& steps = chain.steps();
    Function f([&](absl::Span<const Tensor> leaves) { return run_steps(steps, leaves); });
    DeviceScope scope(device);
    f(leaves_of(steps, leaf_device, 1));  // the trace
    const std::vector<Tensor> leaves = leaves_of(steps, leaf_device, 0.5);
    const std::vector<Tensor> eager = run_steps(steps, leaves);
    const std::vector<Tensor> replay = f(leaves);
    if (f.replay_kind() == "eager") continue;
    compared += static_cast<int>(replay.size());
    EXPECT_EQ(f.tracing_count(), 1);
    EXPECT_EQ(eager.size(), replay.size()) << "seed " << seed;
    if (eager.size() != replay.size()) continue;
    for (size_t i = 0; i < eager.size(); ++i) {
      const std::string why =
          compare_outcomes(read_outcome(eager[i]), read_outcome(replay[i]), /*exact=*/true);
      EXPECT_EQ(why, "") << "seed " << seed << ", result " << i << "\n" << chain.describe(12);
      EXPECT_EQ(replay[i].device(), eager[i].device());
    }
  }
  return compared;
}

// Returns {0, step, 2 step, ...} (n values), centred on zero.
inline std::vector<float> ramp(int n, float step) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i - n / 2) * step;
  return v;
}

// A small MLP (8-16-4) trained with Adam on `device`: the variables, and one step's body.
struct Mlp {
  explicit Mlp(const std::string& device) {
    DeviceScope scope(device);
    w1 = Variable(constant(ramp(8 * 16, 0.01f), {8, 16}));
    b1 = Variable(zeros({16}));
    w2 = Variable(constant(ramp(16 * 4, -0.02f), {16, 4}));
    b2 = Variable(zeros({4}));
    adam = std::make_unique<optimizers::Adam>(0.01);
  }
  // One training step on (x, labels); returns the loss.
  std::vector<Tensor> step(absl::Span<const Tensor> args) {
    GradientTape tape;
    const Tensor h = relu(add(matmul(args[0], w1), b1));
    const Tensor logits = add(matmul(h, w2), b2);
    const Tensor loss = reduce_mean(nn::sparse_softmax_cross_entropy_with_logits(args[1], logits));
    const Variable* vars[] = {&w1, &b1, &w2, &b2};
    std::vector<Tensor> grads = tape.gradient(loss, vars);
    adam->apply_gradients({{grads[0], w1}, {grads[1], b1}, {grads[2], w2}, {grads[3], b2}});
    return {loss};
  }
  Variable w1, b1, w2, b2;
  std::unique_ptr<optimizers::Adam> adam;
};

// The batch of step `i`: 6 examples, 8 features, labels in [0, 4).
inline std::vector<Tensor> mlp_batch(int i, const std::string& device) {
  DeviceScope scope(device);
  const Tensor x = constant(ramp(48, static_cast<float>(0.05 * (i + 1))), {6, 8});
  const Tensor labels = constant(std::vector<int32_t>{i % 4, 1, 2, 3, 0, (i + 2) % 4}, {6});
  return {x, labels};
}

// Trains two identical MLPs for `steps` steps, one eagerly and one through a Function, and
// checks that losses and weights agree bit for bit. Returns the function's replay kind.
inline std::string check_training_replay(const std::string& device, int steps) {
  Mlp eager(device), traced(device);
  Function step([&](absl::Span<const Tensor> args) { return traced.step(args); });
  for (int i = 0; i < steps; ++i) {
    const std::vector<Tensor> batch = mlp_batch(i, device);
    const Tensor want = eager.step(batch)[0];
    const Tensor got = step(batch)[0];
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>()) << "step " << i;
    EXPECT_EQ(got.device(), want.device());
  }
  EXPECT_EQ(step.tracing_count(), 1);
  EXPECT_EQ(traced.adam->iterations(), steps);
  const std::pair<const Variable*, const Variable*> pairs[] = {{&eager.w1, &traced.w1},
                                                               {&eager.b1, &traced.b1},
                                                               {&eager.w2, &traced.w2},
                                                               {&eager.b2, &traced.b2}};
  for (const auto& [a, b] : pairs) {
    EXPECT_EQ(a->read_value().to_vector<float>(), b->read_value().to_vector<float>());
  }
  return step.replay_kind();
}

// Rows [begin, end) of a batch that changes with `step`, as (x, y).
inline std::pair<Tensor, Tensor> shard(int step, int begin, int end) {
  std::vector<float> x, y;
  for (int i = begin; i < end; ++i) {
    for (int j = 0; j < 3; ++j) x.push_back(std::sin(static_cast<float>(step * 31 + i * 3 + j)));
    y.push_back(std::cos(static_cast<float>(step * 7 + i)));
  }
  const int n = end - begin;
  return {constant(x, {n, 3}), constant(y, {n, 1})};
}

// Trains a two-layer model for `steps` Adam steps with MirroredStrategy over `devices`
// (two), each replica with half of a batch of 8, its step run eagerly or as a function;
// returns every copy of w1 and w2 and the replicas' losses of the last step.
struct Trained {
  std::vector<std::vector<float>> weights;
  std::vector<float> losses;
  int64_t iterations = 0;
  int tracing_count = 0;
  std::string replay_kind;
};

inline Trained train_replicas(const std::vector<std::string>& devices, bool as_function,
                              int steps) {
  distribute::MirroredStrategy strategy(devices);
  std::optional<Variable> w1, w2;
  {
    auto scope = strategy.scope();
    w1.emplace(random::stateless_normal({3, 4}, {1, 2}, 0, 1));
    w2.emplace(random::stateless_normal({4, 1}, {3, 4}, 0, 1));
  }
  optimizers::Adam adam(0.05);
  auto body = [&](absl::Span<const Tensor> args) -> std::vector<Tensor> {
    GradientTape tape;
    Tensor out = matmul(relu(matmul(args[0], *w1)), *w2);
    Tensor loss = div(reduce_sum(square(sub(out, args[1]))), constant(8.f));
    std::vector<Tensor> g = tape.gradient(loss, {*w1, *w2});
    adam.apply_gradients({{g[0], *w1}, {g[1], *w2}});
    return {loss};
  };
  Function step_fn(body, "train_step");
  Trained result;
  result.losses.resize(devices.size());
  for (int step = 0; step < steps; ++step) {
    strategy.run([&](distribute::ReplicaContext& ctx) {
      const int r = ctx.replica_id_in_sync_group();
      auto [x, y] = shard(step, 4 * r, 4 * r + 4);
      std::vector<Tensor> loss = as_function ? step_fn({x, y}) : body(std::vector<Tensor>{x, y});
      result.losses[r] = cast(loss[0], DType::kFloat32).to_vector<float>()[0];
    });
  }
  for (Variable* w : {&*w1, &*w2}) {
    for (const Tensor& copy :
         strategy.run([&](distribute::ReplicaContext&) { return w->read_value(); })) {
      DeviceScope host("/CPU:0");
      result.weights.push_back(identity(copy).to_vector<float>());
    }
  }
  result.iterations = adam.iterations();
  result.tracing_count = step_fn.tracing_count();
  result.replay_kind = step_fn.replay_kind();
  return result;
}

// Checks that a training step as a function inside run() replays per replica and equals
// the eager strategy's bit for bit; returns the function's replay kind.
inline std::string check_replica_training_replay(const std::vector<std::string>& devices,
                                                 int steps) {
  const Trained eager = train_replicas(devices, false, steps);
  const Trained replayed = train_replicas(devices, true, steps);
  EXPECT_EQ(replayed.tracing_count, static_cast<int>(devices.size()));  // once per replica
  EXPECT_EQ(replayed.iterations, steps);
  EXPECT_EQ(replayed.weights, eager.weights);
  EXPECT_EQ(replayed.losses, eager.losses);
  EXPECT_EQ(replayed.weights[0], replayed.weights[1]);  // the copies stay equal
  EXPECT_NE(eager.weights[0], replayed.weights[2]);     // w1 is not w2: the check reads both
  return replayed.replay_kind;
}

}  // namespace mt::testing
