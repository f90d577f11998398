// The optimizers against Keras 3's update_step, recomputed here in doubles: ten steps of each
// on a float32 variable agree to float32 rounding. Also learning-rate schedules, undefined
// and misshapen gradients, and where the slot variables live.
#include <algorithm>
#include <cmath>
#include <functional>

#include "gmock/gmock.h"
#include "runtime/eager/execute.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

using optimizers::GradAndVar;
using optimizers::LearningRate;

class OptimizerTest : public RuntimeTest {};

std::vector<float> values(const Variable& v) { return v.read_value().to_vector<float>(); }

// One element's slots in the reference: momentum, second moment (velocity) and average
// gradient, as Keras names them.
struct Slots {
  double m = 0, v = 0, average = 0;
};
// Returns the element after one step from `x` with gradient `g` in step `step` (from 0).
using Rule = std::function<double(double x, double g, int64_t step, Slots& s)>;

// Keras 3's SGD.update_step.
Rule sgd(double lr, double momentum = 0, bool nesterov = false) {
  return [=](double x, double g, int64_t, Slots& s) {
    if (momentum == 0) return x - g * lr;
    s.m = s.m * momentum - g * lr;
    return nesterov ? x + (s.m * momentum - g * lr) : x + s.m;
  };
}

// Keras 3's Adam.update_step, after AdamW's decoupled decay x -= x * weight_decay * lr.
Rule adam(double lr, double weight_decay = 0, double beta_1 = 0.9, double beta_2 = 0.999,
          double epsilon = 1e-7) {
  return [=](double x, double g, int64_t step, Slots& s) {
    x -= x * weight_decay * lr;
    const double t = static_cast<double>(step + 1);
    const double alpha = lr * std::sqrt(1 - std::pow(beta_2, t)) / (1 - std::pow(beta_1, t));
    s.m += (g - s.m) * (1 - beta_1);
    s.v += (g * g - s.v) * (1 - beta_2);
    return x - s.m * alpha / (std::sqrt(s.v) + epsilon);
  };
}

// Keras 3's RMSprop.update_step.
Rule rmsprop(double lr, double rho = 0.9, double momentum = 0, double epsilon = 1e-7,
             bool centered = false) {
  return [=](double x, double g, int64_t, Slots& s) {
    s.v = rho * s.v + (1 - rho) * g * g;
    double denominator = s.v + epsilon;
    if (centered) {
      s.average = rho * s.average + (1 - rho) * g;
      denominator = s.v - s.average * s.average + epsilon;
    }
    const double increment = lr * g / std::sqrt(denominator);
    if (momentum <= 0) return x - increment;
    s.m = momentum * s.m + increment;
    return x - s.m;
  };
}

const std::vector<float> kInitial = {1.f, -2.f, 0.5f, 3.f};

// The gradient of step `t`: changing size and sign, fixed.
std::vector<float> gradient_at(int t) {
  std::vector<float> g(kInitial.size());
  for (size_t i = 0; i < g.size(); ++i) {
    g[i] = static_cast<float>(0.8 * std::sin(1.3 * t + 2.1 * static_cast<double>(i)) + 0.1 * i);
  }
  return g;
}

// Runs ten steps of `opt` on a float32 variable and checks it after each against `rule` in
// doubles, to float32 rounding.
void expect_steps_match(optimizers::Optimizer& opt, const Rule& rule) {
  Variable var(constant(kInitial, {4}), /*trainable=*/true, "var");
  std::vector<double> expected(kInitial.begin(), kInitial.end());
  std::vector<Slots> slots(kInitial.size());
  for (int t = 0; t < 10; ++t) {
    const std::vector<float> g = gradient_at(t);
    opt.apply_gradients({{constant(g, {4}), var}});
    for (size_t i = 0; i < expected.size(); ++i) expected[i] = rule(expected[i], g[i], t, slots[i]);
    const std::vector<float> got = values(var);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expected[i], 1e-5 * std::fabs(expected[i]) + 1e-7)
          << "step " << t << ", element " << i;
    }
  }
  EXPECT_EQ(opt.iterations(), 10);
}

