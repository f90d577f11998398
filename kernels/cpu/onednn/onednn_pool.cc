// oneDNN's pooling primitives behind onednn_conv.h: the plans of MaxPool, MaxPoolGrad,
// AvgPool and AvgPoolGrad.
//
// Note [oneDNN's pools]
// The pools go to oneDNN as the convolutions do (Note [When oneDNN runs a convolution] in
// onednn_conv.cc: float32, sizes that fit, no reference loops), in place in NHWC and NCHW
// alike (oneDNN's JIT pools take both). TensorFlow's pools skip the padding: AvgPool is
// oneDNN's pooling_avg_exclude_padding, which divides by the elements read, and every window
// must read one (no padding as long as the window, which TensorFlow's SAME never makes).
// MaxPoolGrad runs the forward pool to get oneDNN's workspace (the position of each window's
// maximum, the first in row-major order as ours) and then the backward pool, which adds each
// window's gradient there. The windows may stop short of the input's end: oneDNN's pools give
// our values so at every ISA level (onednn_conv_test.cc), unlike its convolutions.
// oneDNN's max pooling drops a NaN (ours lets it win) and gives the lowest finite value for a
// window of -inf (ours -inf), so the kernels give it only finite inputs (conv_kernels.cc).
#include <memory>

#include "kernels/cpu/onednn/onednn_plan.h"

namespace mt::cpu::onednn {
namespace {

using internal::ConvGeometry;

// Whether every window reads an element of the input: its padding on either side is shorter
// than the window.
bool windows_read_the_input(const ConvGeometry& g) {
  const dnnl::memory::dims after = pad_after(g);
  return g.pad_top < g.filter_h && g.pad_left < g.filter_w && after[0] < g.filter_h &&
         after[1] < g.filter_w;
}

}  // namespace

std::shared_ptr<Plan> make_pool_plan(OpId op, const ConvGeometry& g) {
  using namespace dnnl;
  if (!fits(g) || !windows_read_the_input(g)) return nullptr;
  const memory::desc image(image_dims(g), memory::data_type::f32, layout_of(g));
  const memory::desc output(output_dims(g), memory::data_type::f32, layout_of(g));
  const algorithm kind = op == OpId::kMaxPool || op == OpId::kMaxPoolGrad
                             ? algorithm::pooling_max
                             : algorithm::pooling_avg_exclude_padding;
  const memory::dims strides = {g.stride_h, g.stride_w}, window = {g.filter_h, g.filter_w};
  const memory::dims pad_l = {g.pad_top, g.pad_left}, pad_r = pad_after(g);
  const primitive_attr attr = user_scratchpad();
  const bool training = op == OpId::kMaxPoolGrad || op == OpId::kAvgPoolGrad;
  const pooling_forward::primitive_desc forward(
      pooling_forward::desc(training ? prop_kind::forward_training : prop_kind::forward_inference,
                            kind, image, output, strides, window, pad_l, pad_r),
      attr, engine());
  auto plan = std::make_shared<Plan>();
  if (!training) {  // MaxPool, AvgPool: data 0 the input, 1 the output
    if (is_reference(forward)) return nullptr;
    const int x = plan->add_tensor(0, image, image, /*output=*/false);
    const int y = plan->add_tensor(1, output, output, /*output=*/true);
    plan->add_step<pooling_forward>(forward, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
    return plan;
  }
  const pooling_backward::primitive_desc backward(
      pooling_backward::desc(kind, image, output, strides, window, pad_l, pad_r), attr, engine(),
      forward);
  if (is_reference(backward)) return nullptr;
  if (op == OpId::kAvgPoolGrad) {  // data 0 the output's gradient, 1 the input's
    const int dy = plan->add_tensor(0, output, output, /*output=*/false);
    const int dx = plan->add_tensor(1, image, image, /*output=*/true);
    plan->add_step<pooling_backward>(backward, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, dx}});
    return plan;
  }
  // MaxPoolGrad: data 0 the input, 1 the pool's output (not read), 2 its gradient, 3 the
  // input's; the forward pool writes its output and workspace into the scratch memory.
  if (is_reference(forward)) return nullptr;
  const int x = plan->add_tensor(0, image, image, /*output=*/false);
  const int dy = plan->add_tensor(2, output, output, /*output=*/false);
  const int dx = plan->add_tensor(3, image, image, /*output=*/true);
  const int y = plan->add_scratch(output);
  const int workspace = plan->add_scratch(forward.workspace_desc());
  plan->add_step<pooling_forward>(
      forward, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}, {DNNL_ARG_WORKSPACE, workspace}});
  plan->add_step<pooling_backward>(
      backward,
      {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WORKSPACE, workspace}, {DNNL_ARG_DIFF_SRC, dx}});
  return plan;
}

}  // namespace mt::cpu::onednn
