#pragma once
// CostPolicy: the cost placement policy inside the runtime (internal; the arithmetic is
// runtime/cost/cost_model.h, the user's switch mt::config::set_placement_policy). It turns an
// op's inputs into the model's terms (devices, bytes, footprint bucket, which pools can
// take the output), caches the decision per thread, times the kernels it asks to measure
// and reads GPU timings later without waiting for the stream.
//
// It is a PlacementPolicy (runtime/eager/placement_policy.h), which the execute body calls:
//
//   if (ctx.cost_placement() && no scope) return rt.policy()->place(op, dtype, inputs, out);
//   ...
//   if (p.measure) { PolicyTiming t = policy.begin(device); run; policy.launched(p, outs);
//                    policy.measured(t, ...); }
//   else { run; policy.launched(p, outs); }
//
// Note [Cost decision cache]
// A decision depends on (op, dtype, footprint bucket, the devices the inputs live on, the
// output's size against the inputs': the way back, Note [Leaving the inputs' device]), the
// model's estimates and the queues. Each thread keeps a 256-entry cache (64 sets of 4, the
// set from a multiplicative hash of the whole key: the direct-mapped cache before it hashed
// only the op and the devices, so a workload's MatMuls of several sizes, or its int32 and
// float32 adds, evicted each other and every such op was decided and timed anew) keyed
// by the first five (the output in octaves from the footprint, -7 to 8), stamped with the
// context's epoch and the model's generation (which moves when an estimate first appears or
// the bus is measured), and re-decides an entry every kReevaluateEvery uses, timing that
// run, so that estimates and queues are followed. A hit costs the key's computation (a
// look at each input's device, whether it is another task's included) and, for an output
// of at least kMemoryCheckBytes on a device with a limit, one read of that pool's use: the
// soft-OOM check (Note [Soft OOM]); once the op is launched, note_launched adds one clock
// read (a GPU's queue grows by the chosen estimate).
//
// Note [Remote candidates]
// A device of another task (docs/distributed.md) is a candidate only for an op with one
// output (the only ones remote devices run) that has an input on it: the op may then follow
// its data there instead of fetching it, the network link (the bus's NET) costing every
// copy to or from it. NET is measured by the first thread that meets an input on a task
// (measure_network: a few RPCs, no lock held; until it has figures no task is a
// candidate). Any other op stays in this process: sending it away would copy its inputs
// over the network to calibrate a device no data of it lives on. A remote op's measured
// time is its issue's (the task runs it later), a remote device has no queue, and its
// measurements are not saved in the history file (they depend on the cluster).
//
// Note [Soft OOM]
// A device whose pool has a limit and cannot take the op (bytes in use + the output + the
// inputs it would copy in > limit) is skipped, and the op runs on the next best device instead of
// failing with ResourceExhausted; the skip is logged (always the first kLoggedSkips times, then
// while placement logging is on), and the decision is not cached. Pools without a limit are never
// skipped, and needs below kMemoryCheckBytes are not checked: the allocation itself still
// reports an OOM then.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/mutex.h"
#include "placement/placer.h"
#include "runtime/cost/cost_model.h"
#include "runtime/eager/placement_policy.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

class Runtime;
class Device;

// The timing of one kernel run placed by the policy.
using CostTiming = PolicyTiming;

class CostPolicy final : public PlacementPolicy {
 public:
  static constexpr int kReevaluateEvery = 64;
  static constexpr int64_t kMemoryCheckBytes = 64 << 10;
  static constexpr int kLoggedSkips = 8;

  // `rt` must outlive the policy; nothing is measured until the first place().
  explicit CostPolicy(const Runtime& rt);
  ~CostPolicy() override;

  // Returns where `op` on `inputs` runs (keyed by `dtype`; `out_bytes` the output's size;
  // `one_output` false for an op with several outputs, which no remote device runs):
  // reason kCost, `measure` set when the run should be timed. With `why`, also the words of
  // the decision, for the log and the trace: "cost policy: CPU:0 0.3 us vs GPU:0 4.1 us +
  // copy 9.8 us" (a cached decision's device first, with the estimates of now).
  // Thread-safe.
  absl::StatusOr<Placement> place(OpId op, DType dtype, absl::Span<const Tensor* const> inputs,
                                  int64_t out_bytes, bool one_output, std::string* why) override;

  // Returns what a decision for `op` would be now, changing nothing: no calibration try, no
  // queued work, no cached decision (mt::debugging::explain_placement); `text` is empty
  // when one device has a kernel.
  absl::StatusOr<Explained> explain(OpId op, DType dtype, absl::Span<const Tensor* const> inputs,
                                    int64_t out_bytes) override;

  // The copy cache (Note [The copy cache] in runtime/cost/copy_cache.h): a tensor copied twice to a
  // device keeps the copy there, and the ops this policy places read it.
  TensorImpl* kept_copy(OpId op, TensorImpl& src, const Device& device) override;
  void copied(OpId op, TensorImpl& src, TensorImpl& copy) override;
  bool holds_copy(OpId op, const TensorImpl& src, const Device& device) const override;
  void writing(TensorImpl& t) override;

