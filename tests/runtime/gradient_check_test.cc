// GradientTape's gradients against float64 central differences, on the CPU: every kGrad row of
// the op table has at least one case (EveryDifferentiableOpHasACase), so a new differentiable
// row cannot go unchecked. This file holds the check (gradient_check.h) and the cases of the
// math, element-wise, reduction, nn and conv ops; gradient_check_array_test.cc those of the
// array ops.
#include "tests/runtime/gradient_check.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mt::testing {

constexpr double kStep = 1e-5, kRtol = 1e-6, kAtol = 1e-8;

int64_t element_count(const Ints& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Tensor tensor_of(const GradInput& input) { return constant(input.values, input.shape); }

GradInput RandomInputs::uniform(const Ints& shape, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  GradInput in{shape, std::vector<double>(static_cast<size_t>(element_count(shape)))};
  for (double& v : in.values) v = dist(rng_);
  return in;
}

GradInput RandomInputs::away_from_zero(const Ints& shape) {
  GradInput in = uniform(shape, 0.2, 1.2);
  std::bernoulli_distribution negative(0.5);
  for (double& v : in.values) v = negative(rng_) ? -v : v;
  return in;
}

GradInput RandomInputs::distinct(const Ints& shape) {
  GradInput in{shape, std::vector<double>(static_cast<size_t>(element_count(shape)))};
  const double n = static_cast<double>(in.values.size());
  for (size_t i = 0; i < in.values.size(); ++i)
    in.values[i] = 0.1 * (static_cast<double>(i) - n / 2);
  std::shuffle(in.values.begin(), in.values.end(), rng_);
  return in;
}

GradInput RandomInputs::grid(const Ints& shape, double offset) {
  std::uniform_int_distribution<int> k(-5, 4);
  GradInput in{shape, std::vector<double>(static_cast<size_t>(element_count(shape)))};
  for (double& v : in.values) v = 0.2 * k(rng_) + offset;
  return in;
}

namespace {

std::string str(const Ints& shape) { return absl::StrCat("(", absl::StrJoin(shape, ", "), ")"); }

Ints dims_of(const Tensor& t) { return Ints(t.shape().dims().begin(), t.shape().dims().end()); }

std::vector<Tensor> tensors_of(const std::vector<GradInput>& inputs) {
  std::vector<Tensor> out;
  for (const GradInput& in : inputs) out.push_back(tensor_of(in));
  return out;
}

double loss_at(const GradCase& c, const std::vector<GradInput>& inputs, const Tensor& w) {
  return reduce_sum(mul(c.fn(tensors_of(inputs)), w)).to_vector<double>()[0];
}

// Compares the tape's gradient of sum(fn(xs) * w) with central differences, input by input.
void expect_gradients_match(const GradCase& c, const std::vector<Tensor>& xs, const Tensor& w) {
  std::vector<Tensor> grads;
  {
    GradientTape tape;
    for (const Tensor& x : xs) tape.watch(x);
    grads = tape.gradient(reduce_sum(mul(c.fn(xs), w)), xs);
  }
  ASSERT_EQ(grads.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("input ", i));
    ASSERT_TRUE(grads[i].defined());
    ASSERT_EQ(grads[i].dtype(), DType::kFloat64);
    ASSERT_EQ(grads[i].shape(), xs[i].shape());
    const std::vector<double> g = grads[i].to_vector<double>();
    std::vector<GradInput> moved = c.inputs;
    int mismatches = 0;
    for (size_t j = 0; j < g.size(); ++j) {
      double& x = moved[i].values[j];
      const double x0 = x;
      x = x0 + kStep;
      const double up = loss_at(c, moved, w);
      x = x0 - kStep;
      const double down = loss_at(c, moved, w);
      x = x0;
      const double fd = (up - down) / (2 * kStep);
      if (std::fabs(g[j] - fd) > kAtol + kRtol * std::fabs(fd) && ++mismatches <= 3) {
        ADD_FAILURE() << "element " << j << ": tape " << g[j] << ", finite differences " << fd;
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

}  // namespace

void GradientCheckTest::check(const GradCase& c, const char* device) {
  SCOPED_TRACE(c.name);
  std::optional<DeviceScope> scope;
  if (device != nullptr) scope.emplace(device);
  try {
    const std::vector<Tensor> xs = tensors_of(c.inputs);
    const size_t before = log().size();
    debugging::set_log_device_placement(true);
    const Tensor out = c.fn(xs);
    debugging::set_log_device_placement(false);
    const std::vector<std::string> lines = log();
    const std::string ran =
        absl::StrCat("Executing op ", op_name(c.op), " in device ",
                     device == nullptr ? "" : "/job:localhost/replica:0/task:0/device:",
                     device == nullptr ? "" : device + 1);
    EXPECT_TRUE(std::any_of(lines.begin() + before, lines.end(),
                            [&](const std::string& l) { return absl::StartsWith(l, ran); }))
        << "the case does not run " << op_name(c.op);
    ASSERT_EQ(out.dtype(), DType::kFloat64);
    RandomInputs r(7);
    expect_gradients_match(c, xs, tensor_of(r.uniform(dims_of(out))));
  } catch (const Error& e) {
    debugging::set_log_device_placement(false);
    ADD_FAILURE() << "mt::Error: " << e.what();
  }
}

namespace {

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);
using Reduction = Tensor (*)(const Tensor&, const Axes&, bool);

// Adds a case of `op` for each pair of broadcasting shapes; `make(shape, i)` makes input i.
template <typename Make>
void add_binary(std::vector<GradCase>& cases, OpId op, Binary f, Make make) {
  const std::pair<Ints, Ints> shapes[] = {
      {{2, 3}, {2, 3}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}}, {{}, {2, 3}}};
  for (const auto& [a, b] : shapes) {
    cases.push_back({op,
                     absl::StrCat(op_name(op), " ", str(a), " ", str(b)),
                     {make(a, 0), make(b, 1)},
                     [f](const std::vector<Tensor>& x) { return f(x[0], x[1]); }});
  }
}

void add_binary_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  auto any = [&r](const Ints& s, int) { return r.uniform(s); };
  add_binary(cases, OpId::kAddV2, &mt::add, any);
  add_binary(cases, OpId::kSub, &mt::sub, any);
  add_binary(cases, OpId::kMul, &mt::mul, any);
  add_binary(cases, OpId::kSquaredDifference, &mt::squared_difference, any);
  add_binary(cases, OpId::kRealDiv, &mt::div,
             [&r](const Ints& s, int i) { return i == 0 ? r.uniform(s) : r.away_from_zero(s); });
  add_binary(cases, OpId::kPow, &mt::pow, [&r](const Ints& s, int i) {
    return i == 0 ? r.uniform(s, 0.5, 2) : r.uniform(s, -1.5, 1.5);
  });
  auto no_ties = [&r](const Ints& s, int i) { return r.grid(s, i == 0 ? 0.05 : 0.15); };
  add_binary(cases, OpId::kMaximum, &mt::maximum, no_ties);
  add_binary(cases, OpId::kMinimum, &mt::minimum, no_ties);
}

void add_unary_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  enum Domain { kAny, kAwayFromZero, kPositive };
  const std::tuple<OpId, Unary, Domain> ops[] = {
      {OpId::kNeg, &mt::neg, kAny},          {OpId::kAbs, &mt::abs, kAwayFromZero},
      {OpId::kExp, &mt::exp, kAny},          {OpId::kRelu, &mt::relu, kAwayFromZero},
      {OpId::kSqrt, &mt::sqrt, kPositive},   {OpId::kRsqrt, &mt::rsqrt, kPositive},
      {OpId::kSquare, &mt::square, kAny},    {OpId::kLog, &mt::log, kPositive},
      {OpId::kLog1p, &mt::log1p, kPositive}, {OpId::kTanh, &mt::tanh, kAny},
      {OpId::kSigmoid, &mt::sigmoid, kAny},  {OpId::kIdentity, &mt::identity, kAny},
      {OpId::kErf, &mt::erf, kAny},          {OpId::kSin, &mt::sin, kAny},
      {OpId::kCos, &mt::cos, kAny}};
  for (const auto& [op, f, domain] : ops) {
    for (const Ints& shape : {Ints{2, 3}, Ints{}}) {
      const GradInput in = domain == kAny            ? r.uniform(shape, -2, 2)
                           : domain == kAwayFromZero ? r.away_from_zero(shape)
                                                     : r.uniform(shape, 0.5, 2);
      cases.push_back({op,
                       absl::StrCat(op_name(op), " ", str(shape)),
                       {in},
                       [f = f](const std::vector<Tensor>& x) { return f(x[0]); }});
    }
  }
  cases.push_back({OpId::kCast,
                   "Cast float64 to float64",
                   {r.uniform({2, 3})},
                   [](const std::vector<Tensor>& x) { return cast(x[0], DType::kFloat64); }});
}

// Prod's inputs: |x| in [0.8, 1.25) so that products of 24 stay near 1; every third negative.
GradInput prod_input(RandomInputs& r, const Ints& shape) {
  GradInput in = r.uniform(shape, 0.8, 1.25);
  for (size_t i = 0; i < in.values.size(); i += 3) in.values[i] = -in.values[i];
  return in;
}

void add_reduction_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  // Axes are built in the lambdas: GCC 12 warns, wrongly, on copies of Axes held in an array.
  struct Variant {
    const char* name;
    std::vector<int64_t> axes;
    bool all, keep;
  };
  const Variant variants[] = {{"all", {}, true, false},
                              {"axis 0", {0}, false, false},
                              {"axis -1 keep_dims", {-1}, false, true},
                              {"axes {0, 2} keep_dims", {0, 2}, false, true},
                              {"axes {2, 1}", {2, 1}, false, false},
                              {"no axis", {}, false, false}};
  const std::pair<OpId, Reduction> ops[] = {{OpId::kSum, &mt::reduce_sum},
                                            {OpId::kMean, &mt::reduce_mean},
                                            {OpId::kMax, &mt::reduce_max},
                                            {OpId::kMin, &mt::reduce_min},
                                            {OpId::kProd, &mt::reduce_prod}};
  const Ints shape = {2, 3, 4};
  for (const auto& [op, f] : ops) {
    for (const Variant& v : variants) {
      const GradInput in = op == OpId::kMax || op == OpId::kMin ? r.distinct(shape)
                           : op == OpId::kProd                  ? prod_input(r, shape)
                                                                : r.uniform(shape);
      cases.push_back(
          {op,
           absl::StrCat(op_name(op), " ", v.name),
           {in},
           [f = f, axes = v.axes, all = v.all, keep = v.keep](const std::vector<Tensor>& x) {
             return f(x[0], all ? Axes() : Axes(absl::MakeConstSpan(axes)), keep);
           }});
    }
  }
  // Prod with zeros: rows with none, one and two zeros; columns with one; a whole tensor.
  GradInput zeros = prod_input(r, {3, 4});
  zeros.values[6] = zeros.values[8] = zeros.values[11] = 0;
  for (int64_t axis : {0, 1}) {
    cases.push_back({OpId::kProd,
                     absl::StrCat("Prod with zeros, axis ", axis),
                     {zeros},
                     [axis](const std::vector<Tensor>& x) { return reduce_prod(x[0], axis); }});
  }
  GradInput one_zero = prod_input(r, {2, 3});
  one_zero.values[4] = 0;
  GradInput two_zeros = one_zero;
  two_zeros.values[1] = 0;
  const std::pair<const char*, GradInput> whole[] = {{"one zero", one_zero},
                                                     {"two zeros", two_zeros}};
  for (const auto& [name, in] : whole) {
    cases.push_back({OpId::kProd,
                     absl::StrCat("Prod of all with ", name),
                     {in},
                     [](const std::vector<Tensor>& x) { return reduce_prod(x[0]); }});
  }
}

