// oneDNN's convolution primitives behind onednn_conv.h.
#include "kernels/cpu/onednn_conv.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/mutex.h"
#include "kernels/cpu/onednn_gemm.h"
#include "kernels/cpu/thread_pool.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace mt::cpu {

// Note [When oneDNN runs a convolution]
// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter try oneDNN first and run the
// runtime's own kernels (conv_kernels.cc) when it cannot take the call, so every shape runs
// in a build without oneDNN and the results agree either way (onednn_conv_test.cc runs
// random shapes both ways). oneDNN takes a call when:
// - MT_ONEDNN_CONV is not 0 and the dtype is float32. The 2-byte floats come here widened
//   to float32 (Note [Half kernels on the CPU] in widened_kernel.h). oneDNN 2.6.3's own
//   bfloat16 kernels (AVX-512 BF16) were tried and left out: in our random tests an
//   infinite input gave NaN in outputs whose windows read no padding, and the filter
//   gradient of taps that read only padding came out as large values instead of zeros;
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
// let oneDNN use its direct JIT kernels where plain ones get its im2col GEMM), and the
// output back into ours. The copies and oneDNN's scratchpad live in a buffer of the calling
// thread, kept for its next call: it holds as much as the largest convolution the thread
// ran needs (none for NHWC through the JIT kernels beyond the filter; both images of an NCHW
// call, and the im2col buffers of the GEMM-based implementations).
// Threads: a primitive is made and run on OpenMP's team of intra_op_threads() threads, as
// oneDNN's sgemm (onednn_gemm.h); its blocking depends on the count, which is part of the
// cache key. Each call passes its own scratchpad (scratchpad_mode::user, in a buffer of the
// calling thread), so one primitive may run on several threads at once.

namespace {

using internal::ConvGeometry;
using Tag = dnnl::memory::format_tag;

// The cache of primitives empties when it would hold more than this many.
constexpr size_t kMaxPrimitives = 256;
constexpr size_t kAlign = 64;

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag{[] {
    const char* value = std::getenv("MT_ONEDNN_CONV");
    return value == nullptr || std::string(value) != "0";
  }()};
  return flag;
}

size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

struct PrimitiveKey {
  ConvPass pass;
  DType dtype;
  bool channels_first;
  int threads;
  int64_t sizes[15];

  bool operator==(const PrimitiveKey& o) const {
    return pass == o.pass && dtype == o.dtype && channels_first == o.channels_first &&
           threads == o.threads && std::equal(sizes, sizes + 15, o.sizes);
  }
  template <typename H>
  friend H AbslHashValue(H h, const PrimitiveKey& k) {
    h = H::combine(std::move(h), k.pass, k.dtype, k.channels_first, k.threads);
    return H::combine_contiguous(std::move(h), k.sizes, 15);
  }
};

PrimitiveKey key_of(ConvPass pass, DType dtype, const ConvGeometry& g, int threads) {
  return PrimitiveKey{
      pass,
      dtype,
      g.channels_first,
      threads,
      {g.batch, g.in_h, g.in_w, g.in_c, g.filter_h, g.filter_w, g.out_h, g.out_w, g.out_c,
       g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, g.pad_top, g.pad_left}};
}

// oneDNN's padding after the input along one axis: what the output size leaves.
int64_t pad_after(int64_t in, int64_t out, int64_t filter, int64_t stride, int64_t dilation,
                  int64_t pad_before) {
  return (out - 1) * stride + (filter - 1) * dilation + 1 - in - pad_before;
}

