#pragma once
// Internal to kernels/cuda/ (.cu files only): how a Sum, Mean or Max call is laid out for
// reduce_kernel (reduction_kernels.cu).
//
// Note [GPU reduction layout]: as on the CPU (Note [Reduction layout] in
// kernels/cpu/reduction_kernels.cc), size-1 dimensions are dropped and neighbouring
// dimensions merged when both are kept or both reduced. The merged dimensions then form two
// mixed-radix indices over the input: `kept` numbers the outputs (o) and `reduced` the
// elements each output combines (r), and the input element of (o, r) is at
// offset(kept, o) + offset(reduced, r).
//
// Note [GPU reduction grid]: a block is bx x by threads (bx * by = kThreads); thread
// (tx, ty) works for output o0 + tx and strides over r by `by`, then the block combines its
// `by` partial values per output in shared memory. Warps run along whichever index has
// unit stride: bx = 1 when the innermost dimension is reduced (a warp reads a contiguous
// run of r), bx up to 32 when it is kept (a warp reads 32 neighbouring outputs). When the
// outputs alone give too few blocks, r is split into `splits` chunks (gridDim.y) whose
// partial results go to GpuState::scratch, and a second pass combines them per output.

#include <cstdint>

#include "core/shape.h"
#include "kernels/cuda/device_math.h"
#include "kernels/shape_fns.h"

namespace mt::cuda {

// The most merged dimensions each of `kept` and `reduced` may have.
inline constexpr int kMaxReduceRuns = 8;

// A mixed-radix index over the input: dimensions outermost first, with input strides.
struct ReduceAxes {
  int rank = 0;
  int64_t stride[kMaxReduceRuns] = {};
  IndexDivider dim[kMaxReduceRuns];
};

struct ReduceLayout {
  ReduceAxes kept, reduced;
  int64_t num_out = 1;         // outputs: the product of the kept dimensions
  int64_t num_red = 1;         // elements per output: the product of the reduced dimensions
  bool inner_reduced = false;  // whether the innermost merged dimension is reduced
  int64_t inner_len = 1;       // the innermost merged dimension's size
};

// Fills `layout` for a non-empty `input` reduced over `mask` (Note [GPU reduction layout]).
// Returns false when kept or reduced dimensions exceed kMaxReduceRuns after merging.
bool make_reduce_layout(const Shape& input, const internal::AxisMask& mask, ReduceLayout* layout);

// Returns the layout of the second pass: `splits` partial results per output, stored
// split-major (partial[s * num_out + o]), combined into num_out outputs.
ReduceLayout partials_layout(int64_t num_out, int64_t splits);

// The launch shape of one pass (Note [GPU reduction grid]).
struct ReduceGrid {
  int bx = 1, by = 1;    // threads per block along outputs and along r
  int64_t blocks_x = 1;  // blocks along outputs (each loops over tiles beyond this)
  int64_t splits = 1;    // chunks of r (gridDim.y); more than 1 needs scratch
  int64_t chunk = 1;     // elements of r per chunk
};

// Chooses the grid of `layout` on a GPU of `sms` multiprocessors, splitting r only when
// the partials fit in `scratch_elements`.
ReduceGrid choose_reduce_grid(const ReduceLayout& layout, int sms, int64_t scratch_elements);

}  // namespace mt::cuda
