#pragma once
// Op events (internal): the one way a feature watches the eager core. The execute body
// (runtime/eager/execute.cc) knows no feature. It tells the observers registered at that
// moment what happens to each op, and they do the rest: a recording GradientTape keeps the
// op for its backward pass, an mt::Function's recorder writes the kernel down, the trace
// times each step.
//
//   class Counter : public OpObserver {
//     void on_done(const OpEvent& op, const absl::Status& status) override { ++n; }
//   };
//   Counter counter;
//   thread_observers().add(&counter);      // this thread's ops from now on
//   ...
//   thread_observers().remove(&counter);
//
// Note [Observers cost one load when off]
// g_observers counts every registration, of any thread. run_op reads it once per op (one
// relaxed load); while it is zero the op takes no other step for observers. Otherwise the
// op gathers the process's observers and its thread's (ObserverSet) and calls each at each
// step, in registration order, process observers first. A thread whose own list is empty
// pays the gathering while another thread's tape records, as it paid a tape check before.
//
// Observers run on the op's thread, inside the op: they must not run ops themselves. An
// observer registered for a thread is called only for that thread's ops; registering the
// same observer twice counts twice and must be removed twice (it is called once).
// The trace (runtime/trace/op_trace.cc), tapes (runtime/autodiff/tape.cc) and the function
// recorder (runtime/function/function_recorder.cc) are the observers today.

#include <atomic>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "kernels/kernel.h"
#include "kernels/op_attrs.h"
#include "kernels/op_id.h"
#include "placement/placer.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

class Device;

// What the execute body knows of one op, filled in as it goes.
struct OpEvent {
  OpId op{};
  DType dtype{};  // the kernel's key dtype
  const Placement* placement = nullptr;
  Device* device = nullptr;  // where it runs
  absl::Span<const Tensor* const> inputs;
  const OpAttrs* attrs = nullptr;
  bool source = false;   // a source op (_EagerConst, Fill): no tensor inputs
  bool remote = false;   // issued to a remote device; its inputs travel inside it
  std::string_view why;  // the cost policy's words, when an observer wants reasons
  // Set before on_done: the kernel that ran (null for Identity's copy, ReadVariableOp's
  // alias and remote ops), the inputs copied to `device` in order, and the outputs (none
  // when the op failed).
  KernelFn kernel = nullptr;
  absl::Span<const Tensor> copies;
  absl::Span<const Tensor> outputs;
};

// Watches ops. Every method has an empty default; override the events you need.
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  // Returns whether on_placed should see the cost policy's words in OpEvent::why.
  virtual bool wants_reasons() const { return false; }
  // The op is placed (and logged); its inputs are not copied yet.
  virtual void on_placed(const OpEvent& /*op*/) {}
  // Input `t` is about to be copied to `dst` (device index `dst_index`) for the op.
  virtual void before_copy(const Tensor& /*t*/, Device& /*dst*/, int /*dst_index*/) {}
  // The copy of `t` started by before_copy ended with `copy`.
  virtual void after_copy(const Tensor& /*t*/, Device& /*dst*/,
                          const absl::StatusOr<Tensor>& /*copy*/) {}
  // The op's kernel is about to run on its device.
  virtual void before_kernel(const OpEvent& /*op*/) {}
  // The op ended with `status`; `op.outputs` holds its outputs when it succeeded.
  virtual void on_done(const OpEvent& /*op*/, const absl::Status& /*status*/) {}
};

// The number of registrations, any thread (Note [Observers cost one load when off]).
inline std::atomic<int> g_observers{0};

// Returns whether any observer is registered anywhere: one relaxed load.
inline bool observed() {
  return __builtin_expect(g_observers.load(std::memory_order_relaxed) != 0, 0);
}

// Registers `observer` for the ops of every thread until removed. At most four at a time
// (FailedPrecondition past that). The observer must outlive its registration.
absl::Status add_process_observer(OpObserver* observer);
void remove_process_observer(OpObserver* observer);

// One thread's observers. add() registers an observer for that thread's ops until
// remove(); a list is reached through thread_observers() on its thread, and may be handed
// to another thread for the removal (a tape dropped elsewhere), as long as its thread runs
// no op meanwhile.
class ThreadObservers {
 public:
  void add(OpObserver* observer);
  void remove(OpObserver* observer);

 private:
  friend class ObserverSet;
  struct Entry {
    OpObserver* observer;
    int count;
  };
  static constexpr int kMax = 8;
  Entry entries_[kMax];
  int n_ = 0;
};

// Returns the calling thread's observers.
ThreadObservers& thread_observers();

// The observers of one op: the process's, then the calling thread's, gathered once.
class ObserverSet {
 public:
  // Gathers the observers registered now (call it only when observed()).
  ObserverSet();
  ObserverSet(const ObserverSet&) = delete;
  ObserverSet& operator=(const ObserverSet&) = delete;

  bool wants_reasons() const;
  void on_placed(const OpEvent& op) const;
  void before_copy(const Tensor& t, Device& dst, int dst_index) const;
  void after_copy(const Tensor& t, Device& dst, const absl::StatusOr<Tensor>& copy) const;
  void before_kernel(const OpEvent& op) const;
  void on_done(const OpEvent& op, const absl::Status& status) const;

 private:
  static constexpr int kMax = 12;
  OpObserver* list_[kMax];
  int n_ = 0;
};

// Called with the device and the message when a device's pool cannot serve an allocation,
// recording or not (the memory snapshots keep the pool's state then).
using OomListener = void (*)(Device& device, const std::string& message);
void set_oom_listener(OomListener listener);
void notify_oom(Device& device, const std::string& message);

// Registers the listeners that must listen from the start (the OOM snapshot). Defined
// outside the core, by the library that links the features (runtime/features.cc); the
// runtime calls it once, when it starts.
void install_features();

}  // namespace mt::internal
