// oneDNN's convolution primitives behind onednn_conv.h, and the interface's entry point for
// the pools too (onednn_pool.cc makes their plans).
#include "kernels/cpu/onednn_conv.h"

#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/check.h"
#include "kernels/cpu/onednn/onednn_plan.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {

// Note [When oneDNN runs a convolution]
// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter, and the pools (Note [oneDNN's
// pools] in onednn_pool.cc), try oneDNN first and run the runtime's own kernels
// (conv_kernels.cc) when it cannot take the call, so every shape runs in a build without
// oneDNN and the results agree either way (onednn_conv_test.cc runs random shapes both ways).
// oneDNN takes a convolution when:
// - MT_ONEDNN_CONV is not 0 and the dtype is float32. The 2-byte floats come here widened
//   to float32 (Note [Half kernels on the CPU] in widened_kernel.h). oneDNN 2.6.3's own
//   bfloat16 kernels (AVX-512 BF16) were tried and left out: in our random tests an
//   infinite input gave NaN in outputs whose windows read no padding, and the filter
//   gradient of taps that read only padding came out as large values instead of zeros;
// - the call has work enough: 2^15 multiply-adds (as oneDNN's GEMM, onednn_gemm.h), or
//   512 input elements for a pool; below, oneDNN's 1 to 3 us a call cost more than our
//   kernels take (tests take every size, set_onednn_conv_small_calls);
// - every size is positive and every tensor has fewer than 2^31 elements;
// - the last window ends at the padded input's end: oneDNN is given the padding after the
//   input that the geometry's output size implies, and where the windows stop short of the
//   input's last rows (VALID or SAME with strides, as a strided 1x1 over an even size) that
//   padding is negative. oneDNN 2.6.3 accepts it but mishandles it: the filter gradient of
//   a strided 1x1 came out wrong (NHWC at AVX2) or wrote past a buffer of its own (NCHW);
// - oneDNN offers more than its reference loops, which are slower than ours.
// The caller keeps Note [Padding never multiplies] (conv_kernels.cc): oneDNN's GEMM-based
// implementations fill padding with zeros and multiply them, as our patch matrix does.
//
// Layouts: NHWC images are given in place (format tag nhwc); NCHW images and the HWIO filter
// are reordered, per call, into the layouts the primitive picks (`any`: blocked ones, which
// let oneDNN use its direct JIT kernels where plain ones get its im2col GEMM; NCHW runs twice
// as fast so, reorders included), and the output back into ours. The copies and oneDNN's
// scratchpad live in the calling thread's scratch memory (onednn_plan.cc).
// Threads: a primitive is made and run on OpenMP's team of intra_op_threads() threads, as
// oneDNN's sgemm (onednn_gemm.h); its blocking depends on the count, which is part of the
// cache key. Each call passes its own scratchpad (scratchpad_mode::user), so one primitive
// may run on several threads at once.

namespace {

using internal::ConvGeometry;
using Tag = dnnl::memory::format_tag;

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag{[] {
    const char* value = std::getenv("MT_ONEDNN_CONV");
    return value == nullptr || std::string(value) != "0";
  }()};
  return flag;
}

std::atomic<bool> small_calls{false};

bool is_pool(OpId op) {
  return op == OpId::kMaxPool || op == OpId::kMaxPoolGrad || op == OpId::kAvgPool ||
         op == OpId::kAvgPoolGrad;
}

// Below these a call's fixed cost in oneDNN, 1 to 3 us (the cache's look-up, the memory
// objects, the filter's reorder), exceeds the time of the runtime's own kernels on the 2-core
// development machine: multiply-adds of a convolution, elements of a pool's input.
constexpr int64_t kMinConvWork = int64_t{1} << 15;
constexpr int64_t kMinPoolElements = int64_t{1} << 9;

bool large_enough(OpId op, const ConvGeometry& g) {
  if (small_calls.load(std::memory_order_relaxed)) return true;
  if (is_pool(op)) return g.batch * g.in_h * g.in_w * g.in_c >= kMinPoolElements;
  return g.batch * g.out_h * g.out_w * g.filter_h * g.filter_w * g.in_c * g.out_c >= kMinConvWork;
}

// The descriptors of one convolution: our images and filter, theirs as the primitive is
// asked for them (NHWC images in place, the rest in any layout), and the window.
struct Descriptors {
  dnnl::memory::desc image, output, hwio;
  dnnl::memory::desc any_image, any_output, any_filter;
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
};

