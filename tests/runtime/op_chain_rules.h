#pragma once
// The steps a random op chain (op_chain.h) does not draw, because devices may rightly
// disagree on them: divisions by a zero of either sign, steps only the CPU rejects, and
// discontinuous steps on values that may differ by an ulp.

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "kernels/op_id.h"
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

// Returns whether the zeros `s` computes may have either sign (Note [Sign of zero]); the
// nn ops and the convolutions sum too, and a max pool may pick either zero of a tie.
inline bool gives_loose_zero_sign(const Step& s) {
  return s.kind == StepKind::kMatMul || s.kind == StepKind::kAddN || s.kind == StepKind::kReduce ||
         s.kind == StepKind::kSegmentSum || s.op == OpId::kRelu || s.kind == StepKind::kConv ||
         (s.kind == StepKind::kNn && s.op != OpId::kBiasAdd);
}

// Returns the input of `s` whose zeros give results that show their sign (x / -0 = -inf,
// x // -0, -0 ** -1 = -inf, rsqrt(-0) = -inf), or -1.
inline int sign_showing_input(const Step& s) {
  if (s.kind == StepKind::kBinary && s.inputs.size() == 2) {
    if (s.op == OpId::kRealDiv || s.op == OpId::kFloorDiv || s.op == OpId::kFloorMod) {
      return s.inputs[1];
    }
    if (s.op == OpId::kPow) return s.inputs[0];
  }
  if (s.kind == StepKind::kUnary && s.op == OpId::kRsqrt) return s.inputs[0];
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
// reference values. (GatherV2 indices and SparseSoftmaxCrossEntropyWithLogits labels out of
// range are alike; the chains draw them in range.)
inline bool rejected_on_cpu_only(const Step& s, const std::vector<Outcome>& reference) {
  if (s.kind != StepKind::kBinary || s.inputs.size() != 2) return false;
  if (s.op != OpId::kFloorDiv && s.op != OpId::kFloorMod && s.op != OpId::kPow) return false;
  const Outcome& b = reference[s.inputs[1]];
  if (b.code != absl::StatusCode::kOk || (b.dtype != DType::kInt32 && b.dtype != DType::kInt64)) {
    return false;
  }
  for (double v : b.values) {
    if (s.op == OpId::kPow ? v < 0 : v == 0) return true;
  }
  return false;
}

// Returns whether the values `s` computes may differ by an ulp or two across device types
// (Note [Discontinuous ops]): sums and the kCostly ops. The random ops give the same bits
// everywhere (Note [Same bits on every device] in kernels/random_math.h).
inline bool computes_inexact(const Step& s) {
  const bool sums = s.kind == StepKind::kMatMul || s.kind == StepKind::kAddN ||
                    s.kind == StepKind::kSegmentSum || s.op == OpId::kScatterNd ||
                    s.op == OpId::kTensorScatterAdd ||
                    (s.kind == StepKind::kReduce && s.op != OpId::kMax);
  return sums || (op_has_flag(s.op, kCostly) && !op_has_flag(s.op, kRandom));
}

// Note [Discontinuous ops]: Exp, Log, Pow and the other kCostly ops differ across device
// types by an ulp or two, and so may sums (MatMul, AddN, Sum, Mean, Softmax) once their
// terms need more bits than the dtype holds (another order rounds otherwise); Floor, Round,
// Sign, FloorDiv, FloorMod, the comparisons, ArgMax, ArgMin, casts to integers or bool and
// MaxPoolGrad (which sends a window's gradient to its first maximum) turn such a difference
// near a step of theirs into a whole unit (or another index).
// Returns whether `s` is one of those on a floating-point value that may carry such a
// difference (`inexact`, per step; integer results are exact).
inline bool discontinuous_on_inexact(const Step& s, const std::vector<Outcome>& reference,
                                     const std::vector<bool>& inexact) {
  const OpId op = s.op;
  const bool discontinuous =
      (s.kind == StepKind::kCast &&
       (s.dtype == DType::kInt32 || s.dtype == DType::kInt64 || s.dtype == DType::kBool)) ||
      op == OpId::kFloor || op == OpId::kRound || op == OpId::kSign || op == OpId::kFloorDiv ||
      op == OpId::kFloorMod || op_is_comparison(op) || s.kind == StepKind::kArg ||
      op == OpId::kMaxPoolGrad;
  if (!discontinuous) return false;
  for (int i : s.inputs) {
    const DType t = reference[i].dtype;
    if (inexact[i] && t != DType::kInt32 && t != DType::kInt64 && t != DType::kBool) return true;
  }
  return false;
}

}  // namespace mt::testing
