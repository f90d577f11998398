// The trace's op observer: while a recording runs (trace_control.cc registers it for every
// thread), each op's steps are timed and recorded as the execute body takes them: the op,
// each input copy, the kernel between two timing marks (Note [Device time]).
#include "runtime/trace/op_trace.h"

#include <utility>
#include <vector>

#include "runtime/eager/context.h"
#include "runtime/eager/op_observer.h"
#include "runtime/eager/scope_stack.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/trace/trace_recorder.h"

namespace mt::internal {
namespace {

// The recording of one op, from on_placed to on_done.
class OpTrace {
 public:
  explicit OpTrace(const OpEvent& op) {
    const Placement& p = *op.placement;
    details_.text = std::string(op.why);
    e_.op = op.op;
    e_.dtype = op.dtype;
    e_.reason = p.reason;
    e_.device = p.device;
    e_.mark_device = p.device;
    const ScopeEntry* scope = scope_stack().top();
    if (p.reason != PlacementReason::kDefault && scope != nullptr)
      details_.requested = &scope->spec;
    e_.ts_ns = trace_ticks();
    for (const Tensor* t : op.inputs) {
      details_.add_shape(t->impl()->shape);
      ++e_.num_shapes;
    }
  }

  // Starts the copy of `t` to `device` (index `index`); its marks go on the GPU side.
  void begin_copy(const Tensor& t, Device& device, int index) {
    const TensorImpl* src = t.impl();
    copy_ = TraceEvent();
    copy_.kind = TraceEvent::Kind::kCopy;
    copy_.device = index;
    copy_.src_device = device_index(*src->device);
    copy_.dtype = src->dtype;
    copy_.bytes = static_cast<int64_t>(src->bytes());
    copy_marks_ = src->device->type() == DeviceType::kGPU ? src->device : &device;
    copy_.mark_device = copy_marks_ == &device ? index : copy_.src_device;
    copy_shape_ = &src->shape;
    copy_.ts_ns = trace_ticks();
    copy_.mark_begin = copy_marks_->record_mark();
  }

  // Records the copy begun last; its bytes count as allocated by the op.
  void end_copy(const absl::StatusOr<Tensor>& result) {
    copy_.mark_end = copy_.mark_begin == nullptr ? nullptr : copy_marks_->record_mark();
    copy_.dur_ns = trace_ticks() - copy_.ts_ns;
    if (result.ok()) copy_.data = result->impl()->data;
    TraceDetails details;
    details.add_shape(*copy_shape_);
    copy_.num_shapes = 1;
    trace_record(copy_, details);
    if (result.ok()) e_.bytes += copy_.bytes;
  }

  void before_kernel(Device& device) {
    kernel_started_ = true;
    e_.mark_begin = device.record_mark();
  }

  // Records the op with its outputs (none when it failed), unless it failed before its
  // kernel (a copy failed): the failed copy is its record. A remote op's time is its
  // issue's, and it has no pool counter, which would be a call to the task (Note
  // [Asynchronous remote ops] in distributed/task_client.h).
  void finish(const OpEvent& op, const absl::Status& status) {
    if (!status.ok() && !op.remote && !kernel_started_) return;
    if (!op.remote) e_.mark_end = e_.mark_begin == nullptr ? nullptr : op.device->record_mark();
    e_.dur_ns = trace_ticks() - e_.ts_ns;
    for (const Tensor& t : op.outputs) {
      const TensorImpl* impl = t.impl();
      e_.bytes += static_cast<int64_t>(impl->bytes());
      details_.add_shape(impl->shape);
      ++e_.num_shapes;
      if (e_.data == nullptr && !op.remote) e_.data = impl->data;
    }
    if (op.outputs.empty()) {
      details_.add_shape(Shape());  // no output
      ++e_.num_shapes;
    }
    if (!op.remote) details_.pool = op.device;
    trace_record(e_, details_);
  }

 private:
  TraceEvent e_;
  TraceDetails details_;
  TraceEvent copy_;
  Device* copy_marks_ = nullptr;
  const Shape* copy_shape_ = nullptr;
  bool kernel_started_ = false;
};

// The ops in flight on this thread, innermost last (an observer may see an op start
// inside another's steps only if a copy ran ops; the stack keeps them apart anyway).
std::vector<OpTrace>& thread_ops() {
  thread_local std::vector<OpTrace> ops;
  return ops;
}

class TraceObserver : public OpObserver {
 public:
  bool wants_reasons() const override { return true; }
  void on_placed(const OpEvent& op) override { thread_ops().emplace_back(op); }
  void before_copy(const Tensor& t, Device& dst, int dst_index) override {
    if (!thread_ops().empty()) thread_ops().back().begin_copy(t, dst, dst_index);
  }
  void after_copy(const Tensor&, Device&, const absl::StatusOr<Tensor>& copy) override {
    if (!thread_ops().empty()) thread_ops().back().end_copy(copy);
  }
  void before_kernel(const OpEvent& op) override {
    if (!thread_ops().empty()) thread_ops().back().before_kernel(*op.device);
  }
  void on_done(const OpEvent& op, const absl::Status& status) override {
    std::vector<OpTrace>& ops = thread_ops();
    if (ops.empty()) return;  // placed before the recording started
    ops.back().finish(op, status);
    ops.pop_back();
  }
};

TraceObserver g_trace_observer;

}  // namespace

OpObserver* trace_observer() { return &g_trace_observer; }

}  // namespace mt::internal
