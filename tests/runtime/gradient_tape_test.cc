// GradientTape's semantics, as tf.GradientTape's: what it watches, persistence, pausing,
// stop_gradient, unconnected sources, output gradients, broadcasting, higher order, integer
// tensors, variables read more than once, the device of gradient ops, and what it retains.
#include <cmath>

#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

class GradientTapeTest : public RuntimeTest {};

int64_t cpu_bytes() { return config::get_memory_info("CPU:0").current; }

TEST_F(GradientTapeTest, WatchedTensorGetsItsGradient) {
  const Tensor x = constant(3.f);
  GradientTape tape;
  tape.watch(x);
  const Tensor y = x * x;
  const std::vector<Tensor> g = tape.gradient(y, {x});
  ASSERT_EQ(g.size(), 1u);
  ASSERT_TRUE(g[0].defined());
  EXPECT_EQ(g[0].dtype(), DType::kFloat32);
  EXPECT_EQ(g[0].shape(), Shape());
  EXPECT_EQ(g[0].to_vector<float>(), std::vector<float>{6.f});
}

TEST_F(GradientTapeTest, UnwatchedTensorGetsNoGradient) {
  const Tensor x = constant(3.f);
  GradientTape tape;
  const Tensor y = x * x;
  EXPECT_FALSE(tape.gradient(y, {x})[0].defined());
}

TEST_F(GradientTapeTest, WatchesTrainableVariablesItReads) {
  Variable w(constant({1.f, 2.f}), /*trainable=*/true, "w");
  Variable frozen(constant({3.f, 4.f}), /*trainable=*/false, "frozen");
  GradientTape tape;
  const Tensor y = reduce_sum(w * frozen);
  const std::vector<Tensor> g = tape.gradient(y, {&w, &frozen});
  ASSERT_EQ(g.size(), 2u);
  ASSERT_TRUE(g[0].defined());
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{3.f, 4.f}));
  EXPECT_FALSE(g[1].defined());  // not trainable: not watched
  const std::vector<Variable> watched = tape.watched_variables();
  ASSERT_EQ(watched.size(), 1u);
  EXPECT_EQ(watched[0].state(), w.state());
  EXPECT_EQ(watched[0].name(), "w");
}

TEST_F(GradientTapeTest, WatchAccessedVariablesFalseWatchesOnlyWhatIsAsked) {
  Variable w(constant(2.f));
  Variable v(constant(5.f));
  GradientTape tape(/*persistent=*/false, /*watch_accessed_variables=*/false);
  tape.watch(v);
  const Tensor y = w * v;
  const std::vector<Tensor> g = tape.gradient(y, {&w, &v});
  EXPECT_FALSE(g[0].defined());
  ASSERT_TRUE(g[1].defined());
  EXPECT_EQ(g[1].to_vector<float>(), std::vector<float>{2.f});
  ASSERT_EQ(tape.watched_variables().size(), 1u);
  EXPECT_EQ(tape.watched_variables()[0].state(), v.state());
}

TEST_F(GradientTapeTest, PersistentTapeComputesSeveralGradients) {
  const Tensor x = constant(2.f);
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  const Tensor y = x * x;
  const Tensor z = y * x;
  EXPECT_EQ(tape.gradient(y, {x})[0].to_vector<float>(), std::vector<float>{4.f});
  EXPECT_EQ(tape.gradient(z, {x})[0].to_vector<float>(), std::vector<float>{12.f});
  EXPECT_EQ(tape.gradient(z, {y})[0].to_vector<float>(), std::vector<float>{2.f});
}

TEST_F(GradientTapeTest, NonPersistentTapeComputesOneGradient) {
  const Tensor x = constant(2.f);
  GradientTape tape;
  tape.watch(x);
  const Tensor y = x * x;
  EXPECT_EQ(tape.gradient(y, {x})[0].to_vector<float>(), std::vector<float>{4.f});
  expect([&] { tape.gradient(y, {x}); }, absl::StatusCode::kFailedPrecondition,
         "A non-persistent GradientTape can only be used to compute one set of gradients (or "
         "jacobians)");
}

