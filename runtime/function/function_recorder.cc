#include "runtime/function/function_recorder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/op_def.h"
#include "runtime/eager/device.h"
#include "runtime/eager/op_observer.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/train/variable.h"

namespace mt::internal {
namespace {

// Hands each op that succeeds on a recording thread to the thread's active recorder (none
// while PauseRecording holds).
class RecorderObserver : public OpObserver {
 public:
  void on_done(const OpEvent& op, const absl::Status& status) override {
    FunctionRecorder* recorder = active_recorder();
    if (recorder == nullptr || !status.ok()) return;
    recorder->record_op(op.op, *op.attrs, op.kernel, *op.device, op.inputs, op.copies, op.source,
                        op.outputs);
  }
};

RecorderObserver g_recorder_observer;

}  // namespace

FunctionRecorder::FunctionRecorder(absl::Span<const Tensor> args)
    : saved_(t_active_recorder), args_(args.begin(), args.end()) {
  graph_ = std::make_unique<FunctionGraph>();
  graph_->num_args = static_cast<int>(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    TensorImpl* impl = args[i].impl();
    if (impl == nullptr || values_.contains(impl)) continue;  // an alias keeps the first
    values_[impl] = add_value(ValueKind::kArg, *impl);
    graph_->values.back().index = static_cast<int>(i);
  }
  t_active_recorder = this;
  thread_observers().add(&g_recorder_observer);
}

FunctionRecorder::~FunctionRecorder() {
  if (recording_) {
    t_active_recorder = saved_;
    thread_observers().remove(&g_recorder_observer);
  }
  for (TensorImpl* impl : weak_) weak_unref(impl);
}

ValueId FunctionRecorder::add_value(ValueKind kind, const TensorImpl& impl) {
  FunctionValue& v = graph_->values.emplace_back();
  v.kind = kind;
  v.dtype = impl.dtype;
  v.shape = impl.shape;
  v.device = impl.device;
  v.bytes = impl.bytes();
  return static_cast<ValueId>(graph_->values.size() - 1);
}

ValueId FunctionRecorder::value_of(TensorImpl* impl) {
  auto it = values_.find(impl);
  if (it != values_.end()) return it->second;
  // Not an argument, a variable or a value made here: a constant the function holds.
  const ValueId id = add_value(ValueKind::kConstant, *impl);
  graph_->values[id].index = static_cast<int>(graph_->constants.size());
  ref(impl);
  graph_->constants.emplace_back(impl);
  values_[impl] = id;
  return id;
}

void FunctionRecorder::record_op(OpId op, const OpAttrs& attrs, KernelFn kernel, Device& device,
                                 absl::Span<const Tensor* const> inputs,
                                 absl::Span<const Tensor> copies, bool source,
                                 absl::Span<const Tensor> outputs) {
  if (!unreplayable_.ok()) return;
  if (device.remote() != nullptr) {
    return set_unreplayable(absl::UnimplementedError(
        absl::StrCat("[", op_name(op), "] runs on a remote device, which a replay cannot reach")));
  }
  if (source) {
    // _EagerConst, Fill, the random ops: their output is a constant of the function. A
    // random op's would repeat its numbers at every replay; finish() refuses it if used.
    for (const Tensor& out : outputs) {
      const ValueId id = value_of(out.impl());
      if (op_has_flag(op, kRandom)) random_values_.push_back({id, op});
    }
    return;
  }
  // The copies first, as the execute body made them.
  absl::InlinedVector<ValueId, 4> in;
  size_t next_copy = 0;
  for (const Tensor* t : inputs) {
    TensorImpl* impl = t->impl();
    ValueId id = value_of(impl);
    if (impl->device != &device) {
      const Tensor& copy = copies[next_copy++];
      FunctionStep& step = graph_->steps.emplace_back();
      step.kind = FunctionStep::Kind::kCopy;
      step.device = &device;
      step.inputs.push_back(id);
      id = add_value(ValueKind::kMade, *copy.impl());
      values_[copy.impl()] = id;
      name_weakly(copy.impl());
      step.outputs.push_back(id);
    }
    in.push_back(id);
  }
  if (kernel == nullptr) return;  // Identity's copy is its output; ReadVariableOp aliases
  FunctionStep& step = graph_->steps.emplace_back();
  step.op = op;
  step.kernel = kernel;
  step.device = &device;
  step.attrs = attrs;
  step.inputs = std::move(in);
  step.writes_inputs = op_writes(op) > 0;
  for (const Tensor& out : outputs) {
    const ValueId id = add_value(ValueKind::kMade, *out.impl());
    values_[out.impl()] = id;
    name_weakly(out.impl());
    step.outputs.push_back(id);
  }
}

void FunctionRecorder::note_variable(const std::shared_ptr<VariableState>& state) {
  TensorImpl* impl = state->value.impl();
  if (impl != nullptr && !values_.contains(impl)) add_variable_buffer(state, impl);
}

ValueId FunctionRecorder::add_variable_buffer(const std::shared_ptr<VariableState>& state,
                                              TensorImpl* impl) {
  auto [it, added] =
      variable_index_.try_emplace(state.get(), static_cast<int>(graph_->variables.size()));
  if (added) graph_->variables.push_back(state);
  const ValueId id = add_value(ValueKind::kVariable, *impl);
  graph_->values[id].index = it->second;
  values_[impl] = id;
  name_weakly(impl);
  return id;
}

void FunctionRecorder::name_weakly(TensorImpl* impl) {
  weak_ref(impl);
  weak_.push_back(impl);
}

void FunctionRecorder::variable_moved(const std::shared_ptr<VariableState>& state,
                                      TensorImpl* old_value, TensorImpl* new_value) {
  auto old_it = values_.find(old_value);
  if (old_it == values_.end() || graph_->values[old_it->second].kind != ValueKind::kVariable) {
    add_variable_buffer(state, new_value);  // the old buffer is no part of the function
    return;
  }
  const ValueId variable = old_it->second;
  // Later uses of the old buffer read a snapshot taken here (Note [Variables moved during
  // a trace]); the new buffer is the variable.
  FunctionStep& step = graph_->steps.emplace_back();
  step.kind = FunctionStep::Kind::kCopy;
  step.device = old_value->device;
  step.inputs.push_back(variable);
  const ValueId snapshot = add_value(ValueKind::kMade, *old_value);
  step.outputs.push_back(snapshot);
  old_it->second = snapshot;
  values_[new_value] = variable;
  name_weakly(new_value);
}

void FunctionRecorder::add_host_scalar(const Tensor& value, std::function<double()> compute) {
  auto it = values_.find(value.impl());
  if (it == values_.end()) return;
  FunctionValue& v = graph_->values[it->second];
  if (v.kind != ValueKind::kConstant) return;
  v.kind = ValueKind::kParam;
  graph_->actions.push_back(HostAction{v.index, std::move(compute), nullptr});
}

void FunctionRecorder::add_host_step(std::function<void()> step) {
  graph_->actions.push_back(HostAction{-1, nullptr, std::move(step)});
}

FunctionRecorder::VariableBuffers FunctionRecorder::variable_buffers() const {
  VariableBuffers buffers;
  for (const auto& state : graph_->variables) buffers.emplace_back(state, state->value.impl());
  return buffers;
}

void FunctionRecorder::note_moves_since(const VariableBuffers& before) {
  for (const auto& [state, old_value] : before) {
    TensorImpl* now = state->value.impl();
    if (now != old_value && now != nullptr) variable_moved(state, old_value, now);
  }
}

void FunctionRecorder::record_merge(absl::Span<const Tensor> exports, MergeFn merge,
                                    absl::Span<const Tensor> imports) {
  if (!unreplayable_.ok()) return;
  FunctionStep& step = graph_->steps.emplace_back();
  step.kind = FunctionStep::Kind::kMerge;
  step.merge = std::move(merge);
  for (const Tensor& t : exports) step.inputs.push_back(value_of(t.impl()));
  for (const Tensor& t : imports) {
    const ValueId id = add_value(ValueKind::kMade, *t.impl());
    values_[t.impl()] = id;
    name_weakly(t.impl());
    step.outputs.push_back(id);
  }
}

void FunctionRecorder::set_unreplayable(absl::Status why) {
  if (unreplayable_.ok()) unreplayable_ = std::move(why);
}

absl::StatusOr<std::unique_ptr<FunctionGraph>> FunctionRecorder::finish(
    absl::Span<const Tensor> outputs) {
  t_active_recorder = saved_;
  thread_observers().remove(&g_recorder_observer);
  recording_ = false;
  if (!unreplayable_.ok()) return unreplayable_;
  for (const Tensor& out : outputs) {
    if (out.impl() == nullptr) {
      return absl::InvalidArgumentError("[function] the body returned an empty tensor");
    }
    graph_->outputs.push_back(value_of(out.impl()));
  }
  // Only the steps that lead to an output or write a variable stay: a variable's
  // initialiser ran once, at the trace, and so did anything else whose result went unused.
  FunctionGraph& g = *graph_;
  std::vector<bool> used(g.values.size(), false);
  for (ValueId id : g.outputs) used[id] = true;
  std::vector<bool> live(g.steps.size(), false);
  for (size_t i = g.steps.size(); i-- > 0;) {
    const FunctionStep& step = g.steps[i];
    // A merge meets the other replicas, whatever becomes of its values.
    bool needed = step.writes_inputs || step.kind == FunctionStep::Kind::kMerge;
    for (ValueId id : step.outputs) needed = needed || used[id];
    if (!needed) continue;
    live[i] = true;
    for (ValueId id : step.inputs) used[id] = true;
  }
  std::vector<FunctionStep> steps;
  for (size_t i = 0; i < g.steps.size(); ++i) {
    if (live[i]) steps.push_back(std::move(g.steps[i]));
  }
  g.steps = std::move(steps);
  for (const FunctionValue& v : g.values) {
    if (v.kind == ValueKind::kConstant && !used[&v - g.values.data()]) g.constants[v.index] = {};
  }
  // A random op whose numbers something uses would repeat them at every replay.
  for (const auto& [id, op] : random_values_) {
    if (used[id]) {
      return absl::UnimplementedError(absl::StrCat(
          "[", op_name(op),
          "] a random op inside a function would repeat its numbers at every replay; run it "
          "outside and pass its result in"));
    }
  }
  return std::move(graph_);
}

}  // namespace mt::internal
