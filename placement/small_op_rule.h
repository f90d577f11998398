#pragma once
// TensorFlow's small-op rule (its eager placer's MaybePinSmallOpsToCpu): an op whose every
// input is an int32 or int64 tensor of at most 64 elements already on the host CPU runs
// there, whatever device scope is active, instead of paying a copy and a kernel launch for
// a handful of integers (shape arithmetic, counters). Ops without inputs, random ops and
// Identity (an explicit copy; TensorFlow exempts it from input colocation) are never pinned.
// TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING=0 (or false) turns the rule off, read when the runtime
// initialises.
//
//   if (small_op_pinnable(op, inputs.size()) && every input passes small_op_input(...))
//     place on the host CPU, reason kSmallOpOnHost

#include <cctype>
#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "kernels/op_id.h"

namespace mt {

// The most elements an input of a pinned op may have.
inline constexpr int64_t kSmallOpMaxElements = 64;

// Returns whether the rule may pin `op` with `num_inputs` inputs.
constexpr bool small_op_pinnable(OpId op, size_t num_inputs) {
  return num_inputs > 0 && !op_has_flag(op, kRandom) && !op_has_flag(op, kSource) &&
         !op_has_flag(op, kCopyIsResult);
}

// Returns whether one input allows pinning: on the host CPU, int32 or int64, small.
constexpr bool small_op_input(bool on_host_cpu, DType dtype, int64_t num_elements) {
  return on_host_cpu && (dtype == DType::kInt32 || dtype == DType::kInt64) &&
         num_elements <= kSmallOpMaxElements;
}

// Returns whether the value of TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING (null: unset) leaves
// the rule on: anything but "0" and "false" in any case does, as in TensorFlow.
inline bool small_op_pinning_enabled(const char* env) {
  if (env == nullptr) return true;
  std::string v(env);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v != "0" && v != "false";
}

}  // namespace mt
