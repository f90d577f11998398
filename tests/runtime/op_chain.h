#pragma once
// Random op chains for the differential fuzzer (differential_fuzz_test.cc), the way ggml's
// test-backend-ops checks every backend against the CPU.
//
//   OpChain chain(seed, devices);   // devices[0] is the reference, a CPU
//   chain.generate(12, &tally);     // 12 steps, each run on the reference as it is drawn
//   chain.replay(devices[2], &tally);  // every op on devices[2]; mismatches go to tally
//
// A step is a leaf (a constant of random values, or fill/zeros/ones) created on a random
// device, or an op of the op table (every row, every dtype) on inputs drawn from earlier
// results: mostly compatible ones (broadcastable shapes, same dtype) with attributes valid
// for their shapes, sometimes any, so that errors happen too. Leaves have rank 0 to 3 and
// dimensions 0, 1 and odd sizes; array ops reshape them further, within kMaxElements, and
// the convolutions and pools make 4-D images of their own (op_chain_conv_steps.h).
// Integer ops that could overflow (undefined behaviour on the CPU) are replaced by
// identity, judged from the largest magnitude of the reference inputs, as are the steps of
// op_chain_rules.h. A replay runs each op under a scope naming the device under test, on
// inputs that it recreates on the same random devices, and compares each step with the
// reference: the error code, or dtype, shape and values (bitwise on the same device type;
// a small relative tolerance across types, a larger one where bfloat16 or float16 values
// flowed in: Note [Fuzzing 2-byte dtypes] in op_chain_steps.h; +0 and -0 equal, Note [Sign
// of zero]; stateful random ops by range, Note [Stateful random steps]).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/minitensor.h"
#include "tests/runtime/op_chain_rules.h"
#include "tests/runtime/op_chain_run.h"
#include "tests/runtime/op_chain_steps.h"

namespace mt::testing {

// Counts of one fuzzing session, and a report of each mismatch.
struct Tally {
  int64_t programs = 0;
  int64_t ops = 0;     // ops run on devices under test and on the reference
  int64_t errors = 0;  // of them, errors (expected ones included)
  int64_t mismatches = 0;
  std::vector<std::string> reports;  // the first few
};

class OpChain {
 public:
  OpChain(uint64_t seed, std::vector<std::string> devices)
      : seed_(seed), rng_(seed), devices_(std::move(devices)) {}

  // Draws `n` steps (more when an op needs fresh operands), running each on the reference.
  void generate(int n, Tally* tally) {
    while (static_cast<int>(steps_.size()) < n) add(draw());
    tally->ops += static_cast<int64_t>(steps_.size());
    for (const Outcome& o : reference_) tally->errors += o.code != absl::StatusCode::kOk;
  }

  // Runs every step again with ops on `device` and compares each with the reference.
  void replay(const std::string& device, Tally* tally) const;

  // Calls `fn` with each step's name and device just before it runs (a watchdog's note).
  void on_step(std::function<void(const std::string&)> fn) { on_step_ = std::move(fn); }

  // The steps drawn so far and the reference outcome of each.
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<Outcome>& reference() const { return reference_; }

  // Returns the first `n` steps, one per line.
  std::string describe(size_t n) const;

 private:
  static constexpr double kIntLimit = double{1 << 28};  // integer results stay below this
  static constexpr int64_t kMaxElements = 4096;         // array ops grow tensors up to this
  static constexpr double kBadAttrs = 0.06;             // attributes drawn invalid