void add_matmul_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      cases.push_back(
          {OpId::kMatMul,
           absl::StrCat("MatMul ta=", ta, " tb=", tb),
           {r.uniform(ta ? Ints{4, 3} : Ints{3, 4}), r.uniform(tb ? Ints{2, 4} : Ints{4, 2})},
           [ta, tb](const std::vector<Tensor>& x) { return matmul(x[0], x[1], ta, tb); }});
    }
  }
  const std::tuple<Ints, Ints, bool, bool> batched[] = {
      {{2, 3, 4}, {4, 5}, false, false},        // b broadcast over the batch
      {{3, 4}, {2, 4, 5}, false, false},        // a broadcast over the batch
      {{2, 1, 3, 4}, {3, 4, 2}, false, false},  // both broadcast
      {{2, 4, 3}, {2, 5, 4}, true, true},      {{2, 4, 3}, {1, 4, 2}, true, false},
      {{2, 3, 4}, {2, 4}, false, true}};
  for (const auto& [sa, sb, ta, tb] : batched) {
    cases.push_back(
        {OpId::kBatchMatMulV2,
         absl::StrCat("BatchMatMulV2 ", str(sa), " ", str(sb), " ta=", ta, " tb=", tb),
         {r.uniform(sa), r.uniform(sb)},
         [ta = ta, tb = tb](const std::vector<Tensor>& x) { return matmul(x[0], x[1], ta, tb); }});
  }
  cases.push_back({OpId::kAddN,
                   "AddN of three",
                   {r.uniform({2, 3}), r.uniform({2, 3}), r.uniform({2, 3})},
                   [](const std::vector<Tensor>& x) {
                     return add_n({x[0], x[1], x[2]});
                   }});
  cases.push_back({OpId::kAddN,
                   "AddN of one input twice",
                   {r.uniform({4}), r.uniform({4})},
                   [](const std::vector<Tensor>& x) {
                     return add_n({x[0], x[1], x[0]});
                   }});
}

