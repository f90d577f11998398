#pragma once
// Random op chains for the differential fuzzer (differential_fuzz_test.cc), the way ggml's
// test-backend-ops checks every backend against the CPU.
//
//   OpChain chain(seed, devices);   // devices[0] is the reference, a CPU
//   chain.generate(12, &tally);     // 12 steps, each run on the reference as it is drawn
//   chain.replay(devices[2], &tally);  // every op on devices[2]; mismatches go to tally
//
// A step is a leaf (a constant of random values, or fill/zeros/ones) created on a random
// device, or an op (every public op, every dtype) on inputs drawn from earlier results:
// mostly compatible ones (broadcastable shapes, same dtype), sometimes any, so that errors
// happen too. Shapes have rank 0 to 3 and dimensions 0, 1 and odd sizes. Integer ops that
// could overflow (undefined behaviour on the CPU) are replaced by identity, judged from the
// largest magnitude of the reference inputs. A replay runs each op under a scope naming
// the device under test, on inputs that it recreates on the same random devices, and
// compares each step with the reference: the error code, or dtype, shape and values
// (bitwise on the same device type; a small relative tolerance across types, a larger one
// where bfloat16 or float16 values flowed in: Note [Fuzzing 2-byte dtypes] in
// op_chain_steps.h; +0 and -0 equal, Note [Sign of zero]).

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
#include "tests/runtime/op_chain_steps.h"

