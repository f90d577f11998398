#include "runtime/eager/execute.h"

#include <algorithm>
#include <new>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/op_def.h"
#include "placement/small_op_rule.h"
#include "runtime/eager/context.h"
#include "runtime/eager/explain.h"
#include "runtime/eager/op_observer.h"
#include "runtime/eager/placement_policy.h"
#include "runtime/eager/remote.h"
#include "runtime/eager/scope_stack.h"
#include "runtime/eager/tensor_impl.h"

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

int64_t output_bytes(const OutputMetas* outputs, absl::Span<const Tensor* const> inputs) {
  int64_t bytes = 0;
  if (outputs == nullptr) {  // not inferred (explain_placement): the largest input
    for (const Tensor* t : inputs)
      bytes = std::max(bytes, static_cast<int64_t>(t->impl()->bytes()));
    return bytes;
  }
  for (const OutputMeta& m : *outputs) bytes += m.shape.num_elements() * dtype_size(m.dtype);
  return bytes;
}

bool cost_places(const Context& ctx, OpId op) {
  return ctx.cost_placement() && scope_stack().top() == nullptr && !op_has_flag(op, kResource);
}

// The cost policy, when on, places every op that neither a scope nor a variable pins, before
// the small-op rule (its estimates see the same small inputs). The small-op rule is read only when
// the other rules chose another device than the host CPU: an op they put there already runs where
// the rule would pin it.
absl::StatusOr<Placement> place_op(Context& ctx, const Runtime& rt, OpId op, DType dtype,
                                   absl::Span<const Tensor* const> inputs,
                                   const OutputMetas* outputs, std::string* cost_why) {
  if (__builtin_expect(op_has_flag(op, kResource), 0)) {  // MaybePinToResourceDevice
    return rt.resource_placement(op, dtype, device_index(*inputs[0]->impl()->device));
  }
  if (__builtin_expect(cost_places(ctx, op), 0) && rt.policy() != nullptr) {
    return rt.policy()->place(op, dtype, inputs, output_bytes(outputs, inputs),
                              outputs == nullptr || outputs->size() == 1, cost_why);
  }
  absl::StatusOr<Placement> p = place(ctx, rt, op, dtype);
  const Device* host = rt.small_op_host();
  if (host == nullptr || !small_op_pinnable(op, inputs.size())) return p;
  if (p.ok() && &rt.device(p->device) == host) return p;
  for (const Tensor* t : inputs) {
    const TensorImpl* impl = t->impl();
    if (!small_op_input(impl->device == host, impl->dtype, impl->shape.num_elements())) return p;
  }
  return rt.host_placement(op, dtype);
}

namespace {

// Returns a copy of `t` on `device` (another device than its own). Remote buffers travel
// through host memory (runtime/eager/remote.h).
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

// Returns `run()`; for a decision of the placement policy (reason kCost), tells the policy
// of the launch (with the outputs, unless the op ran on a remote device) and, when it asked
// (`p.measure`), of the run's timing.
template <typename Run>
absl::Status launch(const Placement& p, Runtime& rt, Device& device, OpId op, DType key,
                    absl::Span<const Tensor* const> inputs, const OutputMetas& out, Tensors* outs,
                    Run&& run) {
  if (__builtin_expect(p.reason != PlacementReason::kCost, 1)) return run();
  PlacementPolicy& policy = *rt.policy();
  const bool local = device.remote() == nullptr;
  if (!p.measure) {
    absl::Status status = run();
    if (status.ok()) {
      policy.launched(p, local ? absl::Span<const Tensor>(*outs) : absl::Span<const Tensor>());
    }
    return status;
  }
  const int64_t out_bytes = output_bytes(&out, inputs);  // before run() moves the shapes
  PolicyTiming timing = policy.begin(device);
  absl::Status status = run();
  if (status.ok()) {
    policy.launched(p, local ? absl::Span<const Tensor>(*outs) : absl::Span<const Tensor>());
    policy.measured(timing, device, op, key, inputs, out_bytes);
  } else {
    policy.abandoned(timing, device);
  }
  return status;
}

// Allocates the outputs on `device` and runs `kernel` there on `args`.
absl::Status run_kernel(Device& device, KernelFn kernel, OutputMetas& metas,
                        absl::Span<const TensorArg> args, const OpAttrs& attrs, Tensors* outs) {
  absl::InlinedVector<MutableTensorArg, 2> views;
  for (OutputMeta& meta : metas) {
    MT_ASSIGN_OR_RETURN(TensorImpl * impl,
                        allocate_tensor(device, meta.dtype, std::move(meta.shape)));
    outs->emplace_back(impl);
    MutableTensorArg& view = views.emplace_back();  // field by field: Note [Writing ahead]
    view.data = impl->data;
    view.shape = &impl->shape;
    view.dtype = impl->dtype;
  }
  const MutableTensorArg none{nullptr, nullptr, DType::kFloat32};  // the assignments
  KernelContext kc{args, views.empty() ? none : views[0], &attrs, device.kernel_state(), views};
  MT_RETURN_IF_ERROR(device.make_current());
  return kernel(kc);
}

// What a source op's call says of its output.
struct SourceCall {
  DType dtype;
  const Shape* shape;
  const void* host_data;
};

// Returns the input metadata of a call, or InvalidArgument for an empty input.
absl::Status input_metas(OpId op, absl::Span<const Tensor* const> inputs,
                         absl::InlinedVector<TensorMeta, 4>* metas) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl* impl = inputs[i]->impl();
    if (__builtin_expect(impl == nullptr, 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("[", op_name(op), "] input ", i, " is an empty tensor"));
    }
    TensorMeta& meta = metas->emplace_back();  // field by field: Note [Writing ahead]
    meta.shape = &impl->shape;
    meta.dtype = impl->dtype;
  }
  return absl::OkStatus();
}

