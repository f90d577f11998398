#pragma once
// Conv2D and its two backprops through oneDNN's convolution primitives, in builds that have
// oneDNN (MT_ONEDNN; kernels/cpu/onednn/, else the kernels/cpu/no_onednn/ stub). The float32
// kernels of conv_kernels.cc (and so the 2-byte floats', widened) try it first and run their
// own loops wherever it cannot take a call (Note [When oneDNN runs a convolution] in
// onednn/onednn_conv.cc):
//
//   MT_ASSIGN_OR_RETURN(const bool done, onednn_conv(ConvPass::kForward, g, dtype, x, f, y));
//   if (!done) run_own_kernel();
//
// Some of oneDNN's implementations multiply the padding's zeros: the caller keeps Note
// [Padding never multiplies] (conv_kernels.cc). The primitives are made once per geometry,
// pass and thread count and kept in a small process-wide cache; every function here may be
// called from any thread.

#include <string>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "kernels/conv_geometry.h"

namespace mt::cpu {

enum class ConvPass { kForward, kBackwardInput, kBackwardFilter };

// Runs one pass of the convolution of geometry `g` on the intra-op threads:
//   kForward:        a = input,  b = filter (HWIO), out = output
//   kBackwardInput:  a = filter, b = out_backprop,  out = input gradient
//   kBackwardFilter: a = input,  b = out_backprop,  out = filter gradient (HWIO)
// Returns true when it did; false, having written nothing, when oneDNN cannot take the call
// (switched off, a dtype other than float32, a geometry it does not take, or only its
// reference code would); an Internal error when a primitive failed while running.
absl::StatusOr<bool> onednn_conv(ConvPass pass, const internal::ConvGeometry& g, DType dtype,
                                 const void* a, const void* b, void* out);

// Whether convolutions may use oneDNN: on unless MT_ONEDNN_CONV=0 is set, and never in a
// build without oneDNN (tests switch it to run the runtime's own kernels on the same shapes).
bool onednn_conv_enabled();
void set_onednn_conv_enabled(bool enable);

// Names the implementation oneDNN chose for the last primitive made for `pass` ("" when
// none was made), for tests and benchmarks.
std::string last_onednn_conv_implementation(ConvPass pass);

}  // namespace mt::cpu