TEST_F(OptimizerTest, SgdMatchesKeras) {
  optimizers::SGD plain(0.1);
  expect_steps_match(plain, sgd(0.1));
}

TEST_F(OptimizerTest, SgdWithMomentumMatchesKeras) {
  optimizers::SGD momentum(0.05, 0.9);
  expect_steps_match(momentum, sgd(0.05, 0.9));
}

TEST_F(OptimizerTest, SgdWithNesterovMomentumMatchesKeras) {
  optimizers::SGD nesterov(0.05, 0.9, /*nesterov=*/true);
  expect_steps_match(nesterov, sgd(0.05, 0.9, true));
}

TEST_F(OptimizerTest, AdamMatchesKeras) {
  optimizers::Adam adam_default;
  expect_steps_match(adam_default, adam(0.001));
  optimizers::Adam tuned(0.05, 0.8, 0.99, 1e-6);
  expect_steps_match(tuned, adam(0.05, 0, 0.8, 0.99, 1e-6));
}

TEST_F(OptimizerTest, AdamWMatchesKeras) {
  optimizers::AdamW adamw_default;
  expect_steps_match(adamw_default, adam(0.001, 0.004));
  optimizers::AdamW tuned(0.05, 0.1);
  expect_steps_match(tuned, adam(0.05, 0.1));
}

TEST_F(OptimizerTest, RmspropMatchesKeras) {
  optimizers::RMSprop plain(0.01);
  expect_steps_match(plain, rmsprop(0.01));
}

TEST_F(OptimizerTest, CenteredRmspropMatchesKeras) {
  optimizers::RMSprop centered(0.01, 0.9, 0, 1e-7, /*centered=*/true);
  expect_steps_match(centered, rmsprop(0.01, 0.9, 0, 1e-7, true));
}

TEST_F(OptimizerTest, RmspropWithMomentumMatchesKeras) {
  optimizers::RMSprop momentum(0.01, 0.8, 0.5);
  expect_steps_match(momentum, rmsprop(0.01, 0.8, 0.5));
  optimizers::RMSprop both(0.01, 0.9, 0.5, 1e-7, /*centered=*/true);
  expect_steps_match(both, rmsprop(0.01, 0.9, 0.5, 1e-7, true));
}

// A schedule is a function of the step, iterations() from 0.
TEST_F(OptimizerTest, LearningRateScheduleIsCalledWithTheStep) {
  std::vector<int64_t> steps;
  const LearningRate decay([&steps](int64_t step) {
    steps.push_back(step);
    return 0.1 / static_cast<double>(1 + step);
  });
  optimizers::SGD sgd_decay(decay);
  EXPECT_DOUBLE_EQ(sgd_decay.learning_rate(), 0.1);
  steps.clear();
  const Rule rule = [](double x, double g, int64_t step, Slots&) {
    return x - g * (0.1 / static_cast<double>(1 + step));
  };
  expect_steps_match(sgd_decay, rule);
  EXPECT_DOUBLE_EQ(sgd_decay.learning_rate(), 0.1 / 11);
  ASSERT_GE(steps.size(), 10u);
  for (int64_t t = 0; t < 10; ++t) {
    EXPECT_NE(std::find(steps.begin(), steps.end(), t), steps.end()) << "step " << t;
  }
}

TEST_F(OptimizerTest, UndefinedGradientLeavesItsVariableAlone) {
  Variable a(constant({1.f, 2.f}), true, "a");
  Variable b(constant({3.f, 4.f}), true, "b");
  optimizers::SGD opt(0.1, 0.9);
  opt.apply_gradients({{Tensor(), a}, {constant({1.f, 1.f}), b}});
  EXPECT_EQ(values(a), (std::vector<float>{1.f, 2.f}));
  EXPECT_FLOAT_EQ(values(b)[0], 2.9f);  // m = -0.1 g, b += m
  EXPECT_FLOAT_EQ(values(b)[1], 3.9f);
  EXPECT_EQ(opt.iterations(), 1);
  opt.apply_gradients({{Tensor(), a}});
  EXPECT_EQ(values(a), (std::vector<float>{1.f, 2.f}));
}