  // Times one kernel run on `device`; measured() records it (a GPU's later, once its events
  // have completed: Note [GPU timings without waiting] in cost_policy.cc).
  CostTiming begin(Device& device) override;
  void measured(const CostTiming& timing, Device& device, OpId op, DType dtype,
                absl::Span<const Tensor* const> inputs, int64_t out_bytes) override;
  void abandoned(const CostTiming& timing, Device& device) override;
  // Queues the decision's estimate (note_launched) and marks the outputs as made by the op
  // (Note [Looking along the data] in runtime/cost/cost_model.h).
  void launched(const Placement& p, absl::Span<const Tensor> outputs) override;

  // Returns the model (tests inject estimates through it).
  CostModel& model() { return *model_; }

  // Queues the estimate of an op this policy placed (`p`) on its device, once its launch has
  // returned (Note [A queue that follows the device] in runtime/cost/cost_model.h).
  void note_launched(const Placement& p) { model_->note_enqueued(p.device, p.cost_exec_ns); }

  // Measures the bus, or reads it from the cache file (runtime/cost/bus_calibration.h), once.
  void calibrate_bus();

  // Saves the history to `path`; loads it, returning false with a warning on stderr when
  // the file is missing, corrupt or from another machine.
  absl::Status save_history(const std::string& path) const;
  bool load_history(const std::string& path);

  // Returns this machine's key for the cache and history files: host name and devices.
  const std::string& machine() const { return machine_; }

  // Replaces the model by an empty one on `clock` (null: the steady clock), with its bus
  // marked measured (tests set it). Not thread-safe: tests only.
  void reset_for_testing(const CostClock* clock);

 private:
  struct Pending;
  using Candidates = absl::InlinedVector<int, 4>;
  // Returns the devices `op` on `inputs` may run on: the local ones with a kernel, in
  // priority order, then any remote device holding an input, with a kernel (Note [Remote
  // candidates]); `storage` holds them when they are not the local list.
  absl::Span<const int> candidates(OpId op, DType dtype, absl::Span<const Tensor* const> inputs,
                                   bool one_output, Candidates* storage);
  // Returns whether the network to the tasks has figures, measuring it on the first call
  // (on the calling thread, no lock held; other threads meanwhile see false).
  bool network_ready();
  // Returns the decision for `op` on `inputs` among `candidates`, without the cache.
  // `counts` false for an explanation, which takes no calibration try.
  CostChoice decide(OpId op, DType dtype, absl::Span<const int> candidates,
                    absl::Span<const Tensor* const> inputs, int64_t out_bytes, bool counts = true);
  // Returns the decision cache's key of the op (Note [Cost decision cache]); 0: not cached.
  uint64_t cache_key(OpId op, DType dtype, absl::Span<const Tensor* const> inputs,
                     int64_t footprint, int64_t out_bytes) const;
  // Returns the bytes `device` must take for the op: its output and the inputs it copies.
  int64_t needed_bytes(int device, absl::Span<const Tensor* const> inputs, int64_t out_bytes) const;
  // Returns whether `device`'s pool can take them (Note [Soft OOM]).
  bool fits(int device, absl::Span<const Tensor* const> inputs, int64_t out_bytes) const;
  void log_skips(OpId op, const CostChoice& choice, absl::Span<const Tensor* const> inputs,
                 int64_t out_bytes);
  void poll_pending();
  // Returns "cost policy: " and the choice in CostModel::describe's words.
  std::string words(const CostChoice& choice) const;
  // Returns `device`'s index in the runtime, or -1 (a tensor of an older runtime).
  int index_of(const Device& device) const;

  const Runtime& rt_;
  SteadyCostClock steady_;
  std::unique_ptr<CostModel> model_;
  std::string machine_;
  std::vector<std::vector<int>> candidates_;  // per (op, dtype): local devices with a kernel
  std::vector<int64_t> limits_;               // per device: its pool's limit, 0 for none
  std::atomic<bool> bus_ready_{false};
  // The network's figures (network_ready()): measured by no thread yet, by one now, known,
  // or not to be had (no task answered).
  enum NetworkState { kNetworkUnmeasured, kNetworkMeasuring, kNetworkKnown, kNetworkUnavailable };
  std::atomic<int> network_{kNetworkUnmeasured};
  Mutex bus_mu_;
  std::atomic<int> logged_skips_{0};
  Mutex pending_mu_;
  std::vector<Pending> pending_ ABSL_GUARDED_BY(pending_mu_);
};

// Returns the footprint the policy keys on: the inputs' bytes, or `out_bytes` for an op
// with no input.
int64_t cost_footprint(absl::Span<const Tensor* const> inputs, int64_t out_bytes);

// Returns `rt`'s cost policy (the runtime's policy: runtime/features.cc makes it).
CostPolicy& cost_policy(const Runtime& rt);

// Makes the cost policy of `rt` (the runtime's policy factory).
std::unique_ptr<PlacementPolicy> make_cost_policy(const Runtime& rt);

}  // namespace mt::internal
