// Plans of oneDNN primitives behind onednn_plan.h: the engine, the scratch memory of each
// thread, running a plan, and the cache of plans.
#include "kernels/cpu/onednn/onednn_plan.h"

#include <algorithm>
#include <limits>
#include <new>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "core/mutex.h"
#include "kernels/cpu/onednn_conv.h"
#include "kernels/cpu/onednn_gemm.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu::onednn {
namespace {

using internal::ConvGeometry;

// The cache of plans empties when it would hold more than this many.
constexpr size_t kMaxPlans = 256;
constexpr size_t kAlign = 64;

size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// The calling thread's scratch memory, grown to at least `bytes` and kept for its next run:
// it holds as much as the largest plan the thread ran needs (for NHWC through the JIT
// kernels, the filter in the primitive's layout; both images of an NCHW convolution; the
// im2col buffers of the GEMM-based implementations).
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

struct PlanKey {
  OpId op;
  bool channels_first;
  int threads;
  int64_t sizes[15];

  bool operator==(const PlanKey& o) const {
    return op == o.op && channels_first == o.channels_first && threads == o.threads &&
           std::equal(sizes, sizes + 15, o.sizes);
  }
  template <typename H>
  friend H AbslHashValue(H h, const PlanKey& k) {
    h = H::combine(std::move(h), k.op, k.channels_first, k.threads);
    return H::combine_contiguous(std::move(h), k.sizes, 15);
  }
};

PlanKey key_of(OpId op, const ConvGeometry& g, int threads) {
  return PlanKey{
      op,
      g.channels_first,
      threads,
      {g.batch, g.in_h, g.in_w, g.in_c, g.filter_h, g.filter_w, g.out_h, g.out_w, g.out_c,
       g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, g.pad_top, g.pad_left}};
}

struct Cache {
  internal::Mutex mu;
  absl::flat_hash_map<PlanKey, std::shared_ptr<const Plan>> plans ABSL_GUARDED_BY(mu);
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: kernels may run during exit
  return *c;
}

}  // namespace