void add_nn_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  for (const Ints& shape : {Ints{3, 5}, Ints{4}, Ints{2, 2, 3}}) {
    cases.push_back({OpId::kSoftmax,
                     absl::StrCat("Softmax ", str(shape)),
                     {r.uniform(shape, -2, 2)},
                     [](const std::vector<Tensor>& x) { return nn::softmax(x[0]); }});
    cases.push_back({OpId::kLogSoftmax,
                     absl::StrCat("LogSoftmax ", str(shape)),
                     {r.uniform(shape, -2, 2)},
                     [](const std::vector<Tensor>& x) { return nn::log_softmax(x[0]); }});
  }
  for (const Ints& shape : {Ints{3, 4}, Ints{2, 3, 4}}) {
    cases.push_back({OpId::kBiasAdd,
                     absl::StrCat("BiasAdd ", str(shape)),
                     {r.uniform(shape), r.uniform({4})},
                     [](const std::vector<Tensor>& x) { return nn::bias_add(x[0], x[1]); }});
  }
  const Tensor labels = constant({0, 3, 4, 1});
  cases.push_back({OpId::kSparseSoftmaxCrossEntropyWithLogits,
                   "SparseSoftmaxCrossEntropy int32 labels",
                   {r.uniform({4, 5}, -2, 2)},
                   [labels](const std::vector<Tensor>& x) {
                     return nn::sparse_softmax_cross_entropy_with_logits(labels, x[0]);
                   }});
  const Tensor labels_2d = constant(std::vector<int64_t>{1, 0, 4, 2, 2, 3}, {2, 3});
  cases.push_back({OpId::kSparseSoftmaxCrossEntropyWithLogits,
                   "SparseSoftmaxCrossEntropy (2, 3) int64 labels",
                   {r.uniform({2, 3, 5}, -2, 2)},
                   [labels_2d](const std::vector<Tensor>& x) {
                     return nn::sparse_softmax_cross_entropy_with_logits(labels_2d, x[0]);
                   }});
}