// Runs a remote op; its inputs from other devices travel inside it (no copy events).
absl::Status run_remote(RemoteOps& remote, OpId op, absl::Span<const Tensor* const> inputs,
                        const SourceCall* source, const OpAttrs& attrs, const OutputMetas& out,
                        Tensors* outs) {
  if (out.size() != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "[", op_name(op), "] ops with several outputs do not run on remote devices yet"));
  }
  absl::StatusOr<Tensor> result =
      source != nullptr
          ? remote.run_source(op, source->dtype, *source->shape, source->host_data, attrs)
          : remote.run(op, inputs, attrs, out[0]);
  if (!result.ok()) return result.status();
  outs->push_back(*std::move(result));
  return absl::OkStatus();
}

// What run_op<true> tells the observers, gathered once per op; run_op<false> has no
// watch at all (Note [Observers cost one load when off] in runtime/eager/op_observer.h).
template <bool kObserved>
class OpWatch;

template <>
class OpWatch<false> {
 public:
  bool wants_reasons() const { return false; }
  void placed(OpId, DType, const Placement&, Device&, absl::Span<const Tensor* const>,
              const OpAttrs&, bool, std::string_view) {}
  void before_copy(const Tensor&, Device&, int) {}
  void after_copy(const Tensor&, Device&, const absl::StatusOr<Tensor>&) {}
  void before_kernel() {}
  void done(KernelFn, absl::Span<const Tensor>, absl::Span<const Tensor>, bool,
            const absl::Status&) {}
};

template <>
class OpWatch<true> {
 public:
  bool wants_reasons() const { return set_.wants_reasons(); }
  void placed(OpId op, DType dtype, const Placement& p, Device& device,
              absl::Span<const Tensor* const> inputs, const OpAttrs& attrs, bool source,
              std::string_view why) {
    event_.op = op;
    event_.dtype = dtype;
    event_.placement = &p;
    event_.device = &device;
    event_.inputs = inputs;
    event_.attrs = &attrs;
    event_.source = source;
    event_.why = why;
    set_.on_placed(event_);
  }
  void before_copy(const Tensor& t, Device& dst, int index) { set_.before_copy(t, dst, index); }
  void after_copy(const Tensor& t, Device& dst, const absl::StatusOr<Tensor>& copy) {
    set_.after_copy(t, dst, copy);
  }
  void before_kernel() { set_.before_kernel(event_); }
  void done(KernelFn kernel, absl::Span<const Tensor> copies, absl::Span<const Tensor> outputs,
            bool remote, const absl::Status& status) {
    event_.kernel = kernel;
    event_.copies = copies;
    event_.outputs = outputs;
    event_.remote = remote;
    set_.on_done(event_, status);
  }

 private:
  ObserverSet set_;
  OpEvent event_;
};

// The one execute body: validate, place, log, copy, allocate, run. It tells the observers
// registered at the time each step (Note [Observers cost one load when off] in
// runtime/eager/op_observer.h). `source` is set for a source op (no tensor inputs).
template <bool kObserved>
absl::Status run_op(OpId op, absl::Span<const Tensor* const> inputs, const SourceCall* source,
                    const OpAttrs& attrs, Tensors* outs);

// The observed body, kept out of line so that the unobserved one stays as small as before.
__attribute__((noinline)) absl::Status run_observed(OpId op, absl::Span<const Tensor* const> inputs,
                                                    const SourceCall* source, const OpAttrs& attrs,
                                                    Tensors* outs) {
  return run_op<true>(op, inputs, source, attrs, outs);
}