bool expressible(const ConvGeometry& g) {
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  const int64_t sizes[] = {g.batch,    g.in_h,  g.in_w,  g.in_c, g.filter_h,
                           g.filter_w, g.out_h, g.out_w, g.out_c};
  for (int64_t s : sizes) {
    if (s <= 0 || s > kMaxInt) return false;
  }
  const int64_t elements[] = {g.batch * g.in_h * g.in_w * g.in_c,
                              g.batch * g.out_h * g.out_w * g.out_c,
                              g.filter_h * g.filter_w * g.in_c * g.out_c};
  for (int64_t e : elements) {
    if (e > kMaxInt) return false;
  }
  return g.pad_top >= 0 && g.pad_left >= 0 &&
         pad_after(g.in_h, g.out_h, g.filter_h, g.stride_h, g.dilation_h, g.pad_top) >= 0 &&
         pad_after(g.in_w, g.out_w, g.filter_w, g.stride_w, g.dilation_w, g.pad_left) >= 0;
}

dnnl::engine& engine() {
  static dnnl::engine* e = [] {
    configure_onednn();
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);  // never destroyed, as the cache
  }();
  return *e;
}

// One operand of a primitive: our tensor's descriptor, and where the primitive takes
// another layout, that layout, the reorder between the two (ours to its for an input, its to
// ours for the output) and the offset of its copy in the scratch memory.
struct Operand {
  int arg = 0;
  dnnl::memory::desc ours, theirs;
  std::optional<dnnl::reorder> reorder;
  size_t offset = 0;
};

// One pass's primitive for one key and what running it takes: its three operands (a, b and
// out of onednn_conv) and the scratch bytes: the operands' copies, then the scratchpad, which
// serves the reorders and the convolution in turn (they run one after the other).
struct ConvPrimitive {
  dnnl::primitive conv;
  Operand operands[3];
  size_t copies_bytes = 0;
  size_t scratchpad_bytes = 0;
  std::string implementation;
};

// The descriptors of one geometry: our images and filter, theirs as the primitive is asked
// for them, and the window. The filter is asked for in any layout, and so are NCHW images:
// oneDNN's JIT kernels take NCHW only in blocked layouts (nChw16c), which run twice as fast
// as its im2col GEMM on plain NCHW even with the reorders. NHWC it takes in place.
struct Descriptors {
  dnnl::memory::desc image, output, hwio;
  dnnl::memory::desc any_image, any_output, any_filter;
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
};

Descriptors descriptors_of(const ConvGeometry& g) {
  using dnnl::memory;
  const memory::data_type type = memory::data_type::f32;
  const memory::dims image = {g.batch, g.in_c, g.in_h, g.in_w};
  const memory::dims output = {g.batch, g.out_c, g.out_h, g.out_w};
  const memory::dims filter = {g.out_c, g.in_c, g.filter_h, g.filter_w};
  const Tag layout = g.channels_first ? Tag::nchw : Tag::nhwc;
  const Tag asked = g.channels_first ? Tag::any : Tag::nhwc;
  return Descriptors{
      memory::desc(image, type, layout),
      memory::desc(output, type, layout),
      memory::desc(filter, type, Tag::hwio),
      memory::desc(image, type, asked),
      memory::desc(output, type, asked),
      memory::desc(filter, type, Tag::any),
      {g.stride_h, g.stride_w},
      {g.dilation_h - 1, g.dilation_w - 1},
      {g.pad_top, g.pad_left},
      {pad_after(g.in_h, g.out_h, g.filter_h, g.stride_h, g.dilation_h, g.pad_top),
       pad_after(g.in_w, g.out_w, g.filter_w, g.stride_w, g.dilation_w, g.pad_left)}};
}

// Fills p from `pd`: the primitive, and each operand (a, b, out) from its argument and our
// descriptor, with a reorder where pd's layout differs. False for oneDNN's reference loops.
template <typename Primitive, typename PrimitiveDesc>
bool take(const PrimitiveDesc& pd, const int (&args)[3], const dnnl::memory::desc (&ours)[3],
          const dnnl::primitive_attr& attr, ConvPrimitive* p) {
  p->implementation = pd.impl_info_str();
  if (p->implementation.rfind("ref", 0) == 0) return false;
  p->conv = Primitive(pd);
  p->scratchpad_bytes = pd.scratchpad_desc().get_size();
  for (int i = 0; i < 3; ++i) {
    Operand& o = p->operands[i];
    o.arg = args[i];
    o.ours = ours[i];
    o.theirs = pd.query_md(dnnl::query::exec_arg_md, args[i]);
    if (o.theirs == o.ours) continue;
    const bool output = i == 2;
    const dnnl::reorder::primitive_desc r(engine(), output ? o.theirs : o.ours, engine(),
                                          output ? o.ours : o.theirs, attr);
    o.reorder.emplace(r);
    o.offset = p->copies_bytes;
    p->copies_bytes += aligned(o.theirs.get_size());
    p->scratchpad_bytes = std::max(p->scratchpad_bytes, r.scratchpad_desc().get_size());
  }
  return true;
}