Descriptors descriptors_of(const ConvGeometry& g) {
  using dnnl::memory;
  const memory::data_type type = memory::data_type::f32;
  const memory::dims filter = {g.out_c, g.in_c, g.filter_h, g.filter_w};
  const Tag asked = g.channels_first ? Tag::any : Tag::nhwc;
  return Descriptors{memory::desc(onednn::image_dims(g), type, onednn::layout_of(g)),
                     memory::desc(onednn::output_dims(g), type, onednn::layout_of(g)),
                     memory::desc(filter, type, Tag::hwio),
                     memory::desc(onednn::image_dims(g), type, asked),
                     memory::desc(onednn::output_dims(g), type, asked),
                     memory::desc(filter, type, Tag::any),
                     {g.stride_h, g.stride_w},
                     {g.dilation_h - 1, g.dilation_w - 1},
                     {g.pad_top, g.pad_left},
                     onednn::pad_after(g)};
}

// Adds the convolution of `pd` to `plan` over data 0 and 1 (the op's inputs) and 2 (its
// output), whose arguments and our layouts are `args` and `ours`; false for oneDNN's
// reference loops.
template <typename Primitive, typename PrimitiveDesc>
bool add_conv(const PrimitiveDesc& pd, const int (&args)[3], const dnnl::memory::desc (&ours)[3],
              onednn::Plan* plan) {
  if (onednn::is_reference(pd)) return false;
  std::vector<std::pair<int, int>> step;
  for (int i = 0; i < 3; ++i) {
    const dnnl::memory::desc theirs = pd.query_md(dnnl::query::exec_arg_md, args[i]);
    step.emplace_back(args[i], plan->add_tensor(i, ours[i], theirs, /*output=*/i == 2));
  }
  plan->add_step<Primitive>(pd, std::move(step));
  return true;
}

}  // namespace

namespace onednn {

std::shared_ptr<Plan> make_conv_plan(OpId op, const ConvGeometry& g) {
  using namespace dnnl;
  const memory::dims after = pad_after(g);
  if (!fits(g) || after[0] < 0 || after[1] < 0) return nullptr;
  const Descriptors d = descriptors_of(g);
  const primitive_attr attr = user_scratchpad();
  const convolution_forward::primitive_desc forward(
      convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                d.any_image, d.any_filter, d.any_output, d.strides, d.dilates,
                                d.pad_l, d.pad_r),
      attr, engine());
  auto plan = std::make_shared<Plan>();
  bool taken = false;
  if (op == OpId::kConv2D) {
    taken = add_conv<convolution_forward>(forward, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                                          {d.image, d.hwio, d.output}, plan.get());
  } else if (op == OpId::kConv2DBackpropInput) {
    taken = add_conv<convolution_backward_data>(
        convolution_backward_data::primitive_desc(
            convolution_backward_data::desc(algorithm::convolution_direct, d.any_image,
                                            d.any_filter, d.any_output, d.strides, d.dilates,
                                            d.pad_l, d.pad_r),
            attr, engine(), forward),
        {DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC}, {d.hwio, d.output, d.image},
        plan.get());
  } else if (op == OpId::kConv2DBackpropFilter) {
    taken = add_conv<convolution_backward_weights>(
        convolution_backward_weights::primitive_desc(
            convolution_backward_weights::desc(algorithm::convolution_direct, d.any_image,
                                               d.any_filter, d.any_output, d.strides, d.dilates,
                                               d.pad_l, d.pad_r),
            attr, engine(), forward),
        {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS}, {d.image, d.output, d.hwio},
        plan.get());
  }
  return taken ? plan : nullptr;
}

}  // namespace onednn

absl::StatusOr<bool> onednn_conv(OpId op, const ConvGeometry& g, DType dtype,
                                 absl::Span<const void* const> inputs, void* out) {
  if (!onednn_conv_enabled() || dtype != DType::kFloat32 || !large_enough(op, g)) return false;
  const int threads = intra_op_threads();
  // OpenMP's thread count is per calling thread: set it for this one, before the plan is
  // made (a primitive's blocking reads it) and run.
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
  const std::shared_ptr<const onednn::Plan> plan = onednn::cached_plan(op, g, threads, [&] {
    return is_pool(op) ? onednn::make_pool_plan(op, g) : onednn::make_conv_plan(op, g);
  });
  if (plan == nullptr) return false;
  MT_CHECK(inputs.size() <= 3);  // MaxPoolGrad's are the most
  void* data[4] = {};
  for (size_t i = 0; i < inputs.size(); ++i) data[i] = const_cast<void*>(inputs[i]);
  data[inputs.size()] = out;
  try {
    plan->run(data);
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("[", op_name(op), "] oneDNN's ", plan->implementation(),
                                            " failed: ", e.what()));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat("[", op_name(op),
                                                     "] out of memory for oneDNN's scratch of ",
                                                     plan->scratch_bytes(), " bytes"));
  }
  return true;
}

bool onednn_conv_enabled() { return enabled_flag().load(std::memory_order_relaxed); }
void set_onednn_conv_enabled(bool enable) {
  enabled_flag().store(enable, std::memory_order_relaxed);
}
void set_onednn_conv_small_calls(bool take) { small_calls.store(take, std::memory_order_relaxed); }

}  // namespace mt::cpu
