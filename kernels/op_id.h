#pragma once
// OpId: every op the runtime knows, one per row of the op table (kernels/op_table.h), and
// what the table says of each: its TensorFlow name, arity, dtypes and flags.
//
//   op_name(OpId::kMatMul);                        // "MatMul"
//   op_dtypes(OpId::kExp);                         // kFloatDTypes
//   op_has_flag(OpId::kExp, OpFlags::kGrad);       // true

#include <cstdint>

#include "core/dtype_set.h"
#include "kernels/op_table.h"

namespace mt {

// The integer dtypes of the random ops (RandomUniformInt, StatelessRandomUniformIntV2).
inline constexpr DTypeSet kRandomIntDTypes = dtype_bit(DType::kInt32) | dtype_bit(DType::kInt64);

// The arity of an op that takes one or more inputs (AddN).
inline constexpr int kVariadic = -1;

// The flags column of the op table, combined with |.
enum OpFlags : uint32_t {
  kNone = 0,
  kSource = 1u << 0,         // no tensor input: shape and dtype come with the call
  kGrad = 1u << 1,           // differentiable
  kCostly = 1u << 2,         // much work per element (transcendental): split into smaller chunks
  kRandom = 1u << 3,         // draws random numbers
  kKeyInput1 = 1u << 4,      // the kernel is keyed by input 1's dtype (Select's x)
  kResource = 1u << 5,       // input 0 is a variable's value: the op runs on its device
  kAliasInput0 = 1u << 6,    // the output is input 0 itself: no kernel runs (ReadVariableOp)
  kCopyIsResult = 1u << 7,   // when input 0 is copied to the op's device, the copy is the
                             // output: no kernel runs (Identity)
  kGpuFloatOnly = 1u << 12,  // the GPU kernel takes the float dtypes only; the others run
                             // on the CPU (integer MatMul: cuBLAS has no integer GEMM)
  // What the gradient reads (Note [What a gradient reads] in runtime/autodiff/grad_fns.h).
  // A kGrad row without these reads the values of all its inputs and outputs.
  kGradSkipsInputs = 1u << 13,           // no input's value: only their dtypes, shapes and devices
  kGradSkipsOutputs = 1u << 14,          // no output's value, unless grad_reads_outputs names it
  kGradReadsInputs = kGradSkipsOutputs,  // MatMul, Mul
  kGradReadsOutputs = kGradSkipsInputs,  // Relu, Exp, Tanh
  kGradReadsNoValue = kGradSkipsInputs | kGradSkipsOutputs,  // AddV2, Sum, Cast
};

// The inputs a kResource op writes in place, first ones first (a variable, then its slots):
// a count in the flags' bits 8-11, combined with | like a flag.
inline constexpr int kWritesShift = 8;
constexpr uint32_t writes_inputs(int n) { return static_cast<uint32_t>(n) << kWritesShift; }

// The outputs whose values the gradient reads, when not all (bit i for output i): a mask in
// the flags' bits 16-19, with kGradSkipsOutputs, combined with | like a flag.
inline constexpr int kGradOutputsShift = 16;
constexpr uint32_t grad_reads_outputs(uint32_t mask) {
  return kGradSkipsOutputs | (mask & 15u) << kGradOutputsShift;
}

#define MT_OP_ENUMERATOR(Name, ...) k##Name,
enum class OpId : uint8_t { MT_OP_TABLE(MT_OP_ENUMERATOR) };
#undef MT_OP_ENUMERATOR

// What a row says, besides its shape function (kernels/op_def.cc).
struct OpInfo {
  const char* name;  // TensorFlow's
  const char* cc_name;
  const char* py_name;
  int arity;
  DTypeSet dtypes;
  uint32_t flags;
};

#define MT_OP_INFO(Name, tf, cc, py, arity, dtypes, shape_fn, flags) \
  {tf, #cc, py, arity, dtypes, flags},
inline constexpr OpInfo kOpInfo[] = {MT_OP_TABLE(MT_OP_INFO)};
#undef MT_OP_INFO

inline constexpr int kNumOps = static_cast<int>(sizeof(kOpInfo) / sizeof(kOpInfo[0]));
// A new row changes this count: give the op its kernels, its tests and (with kGrad) its
// gradient before updating it (Note [Adding an op] in docs/design.md).
static_assert(kNumOps == 115, "the op table changed: see Note [Adding an op]");

constexpr const OpInfo& op_info(OpId op) { return kOpInfo[static_cast<int>(op)]; }

// Returns the TensorFlow op name, e.g. "MatMul".
constexpr const char* op_name(OpId op) { return op_info(op).name; }

// Returns the dtypes `op` accepts for the input that keys its kernel (a source op: its
// output). The CPU registers a kernel for each; other backends for a subset.
constexpr DTypeSet op_dtypes(OpId op) { return op_info(op).dtypes; }

constexpr bool op_has_flag(OpId op, OpFlags flag) { return (op_info(op).flags & flag) != 0; }

// Returns how many of `op`'s first inputs it writes in place (writes_inputs in its row).
constexpr int op_writes(OpId op) {
  return static_cast<int>((op_info(op).flags >> kWritesShift) & 15);
}

// Returns the inputs (bit i for input i) and the outputs whose values `op`'s gradient reads
// (kGradReads* and grad_reads_outputs in its row).
constexpr uint32_t op_grad_reads_inputs(OpId op) {
  return op_has_flag(op, kGradSkipsInputs) ? 0u : ~0u;
}
constexpr uint32_t op_grad_reads_outputs(OpId op) {
  if (!op_has_flag(op, kGradSkipsOutputs)) return ~0u;
  return (op_info(op).flags >> kGradOutputsShift) & 15u;
}

// Returns the dtypes the GPU implements for `op`: what the op accepts (op_dtypes), or its
// float dtypes alone for a kGpuFloatOnly row.
constexpr DTypeSet op_gpu_dtypes(OpId op) {
  return op_has_flag(op, kGpuFloatOnly) ? op_dtypes(op) & kFloatDTypes : op_dtypes(op);
}

// Returns the index of the input whose dtype keys the kernel (-1 for a source op, which is
// keyed by its output's dtype).
constexpr int op_key_input(OpId op) {
  if (op_has_flag(op, kSource)) return -1;
  return op_has_flag(op, kKeyInput1) ? 1 : 0;
}

// Returns whether `op` is one of MT_COMPARISON_OPS (a binary op with a bool output).
constexpr bool op_is_comparison(OpId op) {
#define MT_COMPARISON_CASE(Name, ...) op == OpId::k##Name ||
  return MT_COMPARISON_OPS(MT_COMPARISON_CASE) false;
#undef MT_COMPARISON_CASE
}

// Every OpId of one family list of op_table.h, in table order:
//   for (OpId op : MT_OP_LIST(MT_UNARY_OPS)) ...
#define MT_OP_LIST_ENTRY(Name, ...) OpId::k##Name,
#define MT_OP_LIST(family) \
  std::initializer_list<OpId> { family(MT_OP_LIST_ENTRY) }

}  // namespace mt
