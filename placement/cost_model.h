#pragma once
// CostModel: the arithmetic of the cost placement policy (docs/placement.md, "The cost
// policy"). For an op it estimates, on every candidate device, when the op would finish:
//
//   finish(d) = wait(d) + copy(d) + exec(d) + back(d)
//   wait(d)   = what the host waits for (Note [What the host waits for]): on the CPU, the
//               work queued on a GPU an input is copied from; on a GPU, the work queued
//               there, unless an input is itself on a GPU's queue
//   copy(d)   = sum over inputs not on d of latency + bytes / bandwidth (BusModel)
//   exec(d)   = the measured time of (op, dtype, footprint bucket) on d, else the
//               SizeFit a * bytes^b + c of (op, d), else unknown
//   back(d)   = the copy of the output to the inputs' device, when d is another one
//               (Note [Leaving the inputs' device])
//
// and picks the earliest. Pure logic: devices are indices, the time comes from a CostClock
// and measurements from record(), so tests drive it with fake clocks. Thread-safe.
//
//   CostModel model({{DeviceType::kCPU, "CPU:0"}, {DeviceType::kGPU, "GPU:0"}}, &clock);
//   model.set_bus(bus);
//   CostChoice c = model.choose(key, footprint, candidates, fits, inputs, out_bytes);
//   model.record(key, c.device, footprint, measured_ns);
//
// Note [Calibrating the cost model]
// An estimate for (op, dtype, bucket) on a device needs two measurements there (the first,
// which pays for warm-up such as loading a GPU library's kernels, is replaced by the
// second), or a SizeFit of (op, device) over two measured buckets. Until every candidate
// that fits has an estimate, the op goes to the first candidate in priority order that has
// none and has been tried fewer than kMaxTries times, so that each device gets measured
// (the priority device first); an op whose footprint exceeds kExploreMaxBytes goes to the
// priority device instead, since trying a large product on a slow device could cost
// seconds: the fit from smaller footprints covers it later. Decisions made meanwhile are
// marked uncalibrated and measured.
//
// Note [A queue that follows the device]
// A GPU's queue is the estimates of the work placed on it, drained by the clock. Estimates
// are not the device's time (a small kernel's includes its launch, which overlaps the
// previous kernel's run), so on their own the queue drifts: over 3000 steps of an MLP on an
// H100 it reached 6 ms where the real one stayed under a step. Each timed op's completion
// (its end event, read without waiting) says the device has run everything up to it, so
// the queue is cut to what was enqueued after that op; and a device found idle at a
// decision (its stream empty: Device::idle, asked by the policy) has no queue at all.
//
// Note [Leaving the inputs' device]
// An eager program's next op mostly reads this op's output together with more data from
// where its inputs live (the inputs' device: the one holding most of their bytes). Judged
// one op at a time, a small op on a GPU tensor can look cheaper on the CPU (a copy of a few
// bytes and a fraction of a microsecond there against a kernel launch), and the next op,
// whose other inputs are on the GPU, goes back: every step then synchronises the host with
// the GPU twice and runs slower than either device alone (the placement suite's MLP at
// batch 1 did, on an H100). So a candidate other than the inputs' device also pays the
// copy of the output back there: leaving must win by the way back. An op without inputs
// has no such device and pays nothing, and neither does a GPU taking the host's data: data
// flows from the host to its GPU (input pipelines feed the model there), that copy is
// queued without waiting, and the output's next reader most often follows it to the GPU.
// Charged a way back, the preprocessing chain's int32 pixels (784 KiB) were cast on the CPU
// in some processes (262 us against a 24 us copy, 13 us on the GPU and 24 us back).
//
// Note [What the host waits for]
// The policy serves one eager thread, which issues work to a GPU without waiting for it:
// the GPU's queue delays when an op finishes there but not the host, which goes on issuing.
// What the host does wait for is a copy from a GPU to the host: it synchronises with the
// work queued ahead of it. So an op that reads a GPU's output compares the CPU, which waits
// for that GPU's queue, against a GPU, which does not (its copies and kernel are queued
// behind the same work). Charged to both, the queue cancelled out and the scalar
// bookkeeping's loss average went to the CPU, synchronising every step (38-49 us a step on
// an H100; 33 us with it on the GPU). An op whose inputs are all on the host is HEFT's case
// again: a GPU with work queued finishes it later, and the CPU may run it meanwhile.

