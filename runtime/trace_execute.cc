// The traced path: execute() and execute_source() step for step, each step timed and
// recorded (Note [Recording off costs one load] in trace_recorder.h). Keep it in step with
// execute.cc; trace_test runs ops both ways and compares.

#include "absl/container/inlined_vector.h"
#include "core/status.h"
#include "runtime/execute.h"
#include "runtime/explain.h"
#include "runtime/remote.h"
#include "runtime/scope_stack.h"
#include "runtime/tensor_impl.h"
#include "runtime/trace_recorder.h"

namespace mt::internal {
namespace {

// Starts an op event: its kind, device and placement, and the host time now.
TraceEvent begin_op(OpId op, DType dtype, const Placement& p, TraceDetails* details) {
  TraceEvent e;
  e.op = op;
  e.dtype = dtype;
  e.reason = p.reason;
  e.device = p.device;
  e.mark_device = p.device;
  if (p.reason != PlacementReason::kDefault) details->requested = &scope_stack().top()->spec;
  e.ts_ns = trace_ticks();
  return e;
}

// Copies `t` to `device` (index `index`) and records the copy; its marks go on the GPU side.
absl::StatusOr<Tensor> traced_copy(const Tensor& t, Device& device, int index) {
  const TensorImpl* src = t.impl();
  TraceEvent e;
  e.kind = TraceEvent::Kind::kCopy;
  e.device = index;
  e.src_device = device_index(*src->device);
  e.dtype = src->dtype;
  e.bytes = static_cast<int64_t>(src->bytes());
  Device& marks = src->device->type() == DeviceType::kGPU ? *src->device : device;
  e.mark_device = &marks == &device ? index : e.src_device;
  TraceDetails details;
  details.add_shape(src->shape);
  e.num_shapes = 1;
  e.ts_ns = trace_ticks();
  e.mark_begin = marks.record_mark();
  absl::StatusOr<Tensor> copy = copy_to(t, device);
  e.mark_end = e.mark_begin == nullptr ? nullptr : marks.record_mark();
  e.dur_ns = trace_ticks() - e.ts_ns;
  if (copy.ok()) e.data = copy->impl()->data;
  trace_record(e, details);
  return copy;
}

// Runs the kernel between two timing marks and records the op as `e`.
absl::StatusOr<Tensor> traced_kernel(TraceEvent& e, TraceDetails& details, Device& device,
                                     KernelFn kernel, OutputMeta out,
                                     absl::Span<const TensorArg> args, const OpAttrs& attrs) {
  e.mark_begin = device.record_mark();
  absl::StatusOr<Tensor> result = run_kernel(device, kernel, std::move(out), args, attrs);
  e.mark_end = e.mark_begin == nullptr ? nullptr : device.record_mark();
  e.dur_ns = trace_ticks() - e.ts_ns;
  e.num_shapes += 1;
  if (result.ok()) {
    const TensorImpl* impl = result->impl();
    e.bytes += static_cast<int64_t>(impl->bytes());
    details.add_shape(impl->shape);
    e.data = impl->data;
  } else {
    details.add_shape(Shape());  // no output
  }
  details.pool = &device;
  trace_record(e, details);
  return result;
}

}  // namespace

absl::StatusOr<Tensor> execute_traced(OpId op, absl::Span<const Tensor* const> inputs,
                                      const OpAttrs& attrs) {
  Context& ctx = Context::get();
  MT_ASSIGN_OR_RETURN(Runtime * rt, ctx.runtime());
  absl::InlinedVector<TensorMeta, 4> metas;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl* impl = inputs[i]->impl();
    if (impl == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("[", op_name(op), "] input ", i, " is an empty tensor"));
    }
    TensorMeta& meta = metas.emplace_back();  // field by field: Note [Writing ahead]
    meta.shape = &impl->shape;
    meta.dtype = impl->dtype;
  }
  DType key = metas.empty() ? DType::kFloat32 : metas[0].dtype;
  MT_ASSIGN_OR_RETURN(Placement p, place(ctx, *rt, op, key));
  MT_ASSIGN_OR_RETURN(OutputMeta out, infer_output(op, metas, attrs));
  Device& device = rt->device(p.device);
  if (ctx.log_placement()) log_op(op, key, p, device, inputs);
  // Ops on another process's device run there untraced (docs/trace.md).
  if (RemoteOps* remote = device.remote()) return remote->run(op, inputs, attrs, out);
  TraceDetails details;
  TraceEvent e = begin_op(op, key, p, &details);
  absl::InlinedVector<Tensor, 4> copies;
  absl::InlinedVector<TensorArg, 4> args;
  for (const Tensor* t : inputs) {
    TensorImpl* impl = t->impl();
    details.add_shape(impl->shape);
    ++e.num_shapes;
    if (impl->device != &device) {
      MT_ASSIGN_OR_RETURN(Tensor copy, traced_copy(*t, device, p.device));
      impl = copy.impl();
      e.bytes += static_cast<int64_t>(impl->bytes());
      copies.push_back(std::move(copy));
    }
    args.push_back(TensorArg{impl->data, &impl->shape, impl->dtype});
  }
  if (op == OpId::kIdentity && !copies.empty()) {
    e.dur_ns = trace_ticks() - e.ts_ns;
    e.num_shapes += 1;
    details.add_shape(copies[0].impl()->shape);
    details.pool = &device;
    trace_record(e, details);
    return std::move(copies[0]);
  }
  return traced_kernel(e, details, device, p.kernel, std::move(out), args, attrs);
}

absl::StatusOr<Tensor> execute_source_traced(OpId op, DType dtype, const Shape& shape,
                                             const void* host_data, const OpAttrs& attrs) {
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
  TraceDetails details;
  TraceEvent e = begin_op(op, dtype, p, &details);
  return traced_kernel(e, details, device, p.kernel, std::move(out), absl::MakeConstSpan(&arg, 1),
                       attrs);
}

}  // namespace mt::internal
