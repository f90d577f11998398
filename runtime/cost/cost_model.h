#pragma once
// CostModel: the arithmetic of the cost placement policy (docs/placement.md, "The cost
// policy"). For an op it estimates, on every candidate device, when the op would finish:
//
//   finish(d) = wait(d) + copy(d) + exec(d) + back(d) + next(d)
//   wait(d)   = what the host waits for (Note [What the host waits for]): on the CPU, the
//               work queued on a GPU an input is copied from; on a GPU, the work queued
//               there, unless an input is itself on a GPU's queue
//   copy(d)   = sum over inputs not on d of latency + bytes / bandwidth (BusModel)
//   exec(d)   = the measured time of (op, dtype, footprint bucket) on d, else the
//               SizeFit a * bytes^b + c of (op, d), else unknown
//   back(d)   = the copy of the output to the inputs' device, when d is another one
//               (Note [Leaving the inputs' device])
//   next(d)   = exec(d) of the ops seen reading the output, and theirs after them (Note
//               [Looking along the data])
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
// An op joins the queue when its launch returns, not when it is placed: the device cannot
// start it before, and a small product's launch alone takes cuBLAS 13-19 us of the host's
// time on an H100 (bench/cuda/gpu_host_cost_probe.cu). Counted from the decision, the
// queue said the scalar bookkeeping's product and mean were done when the running total
// was placed, 13 us or so before they were, and a total on the host (its `AddV2` once run
// there) stayed there, the CPU's copy of the mean estimated at 7.7 us where the step then
// waited 12-17 us for it (2026-11-26).
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
// Nor does a candidate that holds every input already, on it or as a cached copy (Note [The copy
// cache] in runtime/cost/copy_cache.h): a model's weights copied to the host and kept there, and
// the batch with them. Running there leaves nothing behind; the next op's other data is mirrored
// there as well, or that op weighs its copy itself. Charged a way back, a batch-1 MLP whose weights
// were made on the GPU could never move to the host one product at a time.
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
//
// Note [Looking along the data]
// One op at a time, the batch-1 MLP's first product is a tie: 12.5 us on the GPU against
// 13.4 us on the CPU, every input at hand on both (an H100, 2026-11-26). What differs is
// what follows: the Relu and the products after it take 0.2, 4.8 and 1.0 us on the CPU and
// 6-12 us each on the GPU, and they run where the first product's output is or pay to move
// it. So a candidate's finish also counts the ops that read the output, as this process has
// seen them: each op's outputs remember the op (Placement::cost_key), the next decision of
// an op reading one notes it as that op's reader (with its own output's size), and a
// decision follows up to kLookAhead readers (each the latest reader of the one before; a
// repeated op ends the chain, and so does one that a fitting candidate has not measured).
// A reader not seen again within kReaderForgottenAfter decisions of the op before it ends
// the chain too: a program's last read of a result (the scalar bookkeeping's loss average,
// read once when the program waits for it) must not steer every step; followed, it sent
// that average's division to the host, synchronising each step with the GPU.
// next(d) is the cheapest way through them from the output on d, each reader running where
// the output before it is or on another candidate after a copy of that output:
//
//   next(d) = V_1(d),
//   V_j(d) = rate_j * min over d' of copy(d -> d') + exec(reader j, d') + V_j+1(d')
//
// with rate_j how often reader j reads (Note [Read rates]); so a chain that reaches an op one
// device runs far better is not charged that op on the other device, only the copy there (a
// training step's loss ops, cheap on the CPU, lead to gradient products that belong on the GPU).
// The readers still decide for themselves when they come: the look ahead only says where this op's
// output is worth having. A first version summed the readers on the candidate itself and took a
// training step's loss and gradients to the CPU, 1.49x slower in its paired run.
//
// Note [Read rates]
// A reader counts by how often it reads: its cost times its reads per output of the op
// before it (at most 1), in V_j above. The suite's paired runs read the running total on
// the host once every 100 steps (each block's end); counted in full, such a read pulls
// the op that makes the total towards the host every step, where the step then waits for
// the GPU (the products alone read 1.26x always-GPU's time beside them in one run of an
// H100, 2026-11-26, against 1.01-1.07 in the five before). A reader is seen at its own
// decisions, which the cost policy makes once every kReevaluateEvery uses, so each note
// carries the reader's uses since its previous decision, and each decision of the op
// before it carries that op's (note_uses). At each note the reader's rate moves halfway
// to its uses over the op's uses since that reader's previous note (since the op's first
// use for a reader not seen before), kept for the kRatedReaders readers seen last: a
// division read every step and a read on the host once per 100 steps, taking turns as
// the latest reader, keep about 1 and 0.01 each. A model never told uses (a caller that
// does not cache decisions) counts each reader in full.
//
// Note [Refresh bursts]
// An op's time depends on what ran just before it: the batch-1 MLP's first product on the
// CPU (one row by 784 x 256 weights, 785 KiB) takes 9.5-14 us after other work, CPU or GPU,
// when its weights have been read before, 28-30 us right after they were copied to the
// host, and 35-40 us with the caches cold (an H100's host, 2026-11-26;
// bench/placement_suite/cpu_context_probe.cc). A loser measured once every
// kRefreshAfterLosses decisions may be measured in any of these states, and an op that
// would win once it ran every step stays where it is. So a stale loser is measured again in
// kRefreshBurst decisions in a row (the op's next uses): the first run is warm-up and the
// estimate becomes the median of the others, what the device does with the op's data at
// hand. Until a device has kRefreshSamples samples each losing decision measures it once
// more, in a row as well, and it is tried so up to kCalibrationRatio of the winner: the
// batch-1 product's first CPU samples, on weights just copied there, put the CPU at 60 us,
// 4.6x the GPU's, and beyond the 4x allowed then it was never measured again.

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
#include "runtime/cost/bus_model.h"
#include "runtime/cost/cost_clock.h"
#include "runtime/cost/size_fit.h"

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