// Makes the primitive of `key`; null when oneDNN offers none we take. Runs on the thread
// count of the key, which the caller has set.
std::shared_ptr<const ConvPrimitive> make_primitive(const PrimitiveKey& key,
                                                    const ConvGeometry& g) {
  using namespace dnnl;
  const Descriptors d = descriptors_of(g);
  auto p = std::make_shared<ConvPrimitive>();
  primitive_attr attr;
  attr.set_scratchpad_mode(scratchpad_mode::user);
  try {
    const convolution_forward::primitive_desc forward(
        convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                  d.any_image, d.any_filter, d.any_output, d.strides, d.dilates,
                                  d.pad_l, d.pad_r),
        attr, engine());
    bool taken = false;
    switch (key.pass) {
      case ConvPass::kForward:
        taken = take<convolution_forward>(forward, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                                          {d.image, d.hwio, d.output}, attr, p.get());
        break;
      case ConvPass::kBackwardInput:
        taken = take<convolution_backward_data>(
            convolution_backward_data::primitive_desc(
                convolution_backward_data::desc(algorithm::convolution_direct, d.any_image,
                                                d.any_filter, d.any_output, d.strides, d.dilates,
                                                d.pad_l, d.pad_r),
                attr, engine(), forward),
            {DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC}, {d.hwio, d.output, d.image},
            attr, p.get());
        break;
      case ConvPass::kBackwardFilter:
        taken = take<convolution_backward_weights>(
            convolution_backward_weights::primitive_desc(
                convolution_backward_weights::desc(algorithm::convolution_direct, d.any_image,
                                                   d.any_filter, d.any_output, d.strides, d.dilates,
                                                   d.pad_l, d.pad_r),
                attr, engine(), forward),
            {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS}, {d.image, d.output, d.hwio},
            attr, p.get());
        break;
    }
    if (!taken) return nullptr;
  } catch (const dnnl::error&) {
    return nullptr;  // no implementation for these descriptors
  }
  return p;
}

struct Cache {
  internal::Mutex mu;
  absl::flat_hash_map<PrimitiveKey, std::shared_ptr<const ConvPrimitive>> primitives
      ABSL_GUARDED_BY(mu);
  std::string last[3] ABSL_GUARDED_BY(mu);
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: kernels may run during exit
  return *c;
}

// Returns the primitive of `key`, made on first use (outside the lock: two threads may both
// make it, and the first kept wins); null when oneDNN offers none.
std::shared_ptr<const ConvPrimitive> primitive(const PrimitiveKey& key, const ConvGeometry& g) {
  Cache& c = cache();
  {
    internal::MutexLock lock(&c.mu);
    auto it = c.primitives.find(key);
    if (it != c.primitives.end()) return it->second;
  }
  std::shared_ptr<const ConvPrimitive> made = make_primitive(key, g);
  internal::MutexLock lock(&c.mu);
  if (c.primitives.size() >= kMaxPrimitives) c.primitives.clear();
  if (made != nullptr) c.last[static_cast<int>(key.pass)] = made->implementation;
  return c.primitives.try_emplace(key, std::move(made)).first->second;
}