// Note [Where data is born]
// An op without inputs (a random draw, a fill) makes data that later ops read where it was
// made: a model's weights, a batch. Placed by its own cost, or tried on another device to
// be measured, it can leave weights on the CPU, and every later step then copies them to
// the GPU or runs on the CPU with them. The per-op model cannot see those later uses: a
// second run of the batch-1024 MLP that loaded the first run's history (the random draws
// measured on the GPU only, so tried on the CPU) made its weights on the CPU and ran every
// step there, 2.8 ms against 0.05 ms (an H100, 2026-11-26). So an op without inputs whose
// output exceeds kSmallSourceBytes runs on the first candidate that fits, where priority
// placement puts it, neither measured elsewhere nor moved by estimates. A small one (a
// counter, a scalar) is placed by cost: a later copy of it costs little more than its
// latency. `_EagerConst` is placed by cost at every size: its bytes come from the host
// wherever it runs, and made there they reach a GPU by an asynchronous copy from pinned
// memory rather than the constant's synchronous one from the caller's (the preprocessing
// chain's pixels).

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/device_type.h"
#include "core/dtype.h"
#include "core/mutex.h"
#include "kernels/op_id.h"
#include "placement/bus_model.h"
#include "placement/cost_clock.h"
#include "placement/size_fit.h"

namespace mt {

// Returns the footprint bucket of `bytes`: 0 for none, else 1 + floor(log2(bytes)).
inline int footprint_bucket(int64_t bytes) {
  return bytes <= 0 ? 0 : 64 - __builtin_clzll(static_cast<uint64_t>(bytes));
}

struct CostKey {
  OpId op;
  DType dtype;
  int bucket;  // footprint_bucket of the op's footprint
};

// One device as the model sees it. A GPU runs its work asynchronously, so work placed there
// waits behind what is already queued; a CPU runs each op inline, on the calling thread. A
// device of another task (`remote`) is reached over the network (Link::kNetwork) and has no
// queue the model can follow: its ops cost what issuing them costs.
struct CostDevice {
  DeviceType type;
  std::string name;  // short name: "GPU:0", or the full name of a remote device
  bool remote = false;
};

// One input of an op: the device it lives on, its size, and the device holding its mirror
// (runtime/mirror.h), where it costs no copy; -1 for none.
struct CostInput {
  int device;
  int64_t bytes;
  int mirror = -1;
};

// The estimate for one candidate device.
struct CostEstimate {
  int device = -1;
  bool fits = true;    // false: the device's pool cannot take the output
  bool known = false;  // exec_ns and copy_ns are estimates
  double exec_ns = 0;
  double copy_ns = 0;
  double wait_ns = 0;
  double back_ns = 0;  // the output's copy back to the inputs' device
  double finish_ns() const { return wait_ns + copy_ns + exec_ns + back_ns; }
};

struct CostChoice {
  int device = -1;
  bool calibrated = false;   // every fitting candidate had an estimate
  bool refreshing = false;   // the choice measures again a device that lost: do not cache it
  bool first_keeps = false;  // large new data, made on the first fitting candidate (Note
                             // [Where data is born])
  absl::InlinedVector<CostEstimate, 4> estimates;  // one per candidate, in priority order
  // Returns the chosen device's estimate.
  const CostEstimate& chosen() const;
};

// One measured (op, dtype, bucket, device), as history files hold it.
struct CostRecord {
  OpId op;
  DType dtype;
  int bucket;
  int device;
  int64_t count;
  double mean_ns;
  double mean_bytes;
};

class CostModel {
 public:
  static constexpr int kMinSamples = 2;  // Note [Calibrating the cost model]
  // A device that lost is measured again until it has this many samples, when its
  // estimate is within kRefreshRatio of the winner's (Note [Measured execution time]).
  static constexpr int kRefreshSamples = 4;
  static constexpr double kRefreshRatio = 4;
  // ... and once every kRefreshAfterLosses decisions it loses within that ratio, whatever
  // its samples: an estimate that only losing kept stale is measured again.
  static constexpr int kRefreshAfterLosses = 16;
  static constexpr int kMaxTries = 4;                            // per device and key
  static constexpr int64_t kExploreMaxBytes = int64_t{1} << 22;  // 4 MiB
  static constexpr int64_t kSmallSourceBytes = 4096;             // Note [Where data is born]