nn::Conv2DOptions conv_options(std::array<int32_t, 4> strides, Padding padding,
                               std::array<int32_t, 8> pads = {},
                               std::array<int32_t, 4> dilations = {1, 1, 1, 1},
                               bool channels_first = false) {
  nn::Conv2DOptions o;
  o.strides = strides;
  o.padding = padding;
  o.explicit_paddings = pads;
  o.dilations = dilations;
  o.channels_first = channels_first;
  return o;
}

nn::PoolOptions pool_options(std::array<int32_t, 4> ksize, std::array<int32_t, 4> strides,
                             Padding padding, std::array<int32_t, 8> pads = {},
                             bool channels_first = false) {
  nn::PoolOptions o;
  o.ksize = ksize;
  o.strides = strides;
  o.padding = padding;
  o.explicit_paddings = pads;
  o.channels_first = channels_first;
  return o;
}

// Conv2D in both inputs (through Conv2DBackpropInput and Conv2DBackpropFilter), MaxPool on
// inputs without ties (a tie's gradient has no finite difference) and AvgPool, in NHWC and
// NCHW, with strides, dilations and each padding.
// FusedBatchNormV3's y in x, scale and offset (its mean and variance take no gradient),
// training (the batch's statistics) and inference (the given ones), NHWC and NCHW.
void add_batch_norm_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  const std::tuple<const char*, Ints, bool, bool> calls[] = {
      {"training NHWC", {2, 3, 2, 3}, true, false},
      {"training NCHW", {2, 3, 2, 4}, true, true},
      {"inference NHWC", {2, 2, 3, 3}, false, false}};
  for (const auto& [name, x, training, nchw] : calls) {
    const int64_t c = x[nchw ? 1 : 3];
    nn::FusedBatchNormOptions o;
    o.is_training = training;
    o.channels_first = nchw;
    o.epsilon = 0.01;
    cases.push_back({OpId::kFusedBatchNormV3,
                     absl::StrCat("FusedBatchNormV3 ", name),
                     {r.uniform(x), r.away_from_zero({c}), r.uniform({c})},
                     [o, c](const std::vector<Tensor>& in) {
                       const Tensor mean = fill({c}, 0.125, DType::kFloat64);
                       const Tensor var = fill({c}, 0.5, DType::kFloat64);
                       return nn::fused_batch_norm(in[0], in[1], in[2], mean, var, o).y;
                     }});
  }
}