template <bool kObserved>
absl::Status run_op(OpId op, absl::Span<const Tensor* const> inputs, const SourceCall* source,
                    const OpAttrs& attrs, Tensors* outs) {
  if constexpr (!kObserved) {
    if (observed()) return run_observed(op, inputs, source, attrs, outs);
  }
  OpWatch<kObserved> watch;
  Context& ctx = Context::get();
  MT_ASSIGN_OR_RETURN(Runtime * rt, ctx.runtime());
  absl::InlinedVector<TensorMeta, 4> metas;
  if (source != nullptr) metas.push_back(TensorMeta{source->shape, source->dtype});
  MT_RETURN_IF_ERROR(input_metas(op, inputs, &metas));
  OutputMetas out;
  MT_RETURN_IF_ERROR(infer_outputs(op, metas, attrs, &out));  // validate, then place
  const DType key = metas[source != nullptr ? 0 : op_key_input(op)].dtype;
  std::string why;  // the cost policy's words, when the log's reasons or an observer show them
  const bool want_why = watch.wants_reasons() ||
                        (ctx.log_placement() && g_log_reasons.load(std::memory_order_relaxed));
  MT_ASSIGN_OR_RETURN(Placement p,
                      place_op(ctx, *rt, op, key, inputs, &out, want_why ? &why : nullptr));
  Device& device = rt->device(p.device);
  if (ctx.log_placement()) log_op(op, key, p, device, inputs, why);
  watch.placed(op, key, p, device, inputs, attrs, source != nullptr, why);
  if (RemoteOps* remote = device.remote()) {
    // Timed, its issue only (Note [Remote candidates] in cost_policy.h).
    absl::Status status = launch(p, *rt, device, op, key, inputs, out, outs, [&] {
      return run_remote(*remote, op, inputs, source, attrs, out, outs);
    });
    watch.done(nullptr, {}, *outs, /*remote=*/true, status);
    return status;
  }
  // A resource op writes its variables in place: copies the policy kept of them go first.
  if (__builtin_expect(op_writes(op) > 0, 0) && rt->policy() != nullptr) {
    for (int i = 0; i < op_writes(op); ++i) rt->policy()->writing(*inputs[i]->impl());
  }
  // The policy's decisions read the copies it keeps, and hear of the copies they make.
  PlacementPolicy* const keeps = p.reason == PlacementReason::kCost ? rt->policy() : nullptr;
  absl::InlinedVector<Tensor, 4> copies;  // inputs moved to `device` for this op
  absl::InlinedVector<TensorArg, 4> args;
  if (source != nullptr) args.push_back(TensorArg{source->host_data, source->shape, key});
  for (const Tensor* t : inputs) {
    TensorImpl* impl = t->impl();
    if (impl->device != &device) {
      TensorImpl* kept = keeps != nullptr ? keeps->kept_copy(op, *impl, device) : nullptr;
      if (kept != nullptr) {
        copies.push_back(Tensor(kept));  // adopts kept_copy's reference
      } else {
        watch.before_copy(*t, device, p.device);
        absl::StatusOr<Tensor> copy = copy_to(*t, device);
        watch.after_copy(*t, device, copy);
        if (!copy.ok()) {
          watch.done(nullptr, copies, {}, /*remote=*/false, copy.status());
          return copy.status();
        }
        if (keeps != nullptr) keeps->copied(op, *impl, *copy->impl());
        copies.push_back(*std::move(copy));
      }
      impl = copies.back().impl();
    }
    TensorArg& arg = args.emplace_back();  // field by field: Note [Writing ahead]
    arg.data = impl->data;
    arg.shape = &impl->shape;
    arg.dtype = impl->dtype;
  }
  absl::Status status;
  KernelFn kernel = nullptr;
  if (op_has_flag(op, kCopyIsResult) && !copies.empty()) {
    outs->push_back(copies[0]);  // the copy just made is the result
    if (p.reason == PlacementReason::kCost) rt->policy()->launched(p, {});
  } else if (op_has_flag(op, kAliasInput0)) {
    outs->push_back(*inputs[0]);  // the value itself (Note [Variables write in place])
  } else {
    watch.before_kernel();
    kernel = p.kernel;
    status = launch(p, *rt, device, op, key, inputs, out, outs,
                    [&] { return run_kernel(device, kernel, out, args, attrs, outs); });
    if (!status.ok()) outs->clear();
  }
  watch.done(kernel, copies, *outs, /*remote=*/false, status);
  return status;
}

}  // namespace

absl::StatusOr<Tensor> execute(OpId op, absl::Span<const Tensor* const> inputs,
                               const OpAttrs& attrs) {
  Tensors outs;
  MT_RETURN_IF_ERROR(run_op<false>(op, inputs, nullptr, attrs, &outs));
  return std::move(outs[0]);
}

absl::StatusOr<Tensors> execute_all(OpId op, absl::Span<const Tensor* const> inputs,
                                    const OpAttrs& attrs) {
  Tensors outs;
  MT_RETURN_IF_ERROR(run_op<false>(op, inputs, nullptr, attrs, &outs));
  return outs;
}

absl::StatusOr<Tensor> execute_source(OpId op, DType dtype, const Shape& shape,
                                      const void* host_data, const OpAttrs& attrs) {
  const SourceCall source{dtype, &shape, host_data};
  Tensors outs;
  MT_RETURN_IF_ERROR(run_op<false>(op, {}, &source, attrs, &outs));
  return std::move(outs[0]);
}

}  // namespace mt::internal