// One input of an op: the device it lives on, its size, and the device holding its cached copy
// (runtime/cost/copy_cache.h), where it costs no copy; -1 for none.
struct CostInput {
  int device;
  int64_t bytes;
  int cached_copy = -1;
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
  double next_ns = 0;  // the ops that read the output, run there after it (Note [Looking
                       // along the data])
  double finish_ns() const { return wait_ns + copy_ns + exec_ns + back_ns + next_ns; }
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
  // estimate is within kCalibrationRatio of the winner's (Note [Measured execution time]).
  static constexpr int kRefreshSamples = 4;
  static constexpr double kCalibrationRatio = 16;
  // ... and, within kRefreshRatio, once every kRefreshAfterLosses decisions it loses,
  // whatever its samples: an estimate that only losing kept stale is measured again, in
  // kRefreshBurst runs in a row (Note [Refresh bursts]).
  static constexpr double kRefreshRatio = 4;
  static constexpr int kRefreshAfterLosses = 16;
  static constexpr int kRefreshBurst = 4;
  static constexpr int kMaxTries = 4;                            // per device and key
  static constexpr int64_t kExploreMaxBytes = int64_t{1} << 22;  // 4 MiB
  static constexpr int64_t kSmallSourceBytes = 4096;             // Note [Where data is born]
  static constexpr int kLookAhead = 4;                           // Note [Looking along the data]
  static constexpr int kReaderForgottenAfter = 8;                // decisions of its producer
  static constexpr int kRatedReaders = 4;                        // per op (Note [Read rates])

  // Returns `key` in 32 bits (op, dtype, bucket), never 0: what an op's outputs remember of
  // the op that made them (Placement::cost_key).
  static uint32_t pack(const CostKey& key) {
    return static_cast<uint32_t>(key.op) << 16 | static_cast<uint32_t>(key.dtype) << 8 |
           static_cast<uint32_t>(key.bucket & 0x7f) | 0x80u;
  }

  // `clock` must outlive the model.
  CostModel(std::vector<CostDevice> devices, const CostClock* clock);

  const CostClock& clock() const { return *clock_; }
  int num_devices() const { return static_cast<int>(devices_.size()); }
  const CostDevice& device(int index) const { return devices_[index]; }

  // Sets the bus figures, keeping the network's when `bus` has none (they are measured
  // apart: Note [Remote candidates] in runtime/cost/cost_policy.h). Bumps generation().
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

  // Notes that an op of `consumer` (a packed key), whose output has `consumer_out_bytes`,
  // read an output of one of `producer`: the next op along the data (Note [Looking along the
  // data]). The latest consumer is kept.
  // `uses`: the consumer's uses since its previous decision, this one included (Note [Read
  // rates]).
  void note_consumer(uint32_t producer, uint32_t consumer, int64_t consumer_out_bytes,
                     int uses = 1);

  // Notes that the op of packed `key` ran `uses` times since its previous decision, this
  // one included: what its reader's reads are counted against (Note [Read rates]).
  void note_uses(uint32_t key, int uses);

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
    int losses = 0;         // decisions lost within kRefreshRatio since the last refresh
    bool loaded = false;    // from a history file, no sample taken in this process yet
    int burst = 0;          // decisions of a refresh burst still to come
    int burst_samples = 0;  // its samples still to come
    double burst_ns[kRefreshBurst - 1] = {};  // its samples after the first (warm-up)
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
  // `home`: the inputs' device; `after_queued_work`: an input is on a device that queues;
  // `holds_inputs`: every input is on `device` or mirrored there.
  CostEstimate estimate(const CostKey& key, int device, int64_t footprint,
                        absl::Span<const CostInput> inputs, int home, bool after_queued_work,
                        bool holds_inputs, int64_t out_bytes) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns the measured estimate of packed `key` on `device`, or false.
  bool measured(uint32_t key, int device, double* ns) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One op along the data: its packed key and its output's size.
  struct Reader {
    uint32_t key = 0;
    int64_t out_bytes = 0;
    double rate = 1;  // its reads per output of the op before it, at most 1 (Note [Read rates])
  };
  // Fills `chain` with the ops along `key`'s data (Note [Looking along the data]) whose
  // estimates every fitting candidate has; returns how many.
  int chain_along(const CostKey& key, absl::Span<const int> candidates, absl::Span<const bool> fits,
                  Reader* chain) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fills `next` (one per candidate) with the cheapest way through `chain` from an output of
  // `out_bytes` on each fitting candidate (Note [Looking along the data]).
  void look_along(absl::Span<const Reader> chain, absl::Span<const int> candidates,
                  absl::Span<const bool> fits, int64_t out_bytes, double* next) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
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
  // What an op (by packed key) knows of its readers (Note [Looking along the data]).
  struct Along {
    Reader reader;          // the latest op seen reading its output
    int64_t decisions = 0;  // its decisions so far
    int64_t noted_at = 0;   // `decisions` when the reader was seen
    int64_t uses = 0;       // its uses so far (Note [Read rates])
    // The readers seen last, each with its read rate and `uses` at its last note.
    struct Rate {
      uint32_t key = 0;
      int64_t uses_at_note = 0;
      double rate = 1;
    };
    Rate rates[kRatedReaders];
    int next_rate = 0;  // the slot a reader not among them takes
  };
  absl::flat_hash_map<uint32_t, Along> along_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mt