// The calling thread's scratch memory, grown to at least `bytes` (kept for the next call).
char* scratch(size_t bytes) {
  struct Delete {
    void operator()(char* p) const { ::operator delete[](p, std::align_val_t{kAlign}); }
  };
  thread_local std::unique_ptr<char[], Delete> buffer;
  thread_local size_t size = 0;
  if (bytes > size) {
    buffer.reset();
    size = 0;
    buffer.reset(static_cast<char*>(::operator new[](bytes, std::align_val_t{kAlign})));
    size = bytes;
  }
  return buffer.get();
}

const char* op_of(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward:
      return "Conv2D";
    case ConvPass::kBackwardInput:
      return "Conv2DBackpropInput";
    case ConvPass::kBackwardFilter:
      return "Conv2DBackpropFilter";
  }
  return "Conv2D";
}

// Runs `p` on a, b and out (onednn_conv's arguments): the inputs reordered where the
// primitive takes other layouts, the primitive, the output reordered into ours.
void execute(const ConvPrimitive& p, const void* a, const void* b, void* out) {
  using dnnl::memory;
  using Args = std::unordered_map<int, memory>;
  thread_local dnnl::stream stream(engine());
  char* const space = scratch(std::max<size_t>(kAlign, p.copies_bytes + p.scratchpad_bytes));
  std::optional<memory> scratchpad;
  if (p.scratchpad_bytes > 0) {
    const memory::desc bytes({static_cast<memory::dim>(p.scratchpad_bytes)}, memory::data_type::u8,
                             Tag::a);
    scratchpad.emplace(bytes, engine(), space + p.copies_bytes);
  }
  const auto run = [&](const dnnl::primitive& primitive, Args args) {
    if (scratchpad) args.emplace(DNNL_ARG_SCRATCHPAD, *scratchpad);
    primitive.execute(stream, args);
  };
  void* const data[3] = {const_cast<void*>(a), const_cast<void*>(b), out};
  Args args;
  memory ours[3], theirs[3];
  for (int i = 0; i < 3; ++i) {
    const Operand& o = p.operands[i];
    ours[i] = memory(o.ours, engine(), data[i]);
    theirs[i] = o.reorder ? memory(o.theirs, engine(), space + o.offset) : ours[i];
    if (o.reorder && i < 2) run(*o.reorder, {{DNNL_ARG_FROM, ours[i]}, {DNNL_ARG_TO, theirs[i]}});
    args.emplace(o.arg, theirs[i]);
  }
  run(p.conv, std::move(args));
  if (p.operands[2].reorder) {
    run(*p.operands[2].reorder, {{DNNL_ARG_FROM, theirs[2]}, {DNNL_ARG_TO, ours[2]}});
  }
  stream.wait();
}

}  // namespace

absl::StatusOr<bool> onednn_conv(ConvPass pass, const ConvGeometry& g, DType dtype, const void* a,
                                 const void* b, void* out) {
  if (!onednn_conv_enabled() || !expressible(g)) return false;
  if (dtype != DType::kFloat32) return false;
  const int threads = intra_op_threads();
  // OpenMP's thread count is per calling thread: set it for this one, before the primitive
  // is made (its blocking reads it) and run.
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
  const std::shared_ptr<const ConvPrimitive> p = primitive(key_of(pass, dtype, g, threads), g);
  if (p == nullptr) return false;
  try {
    execute(*p, a, b, out);
  } catch (const dnnl::error& e) {
    return absl::InternalError(
        absl::StrCat("[", op_of(pass), "] oneDNN's ", p->implementation, " failed: ", e.what()));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("[", op_of(pass), "] out of memory for oneDNN's scratch memory of ",
                     p->copies_bytes + p->scratchpad_bytes, " bytes"));
  }
  return true;
}

bool onednn_conv_enabled() { return enabled_flag().load(std::memory_order_relaxed); }
void set_onednn_conv_enabled(bool enable) {
  enabled_flag().store(enable, std::memory_order_relaxed);
}

std::string last_onednn_conv_implementation(ConvPass pass) {
  Cache& c = cache();
  internal::MutexLock lock(&c.mu);
  return c.last[static_cast<int>(pass)];
}

}  // namespace mt::cpu