TEST_F(GradientTapeTest, StopRecordingPausesTheTape) {
  const Tensor x = constant(2.f);
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor unrecorded;
  {
    auto pause = tape.stop_recording();
    unrecorded = x * x;
  }
  const Tensor y = x * constant(3.f) + unrecorded;
  EXPECT_EQ(tape.gradient(y, {x})[0].to_vector<float>(), std::vector<float>{3.f});
  EXPECT_FALSE(tape.gradient(unrecorded, {x})[0].defined());
}

TEST_F(GradientTapeTest, StopGradientBlocksTheGradient) {
  const Tensor x = constant(2.f);
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  const Tensor y = x * x + stop_gradient(x * x) * x;  // 2x + x^2 flows
  EXPECT_EQ(tape.gradient(y, {x})[0].to_vector<float>(), std::vector<float>{8.f});
  const Tensor stopped = stop_gradient(x);
  EXPECT_EQ(stopped.to_vector<float>(), std::vector<float>{2.f});
  EXPECT_FALSE(tape.gradient(stopped, {x})[0].defined());
}

TEST_F(GradientTapeTest, UnconnectedSourceGetsAnUndefinedTensor) {
  const Tensor x = constant(2.f), unused = constant(5.f);
  GradientTape tape;
  tape.watch(x);
  tape.watch(unused);
  const Tensor y = x * constant(4.f);
  const std::vector<Tensor> g = tape.gradient(y, {x, unused});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].to_vector<float>(), std::vector<float>{4.f});
  EXPECT_FALSE(g[1].defined());
}

TEST_F(GradientTapeTest, OutputGradientWeightsTheTarget) {
  const Tensor x = constant({1.f, 2.f, 3.f});
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  const Tensor y = x * x;
  const std::vector<Tensor> g = tape.gradient(y, {x}, constant({1.f, 10.f, -1.f}));
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{2.f, 40.f, -6.f}));
  expect(
      [&] {
        tape.gradient(y, {x}, constant({1.f, 2.f}));
      },
      absl::StatusCode::kInvalidArgument,
      "[GradientTape] gradient: output_gradients has shape (2,) and float32, the target (3,) and "
      "float32");
}

TEST_F(GradientTapeTest, BroadcastingIsSummedBackToEachInputShape) {
  const Tensor a = constant({{1.f}, {2.f}, {3.f}});       // (3, 1)
  const Tensor b = constant({{10.f, 20.f, 30.f, 40.f}});  // (1, 4)
  GradientTape tape(/*persistent=*/true);
  tape.watch(a);
  tape.watch(b);
  const std::vector<Tensor> sum = tape.gradient(a + b, {a, b});
  EXPECT_EQ(sum[0].shape().to_string(), "(3, 1)");
  EXPECT_EQ(sum[1].shape().to_string(), "(1, 4)");
  EXPECT_EQ(sum[0].to_vector<float>(), (std::vector<float>{4.f, 4.f, 4.f}));
  EXPECT_EQ(sum[1].to_vector<float>(), (std::vector<float>{3.f, 3.f, 3.f, 3.f}));
  const std::vector<Tensor> product = tape.gradient(a * b, {a, b});
  EXPECT_EQ(product[0].to_vector<float>(), (std::vector<float>{100.f, 100.f, 100.f}));
  EXPECT_EQ(product[1].to_vector<float>(), (std::vector<float>{6.f, 6.f, 6.f, 6.f}));
}