  bool same_type(const std::string& device) const {
    return device.find("device:CPU") != std::string::npos;  // the reference is a CPU
  }

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  static bool is_int(DType t) { return t == DType::kInt32 || t == DType::kInt64; }
  static int64_t count(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  const std::vector<int64_t>& shape_of(int i) const { return reference_[i].shape; }

  void add(const Step& s) {
    bool loose = gives_loose_zero_sign(s);
    for (int i : s.inputs) loose = loose || loose_zero_sign_[i];
    loose_zero_sign_.push_back(loose);  // Note [Sign of zero]
    bool inexact = computes_inexact(s);
    for (int i : s.inputs) inexact = inexact || inexact_[i];
    inexact_.push_back(inexact);  // Note [Discontinuous ops]
    steps_.push_back(s);
    Tensor out;
    reference_.push_back(run(s, reference_values_, devices_[0], &out));
    reference_values_.push_back(out);
  }

  std::vector<int64_t> random_shape() {
    static constexpr int64_t kDims[] = {0, 1, 1, 2, 3, 3, 5, 7};
    std::vector<int64_t> shape(uniform(0, 3));
    for (int64_t& d : shape) d = kDims[uniform(chance(0.9) ? 1 : 0, 7)];
    return shape;
  }

  // A leaf of `dtype` and `shape` with random values, on a random device.
  Step leaf(DType dtype, std::vector<int64_t> shape) {
    Step s;
    s.kind = StepKind::kLeaf;
    s.dtype = dtype;
    s.shape = std::move(shape);
    s.device = uniform(0, static_cast<int>(devices_.size()) - 1);
    for (int64_t i = 0, n = count(s.shape); i < n; ++i) {
      double v = uniform(-8, 8) * 0.25;
      if (is_int(dtype)) v = uniform(-4, 4);
      if (dtype == DType::kBool) v = uniform(0, 1);
      if (!is_int(dtype) && dtype != DType::kBool && chance(0.02)) {
        static constexpr double kSpecial[] = {NAN, INFINITY, -INFINITY};
        v = kSpecial[uniform(0, 2)];
      }
      s.values.push_back(v);
    }
    return s;
  }

  // Adds a leaf of int32 or int64 indices in [0, n) (0 when n is 0) and returns its index.
  int index_leaf(std::vector<int64_t> shape, int64_t n) {
    Step s = leaf(chance(0.5) ? DType::kInt32 : DType::kInt64, std::move(shape));
    for (double& v : s.values) v = n > 0 ? uniform(0, static_cast<int>(n) - 1) : 0;
    add(s);
    return static_cast<int>(steps_.size()) - 1;
  }

  DType random_dtype() { return static_cast<DType>(uniform(0, kNumDTypes - 1)); }
  // One of `set`'s dtypes, or now and then any dtype.
  DType pick_dtype(DTypeSet set) {
    std::vector<DType> in;
    for (int t = 0; t < kNumDTypes; ++t) {
      if (dtype_in(static_cast<DType>(t), set)) in.push_back(static_cast<DType>(t));
    }
    return chance(kBadAttrs) ? random_dtype() : in[uniform(0, static_cast<int>(in.size()) - 1)];
  }
  int random_value() { return uniform(0, static_cast<int>(steps_.size()) - 1); }

  // Returns the index of a defined result of `dtype` and `shape`, adding a leaf if needed.
  int operand(DType dtype, const std::vector<int64_t>& shape) {
    for (int tries = 0; tries < 4 && !steps_.empty(); ++tries) {
      int i = random_value();
      const Outcome& o = reference_[i];
      if (o.code == absl::StatusCode::kOk && o.dtype == dtype && o.shape == shape) return i;
    }
    add(leaf(dtype, shape));
    return static_cast<int>(steps_.size()) - 1;
  }

  // Returns a defined result, adding a random leaf when there is none yet.
  int any_defined() {
    for (int tries = 0; tries < 8 && !steps_.empty(); ++tries) {
      int i = random_value();
      if (reference_[i].code == absl::StatusCode::kOk) return i;
    }
    add(leaf(random_dtype(), random_shape()));
    return static_cast<int>(steps_.size()) - 1;
  }

  // A shape that broadcasts with `shape`: some dimensions set to 1, some leading ones dropped.
  std::vector<int64_t> broadcastable(const std::vector<int64_t>& shape) {
    std::vector<int64_t> out(shape.begin() + uniform(0, static_cast<int>(shape.size())),
                             shape.end());
    for (int64_t& d : out) d = chance(0.3) ? 1 : d;
    return out;
  }

  Step draw();
  // op_chain_source_steps.h
  Step draw_source();
  void draw_range(Step& s);
  Step draw_random();
  // op_chain_math_steps.h
  Step draw_binary(int a);
  Step draw_matmul(int a);
  Step draw_reduce(int a);
  Step draw_arg(int a);
  Step draw_nn(int a);
  void draw_attention(Step& s, int a);
  Step draw_segment_sum(int a);
  Step draw_clip(int a);
  Step draw_variable(int a);
  double predicted_bound(const Step& s) const;
  // op_chain_array_steps.h
  Step draw_array(int a);
  void draw_reshape(Step& s, const std::vector<int64_t>& shape);
  void draw_join(Step& s, const std::vector<int64_t>& shape);
  void draw_split(Step& s, const std::vector<int64_t>& shape);
  void draw_slice(Step& s, const std::vector<int64_t>& shape);
  void draw_strided_slice(Step& s, const std::vector<int64_t>& shape);
  void draw_index(Step& s, const std::vector<int64_t>& shape);
  void draw_broadcast(Step& s, const std::vector<int64_t>& shape);
  void draw_select(Step& s, const std::vector<int64_t>& shape);
  void draw_band_or_scan(Step& s, const std::vector<int64_t>& shape);
  void draw_pad(Step& s, const std::vector<int64_t>& shape);
  void draw_top_k(Step& s, const std::vector<int64_t>& shape);
  void draw_scatter(Step& s, const std::vector<int64_t>& shape);
  // op_chain_conv_steps.h
  Step draw_conv(int a);
  Step draw_batch_norm(int a);
  void draw_image(Step& s, int a, DType* dtype, std::vector<int64_t>* image);
  void draw_window(Step& s, const std::vector<int64_t>& image, int spoil, int64_t* k, int64_t* out);
  void add_conv_operands(Step& s, DType dtype, const std::vector<int64_t>& image,
                         const int64_t* out, const int64_t* k, bool mismatch);

  Outcome run(const Step& s, const std::vector<Tensor>& values, const std::string& device,
              Tensor* out) const;
  static std::string step_name(const Step& s);

  uint64_t seed_;
  std::mt19937_64 rng_;
  std::vector<std::string> devices_;
  std::vector<Step> steps_;
  std::vector<Outcome> reference_;
  std::vector<Tensor> reference_values_;
  std::vector<bool> loose_zero_sign_;  // per step: its zeros may have either sign
  std::vector<bool> inexact_;          // per step: its values may differ by an ulp by device
  std::function<void(const std::string&)> on_step_;
};

// ---------------------------------------------------------------------------------------
// Replaying.

inline void OpChain::replay(const std::string& device, Tally* tally) const {
  std::vector<Tensor> values(steps_.size());
  std::vector<bool> float32(steps_.size());  // float32 values flow into step i
  std::vector<bool> half(steps_.size());     // bfloat16 or float16 values flow into step i
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    float32[i] = s.dtype == DType::kFloat32;
    half[i] = s.dtype == DType::kBFloat16 || s.dtype == DType::kFloat16;
    for (int in : s.inputs) {
      float32[i] = float32[i] || float32[in];
      half[i] = half[i] || half[in];
    }
    Outcome got = run(s, values, device, &values[i]);
    ++tally->ops;
    tally->errors += got.code != absl::StatusCode::kOk;
    std::string why;
    if (is_stateful_random(s.op)) {  // Note [Stateful random steps]
      const auto [lo, hi] = random_range(s);
      why = compare_random_outcomes(reference_[i], got, lo, hi);
      if (why.empty() && got.code == absl::StatusCode::kOk) {
        DeviceScope scope(device);
        values[i] = identity(reference_values_[i]);
      }
    } else {
      why = compare_outcomes(reference_[i], got, same_type(device), float32[i], half[i]);
    }
    if (why.empty()) continue;
    ++tally->mismatches;
    if (tally->reports.size() < 10) {
      tally->reports.push_back(absl::StrCat("seed ", seed_, ", step ", i, " on ", device, ": ", why,
                                            "\n", describe(i + 1)));
    }
    return;  // later steps would read a different value
  }
}

inline Outcome OpChain::run(const Step& s, const std::vector<Tensor>& values,
                            const std::string& device, Tensor* out) const {
  Outcome o;
  const bool source = s.kind == StepKind::kLeaf || s.kind == StepKind::kFill;
  if (on_step_) on_step_(absl::StrCat(step_name(s), " on ", source ? devices_[s.device] : device));
  try {
    if (source) {
      DeviceScope scope(devices_[s.device]);
      *out = make_source(s);
    } else {
      std::vector<Tensor> in;
      for (int i : s.inputs) in.push_back(values[i]);  // a failed step's is empty
      DeviceScope scope(device);
      *out = run_op(s, in);
    }
    o = read_outcome(*out);
  } catch (const Error& e) {
    o.code = e.code();
    *out = Tensor();
  }
  return o;
}

// ---------------------------------------------------------------------------------------
// Drawing steps.

inline Step OpChain::draw() {
  if (steps_.size() < 2 || chance(0.12)) return draw_source();
  const int a = chance(0.95) ? any_defined() : random_value();  // a failed one, sometimes
  Step s;
  switch (uniform(0, 14)) {
    case 0:
      s = draw_matmul(a);
      break;
    case 1:
      s.kind = StepKind::kAddN;
      s.op = OpId::kAddN;
      s.inputs = {a};
      for (int k = uniform(0, 3); k > 0; --k) {
        const DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
        const std::vector<int64_t> shape = shape_of(a);
        s.inputs.push_back(chance(0.9) ? operand(dtype, shape) : any_defined());
      }
      break;
    case 2:
    case 3:
      s = draw_binary(a);
      break;
    case 4:
      s.kind = StepKind::kUnary;
      s.variant = uniform(0, static_cast<int>(std::size(kUnaryOps)) - 1);
      s.op = kUnaryOps[s.variant].op;
      s.inputs = {a};
      break;
    case 5:
      s = draw_reduce(a);
      break;
    case 6:
      s.kind = StepKind::kCast;
      s.op = OpId::kCast;
      s.dtype = random_dtype();
      s.inputs = {a};
      break;
    case 7:
      s.kind = StepKind::kIdentity;
      s.op = chance(0.5) ? OpId::kIdentity : OpId::kStopGradient;
      s.inputs = {a};
      break;
    case 8:
      s = draw_arg(a);
      break;
    case 12: {
      const int pick = uniform(0, 2);
      s = pick == 0 ? draw_segment_sum(a) : pick == 1 ? draw_variable(a) : draw_clip(a);
      break;
    }
    case 9:
    case 10:
      s = draw_array(a);
      break;
    case 13:
      s = chance(0.25) ? draw_batch_norm(a) : draw_conv(a);
      break;
    default:
      s = draw_nn(a);
  }
  // An integer result that could overflow is undefined behaviour on the CPU, and division
  // by a zero of either sign differs by device (Note [Sign of zero]): neither is drawn.
  // Nor are steps only the CPU rejects, or discontinuous ones on inexact values (Note [Steps
  // only the CPU rejects], Note [Discontinuous ops]).
  if (predicted_bound(s) >= kIntLimit || divides_by_loose_zero(s, reference_, loose_zero_sign_) ||
      rejected_on_cpu_only(s, reference_) || discontinuous_on_inexact(s, reference_, inexact_)) {
    s = Step();
    s.kind = StepKind::kIdentity;
    s.op = OpId::kIdentity;
    s.inputs = {a};
  }
  return s;
}

inline std::string OpChain::describe(size_t n) const {
  std::vector<std::string> lines;
  for (size_t i = 0; i < n && i < steps_.size() && i < reference_.size(); ++i) {
    const Step& s = steps_[i];
    std::string attrs;
    if (s.axes) absl::StrAppend(&attrs, " axes [", absl::StrJoin(*s.axes, ", "), "]");
    if (s.kind == StepKind::kArray || s.kind == StepKind::kArg) {
      absl::StrAppend(&attrs, " dims [", absl::StrJoin(s.dims, ", "), "] [",
                      absl::StrJoin(s.dims2, ", "), "] [", absl::StrJoin(s.dims3, ", "), "] axis ",
                      s.axis, " count ", s.count, " pick ", s.pick, " flags ", s.flag_a, " ",
                      s.flag_b);
    }
    if (s.op == OpId::kStridedSlice) {
      const StridedSliceOptions& m = s.masks;
      absl::StrAppend(&attrs, " masks ", m.begin_mask, " ", m.end_mask, " ", m.ellipsis_mask, " ",
                      m.new_axis_mask, " ", m.shrink_axis_mask);
    }
    if (s.op == OpId::kLayerNorm || s.op == OpId::kLayerNormGrad || s.op == OpId::kAddLayerNorm) {
      absl::StrAppend(&attrs, " axis ", s.axis, s.flag_a ? " epsilon -1" : "",
                      s.flag_b ? " second output" : "");
    }
    if (s.op == OpId::kDotProductAttention || s.op == OpId::kDotProductAttentionGrad) {
      absl::StrAppend(&attrs, s.flag_a ? " causal" : "", s.flag_b ? " scale inf" : "", " output ",
                      s.pick);
    }
    if (s.kind == StepKind::kConv) {
      const nn::Conv2DOptions& o = s.conv;
      if (s.op == OpId::kFusedBatchNormV3 || s.op == OpId::kFusedBatchNormGradV3) {
        absl::StrAppend(&attrs, s.is_training ? " training" : " inference");
      }
      absl::StrAppend(&attrs, o.channels_first ? " NCHW" : " NHWC", " strides [",
                      absl::StrJoin(o.strides, ", "), "] dilations [",
                      absl::StrJoin(o.dilations, ", "), "] ksize [", absl::StrJoin(s.ksize, ", "),
                      "] padding ", static_cast<int>(o.padding), " explicit [",
                      absl::StrJoin(o.explicit_paddings, ", "), "] dims [",
                      absl::StrJoin(s.dims, ", "), "]");
    }
    if (s.kind == StepKind::kRandom || s.op == OpId::kOneHot || s.op == OpId::kRange) {
      absl::StrAppend(&attrs, " values (", absl::StrJoin(s.values, ", "), ") seed ",
                      s.seed ? absl::StrCat(*s.seed) : "none");
    }
    // A source says what it made and where; an op, its reference outcome (or error code).
    const bool source = s.kind == StepKind::kLeaf || s.kind == StepKind::kFill;
    const Outcome& r = reference_[i];
    const std::string result =
        source ? absl::StrCat(" dtype ", dtype_name(s.dtype), " shape (",
                              absl::StrJoin(s.shape, ", "), ") leaf on ", devices_[s.device])
        : r.code != absl::StatusCode::kOk
            ? absl::StrCat(" -> error ", absl::StatusCodeToString(r.code))
            : absl::StrCat(" -> dtype ", dtype_name(r.dtype), " shape (",
                           absl::StrJoin(r.shape, ", "), ")");
    lines.push_back(absl::StrCat("  v", i, " = ", step_name(s), "(v",
                                 absl::StrJoin(s.inputs, ", v"), ")", result, attrs));
  }
  return absl::StrJoin(lines, "\n");
}

inline std::string OpChain::step_name(const Step& s) {
  static const char* const kFill[] = {"fill", "zeros", "ones", "range"};
  switch (s.kind) {
    case StepKind::kLeaf:
      return "constant";
    case StepKind::kFill:
      return kFill[s.variant];
    case StepKind::kMatMul:
      return absl::StrCat(op_name(s.op), s.flag_a ? "_ta" : "", s.flag_b ? "_tb" : "");
    case StepKind::kReduce:
      return absl::StrCat(op_info(s.op).cc_name, s.flag_a ? "_keep_dims" : "");
    case StepKind::kNn:
      if (s.op == OpId::kGelu) return s.flag_a ? "gelu_approximate" : "gelu";
      return absl::StrCat(op_info(s.op).cc_name, s.flag_a ? "_and_grad" : "",
                          s.flag_a && s.flag_b ? "[1]" : "");
    default:
      return op_info(s.op).cc_name;
  }
}

}  // namespace mt::testing

// The drawing of each family's steps, as OpChain members.
#include "tests/runtime/op_chain_array_steps.h"   // IWYU pragma: export
#include "tests/runtime/op_chain_conv_steps.h"    // IWYU pragma: export
#include "tests/runtime/op_chain_math_steps.h"    // IWYU pragma: export
#include "tests/runtime/op_chain_source_steps.h"  // IWYU pragma: export