TEST_F(OptimizerTest, GradientOfAnotherShapeOrDtypeIsInvalidArgument) {
  Variable w(constant({1.f, 2.f}), true, "w");
  Variable ok(constant({5.f}), true, "ok");
  optimizers::SGD opt(0.1);
  expect(
      [&] {
        opt.apply_gradients({{constant({1.f}), ok}, {constant({1.f, 2.f, 3.f}), w}});
      },
      absl::StatusCode::kInvalidArgument,
      "[apply_gradients] the gradient of variable 'w' has shape (3,) and dtype float32, the "
      "variable (2,) and float32");
  expect(
      [&] {
        opt.apply_gradients({{constant(std::vector<double>{1, 2}, {2}), w}});
      },
      absl::StatusCode::kInvalidArgument,
      "[apply_gradients] the gradient of variable 'w' has shape (2,) and dtype float64, the "
      "variable (2,) and float32");
  EXPECT_EQ(values(ok), std::vector<float>{5.f});  // checked before any update
  EXPECT_EQ(values(w), (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(opt.iterations(), 0);
}

// Exposes the slots of an SGD optimizer with momentum.
class InspectableSgd : public optimizers::SGD {
 public:
  using SGD::SGD;
  Variable& slot_of(const Variable& var, int index) { return slot(var, index); }
};

// The update runs on the variable's device whatever the scope, and the slot sits beside it.
TEST_F(OptimizerTest, UpdatesAndSlotsStayOnTheVariablesDevice) {
  split_cpu(2);
  Variable var;
  {
    DeviceScope scope("/CPU:1");
    var = Variable(constant(std::vector<float>(1024, 1.f), {1024}), true, "var");
  }
  const Tensor grad = constant(std::vector<float>(1024, 0.5f), {1024});  // on CPU:0
  ASSERT_EQ(grad.device(), cpu(0));
  const int64_t cpu0 = config::get_memory_info("CPU:0").current;
  InspectableSgd opt(0.1, 0.9);
  debugging::set_log_device_placement(true);
  opt.apply_gradients({{grad, var}});
  debugging::set_log_device_placement(false);
  EXPECT_FALSE(log().empty());
  for (const std::string& line : log()) EXPECT_NE(line.find(cpu(1)), std::string::npos) << line;
  EXPECT_EQ(config::get_memory_info("CPU:0").current, cpu0);
  EXPECT_EQ(config::get_memory_info("CPU:1").current, 2 * 4096);  // var and its momentum
  const Variable& momentum = opt.slot_of(var, 0);
  EXPECT_EQ(momentum.device(), cpu(1));
  EXPECT_FALSE(momentum.trainable());
  EXPECT_EQ(momentum.shape(), var.shape());
  EXPECT_FLOAT_EQ(values(momentum)[0], -0.05f);  // m = 0.9 * 0 - 0.1 * 0.5
  EXPECT_FLOAT_EQ(values(var)[0], 0.95f);
}

// Adam's step is one ResourceApplyAdam on the variable's device, the gradient copied there,
// after the Fill of its learning rate lr_t (Note [Fused Adam]); its two slots sit beside the
// variable.
TEST_F(OptimizerTest, AdamIsOneFusedOpOnTheVariablesDevice) {
  split_cpu(2);
  Variable var;
  {
    DeviceScope scope("/CPU:1");
    var = Variable(constant(std::vector<float>(256, 1.f), {256}), true, "var");
  }
  const Tensor grad = constant(std::vector<float>(256, 0.5f), {256});  // on CPU:0
  optimizers::Adam adam(0.1);
  adam.apply_gradients({{grad, var}});  // creates the slots
  debugging::set_log_device_placement(true);
  adam.apply_gradients({{grad, var}});
  debugging::set_log_device_placement(false);
  EXPECT_EQ(log(),
            (std::vector<std::string>{"Executing op Fill in device " + cpu(1),
                                      "Executing op ResourceApplyAdam in device " + cpu(1)}));
  EXPECT_EQ(config::get_memory_info("CPU:1").current, 3 * 1024);  // var, m and v
  // A constant gradient: each bias-corrected step moves the variable by lr (up to epsilon).
  EXPECT_NEAR(values(var)[0], 1 - 2 * 0.1, 1e-5);
}

// A value read before the step keeps what it held: the step moves the variable to a new
// buffer instead of writing over the held one (Note [Variables write in place]).
TEST_F(OptimizerTest, AdamLeavesAHeldValueAlone) {
  Variable var(constant({1.f, 2.f}), true, "var");
  optimizers::Adam adam(0.1);
  const Tensor before = var.read_value();
  adam.apply_gradients({{constant({1.f, -1.f}), var}});
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{1.f, 2.f}));
  EXPECT_NEAR(values(var)[0], 0.9f, 1e-6);
  EXPECT_NEAR(values(var)[1], 2.1f, 1e-6);
}

