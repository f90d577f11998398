#include "runtime/function/concrete_function.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/op_def.h"
#include "runtime/eager/device.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/function/function_plan.h"
#include "runtime/trace/memory_labels.h"
#include "runtime/train/variable.h"

namespace mt::internal {

ConcreteFunction::ConcreteFunction(std::unique_ptr<FunctionGraph> graph)
    : graph_(std::move(graph)) {}

ConcreteFunction::~ConcreteFunction() {
  for (const Tensor& arena : arenas_) unlabel_block(arena.impl()->data);
  for (Segment& seg : segments_) {
    if (seg.exec != nullptr) seg.gpu->release_graph(seg.exec);
  }
}

absl::StatusOr<std::unique_ptr<ConcreteFunction>> ConcreteFunction::create(
    std::unique_ptr<FunctionGraph> graph, const KernelRegistry& registry, const std::string& name) {
  std::unique_ptr<ConcreteFunction> f(new ConcreteFunction(std::move(graph)));
  MutexLock lock(&f->mu_);
  MT_RETURN_IF_ERROR(f->plan(registry, name));
  // A graph over several GPUs that CUDA refuses becomes one per GPU with the copies between;
  // without a graph a segment replays as a flat list, its arguments still copied into
  // buffers.
  std::vector<Segment> segments;
  for (Segment& seg : f->segments_) {
    if (seg.gpu != nullptr && !f->capture(seg).ok() && !seg.others.empty()) {
      for (Segment& part : f->split(seg.begin, seg.end, false)) {
        if (part.gpu != nullptr && !f->capture(part).ok()) part.gpu = nullptr;
        segments.push_back(std::move(part));
      }
      continue;
    }
    if (seg.gpu != nullptr && seg.exec == nullptr) seg.gpu = nullptr;
    segments.push_back(std::move(seg));
  }
  f->segments_ = std::move(segments);
  f->plan_direct_outputs();
  return f;
}

void ConcreteFunction::plan_direct_outputs() {
  const FunctionGraph& g = *graph_;
  // A captured graph reads and writes the addresses it was captured with: a value one
  // touches keeps its arena buffer.
  std::vector<bool> in_graph(g.values.size(), false);
  std::vector<bool> flat_made(g.values.size(), false);
  for (const Segment& seg : segments_) {
    for (size_t i = seg.begin; i < seg.end; ++i) {
      const FunctionStep& step = g.steps[i];
      for (ValueId id : step.inputs) in_graph[id] = in_graph[id] || seg.gpu != nullptr;
      for (ValueId id : step.outputs) {
        in_graph[id] = in_graph[id] || seg.gpu != nullptr;
        flat_made[id] = seg.gpu == nullptr && step.kind != FunctionStep::Kind::kMerge;
      }
    }
  }
  std::vector<bool> taken(g.values.size(), false);
  for (size_t pos = 0; pos < g.outputs.size(); ++pos) {
    const ValueId id = g.outputs[pos];
    const FunctionValue& v = g.values[id];
    // (An output returned twice is one tensor, returned twice.)
    if (v.kind != ValueKind::kMade || v.bytes == 0 || !flat_made[id] || in_graph[id] ||
        taken[id]) {
      continue;
    }
    taken[id] = true;
    direct_.push_back(DirectOutput{pos, id, data_[id]});
  }
}

std::vector<ConcreteFunction::Segment> ConcreteFunction::split(size_t begin, size_t end,
                                                               bool across_gpus) const {
  auto local_gpu = [](Device* d) {
    return d->type() == DeviceType::kGPU && d->remote() == nullptr;
  };
  std::vector<Segment> segments;
  for (size_t i = begin; i < end; ++i) {
    const FunctionStep& step = graph_->steps[i];
    Device* gpu = nullptr;  // the device a graph of this step launches on
    std::vector<Device*> devices;
    if (step.kind == FunctionStep::Kind::kKernel && local_gpu(step.device)) {
      gpu = step.device;
    } else if (across_gpus && step.kind == FunctionStep::Kind::kCopy && local_gpu(step.device) &&
               local_gpu(graph_->values[step.inputs[0]].device)) {
      gpu = step.device;
      devices.push_back(graph_->values[step.inputs[0]].device);
    }
    Segment* last = segments.empty() ? nullptr : &segments.back();
    const bool joins = last != nullptr &&
                       (gpu == nullptr ? last->gpu == nullptr
                                       : last->gpu != nullptr && (across_gpus || last->gpu == gpu));
    if (!joins) {
      segments.emplace_back();
      segments.back().begin = i;
      segments.back().gpu = gpu;
      last = &segments.back();
    }
    last->end = i + 1;
    if (gpu == nullptr) continue;
    devices.push_back(gpu);
    for (Device* d : devices) {
      if (d != last->gpu &&
          std::find(last->others.begin(), last->others.end(), d) == last->others.end()) {
        last->others.push_back(d);
      }
    }
  }
  return segments;
}

bool ConcreteFunction::uses_graph() const {
  bool graph = false;
  for (const Segment& seg : segments_) {
    if (seg.gpu != nullptr) {
      graph = true;
      continue;
    }
    for (size_t i = seg.begin; i < seg.end; ++i) {
      if (graph_->steps[i].kind == FunctionStep::Kind::kKernel) return false;
    }
  }
  return graph;
}

int ConcreteFunction::num_graphs() const {
  int n = 0;
  for (const Segment& seg : segments_) n += seg.gpu != nullptr ? 1 : 0;
  return n;
}

int64_t ConcreteFunction::arena_bytes() const {
  int64_t bytes = 0;
  for (const Tensor& arena : arenas_) bytes += static_cast<int64_t>(arena.impl()->bytes());
  return bytes;
}

std::vector<std::string> ConcreteFunction::placement_lines() const {
  const FunctionGraph& g = *graph_;
  std::vector<std::string> lines;
  for (const FunctionValue& v : g.values) {
    if (v.kind == ValueKind::kArg) {
      const std::string name =
          g.arg_names.empty() ? absl::StrCat("args_", v.index) : g.arg_names[v.index];
      lines.push_back(absl::StrCat(name, ": (_Arg): ", v.device->name()));
    }
  }
  absl::flat_hash_map<std::string, int> seen;
  for (const FunctionStep& step : g.steps) {
    if (step.kind == FunctionStep::Kind::kMerge) continue;  // runs eagerly, outside the graph
    const std::string op = step.kind == FunctionStep::Kind::kCopy ? "_Recv" : op_name(step.op);
    const int n = seen[op]++;
    lines.push_back(absl::StrCat(op, n == 0 ? "" : absl::StrCat("_", n), ": (", op,
                                 "): ", step.device->name()));
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const FunctionValue& v = g.values[g.outputs[i]];
    lines.push_back(absl::StrCat("identity", i == 0 ? "" : absl::StrCat("_", i),
                                 "_RetVal: (_Retval): ", v.device->name()));
  }
  return lines;
}

absl::Status ConcreteFunction::plan(const KernelRegistry& registry, const std::string& name) {
  FunctionGraph& g = *graph_;
  // A copy within one device is Identity's kernel, which a capture records.
  for (FunctionStep& step : g.steps) {
    if (step.kind != FunctionStep::Kind::kCopy) continue;
    const FunctionValue& src = g.values[step.inputs[0]];
    if (src.device != step.device) continue;
    KernelFn identity = registry.find(OpId::kIdentity, step.device->type(), src.dtype);
    if (identity == nullptr) continue;
    step.kind = FunctionStep::Kind::kKernel;
    step.op = OpId::kIdentity;
    step.kernel = identity;
  }
  // The segments: each longest run of kernels and copies on the GPUs is one CUDA graph.
  segments_ = split(0, g.steps.size(), true);
  // The arguments a graph reads get buffers of the graph's own, which each replay copies
  // into. (A kernel reads only tensors on its device: the execute body copied the others.)
  arg_slot_.assign(g.num_args, -1);
  for (const Segment& seg : segments_) {
    if (seg.gpu == nullptr) continue;
    for (size_t i = seg.begin; i < seg.end; ++i) {
      for (ValueId& id : g.steps[i].inputs) {
        const FunctionValue v = g.values[id];
        if (v.kind != ValueKind::kArg) continue;
        if (arg_slot_[v.index] < 0) {
          FunctionValue slot = v;
          slot.kind = ValueKind::kMade;
          g.values.push_back(slot);
          arg_slot_[v.index] = static_cast<ValueId>(g.values.size() - 1);
        }
        id = arg_slot_[v.index];
      }
    }
  }
  // The arenas (function_plan.h).
  data_.assign(g.values.size(), nullptr);
  MT_ASSIGN_OR_RETURN(ArenaPlan arenas, plan_arenas(g));
  for (const ArenaPlan::Arena& arena : arenas.arenas) {
    MT_ASSIGN_OR_RETURN(Shape shape, Shape::make({arena.bytes}));
    MT_ASSIGN_OR_RETURN(TensorImpl * impl, allocate_tensor(*arena.device, DType::kBool, shape));
    arenas_.emplace_back(impl);
    label_block(impl->data, absl::StrCat("function '", name, "'"));
    char* base = static_cast<char*>(impl->data);
    for (const auto& [id, offset] : arena.offsets) {
      data_[id] = g.values[id].bytes == 0 ? nullptr : base + offset;
    }
  }
  for (const FunctionValue& v : g.values) {
    if (v.kind == ValueKind::kConstant || v.kind == ValueKind::kParam) {
      const Tensor& t = g.constants[v.index];
      data_[&v - g.values.data()] = t.defined() ? t.impl()->data : nullptr;
    }
  }
  for (const HostAction& action : g.actions) {
    const Tensor* param = action.param >= 0 ? &g.constants[action.param] : nullptr;
    KernelFn fill = param != nullptr && param->defined()
                        ? registry.find(OpId::kFill, DeviceType::kCPU, param->dtype())
                        : nullptr;
    if (param != nullptr && param->defined() && (fill == nullptr || param->impl()->bytes() > 16)) {
      return absl::InternalError("[function] a host value is not a scalar the CPU can fill");
    }
    fills_.push_back(fill);
  }
  // Each step's views.
  written_.assign(g.variables.size(), false);
  resolved_.resize(g.steps.size());
  for (size_t i = 0; i < g.steps.size(); ++i) {
    const FunctionStep& step = g.steps[i];
    Resolved& r = resolved_[i];
    for (ValueId id : step.inputs) {
      const FunctionValue& v = g.values[id];
      r.args.push_back(TensorArg{nullptr, &v.shape, v.dtype});
      if (step.writes_inputs && v.kind == ValueKind::kVariable) written_[v.index] = true;
    }
    for (ValueId id : step.outputs) {
      const FunctionValue& v = g.values[id];
      r.outs.push_back(MutableTensorArg{nullptr, &v.shape, v.dtype});
    }
  }
  return absl::OkStatus();
}

absl::Status ConcreteFunction::run_actions() {
  for (const HostAction& action : graph_->actions) {
    if (action.step) {
      action.step();
      continue;
    }
    const Tensor& param = graph_->constants[action.param];
    if (!param.defined()) {
      action.compute();  // unused by the replay, but a schedule may count its calls
      continue;
    }
    // The bytes a Fill of the value writes, made by the CPU's Fill kernel.
    TensorImpl* impl = param.impl();
    const double value = action.compute();
    alignas(16) char bytes[16];
    OpAttrs attrs;
    const bool integer = dtype_kind(impl->dtype) == DTypeKind::kInt;
    attrs.value = Scalar{value, integer ? static_cast<int64_t>(value) : 0, value != 0};
    const MutableTensorArg out{bytes, &impl->shape, impl->dtype};
    const KernelContext kc{{}, out, &attrs, nullptr, absl::MakeConstSpan(&out, 1)};
    MT_RETURN_IF_ERROR(fills_[&action - graph_->actions.data()](kc));
    MT_RETURN_IF_ERROR(impl->device->copy_from_host(impl->data, bytes, impl->bytes()));
  }
  return absl::OkStatus();
}

void ConcreteFunction::bind_variables() {
  const FunctionGraph& g = *graph_;
  for (size_t id = 0; id < g.values.size(); ++id) {
    const FunctionValue& v = g.values[id];
    if (v.kind == ValueKind::kVariable) data_[id] = g.variables[v.index]->value.impl()->data;
  }
}

absl::Status ConcreteFunction::bind(absl::Span<const Tensor> args) {
  FunctionGraph& g = *graph_;
  // A variable a step writes is first made its buffer's only holder.
  for (size_t k = 0; k < g.variables.size(); ++k) {
    if (written_[k]) writable_value(Variable::from_state(g.variables[k]));
  }
  bind_variables();
  // A flat list reads the arguments where they are; a graph, from its own buffers.
  for (size_t id = 0; id < g.values.size(); ++id) {
    const FunctionValue& v = g.values[id];
    if (v.kind == ValueKind::kArg) data_[id] = args[v.index].impl()->data;
  }
  bound_.resize(arg_slot_.size());
  for (size_t i = 0; i < arg_slot_.size(); ++i) {
    if (arg_slot_[i] < 0) continue;
    const TensorImpl* impl = args[i].impl();
    // The tensor bound last time, still held, has the same content (Note [Function replay]).
    if (impl->bytes() == 0 || impl == bound_[i].impl()) continue;
    bound_[i] = Tensor();
    MT_ASSIGN_OR_RETURN(PendingUse use,
                        g.values[arg_slot_[i]].device->copy_from_device(
                            data_[arg_slot_[i]], *impl->device, impl->data, impl->bytes()));
    wait_for_use(use);
    bound_[i] = args[i];
  }
  return absl::OkStatus();
}

absl::Status ConcreteFunction::run_steps(size_t begin, size_t end, GraphCapture* capture,
                                         absl::Span<const Tensor> args) {
  const FunctionGraph& g = *graph_;
  for (size_t i = begin; i < end; ++i) {
    const FunctionStep& step = g.steps[i];
    Resolved& r = resolved_[i];
    if (step.kind == FunctionStep::Kind::kMerge) {
      MT_RETURN_IF_ERROR(run_merge(step, args));
      continue;
    }
    if (step.kind == FunctionStep::Kind::kCopy) {
      const FunctionValue& src = g.values[step.inputs[0]];
      if (src.bytes == 0) continue;
      if (capture != nullptr) {
        MT_RETURN_IF_ERROR(capture->copy(*step.device, data_[step.outputs[0]], *src.device,
                                         data_[step.inputs[0]], src.bytes));
        continue;
      }
      MT_ASSIGN_OR_RETURN(PendingUse use,
                          step.device->copy_from_device(data_[step.outputs[0]], *src.device,
                                                        data_[step.inputs[0]], src.bytes));
      wait_for_use(use);
      continue;
    }
    for (size_t j = 0; j < r.args.size(); ++j) r.args[j].data = data_[step.inputs[j]];
    for (size_t j = 0; j < r.outs.size(); ++j) r.outs[j].data = data_[step.outputs[j]];
    const MutableTensorArg none{nullptr, nullptr, DType::kFloat32};
    void* state = step.device->kernel_state();
    if (capture != nullptr) {
      MT_ASSIGN_OR_RETURN(state, capture->kernel_state(*step.device));
    }
    const KernelContext kc{r.args, r.outs.empty() ? none : r.outs[0], &step.attrs, state, r.outs};
    MT_RETURN_IF_ERROR(step.device->make_current());
    MT_RETURN_IF_ERROR(step.kernel(kc));
  }
  return absl::OkStatus();
}

absl::Status ConcreteFunction::run_merge(const FunctionStep& step, absl::Span<const Tensor> args) {
  const FunctionGraph& g = *graph_;
  std::vector<Tensor> exports;
  for (ValueId id : step.inputs) {
    MT_ASSIGN_OR_RETURN(Tensor t, take(id, args));
    exports.push_back(std::move(t));
  }
  MT_ASSIGN_OR_RETURN(std::vector<Tensor> imports, step.merge(exports));
  if (imports.size() != step.outputs.size()) {
    return absl::InternalError("[function] a collective returned another number of values");
  }
  for (size_t j = 0; j < imports.size(); ++j) {
    const FunctionValue& v = g.values[step.outputs[j]];
    const TensorImpl* got = imports[j].impl();
    if (got == nullptr || got->dtype != v.dtype || got->shape != v.shape) {
      return absl::InvalidArgumentError(
          "[function] a collective returned a value unlike the trace's: the replicas must pass "
          "values of the traced shapes and dtypes");
    }
    if (v.bytes == 0) continue;
    MT_ASSIGN_OR_RETURN(
        PendingUse use,
        v.device->copy_from_device(data_[step.outputs[j]], *got->device, got->data, v.bytes));
    wait_for_use(use);
  }
  // The merge may have moved a variable (an optimizer step) or left one shared: bind them
  // again, and make those a later step writes their buffers' only holders again.
  for (size_t k = 0; k < g.variables.size(); ++k) {
    if (written_[k]) writable_value(Variable::from_state(g.variables[k]));
  }
  bind_variables();
  return absl::OkStatus();
}

absl::Status ConcreteFunction::capture(Segment& seg) {
  // Capture binds the variables as they are now; bind() is what makes them exclusive.
  FunctionGraph& g = *graph_;
  bind_variables();
  if (seg.exec != nullptr) {
    seg.gpu->release_graph(seg.exec);
    seg.exec = nullptr;
  }
  seg.captured_with.clear();
  for (const auto& state : g.variables) seg.captured_with.push_back(state->value.impl()->data);
  MT_ASSIGN_OR_RETURN(seg.exec, seg.gpu->capture_graph(seg.others, [this, &seg](GraphCapture& c) {
    return run_steps(seg.begin, seg.end, &c, {});
  }));
  return absl::OkStatus();
}

absl::Status ConcreteFunction::run_segment(Segment& seg, absl::Span<const Tensor> args) {
  if (seg.gpu == nullptr) return run_steps(seg.begin, seg.end, nullptr, args);
  bool moved = false;
  for (size_t k = 0; k < graph_->variables.size(); ++k) {
    moved = moved || graph_->variables[k]->value.impl()->data != seg.captured_with[k];
  }
  if (moved && !capture(seg).ok()) {
    // A capture that fails now (no memory for the capture's handles, say) leaves the
    // segment flat, as create() does.
    seg.gpu = nullptr;
    seg.others.clear();
    return run_steps(seg.begin, seg.end, nullptr, args);
  }
  return seg.gpu->launch_graph(seg.exec);
}

absl::StatusOr<std::vector<Tensor>> ConcreteFunction::call(absl::Span<const Tensor> args) {
  MutexLock lock(&mu_);
  MT_RETURN_IF_ERROR(run_actions());
  MT_RETURN_IF_ERROR(bind(args));
  const FunctionGraph& g = *graph_;
  std::vector<Tensor> outs(g.outputs.size());
  for (const DirectOutput& d : direct_) {
    const FunctionValue& v = g.values[d.id];
    MT_ASSIGN_OR_RETURN(TensorImpl * impl, allocate_tensor(*v.device, v.dtype, v.shape));
    outs[d.position] = Tensor(impl);
  }
  for (const DirectOutput& d : direct_) data_[d.id] = outs[d.position].impl()->data;
  absl::Status status = absl::OkStatus();
  for (Segment& seg : segments_) {
    status = run_segment(seg, args);
    if (!status.ok()) break;
  }
  for (const DirectOutput& d : direct_) data_[d.id] = d.arena;
  MT_RETURN_IF_ERROR(status);
  for (size_t pos = 0; pos < g.outputs.size(); ++pos) {
    if (outs[pos].defined()) continue;
    const auto direct = std::find_if(direct_.begin(), direct_.end(), [&](const DirectOutput& d) {
      return d.id == g.outputs[pos];
    });
    if (direct != direct_.end()) {
      outs[pos] = outs[direct->position];
      continue;
    }
    MT_ASSIGN_OR_RETURN(outs[pos], take(g.outputs[pos], args));
  }
  return outs;
}

absl::StatusOr<Tensor> ConcreteFunction::take(ValueId id, absl::Span<const Tensor> args) {
  const FunctionGraph& g = *graph_;
  const FunctionValue& v = g.values[id];
  switch (v.kind) {
    case ValueKind::kArg:
      return args[v.index];
    case ValueKind::kVariable:
      return g.variables[v.index]->value;
    case ValueKind::kConstant:
      return g.constants[v.index];
    case ValueKind::kMade:
    case ValueKind::kParam:
      break;
  }
  MT_ASSIGN_OR_RETURN(TensorImpl * impl, allocate_tensor(*v.device, v.dtype, v.shape));
  Tensor out(impl);
  if (v.bytes > 0) {
    MT_ASSIGN_OR_RETURN(PendingUse use,
                        v.device->copy_from_device(impl->data, *v.device, data_[id], v.bytes));
    wait_for_use(use);
  }
  return out;
}

}  // namespace mt::internal
