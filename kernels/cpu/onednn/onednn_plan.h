#pragma once
// Plans of oneDNN primitives for the convolutions and pools (internal to kernels/cpu/onednn/;
// onednn_conv.h is the interface). A plan is one or more primitives run in turn on the
// caller's tensors, each tensor reordered into the layout the primitives take where it is not
// ours; plans are made once per op, geometry and thread count and kept in a process-wide cache.
//
//   auto plan = std::make_shared<Plan>();
//   const int x = plan->add_tensor(0, nhwc_input, nhwc_input, /*output=*/false);
//   const int y = plan->add_tensor(2, nhwc_output, nhwc_output, /*output=*/true);
//   plan->add_step(dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}}, pd);

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "kernels/conv_geometry.h"
#include "kernels/op_id.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace mt::cpu::onednn {

// Returns the CPU engine every primitive runs on (oneDNN capped at the kernels' ISA level).
dnnl::engine& engine();

// Returns primitive attributes with a scratchpad the caller passes (scratchpad_mode::user), so
// that one primitive may run on several threads at once.
dnnl::primitive_attr user_scratchpad();

// Whether `pd` is one of oneDNN's reference implementations (slower than the runtime's own).
bool is_reference(const dnnl::primitive_desc_base& pd);

// Whether oneDNN's descriptors hold `g`: every size positive, every tensor under 2^31
// elements (its kernels index with ints), and no negative padding before the input.
bool fits(const internal::ConvGeometry& g);

// oneDNN's padding after the input along H and W: what the output size leaves, negative
// where the last window stops short of the input's end.
dnnl::memory::dims pad_after(const internal::ConvGeometry& g);

// The dims of `g`'s input and output images in oneDNN's order (N, C, H, W) and their layout.
dnnl::memory::dims image_dims(const internal::ConvGeometry& g);
dnnl::memory::dims output_dims(const internal::ConvGeometry& g);
dnnl::memory::format_tag layout_of(const internal::ConvGeometry& g);

class Plan {
 public:
  // Adds tensor `data` of the caller's (an index into run's pointers) of layout `ours`, which
  // the primitives take as `theirs`: an input is reordered into it before the steps, an output
  // from it after them. Returns the buffer's index for add_step.
  int add_tensor(int data, const dnnl::memory::desc& ours, const dnnl::memory::desc& theirs,
                 bool output);
  // Adds a buffer that only the steps use (a max pool's workspace). Returns its index.
  int add_scratch(const dnnl::memory::desc& theirs);
  // Adds a step: a primitive made from `pd`, with its arguments (DNNL_ARG_*, buffer index).
  template <typename Primitive, typename PrimitiveDesc>
  void add_step(const PrimitiveDesc& pd, std::vector<std::pair<int, int>> args) {
    add(Primitive(pd), std::move(args), pd.scratchpad_desc().get_size(), pd.impl_info_str());
  }

  // Names the steps' implementations ("jit:avx512_core", "a+b" for two steps).
  const std::string& implementation() const { return implementation_; }
  // Bytes of scratch memory a run takes.
  size_t scratch_bytes() const { return copies_bytes_ + scratchpad_bytes_; }

  // Runs the plan on `data` (the caller's tensors, by the indices given to add_tensor) on the
  // calling thread's OpenMP team. Throws dnnl::error when a primitive fails and
  // std::bad_alloc when the scratch memory cannot grow.
  void run(void* const* data) const;

 private:
  struct Buffer {
    int data = -1;  // the caller's tensor, or -1 for a buffer of the steps alone
    dnnl::memory::desc ours, theirs;
    dnnl::reorder reorder;  // ours <-> theirs where they differ, else empty
    bool output = false;
    size_t offset = 0;  // in the scratch memory, for a reordered or scratch-only buffer
  };
  struct Step {
    dnnl::primitive primitive;
    std::vector<std::pair<int, int>> args;
  };

  void add(dnnl::primitive primitive, std::vector<std::pair<int, int>> args,
           size_t scratchpad_bytes, const char* implementation);
  size_t place(const dnnl::memory::desc& theirs);

  std::vector<Buffer> buffers_;
  std::vector<Step> steps_;
  size_t copies_bytes_ = 0;      // the reordered and scratch-only buffers, first
  size_t scratchpad_bytes_ = 0;  // then the largest scratchpad of a step or reorder
  std::string implementation_;
};

// Returns the plan of `op` over `g` on `threads` threads, made by `make` on its first use and
// cached (null, cached too, where oneDNN takes no such call). The caller has set OpenMP's
// thread count to `threads`: a primitive's blocking is fixed when it is made. Thread-safe.
std::shared_ptr<const Plan> cached_plan(OpId op, const internal::ConvGeometry& g, int threads,
                                        absl::FunctionRef<std::shared_ptr<Plan>()> make);

// Makes the plan of a convolution (onednn_conv.cc) or a pool (onednn_pool.cc), whose data
// are the op's inputs in order, then its output; null where oneDNN takes no such call.
std::shared_ptr<Plan> make_conv_plan(OpId op, const internal::ConvGeometry& g);
std::shared_ptr<Plan> make_pool_plan(OpId op, const internal::ConvGeometry& g);

}  // namespace mt::cpu::onednn