// d/dx x^3 = 3x^2 and d2/dx2 = 6x, with one tape inside another.
TEST_F(GradientTapeTest, NestedTapesGiveTheSecondDerivativeOfACube) {
  const Tensor x = constant(1.5);
  GradientTape outer;
  outer.watch(x);
  Tensor first;
  {
    GradientTape inner;
    inner.watch(x);
    const Tensor y = x * x * x;
    first = inner.gradient(y, {x})[0];
  }
  EXPECT_DOUBLE_EQ(first.to_vector<double>()[0], 3 * 1.5 * 1.5);
  const Tensor second = outer.gradient(first, {x})[0];
  ASSERT_TRUE(second.defined());
  EXPECT_DOUBLE_EQ(second.to_vector<double>()[0], 6 * 1.5);
}

// d/dx tanh = 1 - tanh^2 and d2/dx2 = -2 tanh (1 - tanh^2).
TEST_F(GradientTapeTest, NestedTapesGiveTheSecondDerivativeOfTanh) {
  const double x0 = 0.7, t = std::tanh(x0);
  const Tensor x = constant(x0);
  GradientTape outer;
  outer.watch(x);
  Tensor first;
  {
    GradientTape inner;
    inner.watch(x);
    first = inner.gradient(tanh(x), {x})[0];
  }
  EXPECT_NEAR(first.to_vector<double>()[0], 1 - t * t, 1e-12);
  const Tensor second = outer.gradient(first, {x})[0];
  ASSERT_TRUE(second.defined());
  EXPECT_NEAR(second.to_vector<double>()[0], -2 * t * (1 - t * t), 1e-12);
}

TEST_F(GradientTapeTest, IntegerTensorsAreNotWatched) {
  const Tensor n = constant({1, 2, 3});
  Variable counter(constant({4, 5}));
  GradientTape tape(/*persistent=*/true);
  tape.watch(n);
  const Tensor y = reduce_sum(cast(n, DType::kFloat32) * constant(2.f));
  EXPECT_FALSE(tape.gradient(y, {n})[0].defined());
  const Tensor z = reduce_sum(cast(counter, DType::kFloat32));
  EXPECT_FALSE(tape.gradient(z, {&counter})[0].defined());
}

TEST_F(GradientTapeTest, VariableReadTwiceSumsItsGradients) {
  Variable v(constant(3.f));
  {
    GradientTape tape;
    const Tensor y = v * v;  // two reads of one value
    EXPECT_EQ(tape.gradient(y, {&v})[0].to_vector<float>(), std::vector<float>{6.f});
  }
  GradientTape tape;
  const Tensor before = v * constant(2.f);
  v.assign(constant(10.f));  // the tape holds the first read: a new buffer, a second read
  const Tensor after = v * constant(5.f);
  EXPECT_EQ(tape.gradient(before + after, {&v})[0].to_vector<float>(), std::vector<float>{7.f});
}

// Note [Gradients on the forward device] in runtime/autodiff/gradient_tape.cc.
TEST_F(GradientTapeTest, GradientRunsOnTheForwardOpsDevice) {
  split_cpu(2);
  const Tensor x = constant({1.f, 2.f});
  GradientTape tape;
  tape.watch(x);
  Tensor y;
  {
    DeviceScope scope("/CPU:1");
    y = reduce_sum(x * x);
  }
  EXPECT_EQ(y.device(), cpu(1));
  debugging::set_log_device_placement(true);
  const Tensor g = tape.gradient(y, {x})[0];
  EXPECT_EQ(g.device(), cpu(1));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  EXPECT_FALSE(log().empty());
  for (const std::string& line : log()) EXPECT_NE(line.find(cpu(1)), std::string::npos) << line;
}

// Without a tape (or with one that watches nothing) an op's result is freed with its handle;
// a tape that watches the input keeps the intermediate results its gradients read until it
// goes (exp's output; x * x, which no gradient reads, leaves with its handle).
TEST_F(GradientTapeTest, OnlyARecordingTapeRetainsResults) {
  const Tensor x = constant(std::vector<float>(1024, 0.5f), {1024});
  const int64_t base = cpu_bytes();
  { const Tensor y = exp(x * x); }
  EXPECT_EQ(cpu_bytes(), base);
  {
    GradientTape tape;
    { const Tensor y = exp(x * x); }
    EXPECT_EQ(cpu_bytes(), base);  // x is not watched: nothing recorded
    tape.watch(x);
    { const Tensor y = exp(x * x); }
    EXPECT_EQ(cpu_bytes(), base + 4096);  // exp's output
  }
  EXPECT_EQ(cpu_bytes(), base);
}