namespace mt::testing {

// Note [Sign of zero]
// IEEE 754 gives an exact zero sum the sign +0 unless every term is -0, so the sign of a
// zero from a sum depends on how the sum is formed: a CPU GEMM that starts from its first
// product gives -0 for (-0) x 1, where cuBLAS, starting from +0, gives +0. MatMul, AddN
// and the reductions may thus disagree across devices on the sign of a zero, and so may
// ReLU of -0 (max(-0, +0) is either). The fuzzer compares +0 and -0 as equal. Division is
// the one op that shows the sign (x / -0 = -inf, x / +0 = +inf, and exp or ReLU of those
// differ further on), so a floating-point division by a zero whose sign comes from such an
// op is not drawn, the way integer overflow is not.

// Returns the input of `s` whose zeros give results that show their sign (x / -0 = -inf,
// x // -0, -0 ** -1 = -inf, rsqrt(-0) = -inf), or -1.
inline int sign_showing_input(const Step& s) {
  if (s.kind == StepKind::kBinary && s.inputs.size() == 2) {
    const OpId op = kBinaryOps[s.variant].op;
    if (op == OpId::kRealDiv || op == OpId::kFloorDiv || op == OpId::kFloorMod) return s.inputs[1];
    if (op == OpId::kPow) return s.inputs[0];
  }
  if (s.kind == StepKind::kUnary && kUnaryOps[s.variant].op == OpId::kRsqrt) return s.inputs[0];
  return -1;
}

// Returns whether `s` divides floats by a zero whose sign devices may disagree on
// (Note [Sign of zero]): `reference` holds the reference outcome of each step and
// `loose_zero_sign` whether each one's zeros may have either sign.
inline bool divides_by_loose_zero(const Step& s, const std::vector<Outcome>& reference,
                                  const std::vector<bool>& loose_zero_sign) {
  const int divisor = sign_showing_input(s);
  if (divisor < 0) return false;
  const Outcome& d = reference[divisor];
  if (d.code != absl::StatusCode::kOk || !loose_zero_sign[divisor]) return false;
  if (d.dtype == DType::kInt32 || d.dtype == DType::kInt64 || d.dtype == DType::kBool) {
    return false;  // integer zeros have no sign
  }
  return std::find(d.values.begin(), d.values.end(), 0.0) != d.values.end();
}

// Note [Steps only the CPU rejects]: integer FloorDiv and FloorMod by zero and integer Pow
// to a negative power fail on the CPU but give values on the GPU (Note [Integer division by
// zero] in kernels/cpu/binary_kernels.cc). Returns whether `s` is such a step on the
// reference values.
inline bool rejected_on_cpu_only(const Step& s, const std::vector<Outcome>& reference) {
  if (s.kind != StepKind::kBinary || s.inputs.size() != 2) return false;
  const OpId op = kBinaryOps[s.variant].op;
  if (op != OpId::kFloorDiv && op != OpId::kFloorMod && op != OpId::kPow) return false;
  const Outcome& b = reference[s.inputs[1]];
  if (b.code != absl::StatusCode::kOk || (b.dtype != DType::kInt32 && b.dtype != DType::kInt64)) {
    return false;
  }
  for (double v : b.values) {
    if (op == OpId::kPow ? v < 0 : v == 0) return true;
  }
  return false;
}

// Note [Discontinuous ops]: Exp, Log, Pow and the other kCostly ops differ across device
// types by an ulp or two, and so may sums (MatMul, AddN, Sum, Mean) once their terms need
// more bits than the dtype holds (another order rounds otherwise); Floor, Round, Sign,
// FloorDiv, FloorMod and casts to integers or bool turn such a difference near a step of
// theirs into a whole unit. Returns whether
// `s` is one of those on a floating-point value that may carry such a difference
// (`inexact`, per step; integer results are exact).
inline bool discontinuous_on_inexact(const Step& s, const std::vector<Outcome>& reference,
                                     const std::vector<bool>& inexact) {
  bool discontinuous =
      s.kind == StepKind::kCast &&
      (s.dtype == DType::kInt32 || s.dtype == DType::kInt64 || s.dtype == DType::kBool);
  if (s.kind == StepKind::kUnary) {
    const OpId op = kUnaryOps[s.variant].op;
    discontinuous = op == OpId::kFloor || op == OpId::kRound || op == OpId::kSign;
  }
  if (s.kind == StepKind::kBinary) {
    const OpId op = kBinaryOps[s.variant].op;
    discontinuous = op == OpId::kFloorDiv || op == OpId::kFloorMod;
  }
  if (!discontinuous) return false;
  for (int i : s.inputs) {
    const DType t = reference[i].dtype;
    if (inexact[i] && t != DType::kInt32 && t != DType::kInt64 && t != DType::kBool) return true;
  }
  return false;
}

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
  void replay(const std::string& device, Tally* tally) const {
    std::vector<Tensor> values(steps_.size());
    std::vector<bool> float32(steps_.size());  // float32 values flow into step i
    std::vector<bool> half(steps_.size());     // bfloat16 or float16 values flow into step i
    for (size_t i = 0; i < steps_.size(); ++i) {
      float32[i] = steps_[i].dtype == DType::kFloat32;
      half[i] = steps_[i].dtype == DType::kBFloat16 || steps_[i].dtype == DType::kFloat16;
      for (int in : steps_[i].inputs) {
        float32[i] = float32[i] || float32[in];
        half[i] = half[i] || half[in];
      }
      Outcome got = run(steps_[i], values, device, &values[i]);
      ++tally->ops;
      tally->errors += got.code != absl::StatusCode::kOk;
      std::string why =
          compare_outcomes(reference_[i], got, same_type(device), float32[i], half[i]);
      if (why.empty()) continue;
      ++tally->mismatches;
      if (tally->reports.size() < 10) {
        tally->reports.push_back(absl::StrCat("seed ", seed_, ", step ", i, " on ", device, ": ",
                                              why, "\n", describe(i + 1)));
      }
      return;  // later steps would read a different value
    }
  }

  // Calls `fn` with each step's name and device just before it runs (a watchdog's note).
  void on_step(std::function<void(const std::string&)> fn) { on_step_ = std::move(fn); }

  // Returns the first `n` steps, one per line.
  std::string describe(size_t n) const {
    std::vector<std::string> lines;
    for (size_t i = 0; i < n && i < steps_.size(); ++i) {
      const Step& s = steps_[i];
      lines.push_back(
          absl::StrCat("  v", i, " = ", step_name(s), "(v", absl::StrJoin(s.inputs, ", v"),
                       ") dtype ", dtype_name(s.dtype), " shape (", absl::StrJoin(s.shape, ", "),
                       ") leaf on ", devices_[s.device],
                       s.axes ? absl::StrCat(" axes [", absl::StrJoin(*s.axes, ", "), "]") : ""));
    }
    return absl::StrJoin(lines, "\n");
  }

 private:
  static constexpr double kIntLimit = double{1 << 28};  // integer results stay below this

  bool same_type(const std::string& device) const {
    return device.find("device:CPU") != std::string::npos;  // the reference is a CPU
  }

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  static bool is_int(DType t) { return t == DType::kInt32 || t == DType::kInt64; }

