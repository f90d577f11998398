// CPU kernel of SelectV2 (mt::where): out = condition ? x : y over the SelectPlan of the
// three broadcast inputs (kernels/select.h), its innermost runs split across threads.
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/select.h"

namespace mt::cpu {
namespace {

// Elements per thread below which splitting costs more than it saves.
constexpr int64_t kGrain = 32768;

// Writes rows [begin, end) of the plan: row r is the output's r-th run of plan.dims[last].
template <typename T>
void select_rows(const SelectPlan& p, const bool* c, const T* x, const T* y, T* out, int64_t begin,
                 int64_t end) {
  const int last = p.rank - 1;
  const int64_t inner = p.dims[last];
  const int64_t sc = p.strides[0][last], sx = p.strides[1][last], sy = p.strides[2][last];
  for (int64_t row = begin; row < end; ++row) {
    int64_t oc = 0, ox = 0, oy = 0;
    for (int64_t k = last - 1, rest = row; k >= 0; --k) {
      const int64_t i = rest % p.dims[k];
      rest /= p.dims[k];
      oc += i * p.strides[0][k];
      ox += i * p.strides[1][k];
      oy += i * p.strides[2][k];
    }
    T* o = out + row * inner;
    for (int64_t j = 0; j < inner; ++j) o[j] = c[oc + j * sc] ? x[ox + j * sx] : y[oy + j * sy];
  }
}

template <typename T>
absl::Status select_kernel(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  const bool* c = input_data<bool>(ctx, 0);
  const T* x = input_data<T>(ctx, 1);
  const T* y = input_data<T>(ctx, 2);
  T* out = output_data<T>(ctx);
  SelectPlan p;
  MT_CHECK(make_select_plan(*ctx.inputs[0].shape, *ctx.inputs[1].shape, *ctx.inputs[2].shape,
                            *ctx.output.shape, &p));  // by infer_select
  if (p.rank == 0) {
    out[0] = c[0] ? x[0] : y[0];
    return absl::OkStatus();
  }
  const int64_t inner = p.dims[p.rank - 1];
  parallel_for(n / inner, (kGrain + inner - 1) / inner,
               [&](int64_t begin, int64_t end) { select_rows(p, c, x, y, out, begin, end); });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(SelectV2) {
  return add_kernels(registry, OpId::kSelectV2, AllTypes{}, [](auto tag) -> KernelFn {
    return &select_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
