// The host half of the GPU reductions: Note [GPU reduction layout] and Note [GPU reduction
// grid] in reduction_layout.h.
#include <algorithm>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/reduction_layout.h"

namespace mt::cuda {
namespace {

// Blocks the grid aims for per multiprocessor before it splits r.
constexpr int64_t kBlocksPerSm = 8;
// Elements of r each thread reads at least per chunk, so that splitting pays off.
constexpr int64_t kMinElementsPerThread = 32;
// gridDim.y's limit.
constexpr int64_t kMaxSplits = 65535;

// Returns the smallest power of two >= x, capped at `cap` (a power of two).
int pow2_at_least(int64_t x, int cap) {
  int p = 1;
  while (p < cap && p < x) p *= 2;
  return p;
}

// Appends a dimension of size `dim` and input stride `stride` to `axes`.
bool push_axis(ReduceAxes* axes, int64_t dim, int64_t stride) {
  if (axes->rank == kMaxReduceRuns) return false;
  axes->stride[axes->rank] = stride;
  axes->dim[axes->rank] = IndexDivider::make(dim, 1);  // the limit is set by set_limits
  ++axes->rank;
  return true;
}

// Remakes each divider of `axes` for numerators below `limit`.
void set_limits(ReduceAxes* axes, int64_t limit) {
  for (int k = 0; k < axes->rank; ++k) {
    axes->dim[k] = IndexDivider::make(static_cast<int64_t>(axes->dim[k].d), limit);
  }
}

}  // namespace

bool make_reduce_layout(const Shape& input, const internal::AxisMask& mask, ReduceLayout* layout) {
  Shape::Dims dims;
  internal::AxisMask reduced;
  for (int i = 0; i < input.rank(); ++i) {
    if (input.dim(i) == 1) continue;
    if (!dims.empty() && reduced.back() == mask[i]) {
      dims.back() *= input.dim(i);
    } else {
      dims.push_back(input.dim(i));
      reduced.push_back(mask[i]);
    }
  }
  const int runs = static_cast<int>(dims.size());
  Shape::Dims strides(runs);
  for (int64_t k = runs - 1, stride = 1; k >= 0; --k) {
    strides[k] = stride;
    stride *= dims[k];
  }
  ReduceLayout l;
  for (int k = 0; k < runs; ++k) {
    if (!push_axis(reduced[k] ? &l.reduced : &l.kept, dims[k], strides[k])) return false;
    (reduced[k] ? l.num_red : l.num_out) *= dims[k];
  }
  set_limits(&l.kept, l.num_out);
  set_limits(&l.reduced, l.num_red);
  l.inner_reduced = runs > 0 && reduced.back();
  l.inner_len = runs > 0 ? dims.back() : 1;
  *layout = l;
  return true;
}

ReduceLayout partials_layout(int64_t num_out, int64_t splits) {
  ReduceLayout l;
  push_axis(&l.kept, num_out, 1);
  push_axis(&l.reduced, splits, num_out);
  l.num_out = num_out;
  l.num_red = splits;
  set_limits(&l.kept, num_out);
  set_limits(&l.reduced, splits);
  l.inner_reduced = num_out == 1;
  l.inner_len = num_out == 1 ? splits : num_out;
  return l;
}

ReduceGrid choose_reduce_grid(const ReduceLayout& layout, int sms, int64_t scratch_elements) {
  ReduceGrid g;
  const int by_max = pow2_at_least(layout.num_red, kThreads);  // no more r-threads than r
  g.by = layout.inner_reduced ? by_max
                              : std::min(by_max, kThreads / pow2_at_least(layout.inner_len, 32));
  g.bx = kThreads / g.by;
  g.blocks_x = std::min((layout.num_out + g.bx - 1) / g.bx, kMaxGridBlocks);
  g.chunk = layout.num_red;
  const int64_t target = sms * kBlocksPerSm;
  if (g.blocks_x >= target) return g;
  int64_t splits = (target + g.blocks_x - 1) / g.blocks_x;
  splits = std::min(splits, layout.num_red / (g.by * kMinElementsPerThread));
  splits = std::min({splits, kMaxSplits, scratch_elements / layout.num_out});
  if (splits <= 1) return g;
  g.chunk = (layout.num_red + splits - 1) / splits;
  g.splits = (layout.num_red + g.chunk - 1) / g.chunk;
  return g;
}

}  // namespace mt::cuda
