#pragma once
// The convolutions and pools (MT_CONV_OPS) through oneDNN's primitives, in builds that have
// oneDNN (MT_ONEDNN; kernels/cpu/onednn/, else the kernels/cpu/no_onednn/ stub). The float32
// kernels of conv_kernels.cc (and so the 2-byte floats', widened) try it first and run their
// own loops wherever it cannot take a call (Note [When oneDNN runs a convolution] in
// onednn/onednn_conv.cc):
//
//   MT_ASSIGN_OR_RETURN(const bool done, onednn_conv(OpId::kConv2D, g, dtype, {x, f}, y));
//   if (!done) run_own_kernel();
//
// oneDNN's values differ from the runtime's in places, which the caller keeps away from it:
// some of its convolutions multiply the padding's zeros (Note [Padding never multiplies] in
// conv_kernels.cc), and its max pooling mishandles NaN and -inf. The primitives are made once
// per op, geometry and thread count and kept in a small process-wide cache; every function
// here may be called from any thread.

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "kernels/conv_geometry.h"
#include "kernels/op_id.h"

namespace mt::cpu {

// Runs `op`, a row of MT_CONV_OPS, of geometry `g` on the intra-op threads: `inputs` are the
// data of the op's inputs in order (MaxPoolGrad's second, the pool's output, is not read),
// `out` its output's. Returns true when it did; false, having written nothing, when oneDNN
// cannot take the call (switched off, a dtype other than float32, too little work, a geometry
// it does not take, or only its reference code would); an Internal error when a primitive failed
// while running, ResourceExhausted when its scratch memory could not be allocated.
absl::StatusOr<bool> onednn_conv(OpId op, const internal::ConvGeometry& g, DType dtype,
                                 absl::Span<const void* const> inputs, void* out);

// Whether the convolutions and pools may use oneDNN: on unless MT_ONEDNN_CONV=0 is set, and
// never in a build without oneDNN (tests switch it to run the runtime's own kernels on the
// same shapes).
bool onednn_conv_enabled();
void set_onednn_conv_enabled(bool enable);

// Whether calls with little work go to oneDNN too: off by default, where a convolution of
// fewer than 2^15 multiply-adds or a pool of fewer than 512 input elements runs the runtime's
// own kernels, faster there; tests turn it on to run every shape through oneDNN.
void set_onednn_conv_small_calls(bool take);

// Names the implementations oneDNN chose for `op` over `g` at the current thread count
// ("jit:avx512_core"; "" where no call made them, or oneDNN does not take it), for tests.
std::string onednn_implementation(OpId op, const internal::ConvGeometry& g);

}  // namespace mt::cpu