TEST_F(GradientTapeTest, NonPersistentTapeReleasesWhatItHeldAfterItsGradient) {
  const Tensor x = constant(std::vector<float>(1024, 0.5f), {1024});
  const int64_t base = cpu_bytes();
  GradientTape tape;
  tape.watch(x);
  std::vector<Tensor> g;
  {
    const Tensor y = reduce_sum(exp(x * x));
    g = tape.gradient(y, {x});
  }
  EXPECT_EQ(cpu_bytes(), base + 4096);  // only the gradient
}

TEST_F(GradientTapeTest, MatMulComputesOnlyTheGradientsItsSourcesNeed) {
  const Tensor x = constant(std::vector<float>(12, 1.f), {3, 4});
  Variable w(constant(std::vector<float>(8, 0.5f), {4, 2}));
  GradientTape tape;
  const Tensor y = reduce_sum(matmul(x, w));  // x is constant: no gradient of x is computed
  debugging::set_log_device_placement(true);
  const std::vector<const Variable*> sources = {&w};
  const std::vector<Tensor> g = tape.gradient(y, sources);
  debugging::set_log_device_placement(false);
  int matmuls = 0;
  for (const std::string& line : log()) matmuls += line.rfind("Executing op MatMul ", 0) == 0;
  EXPECT_EQ(matmuls, 1);
  EXPECT_EQ(g[0].to_vector<float>(), std::vector<float>(8, 3.f));
}

// The tape holds whole only what gradients read (Note [What a gradient reads]): the product
// a bias is added to and the input of a ReLU leave the pool once the program drops them,
// and the gradients come out the same as with every tensor held.
TEST_F(GradientTapeTest, TapeKeepsOnlyTheValuesGradientsRead) {
  const Tensor x = constant(std::vector<float>(64 * 64, 0.25f), {64, 64});
  std::vector<float> columns(64 * 64);
  for (int i = 0; i < 64 * 64; ++i) columns[i] = static_cast<float>(i % 64 - 32);
  Variable w(constant(columns, {64, 64}));  // product[r][j] = 16 (j - 32)
  Variable b(constant(std::vector<float>(64, 0.f), {64}));
  const int64_t base = cpu_bytes();
  GradientTape tape;
  Tensor h;
  {
    const Tensor product = matmul(x, w);             // 16 KiB, read by no gradient
    const Tensor biased = nn::bias_add(product, b);  // 16 KiB, the ReLU's input
    h = relu(biased);                                // 16 KiB, read by the ReLU's gradient
    EXPECT_EQ(cpu_bytes(), base + 3 * 16384);
  }
  EXPECT_EQ(cpu_bytes(), base + 16384);  // only h: the tape held the other two weakly
  const Tensor loss = reduce_sum(h);
  const std::vector<const Variable*> sources = {&w, &b};
  const std::vector<Tensor> g = tape.gradient(loss, sources);
  // Column j passes the ReLU for j > 32: d loss / d b[j] = 64 rows, d loss / d w[i][j] =
  // 64 * 0.25 there; 0 elsewhere.
  const std::vector<float> gw = g[0].to_vector<float>(), gb = g[1].to_vector<float>();
  for (int j = 0; j < 64; ++j) {
    const float passed = j > 32 ? 1.f : 0.f;
    EXPECT_EQ(gb[j], 64 * passed) << j;
    EXPECT_EQ(gw[j], 16 * passed) << j;
  }
}

}  // namespace
}  // namespace mt::testing
