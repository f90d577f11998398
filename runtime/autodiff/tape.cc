#include "runtime/autodiff/tape.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/autodiff/grad_fns.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/error.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/ops/array_ops.h"
#include "runtime/ops/ops.h"
#include "runtime/train/variable.h"

namespace mt::internal {

std::atomic<int> g_recording_tapes{0};

namespace {

// The tapes alive on this thread, innermost last.
std::vector<Tape*>& thread_tapes() {
  thread_local std::vector<Tape*> tapes;
  return tapes;
}

// Records each op that succeeds on the tapes of its thread (Note [Tapes cost one load when
// off]); registered with a thread's observers while a tape lives there.
class TapeObserver : public OpObserver {
 public:
  void on_done(const OpEvent& op, const absl::Status& status) override {
    if (!op.source && status.ok()) record_on_tapes(op.op, op.inputs, *op.attrs, op.outputs);
  }
};

TapeObserver g_tape_observer;

// Adds `g` to the gradient accumulated for `impl`.
void accumulate(absl::flat_hash_map<const TensorImpl*, Tensor>& grads, const TensorImpl* impl,
                Tensor g) {
  auto [it, inserted] = grads.try_emplace(impl, g);
  if (!inserted) it->second = add(it->second, g);
}

}  // namespace

TapeRef::TapeRef(const Tensor& t, bool whole) {
  TensorImpl* impl = t.impl();
  if (whole || impl->device->remote() != nullptr) {  // a remote buffer is freed by an RPC
    tensor_ = t;
  } else {
    weak_ref(impl);
    weak_ = impl;
  }
}

TapeRef& TapeRef::operator=(TapeRef&& other) noexcept {
  if (this != &other) {
    if (weak_ != nullptr) weak_unref(weak_);
    tensor_ = std::move(other.tensor_);
    weak_ = other.weak_;
    other.weak_ = nullptr;
  }
  return *this;
}

TapeRef::~TapeRef() {
  if (weak_ != nullptr) weak_unref(weak_);
}

Tensor TapeRef::tensor() const {
  if (weak_ == nullptr) return tensor_;
  return Tensor(new TensorImpl(weak_->dtype, weak_->shape, weak_->device, nullptr));
}

bool tape_recording_on_thread() {
  for (Tape* tape : thread_tapes()) {
    if (tape->recording()) return true;
  }
  return false;
}

void record_on_tapes(OpId op, absl::Span<const Tensor* const> inputs, const OpAttrs& attrs,
                     absl::Span<const Tensor> outputs) {
  for (Tape* tape : thread_tapes()) {
    if (tape->recording()) tape->maybe_record(op, inputs, attrs, outputs);
  }
}

void record_variable_read(const std::shared_ptr<VariableState>& var, const Tensor& value) {
  for (Tape* tape : thread_tapes()) {
    if (tape->recording()) tape->on_variable_read(var, value);
  }
}

Tape::Tape(bool persistent, bool watch_accessed_variables)
    : persistent_(persistent),
      watch_accessed_variables_(watch_accessed_variables),
      owner_(&thread_tapes()),
      observers_(&thread_observers()) {
  owner_->push_back(this);
  observers_->add(&g_tape_observer);
  g_recording_tapes.fetch_add(1, std::memory_order_relaxed);
}

Tape::~Tape() { detach(); }

void Tape::detach() {
  if (!attached_) return;
  attached_ = false;
  std::vector<Tape*>& tapes = *owner_;
  for (auto it = tapes.begin(); it != tapes.end(); ++it) {
    if (*it == this) {
      tapes.erase(it);
      break;
    }
  }
  observers_->remove(&g_tape_observer);
  g_recording_tapes.fetch_sub(1, std::memory_order_relaxed);
}

void Tape::track(const Tensor& t) {
  if (tracked_.insert(t.impl()).second) kept_.push_back(t);
}

void Tape::watch(const Tensor& t) {
  if (!t.defined() || !is_floating(t.dtype())) return;  // TensorFlow ignores the others
  track(t);
}

void Tape::watch_variable(const std::shared_ptr<VariableState>& var, const Tensor& value) {
  if (!is_floating(value.dtype())) return;  // as TensorFlow, which warns
  if (!reads_.contains(var.get())) variable_order_.push_back(var);
  std::vector<Tensor>& reads = reads_[var.get()];
  for (const Tensor& r : reads) {
    if (r.impl() == value.impl()) return;
  }
  reads.push_back(value);
  track(value);
}

void Tape::on_variable_read(const std::shared_ptr<VariableState>& var, const Tensor& value) {
  if (watch_accessed_variables_ && var->trainable) watch_variable(var, value);
}

void Tape::maybe_record(OpId op, absl::Span<const Tensor* const> inputs, const OpAttrs& attrs,
                        absl::Span<const Tensor> outputs) {
  if (!op_has_flag(op, kGrad)) return;
  bool reads_tracked = false;
  for (const Tensor* t : inputs) reads_tracked = reads_tracked || tracks(t->impl());
  if (!reads_tracked) return;
  const GradReads reads = grad_reads(op);
  TapeEntry& e = entries_.emplace_back();
  e.op = op;
  e.attrs = attrs;
  for (size_t i = 0; i < inputs.size(); ++i) e.inputs.emplace_back(*inputs[i], reads.input(i));
  for (size_t i = 0; i < outputs.size(); ++i) {
    e.outputs.emplace_back(outputs[i], reads.output(i));
    // The entry keeps the impl (whole or weakly), so its address stays unique.
    if (is_floating(outputs[i].dtype())) tracked_.insert(outputs[i].impl());
  }
}

std::vector<Tensor> Tape::gradient(const Tensor& target, absl::Span<const Tensor> sources,
                                   absl::Span<const VariableState* const> variables,
                                   const Tensor& output_gradient) {
  if (used_ && !persistent_) {
    throw_if_error(absl::FailedPreconditionError(
        "A non-persistent GradientTape can only be used to compute one set of gradients "
        "(or jacobians)"));
  }
  if (!target.defined())
    throw_if_error(
        absl::InvalidArgumentError("[GradientTape] gradient: the target is an empty tensor"));
  used_ = true;
  pause();  // the gradient's own ops are not recorded here (other tapes may record them)
  struct Resume {
    Tape* tape;
    ~Resume() { tape->resume(); }
  } resume{this};
  absl::flat_hash_map<const TensorImpl*, Tensor> grads;
  if (tracks(target.impl())) {
    if (output_gradient.defined()) {
      if (output_gradient.shape() != target.shape() || output_gradient.dtype() != target.dtype()) {
        throw_if_error(absl::InvalidArgumentError(absl::StrCat(
            "[GradientTape] gradient: output_gradients has shape ",
            output_gradient.shape().to_string(), " and ", dtype_name(output_gradient.dtype()),
            ", the target ", target.shape().to_string(), " and ", dtype_name(target.dtype()))));
      }
      grads.emplace(target.impl(), output_gradient);
    } else {
      DeviceScope scope(target.device());
      grads.emplace(target.impl(), ones_like(target));
    }
  }
  absl::flat_hash_set<const TensorImpl*> wanted;
  for (const Tensor& s : sources) wanted.insert(s.impl());
  for (const VariableState* v : variables) {
    auto it = reads_.find(v);
    if (it == reads_.end()) continue;
    for (const Tensor& r : it->second) wanted.insert(r.impl());
  }
  for (auto e = entries_.rbegin(); e != entries_.rend() && !grads.empty(); ++e) {
    bool any = false;
    for (const TapeRef& out : e->outputs) any = any || grads.contains(out.impl());
    if (!any) continue;
    absl::InlinedVector<Tensor, 3> inputs;
    absl::InlinedVector<Tensor, 2> outputs;
    for (const TapeRef& in : e->inputs) inputs.push_back(in.tensor());
    for (const TapeRef& out : e->outputs) outputs.push_back(out.tensor());
    DeviceScope scope(outputs[0].device());  // Note [Gradients on the forward device]
    absl::InlinedVector<Tensor, 2> out_grads;
    uint64_t given = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      auto it = grads.find(e->outputs[i].impl());
      out_grads.push_back(it != grads.end() ? it->second : zeros_like(outputs[i]));
      if (it != grads.end() && i < 64) given |= uint64_t{1} << i;
      if (it != grads.end() && !wanted.contains(e->outputs[i].impl())) grads.erase(it);
    }
    uint64_t needed = 0;
    for (size_t i = 0; i < e->inputs.size(); ++i) {
      if (i < 64 && tracks(e->inputs[i].impl())) needed |= uint64_t{1} << i;
    }
    const GradContext ctx{e->op, e->attrs, inputs, outputs, out_grads, needed, given};
    Grads in_grads = grad_fn(e->op)(ctx);
    for (size_t i = 0; i < e->inputs.size() && i < in_grads.size(); ++i) {
      if (in_grads[i].defined() && tracks(e->inputs[i].impl())) {
        accumulate(grads, e->inputs[i].impl(), std::move(in_grads[i]));
      }
    }
  }
  std::vector<Tensor> result;
  for (const Tensor& s : sources) {
    auto it = grads.find(s.impl());
    result.push_back(it != grads.end() ? it->second : Tensor());
  }
  for (const VariableState* v : variables) {
    Tensor sum;
    auto reads = reads_.find(v);
    for (size_t i = 0; reads != reads_.end() && i < reads->second.size(); ++i) {
      auto it = grads.find(reads->second[i].impl());
      if (it != grads.end()) sum = sum.defined() ? add(sum, it->second) : it->second;
    }
    result.push_back(sum);
  }
  if (!persistent_) {  // release what the tape held: a held variable value would make the
    entries_.clear();  // next assignment copy (Note [Variables write in place])
    tracked_.clear();
    kept_.clear();
    reads_.clear();
  }
  return result;
}

}  // namespace mt::internal
