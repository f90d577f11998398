// onednn_conv.h for a build without oneDNN (MT_ONEDNN off or not found): oneDNN never
// takes a convolution or a pool, and the kernels of conv_kernels.cc run every one.
#include "kernels/cpu/onednn_conv.h"

namespace mt::cpu {

absl::StatusOr<bool> onednn_conv(OpId, const internal::ConvGeometry&, DType,
                                 absl::Span<const void* const>, void*) {
  return false;
}

bool onednn_conv_enabled() { return false; }
void set_onednn_conv_enabled(bool) {}
void set_onednn_conv_small_calls(bool) {}
std::string onednn_implementation(OpId, const internal::ConvGeometry&) { return ""; }

}  // namespace mt::cpu