  void add(const Step& s) {
    bool loose = s.kind == StepKind::kMatMul || s.kind == StepKind::kAddN ||
                 s.kind == StepKind::kReduce ||
                 (s.kind == StepKind::kUnary && kUnaryOps[s.variant].op == OpId::kRelu);
    for (int i : s.inputs) loose = loose || loose_zero_sign_[i];
    loose_zero_sign_.push_back(loose);  // Note [Sign of zero]
    const bool sums = s.kind == StepKind::kMatMul || s.kind == StepKind::kAddN ||
                      (s.kind == StepKind::kReduce && kReductionOps[s.variant].op != OpId::kMax);
    bool inexact = sums ||
                   (s.kind == StepKind::kUnary && op_has_flag(kUnaryOps[s.variant].op, kCostly)) ||
                   (s.kind == StepKind::kBinary && op_has_flag(kBinaryOps[s.variant].op, kCostly));
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
    int64_t n = 1;
    for (int64_t d : s.shape) n *= d;
    for (int64_t i = 0; i < n; ++i) {
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

  DType random_dtype() { return static_cast<DType>(uniform(0, kNumDTypes - 1)); }
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
  Step draw_binary(int a);
  Step draw_matmul(int a);
  Step draw_reduce(int a);
  double predicted_bound(const Step& s) const;

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
// Drawing steps.

inline Step OpChain::draw() {
  if (steps_.size() < 2 || chance(0.12)) {
    if (chance(0.7)) return leaf(random_dtype(), random_shape());
    Step s;
    s.kind = StepKind::kFill;
    s.variant = uniform(0, 4);
    s.dtype = random_dtype();
    s.shape = random_shape();
    s.values = {static_cast<double>(uniform(-6, 6))};
    s.device = uniform(0, static_cast<int>(devices_.size()) - 1);
    return s;
  }
  const int a = chance(0.95) ? any_defined() : random_value();  // a failed one, sometimes
  Step s;
  switch (uniform(0, 7)) {
    case 0:
      s = draw_matmul(a);
      break;
    case 1: {
      s.kind = StepKind::kAddN;
      const DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
      const std::vector<int64_t> shape = reference_[a].shape;
      s.inputs = {a};
      for (int k = uniform(0, 3); k > 0; --k) {
        s.inputs.push_back(chance(0.9) ? operand(dtype, shape) : any_defined());
      }
      break;
    }
    case 2:
    case 3:
      s = draw_binary(a);
      break;
    case 4:
      s.kind = StepKind::kUnary;
      s.variant = uniform(0, static_cast<int>(std::size(kUnaryOps)) - 1);
      s.inputs = {a};
      break;
    case 5:
      s = draw_reduce(a);
      break;
    case 6:
      s.kind = StepKind::kCast;
      s.dtype = random_dtype();
      s.inputs = {a};
      break;
    default:
      s.kind = StepKind::kIdentity;
      s.inputs = {a};
  }
  // An integer result that could overflow is undefined behaviour on the CPU, and division
  // by a zero of either sign differs by device (Note [Sign of zero]): neither is drawn.
  // Nor are steps only the CPU rejects, or discontinuous ones on inexact values (Note [Steps
  // only the CPU rejects], Note [Discontinuous ops]).
  if (predicted_bound(s) >= kIntLimit || divides_by_loose_zero(s, reference_, loose_zero_sign_) ||
      rejected_on_cpu_only(s, reference_) || discontinuous_on_inexact(s, reference_, inexact_)) {
    s = Step();
    s.kind = StepKind::kIdentity;
    s.inputs = {a};
  }
  return s;
}

inline Step OpChain::draw_binary(int a) {
  Step s;
  s.kind = StepKind::kBinary;
  s.variant = uniform(0, static_cast<int>(std::size(kBinaryOps)) - 1);
  const DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
  const std::vector<int64_t> shape = reference_[a].shape;
  int b = chance(0.85) ? operand(dtype, broadcastable(shape)) : any_defined();
  s.inputs = chance(0.5) ? std::vector<int>{a, b} : std::vector<int>{b, a};
  return s;
}

inline Step OpChain::draw_matmul(int a) {
  Step s;
  s.kind = StepKind::kMatMul;
  s.flag_a = chance(0.25);
  s.flag_b = chance(0.25);
  const DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
  const std::vector<int64_t> shape = reference_[a].shape;
  int b;
  if (shape.size() == 2 && chance(0.9)) {
    const int64_t k = shape[s.flag_a ? 0 : 1];
    const int64_t n = std::vector<int64_t>{1, 2, 3, 5}[uniform(0, 3)];
    b = operand(dtype, s.flag_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
  } else {
    b = any_defined();
  }
  s.inputs = {a, b};
  return s;
}

inline Step OpChain::draw_reduce(int a) {
  Step s;
  s.kind = StepKind::kReduce;
  s.variant = uniform(0, static_cast<int>(std::size(kReductionOps)) - 1);
  s.flag_a = chance(0.3);  // keep_dims
  s.inputs = {a};
  const int rank = static_cast<int>(reference_[a].shape.size());
  if (chance(0.3)) return s;  // every axis
  s.axes.emplace();
  for (int d = -rank - 1; d <= rank; ++d) {
    const bool valid = d >= -rank && d < rank;
    if (chance(valid ? 0.4 : 0.03)) s.axes->push_back(d);  // out of range or twice: errors
  }
  return s;
}

// The largest magnitude an integer result of `s` (or any product, Prod) may reach, from the
// reference inputs; 0 for a result that is neither or cannot grow.
inline double OpChain::predicted_bound(const Step& s) const {
  if (s.inputs.empty()) return 0;
  const Outcome& x = reference_[s.inputs[0]];
  if (x.code != absl::StatusCode::kOk) return 0;
  // A float product may overflow in one order and not in another: bounded as integers are.
  const bool prod = s.kind == StepKind::kReduce && kReductionOps[s.variant].op == OpId::kProd;
  if (!is_int(x.dtype) && !prod) return 0;
  auto bound = [&](int i) { return reference_[i].max_abs; };
  switch (s.kind) {
    case StepKind::kMatMul:
      return bound(s.inputs[0]) * bound(s.inputs[1]) * 8;  // k <= 7
    case StepKind::kAddN: {
      double sum = 0;
      for (int i : s.inputs) sum += bound(i);
      return sum;
    }
    case StepKind::kBinary: {
      const double a = bound(s.inputs[0]), b = bound(s.inputs[1]);
      switch (kBinaryOps[s.variant].op) {
        case OpId::kMul:
          return a * b;
        case OpId::kPow:
          return a <= 1 ? 1 : std::pow(a, b);
        case OpId::kSquaredDifference:
          return (a + b) * (a + b);
        default:
          return a + b;
      }
    }
    case StepKind::kUnary:
      return kUnaryOps[s.variant].op == OpId::kSquare ? bound(s.inputs[0]) * bound(s.inputs[0])
                                                      : bound(s.inputs[0]);
    case StepKind::kReduce:
      if (kReductionOps[s.variant].op == OpId::kProd) {
        return std::pow(std::max(1.0, bound(s.inputs[0])),
                        std::max<double>(1, static_cast<double>(x.values.size())));
      }
      return bound(s.inputs[0]) * std::max<double>(1, static_cast<double>(x.values.size()));
    default:
      return bound(s.inputs[0]);
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

inline std::string OpChain::step_name(const Step& s) {
  static const char* const kFill[] = {"fill", "zeros", "ones", "stateless_uniform",
                                      "stateless_normal"};
  switch (s.kind) {
    case StepKind::kLeaf:
      return "constant";
    case StepKind::kFill:
      return kFill[s.variant];
    case StepKind::kMatMul:
      return absl::StrCat("matmul", s.flag_a ? "_ta" : "", s.flag_b ? "_tb" : "");
    case StepKind::kAddN:
      return "add_n";
    case StepKind::kBinary:
      return op_info(kBinaryOps[s.variant].op).cc_name;
    case StepKind::kUnary:
      return op_info(kUnaryOps[s.variant].op).cc_name;
    case StepKind::kReduce:
      return absl::StrCat(op_info(kReductionOps[s.variant].op).cc_name,
                          s.flag_a ? "_keep_dims" : "");
    case StepKind::kCast:
      return "cast";
    default:
      return "identity";
  }
}

}  // namespace mt::testing