  // `clock` must outlive the model.
  CostModel(std::vector<CostDevice> devices, const CostClock* clock);

  const CostClock& clock() const { return *clock_; }
  int num_devices() const { return static_cast<int>(devices_.size()); }
  const CostDevice& device(int index) const { return devices_[index]; }

  // Sets the bus figures, keeping the network's when `bus` has none (they are measured
  // apart: Note [Remote candidates] in runtime/cost_policy.h). Bumps generation().
  void set_bus(const BusModel& bus);
  // Sets one link's figures. Bumps generation().
  void set_link(Link link, const LinkCost& cost);
  BusModel bus() const;

  // Returns the device for `key` among `candidates` (device indices in priority order;
  // `fits[i]` says whether candidate i's pool can take the output), with the estimates;
  // `out_bytes` is the output's size (Note [Leaving the inputs' device]). Candidates must
  // not be empty. When none fits, the first candidate is chosen.
  // `counts` false: an explanation, which takes none of the calibration's tries.
  CostChoice choose(const CostKey& key, int64_t footprint, absl::Span<const int> candidates,
                    absl::Span<const bool> fits, absl::Span<const CostInput> inputs,
                    int64_t out_bytes = 0, bool counts = true);

  // Records that `key` took `ns` on `device` for a footprint of `bytes`.
  void record(const CostKey& key, int device, int64_t bytes, double ns);

  // Notes that work estimated at `exec_ns` was placed on `device`: a GPU's queue grows.
  void note_enqueued(int device, double exec_ns);
  // Returns the sum of every estimate enqueued on `device` so far (note_drained's mark).
  int64_t enqueued_total_ns(int device) const;
  // Notes that `device` has completed the work enqueued up to the mark `enqueued_total`
  // (an op's events have completed): what is still queued is at most what was enqueued
  // after it (Note [A queue that follows the device]).
  void note_drained(int device, int64_t enqueued_total);
  // Returns the nanoseconds of work still queued on `device` (0 for devices that run inline).
  double queued_ns(int device) const;

  // Changes whenever an estimate appears or the bus changes: cached decisions are stale.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Returns every measured entry; replaces the history with `records` (the fits follow).
  std::vector<CostRecord> history() const;
  void load_history(absl::Span<const CostRecord> records);

  // Returns the choice in words: "CPU:0 0.3 us vs GPU:0 4.1 us + copy 9.8 us".
  std::string describe(const CostChoice& choice) const;

 private:
  struct Stat {
    int64_t count = 0;
    int tries = 0;
    double mean_ns = 0;
    double mean_bytes = 0;
    int losses = 0;       // decisions lost within kRefreshRatio since the last refresh
    bool loaded = false;  // from a history file, no sample taken in this process yet
  };
  static uint64_t stat_key(const CostKey& key, int device);
  // Returns the link bytes take from device `from` to device `to`.
  Link link(int from, int to) const;
  // Returns whether work placed on `device` queues there (a local GPU).
  bool queues(int device) const {
    return devices_[device].type == DeviceType::kGPU && !devices_[device].remote;
  }
  static uint64_t fit_key(OpId op, int device);
  // Returns exec(d), or false when unknown.
  bool exec_estimate(const CostKey& key, int device, int64_t footprint, double* ns) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `home`: the inputs' device; `after_queued_work`: an input is on a device that queues.
  CostEstimate estimate(const CostKey& key, int device, int64_t footprint,
                        absl::Span<const CostInput> inputs, int home, bool after_queued_work,
                        int64_t out_bytes) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void add_point(const CostKey& key, int device, const Stat& stat)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::vector<CostDevice> devices_;
  const CostClock* clock_;
  std::unique_ptr<std::atomic<int64_t>[]> busy_until_ns_;  // per device
  std::unique_ptr<std::atomic<int64_t>[]> enqueued_ns_;    // per device: estimates so far
  std::atomic<uint64_t> generation_{1};
  mutable internal::Mutex mu_;
  BusModel bus_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, Stat> stats_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, SizeFit> fits_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mt