// bfloat16, float16 and float64 variables: the same steps, to each dtype's rounding.
TEST_F(OptimizerTest, AdamUpdatesEveryFloatDtype) {
  for (DType dtype : {DType::kFloat64, DType::kBFloat16, DType::kFloat16}) {
    Variable var(cast(constant(kInitial, {4}), dtype), true, "var");
    std::vector<double> expected(kInitial.begin(), kInitial.end());
    std::vector<Slots> slots(kInitial.size());
    optimizers::Adam opt(0.05);
    const Rule rule = adam(0.05);
    for (int t = 0; t < 10; ++t) {
      const std::vector<float> g = gradient_at(t);
      opt.apply_gradients({{cast(constant(g, {4}), dtype), var}});
      for (size_t i = 0; i < expected.size(); ++i) {
        expected[i] = rule(expected[i], g[i], t, slots[i]);
      }
    }
    const std::vector<float> got = cast(var.read_value(), DType::kFloat32).to_vector<float>();
    const double tolerance = dtype == DType::kFloat64   ? 1e-6
                             : dtype == DType::kFloat16 ? 1e-2
                                                        : 5e-2;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expected[i], tolerance * (1 + std::fabs(expected[i])))
          << dtype_name(dtype) << " element " << i;
    }
  }
}

// The op checks its own inputs, for a caller that runs it without the optimizer.
TEST_F(OptimizerTest, ResourceApplyAdamRejectsMismatchedInputs) {
  const Tensor var = constant({1.f, 2.f, 3.f}), m = zeros({3}), v = zeros({2});
  const Tensor g = constant({1.f, 1.f, 1.f});
  const Tensor lr_t = constant(0.1f);
  const Tensor* inputs[] = {&var, &m, &v, &g, &lr_t};
  expect(
      [&] {
        internal::value_or_throw(internal::execute_all(OpId::kResourceApplyAdam, inputs, {}));
      },
      absl::StatusCode::kInvalidArgument,
      "[ResourceApplyAdam] var and v do not have the same shape: (3,) and (2,)");
  const Tensor ints = constant({1, 2, 3});
  const Tensor* int_inputs[] = {&ints, &ints, &ints, &ints, &lr_t};
  const Error e = expect_error([&] {
    internal::value_or_throw(internal::execute_all(OpId::kResourceApplyAdam, int_inputs, {}));
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), ::testing::StartsWith("[ResourceApplyAdam] "));
  EXPECT_EQ(var.to_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f}));
}