dnnl::engine& engine() {
  static dnnl::engine* e = [] {
    configure_onednn();
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);  // never destroyed, as the cache
  }();
  return *e;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool is_reference(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

bool fits(const ConvGeometry& g) {
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
  return g.pad_top >= 0 && g.pad_left >= 0;
}

dnnl::memory::dims pad_after(const ConvGeometry& g) {
  return {(g.out_h - 1) * g.stride_h + (g.filter_h - 1) * g.dilation_h + 1 - g.in_h - g.pad_top,
          (g.out_w - 1) * g.stride_w + (g.filter_w - 1) * g.dilation_w + 1 - g.in_w - g.pad_left};
}

dnnl::memory::dims image_dims(const ConvGeometry& g) { return {g.batch, g.in_c, g.in_h, g.in_w}; }
dnnl::memory::dims output_dims(const ConvGeometry& g) {
  return {g.batch, g.out_c, g.out_h, g.out_w};
}
dnnl::memory::format_tag layout_of(const ConvGeometry& g) {
  return g.channels_first ? dnnl::memory::format_tag::nchw : dnnl::memory::format_tag::nhwc;
}

size_t Plan::place(const dnnl::memory::desc& theirs) {
  const size_t offset = copies_bytes_;
  copies_bytes_ += aligned(theirs.get_size());
  return offset;
}

int Plan::add_tensor(int data, const dnnl::memory::desc& ours, const dnnl::memory::desc& theirs,
                     bool output) {
  Buffer b;
  b.data = data;
  b.ours = ours;
  b.theirs = theirs;
  b.output = output;
  if (theirs != ours) {
    const dnnl::reorder::primitive_desc pd(engine(), output ? theirs : ours, engine(),
                                           output ? ours : theirs, user_scratchpad());
    b.reorder = dnnl::reorder(pd);
    b.offset = place(theirs);
    scratchpad_bytes_ = std::max(scratchpad_bytes_, pd.scratchpad_desc().get_size());
  }
  buffers_.push_back(std::move(b));
  return static_cast<int>(buffers_.size()) - 1;
}

int Plan::add_scratch(const dnnl::memory::desc& theirs) {
  Buffer b;
  b.theirs = theirs;
  b.offset = place(theirs);
  buffers_.push_back(std::move(b));
  return static_cast<int>(buffers_.size()) - 1;
}

void Plan::add(dnnl::primitive primitive, std::vector<std::pair<int, int>> args,
               size_t scratchpad_bytes, const char* implementation) {
  steps_.push_back({std::move(primitive), std::move(args)});
  scratchpad_bytes_ = std::max(scratchpad_bytes_, scratchpad_bytes);
  if (!implementation_.empty()) implementation_ += "+";
  implementation_ += implementation;
}

void Plan::run(void* const* data) const {
  using dnnl::memory;
  using Args = std::unordered_map<int, memory>;
  thread_local dnnl::stream stream(engine());
  char* const space = scratch(std::max(kAlign, scratch_bytes()));
  memory scratchpad;
  if (scratchpad_bytes_ > 0) {
    const memory::desc bytes({static_cast<memory::dim>(scratchpad_bytes_)}, memory::data_type::u8,
                             memory::format_tag::a);
    scratchpad = memory(bytes, engine(), space + copies_bytes_);
  }
  // The steps, the reorders included, run one after the other: one scratchpad serves them all.
  const auto execute = [&](const dnnl::primitive& primitive, Args args) {
    if (scratchpad) args.emplace(DNNL_ARG_SCRATCHPAD, scratchpad);
    primitive.execute(stream, args);
  };
  std::vector<memory> ours(buffers_.size()), theirs(buffers_.size());
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (b.data >= 0) ours[i] = memory(b.ours, engine(), data[b.data]);
    theirs[i] = b.data >= 0 && !b.reorder ? ours[i] : memory(b.theirs, engine(), space + b.offset);
    if (b.reorder && !b.output) {
      execute(b.reorder, {{DNNL_ARG_FROM, ours[i]}, {DNNL_ARG_TO, theirs[i]}});
    }
  }
  for (const Step& step : steps_) {
    Args args;
    for (const auto& [arg, buffer] : step.args) args.emplace(arg, theirs[buffer]);
    execute(step.primitive, std::move(args));
  }
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (b.reorder && b.output) {
      execute(b.reorder, {{DNNL_ARG_FROM, theirs[i]}, {DNNL_ARG_TO, ours[i]}});
    }
  }
  stream.wait();
}

std::shared_ptr<const Plan> cached_plan(OpId op, const ConvGeometry& g, int threads,
                                        absl::FunctionRef<std::shared_ptr<Plan>()> make) {
  const PlanKey key = key_of(op, g, threads);
  Cache& c = cache();
  {
    internal::MutexLock lock(&c.mu);
    auto it = c.plans.find(key);
    if (it != c.plans.end()) return it->second;
  }
  // Made outside the lock (oneDNN generates code): two threads may both make a plan, and the
  // first kept wins.
  std::shared_ptr<const Plan> made;
  try {
    made = make();
  } catch (const dnnl::error&) {
    // oneDNN has no implementation of these descriptors: null, the runtime's kernels run it
  }
  internal::MutexLock lock(&c.mu);
  if (c.plans.size() >= kMaxPlans) c.plans.clear();
  return c.plans.try_emplace(key, std::move(made)).first->second;
}

}  // namespace mt::cpu::onednn

namespace mt::cpu {

std::string onednn_implementation(OpId op, const internal::ConvGeometry& g) {
  onednn::Cache& c = onednn::cache();
  internal::MutexLock lock(&c.mu);
  auto it = c.plans.find(onednn::key_of(op, g, intra_op_threads()));
  return it == c.plans.end() || it->second == nullptr ? "" : it->second->implementation();
}

}  // namespace mt::cpu