// LayerNorm's y in x, gamma and beta over the last axis and over two trailing axes, and y
// plus multiples of its mean and inv_std (their gradients' terms).
void add_layer_norm_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  const std::tuple<const char*, Ints, Ints, int64_t> calls[] = {
      {"last axis", {3, 5}, {5}, -1}, {"two trailing axes", {2, 3, 2}, {3, 2}, -2}};
  for (const auto& [name, x, params, axis] : calls) {
    const nn::LayerNormOptions o{axis, 0.01};
    cases.push_back(
        {OpId::kLayerNorm,
         absl::StrCat("LayerNorm ", name),
         {r.uniform(x), r.away_from_zero(params), r.uniform(params)},
         [o](const std::vector<Tensor>& in) { return nn::layer_norm(in[0], in[1], in[2], o).y; }});
  }
  cases.push_back(
      {OpId::kLayerNorm,
       "LayerNorm y + mean / 2 + inv_std / 4",
       {r.uniform({3, 4}), r.away_from_zero({4}), r.uniform({4})},
       [](const std::vector<Tensor>& in) {
         const nn::LayerNormResult l = nn::layer_norm(in[0], in[1], in[2], {-1, 0.01});
         const Tensor half = fill({}, 0.5, DType::kFloat64);
         const Tensor quarter = fill({}, 0.25, DType::kFloat64);
         return l.y + reshape(l.mean, {3, 1}) * half + reshape(l.inv_std, {3, 1}) * quarter;
       }});
  cases.push_back({OpId::kAddLayerNorm,
                   "AddLayerNorm y + sum / 2",
                   {r.uniform({3, 4}), r.uniform({3, 4}), r.away_from_zero({4}), r.uniform({4})},
                   [](const std::vector<Tensor>& in) {
                     const nn::AddLayerNormResult l =
                         nn::add_layer_norm(in[0], in[1], in[2], in[3], {-1, 0.01});
                     return l.y + l.sum * fill({}, 0.5, DType::kFloat64);
                   }});
}

