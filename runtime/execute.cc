#include "runtime/execute.h"

#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/op_def.h"
#include "runtime/context.h"
#include "runtime/explain.h"
#include "runtime/remote.h"
#include "runtime/scope_stack.h"
#include "runtime/tensor_impl.h"
#include "runtime/trace_recorder.h"

namespace mt::internal {
namespace {

// Note [Placement cache]
// Outside any scope the decision depends only on (op, dtype) and is precomputed by the
// Runtime. Inside a scope it also depends on the merged request and the soft-placement
// flag, so each thread keeps a small direct-mapped cache keyed by (op, dtype, request);
// the context's epoch (bumped by initialisation, reset and soft-placement changes)
// invalidates it. Input devices are not part of the key: no rule reads them.
struct CacheEntry {
  uint64_t epoch = 0;
  uint64_t hash = 0;
  OpId op{};
  DType dtype{};
  DeviceSpec spec;
  Placement placement;
};

}  // namespace

absl::StatusOr<Placement> place(Context& ctx, const Runtime& rt, OpId op, DType dtype) {
  const ScopeEntry* scope = scope_stack().top();
  if (scope == nullptr) return rt.default_placement(op, dtype);
  thread_local CacheEntry cache[64];
  uint64_t epoch = ctx.epoch();
  CacheEntry& e =
      cache[(scope->hash ^ (static_cast<uint64_t>(op) << 3) ^ static_cast<uint64_t>(dtype)) & 63];
  if (e.epoch == epoch && e.hash == scope->hash && e.op == op && e.dtype == dtype &&
      e.spec == scope->spec) {
    return e.placement;
  }
  MT_ASSIGN_OR_RETURN(Placement p, rt.placer().place(op, dtype, scope->spec, ctx.soft_placement()));
  e = CacheEntry{epoch, scope->hash, op, dtype, scope->spec, p};
  return p;
}

// Returns a copy of `t` on `device` (another device than its own). Remote buffers travel
// through host memory (runtime/remote.h).
absl::StatusOr<Tensor> copy_to(const Tensor& t, Device& device) {
  TensorImpl* src = t.impl();
  if (RemoteOps* remote = device.remote()) return remote->copy_in(t);
  MT_ASSIGN_OR_RETURN(TensorImpl * dst, allocate_tensor(device, src->dtype, src->shape));
  Tensor out(dst);
  if (dst->bytes() > 0 && src->device->remote() != nullptr && device.type() != DeviceType::kCPU) {
    std::vector<char> host(dst->bytes());
    MT_RETURN_IF_ERROR(src->device->copy_to_host(host.data(), src->data, host.size()));
    MT_RETURN_IF_ERROR(device.copy_from_host(dst->data, host.data(), host.size()));
  } else if (dst->bytes() > 0) {
    MT_ASSIGN_OR_RETURN(PendingUse use,
                        device.copy_from_device(dst->data, *src->device, src->data, dst->bytes()));
    if (use.handle != nullptr) attach_pending_use(src, use);
  }
  return out;
}

// Allocates the output on `device` and runs `kernel` there on `args`.
absl::StatusOr<Tensor> run_kernel(Device& device, KernelFn kernel, OutputMeta out,
                                  absl::Span<const TensorArg> args, const OpAttrs& attrs) {
  MT_ASSIGN_OR_RETURN(TensorImpl * impl, allocate_tensor(device, out.dtype, std::move(out.shape)));
  Tensor result(impl);
  KernelContext kc{args, MutableTensorArg{impl->data, &impl->shape, impl->dtype}, &attrs,
                   device.kernel_state()};
  MT_RETURN_IF_ERROR(device.make_current());
  MT_RETURN_IF_ERROR(kernel(kc));
  return result;
}

absl::StatusOr<Tensor> execute(OpId op, absl::Span<const Tensor* const> inputs,
                               const OpAttrs& attrs) {
  if (tracing()) return execute_traced(op, inputs, attrs);  // Note [Recording off costs one load]
  Context& ctx = Context::get();
  MT_ASSIGN_OR_RETURN(Runtime * rt, ctx.runtime());
  absl::InlinedVector<TensorMeta, 4> metas;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl* impl = inputs[i]->impl();
    if (__builtin_expect(impl == nullptr, 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("[", op_name(op), "] input ", i, " is an empty tensor"));
    }
    metas.push_back(TensorMeta{&impl->shape, impl->dtype});
  }
  // Kernels are keyed by the first input's dtype (Cast: the source dtype). An op with no
  // input (add_n of nothing) fails shape inference below; float32 places it meanwhile.
  DType key = metas.empty() ? DType::kFloat32 : metas[0].dtype;
  MT_ASSIGN_OR_RETURN(Placement p, place(ctx, *rt, op, key));
  MT_ASSIGN_OR_RETURN(OutputMeta out, infer_output(op, metas, attrs));
  Device& device = rt->device(p.device);
  if (ctx.log_placement()) log_op(op, key, p, device, inputs);
  if (RemoteOps* remote = device.remote()) return remote->run(op, inputs, attrs, out);
  absl::InlinedVector<Tensor, 4> copies;  // inputs moved to `device` for this op
  absl::InlinedVector<TensorArg, 4> args;
  for (const Tensor* t : inputs) {
    TensorImpl* impl = t->impl();
    if (impl->device != &device) {
      MT_ASSIGN_OR_RETURN(Tensor copy, copy_to(*t, device));
      impl = copy.impl();
      copies.push_back(std::move(copy));
    }
    args.push_back(TensorArg{impl->data, &impl->shape, impl->dtype});
  }
  // Identity of a tensor from another device: the copy just made is the result.
  if (op == OpId::kIdentity && !copies.empty()) return std::move(copies[0]);
  return run_kernel(device, p.kernel, std::move(out), args, attrs);
}

absl::StatusOr<Tensor> execute_source(OpId op, DType dtype, const Shape& shape,
                                      const void* host_data, const OpAttrs& attrs) {
  if (tracing()) return execute_source_traced(op, dtype, shape, host_data, attrs);
  Context& ctx = Context::get();
  MT_ASSIGN_OR_RETURN(Runtime * rt, ctx.runtime());
  MT_ASSIGN_OR_RETURN(Placement p, place(ctx, *rt, op, dtype));
  TensorMeta meta{&shape, dtype};
  MT_ASSIGN_OR_RETURN(OutputMeta out, infer_output(op, absl::MakeConstSpan(&meta, 1), attrs));
  Device& device = rt->device(p.device);
  if (ctx.log_placement()) log_op(op, dtype, p, device, {});
  if (RemoteOps* remote = device.remote()) {
    return remote->run_source(op, dtype, shape, host_data, attrs);
  }
  TensorArg arg{host_data, &shape, dtype};
  return run_kernel(device, p.kernel, std::move(out), absl::MakeConstSpan(&arg, 1), attrs);
}

}  // namespace mt::internal