// lr_t is a scalar of the variable's dtype, float32 for a 2-byte one (apply_adam_lr_dtype).
TEST_F(OptimizerTest, ResourceApplyAdamRejectsALearningRateOfAnotherRankOrDtype) {
  const Tensor var = constant({1.f, 2.f}), m = zeros({2}), v = zeros({2});
  const Tensor g = constant({1.f, 1.f});
  auto run = [&](const Tensor& lr_t) {
    const Tensor* inputs[] = {&var, &m, &v, &g, &lr_t};
    internal::value_or_throw(internal::execute_all(OpId::kResourceApplyAdam, inputs, {}));
  };
  expect([&] { run(constant({0.1f})); }, absl::StatusCode::kInvalidArgument,
         "[ResourceApplyAdam] lr_t must be a scalar, got shape (1,)");
  expect([&] { run(constant(0.1)); }, absl::StatusCode::kInvalidArgument,
         "[ResourceApplyAdam] lr_t must be float32 for a variable of float32, got float64");
  EXPECT_EQ(var.to_vector<float>(), (std::vector<float>{1.f, 2.f}));
  const Tensor half = cast(var, DType::kFloat16), half_zeros = cast(m, DType::kFloat16);
  const Tensor half_lr = cast(constant(0.1f), DType::kFloat16);
  const Tensor* half_inputs[] = {&half, &half_zeros, &half_zeros, &half, &half_lr};
  expect(
      [&] {
        internal::value_or_throw(internal::execute_all(OpId::kResourceApplyAdam, half_inputs, {}));
      },
      absl::StatusCode::kInvalidArgument,
      "[ResourceApplyAdam] lr_t must be float32 for a variable of float16, got float16");
}

// Three steps on a float64 variable under a schedule, against Keras's formulas by hand in
// double: lr_t follows the step and the schedule's value at it (Note [Host values of a
// step]), and iterations() counts the steps.
TEST_F(OptimizerTest, AdamFollowsTheScheduleStepByStep) {
  const std::vector<double> initial = {0.5, -1.5};
  Variable var(constant(initial, {2}), true, "var");
  optimizers::Adam opt([](int64_t step) { return 0.1 / static_cast<double>(1 + step); }, 0.9, 0.999,
                       1e-7);
  const double gradients[3][2] = {{0.3, -0.2}, {-0.1, 0.4}, {0.25, 0.05}};
  std::vector<double> x = initial, m(2, 0), v(2, 0);
  for (int step = 0; step < 3; ++step) {
    const std::vector<double> g(std::begin(gradients[step]), std::end(gradients[step]));
    opt.apply_gradients({{constant(g, {2}), var}});
    const double t = step + 1, lr = 0.1 / t;
    const double lr_t = lr * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
    const std::vector<double> got = var.read_value().to_vector<double>();
    for (int i = 0; i < 2; ++i) {
      m[i] += (g[i] - m[i]) * (1 - 0.9);
      v[i] += (g[i] * g[i] - v[i]) * (1 - 0.999);
      x[i] -= lr_t * m[i] / (std::sqrt(v[i]) + 1e-7);
      EXPECT_NEAR(got[i], x[i], 1e-14) << "step " << step << ", element " << i;
    }
    EXPECT_EQ(opt.iterations(), step + 1);
  }
}

// One lr_t per device and dtype serves every variable of a step.
TEST_F(OptimizerTest, AdamMakesOneLearningRatePerDtype) {
  Variable a(constant({1.f}), true, "a"), b(constant({2.f}), true, "b");
  Variable c(constant(std::vector<double>{3}, {1}), true, "c");
  const std::vector<GradAndVar> step = {
      {constant({1.f}), a}, {constant({1.f}), b}, {constant(std::vector<double>{1}, {1}), c}};
  optimizers::Adam adam(0.1);
  adam.apply_gradients(step);  // creates the slots
  debugging::set_log_device_placement(true);
  adam.apply_gradients(step);
  debugging::set_log_device_placement(false);
  const std::string fill = "Executing op Fill in device " + cpu(0);
  const std::string apply = "Executing op ResourceApplyAdam in device " + cpu(0);
  EXPECT_EQ(log(), (std::vector<std::string>{fill, apply, apply, fill, apply}));
}

}  // namespace
}  // namespace mt::testing