// DotProductAttention's o in q, k and v: plain, causal with more queries than keys and with
// grouped kv heads, and o plus a multiple of lse (its gradient's term, the composite path).
void add_attention_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  // q (b, t, h, d), k and v (b, s, hk, d / dv).
  const std::tuple<const char*, Ints, Ints, Ints, bool> calls[] = {
      {"plain", {2, 3, 2, 3}, {2, 4, 2, 3}, {2, 4, 2, 2}, false},
      {"causal, more queries than keys", {1, 5, 2, 2}, {1, 3, 2, 2}, {1, 3, 2, 3}, true},
      {"causal, grouped kv heads", {1, 4, 4, 2}, {1, 4, 2, 2}, {1, 4, 2, 2}, true}};
  for (const auto& [name, q, k, v, causal] : calls) {
    const nn::DotProductAttentionOptions o{0.8, causal};
    cases.push_back({OpId::kDotProductAttention,
                     absl::StrCat("DotProductAttention ", name),
                     {r.uniform(q), r.uniform(k), r.uniform(v)},
                     [o](const std::vector<Tensor>& in) {
                       return nn::dot_product_attention(in[0], in[1], in[2], o).o;
                     }});
  }
  cases.push_back({OpId::kDotProductAttention,
                   "DotProductAttention o + lse / 2",
                   {r.uniform({1, 3, 2, 2}), r.uniform({1, 4, 1, 2}), r.uniform({1, 4, 1, 2})},
                   [](const std::vector<Tensor>& in) {
                     const nn::DotProductAttentionResult a =
                         nn::dot_product_attention(in[0], in[1], in[2], {std::nullopt, true});
                     const Tensor half = fill({}, 0.5, DType::kFloat64);
                     return a.o + reshape(transpose(a.lse, {0, 2, 1}), {1, 3, 2, 1}) * half;
                   }});
}

void add_conv_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  const std::tuple<const char*, Ints, Ints, nn::Conv2DOptions> convs[] = {
      {"VALID", {2, 5, 4, 3}, {3, 2, 3, 2}, conv_options({1, 1, 1, 1}, Padding::kValid)},
      {"SAME strides 2", {2, 5, 5, 2}, {3, 3, 2, 3}, conv_options({1, 2, 2, 1}, Padding::kSame)},
      {"NCHW EXPLICIT dilations 2",
       {1, 2, 5, 6},
       {2, 2, 2, 2},
       conv_options({1, 1, 1, 2}, Padding::kExplicit, {0, 0, 0, 0, 1, 0, 0, 2}, {1, 1, 2, 2},
                    /*channels_first=*/true)}};
  for (const auto& [name, x, f, options] : convs) {
    cases.push_back(
        {OpId::kConv2D,
         absl::StrCat("Conv2D ", name, " ", str(x), " ", str(f)),
         {r.uniform(x), r.uniform(f)},
         [o = options](const std::vector<Tensor>& in) { return nn::conv2d(in[0], in[1], o); }});
  }
  const std::tuple<const char*, Ints, nn::PoolOptions> pools[] = {
      {"SAME 3x3 strides 2",
       {2, 5, 5, 2},
       pool_options({1, 3, 3, 1}, {1, 2, 2, 1}, Padding::kSame)},
      {"NCHW VALID 2x2",
       {1, 2, 4, 5},
       pool_options({1, 1, 2, 2}, {1, 1, 1, 1}, Padding::kValid, {},
                    /*channels_first=*/true)},
      {"EXPLICIT 2x3 strides 2",
       {2, 5, 6, 1},
       pool_options({1, 2, 3, 1}, {1, 2, 2, 1}, Padding::kExplicit, {0, 0, 1, 0, 2, 1, 0, 0})}};
  for (const auto& [name, x, options] : pools) {
    cases.push_back(
        {OpId::kMaxPool,
         absl::StrCat("MaxPool ", name),
         {r.distinct(x)},
         [o = options](const std::vector<Tensor>& in) { return nn::max_pool2d(in[0], o); }});
    cases.push_back(
        {OpId::kAvgPool,
         absl::StrCat("AvgPool ", name),
         {r.uniform(x)},
         [o = options](const std::vector<Tensor>& in) { return nn::avg_pool2d(in[0], o); }});
  }
}

// ClipByValue: t on both sides of bounds that broadcast (a row of mins, a scalar max), every
// element at least 0.1 from a bound; Gelu exact and in tanh form.
void add_clip_gelu_cases(std::vector<GradCase>& cases, RandomInputs& r) {
  const GradInput t{{2, 3}, {-1.5, -0.6, -0.1, 0.2, 0.7, 1.4}};
  const GradInput lo{{3}, {-0.5, -0.7, -0.2}};
  const GradInput hi{{}, {0.5}};
  cases.push_back({OpId::kClipByValue,
                   "ClipByValue (2, 3) between (3,) and ()",
                   {t, lo, hi},
                   [](const std::vector<Tensor>& x) { return clip_by_value(x[0], x[1], x[2]); }});
  const GradInput same{{2, 3}, {-0.2, 0.8, 0.1, 0.3, -0.9, 0.0}};
  cases.push_back({OpId::kClipByValue,
                   "ClipByValue with bounds of t's shape",
                   {t, same, r.uniform({2, 3}, 1.6, 2)},
                   [](const std::vector<Tensor>& x) { return clip_by_value(x[0], x[1], x[2]); }});
  for (bool approximate : {false, true}) {
    for (const Ints& shape : {Ints{2, 3}, Ints{}}) {
      cases.push_back(
          {OpId::kGelu,
           absl::StrCat("Gelu ", approximate ? "tanh " : "", str(shape)),
           {r.uniform(shape, -3, 3)},
           [approximate](const std::vector<Tensor>& x) { return nn::gelu(x[0], approximate); }});
    }
  }
}

}  // namespace

std::vector<GradCase> math_grad_cases() {
  RandomInputs r(2024);
  std::vector<GradCase> cases;
  add_binary_cases(cases, r);
  add_unary_cases(cases, r);
  add_reduction_cases(cases, r);
  add_matmul_cases(cases, r);
  add_nn_cases(cases, r);
  add_conv_cases(cases, r);
  add_batch_norm_cases(cases, r);
  add_layer_norm_cases(cases, r);
  add_attention_cases(cases, r);
  add_clip_gelu_cases(cases, r);
  return cases;
}

namespace {

TEST_F(GradientCheckTest, EveryDifferentiableOpHasACase) {
  std::vector<GradCase> cases = math_grad_cases();
  for (GradCase& c : array_grad_cases()) cases.push_back(std::move(c));
  for (int i = 0; i < kNumOps; ++i) {
    const OpId op = static_cast<OpId>(i);
    const bool covered =
        std::any_of(cases.begin(), cases.end(), [op](const GradCase& c) { return c.op == op; });
    if (op_has_flag(op, kGrad)) {
      EXPECT_TRUE(covered) << op_name(op) << " is flagged kGrad but has no gradient check case";
    } else {
      EXPECT_FALSE(covered) << op_name(op) << " has a gradient check case but no kGrad flag";
    }
  }
}

TEST_F(GradientCheckTest, MathGradientsMatchFiniteDifferences) {
  for (const GradCase& c : math_grad_cases()) check(c);
}

// float64 -> float32 -> float64: the gradient comes back through float32 (rounded there) and
// leaves in x's dtype; a cast to an integer passes no gradient.
TEST_F(GradientCheckTest, CastThroughFloat32RoundsTheGradientThere) {
  const Tensor x = constant(std::vector<double>{0.1, -2.5, 3.25}, {3});
  const Tensor w = constant(std::vector<double>{1.5, -0.3, 0.7}, {3});
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  const Tensor narrow = cast(x, DType::kFloat32);
  const Tensor loss = reduce_sum(mul(cast(narrow, DType::kFloat64), w));
  const std::vector<Tensor> g = tape.gradient(loss, {x, narrow});
  ASSERT_TRUE(g[0].defined() && g[1].defined());
  EXPECT_EQ(g[0].dtype(), DType::kFloat64);
  EXPECT_EQ(g[1].dtype(), DType::kFloat32);
  EXPECT_EQ(g[1].to_vector<float>(), (std::vector<float>{1.5f, -0.3f, 0.7f}));
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{1.5, double{-0.3f}, double{0.7f}}));
  const Tensor through_int = reduce_sum(cast(cast(x, DType::kInt32), DType::kFloat64));
  EXPECT_FALSE(tape.gradient(through_int, {x})[0].defined());
}

}  // namespace
}  // namespace mt::testing
