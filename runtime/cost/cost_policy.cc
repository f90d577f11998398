#include "runtime/cost/cost_policy.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "runtime/cost/bus_calibration.h"
#include "runtime/cost/copy_cache.h"
#include "runtime/cost/cost_history_file.h"
#include "runtime/eager/context.h"
#include "runtime/eager/explain.h"
#include "runtime/eager/placement_log.h"
#include "runtime/eager/tensor_impl.h"

namespace mt::internal {

// Note [GPU timings without waiting]
// A GPU kernel the policy measures is bracketed by two events on the device's stream; the
// pair waits in `pending_` and is read with cudaEventQuery (Device::try_mark_elapsed_ms) at
// later measured runs and decisions, so measuring never synchronises the stream. The
// op's time on a GPU is the larger of the events' interval and the host time the launch
// took: a tiny kernel costs its launch, a large one its run.
struct CostPolicy::Pending {
  CostKey key;
  int device;
  Device* owner;
  int64_t footprint;
  double host_ns;
  void* begin;
  void* end;
  int64_t enqueued_total;  // Note [A queue that follows the device] in cost_model.h
};

namespace {

constexpr size_t kMaxPending = 256;

// One cached decision (Note [Cost decision cache]).
struct DecisionEntry {
  uint64_t epoch = 0;
  uint64_t generation = 0;
  uint64_t key = 0;
  Placement placement;  // its cost_exec_ns queued at each launch (note_launched)
  int uses_left = 0;
};

// The calling thread's cache entry for `key` (Note [Cost decision cache]): the entry that
// holds it, else the one of its set to replace (the next in turn).
DecisionEntry& cache_slot(uint64_t key) {
  constexpr int kWays = 4, kSets = 64;
  struct Set {
    DecisionEntry way[kWays];
    unsigned next = 0;
  };
  thread_local Set cache[kSets];
  // Fibonacci hashing: the product's top bits depend on every bit of the key, so keys that
  // differ only in dtype, bucket or the output's octave spread over the sets.
  Set& set = cache[(key * 0x9E3779B97F4A7C15ull) >> 58];
  for (DecisionEntry& e : set.way) {
    if (e.key == key) return e;
  }
  return set.way[set.next++ % kWays];
}

// Returns the uses of the op whose cache entry is `e` since its previous decision, this one
// included (Note [Read rates] in runtime/cost/cost_model.h), when this use `hit` the entry
// (its key, epoch and generation): kReevaluateEvery when the cached decision ran out, fewer
// when it ended early. 1 otherwise: nothing cached in this epoch, or the count spent.
int uses_since_decision(const DecisionEntry& e, bool hit) {
  if (!hit || e.uses_left < 0) return 1;
  return CostPolicy::kReevaluateEvery - e.uses_left;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

}  // namespace

int64_t cost_footprint(absl::Span<const Tensor* const> inputs, int64_t out_bytes) {
  if (inputs.empty()) return out_bytes;
  int64_t bytes = 0;
  for (const Tensor* t : inputs) bytes += static_cast<int64_t>(t->impl()->bytes());
  return bytes;
}

CostPolicy::CostPolicy(const Runtime& rt) : rt_(rt) {
  std::vector<CostDevice> devices;
  machine_ = host_name();
  for (int i = 0; i < rt.num_devices(); ++i) {
    const Device& d = rt.device(i);
    bool remote = rt.placer().remote(i);
    devices.push_back(CostDevice{d.type(), remote ? d.name() : short_name(d), remote});
    if (!remote) absl::StrAppend(&machine_, ",", short_name(d));
    int64_t limit = remote ? 0 : d.allocator().stats().bytes_limit;  // no call to the task
    limits_.push_back(limit >= (int64_t{1} << 62) ? 0 : limit);
  }
  model_ = std::make_unique<CostModel>(std::move(devices), &steady_);
  for (int op = 0; op < kNumOps; ++op) {
    for (int dtype = 0; dtype < kNumDTypes; ++dtype) {
      std::vector<int>& c = candidates_.emplace_back();
      for (int i : rt.placer().priority()) {
        if (rt.placer().remote(i)) continue;
        if (rt.placer().kernel(i, static_cast<OpId>(op), static_cast<DType>(dtype))) c.push_back(i);
      }
    }
  }
}

CostPolicy::~CostPolicy() {
  MutexLock lock(&pending_mu_);
  for (Pending& p : pending_) {
    p.owner->release_mark(p.begin);
    p.owner->release_mark(p.end);
  }
}

void CostPolicy::reset_for_testing(const CostClock* clock) {
  std::vector<CostDevice> devices;
  for (int i = 0; i < model_->num_devices(); ++i) devices.push_back(model_->device(i));
  model_ = std::make_unique<CostModel>(std::move(devices), clock ? clock : &steady_);
  bus_ready_.store(true, std::memory_order_release);
  network_.store(kNetworkKnown, std::memory_order_release);  // the tests set NET themselves
}

void CostPolicy::calibrate_bus() {
  MutexLock lock(&bus_mu_);
  if (bus_ready_.load(std::memory_order_acquire)) return;
  model_->set_bus(load_or_measure_bus(rt_, machine_, bus_cache_path()));
  bus_ready_.store(true, std::memory_order_release);
}

bool CostPolicy::network_ready() {
  int state = network_.load(std::memory_order_acquire);
  if (__builtin_expect(state >= kNetworkKnown, 1)) return state == kNetworkKnown;
  if (state == kNetworkMeasuring || !network_.compare_exchange_strong(state, kNetworkMeasuring)) {
    return false;  // another thread measures it
  }
  std::optional<LinkCost> net = measure_network(rt_);  // Note [Remote candidates]
  if (net.has_value()) model_->set_link(Link::kNetwork, *net);
  network_.store(net.has_value() ? kNetworkKnown : kNetworkUnavailable, std::memory_order_release);
  return net.has_value();
}

int64_t CostPolicy::needed_bytes(int device, absl::Span<const Tensor* const> inputs,
                                 int64_t out_bytes) const {
  int64_t bytes = out_bytes;
  for (const Tensor* t : inputs) {
    const TensorImpl* impl = t->impl();
    // A mirrored input counts too: the check stays on the safe side of what the op
    // allocates (Note [Soft OOM]).
    if (impl->device != &rt_.device(device)) bytes += static_cast<int64_t>(impl->bytes());
  }
  return bytes;
}

bool CostPolicy::fits(int device, absl::Span<const Tensor* const> inputs, int64_t out_bytes) const {
  if (limits_[device] == 0) return true;  // Note [Soft OOM]
  const int64_t needed = needed_bytes(device, inputs, out_bytes);
  if (needed < kMemoryCheckBytes) return true;
  return rt_.device(device).allocator().usage().bytes_in_use + needed <= limits_[device];
}

absl::Span<const int> CostPolicy::candidates(OpId op, DType dtype,
                                             absl::Span<const Tensor* const> inputs,
                                             bool one_output, Candidates* storage) {
  const std::vector<int>& local =
      candidates_[static_cast<int>(op) * kNumDTypes + static_cast<int>(dtype)];
  bool remote_input = false;
  for (const Tensor* t : inputs) remote_input |= t->impl()->device->remote() != nullptr;
  if (__builtin_expect(!remote_input, 1) || !one_output || !network_ready()) return local;
  storage->assign(local.begin(), local.end());  // Note [Remote candidates]
  for (const Tensor* t : inputs) {
    Device* d = t->impl()->device;
    if (d->remote() == nullptr) continue;
    const int index = index_of(*d);
    if (index < 0 || absl::c_linear_search(*storage, index)) continue;
    if (rt_.placer().kernel(index, op, dtype) != nullptr) storage->push_back(index);
  }
  return *storage;
}

CostChoice CostPolicy::decide(OpId op, DType dtype, absl::Span<const int> candidates,
                              absl::Span<const Tensor* const> inputs, int64_t out_bytes,
                              bool counts) {
  poll_pending();
  // A device seen idle has no queue, whatever the estimates say (Note [A queue that follows
  // the device]): one stream query per device with a queue, at a decision, not a cached one.
  for (int i = 0; i < model_->num_devices(); ++i) {
    if (model_->queued_ns(i) > 0 && rt_.device(i).idle()) {
      model_->note_drained(i, model_->enqueued_total_ns(i));
    }
  }
  absl::InlinedVector<CostInput, 4> in;
  const bool cached = uses_copy_cache(op);  // as execute.cc reads them (Note [The copy cache])
  for (const Tensor* t : inputs) {
    const TensorImpl* impl = t->impl();
    const int device = index_of(*impl->device);
    if (device < 0) continue;  // a tensor of an older runtime: nothing to estimate
    const Device* copy = cached ? cached_copy_device(*impl) : nullptr;
    in.push_back(CostInput{device, static_cast<int64_t>(impl->bytes()),
                           copy == nullptr ? -1 : index_of(*copy)});
  }
  absl::InlinedVector<bool, 4> fit;
  for (int d : candidates) fit.push_back(fits(d, inputs, out_bytes));
  const int64_t footprint = cost_footprint(inputs, out_bytes);
  const CostKey key{op, dtype, footprint_bucket(footprint)};
  return model_->choose(key, footprint, candidates, absl::MakeConstSpan(fit.data(), fit.size()), in,
                        out_bytes, counts);
}

void CostPolicy::log_skips(OpId op, const CostChoice& choice,
                           absl::Span<const Tensor* const> inputs, int64_t out_bytes) {
  for (const CostEstimate& e : choice.estimates) {
    if (e.fits) continue;
    bool first = logged_skips_.fetch_add(1, std::memory_order_relaxed) < kLoggedSkips;
    if (!first && !Context::get().log_placement()) continue;
    const Device& d = rt_.device(e.device);
    MemoryUsage u = d.allocator().usage();
    log_line(absl::StrCat("minitensor: cost placement: ", short_name(d), " cannot take ",
                          human_bytes(needed_bytes(e.device, inputs, out_bytes)), " more (",
                          human_bytes(u.bytes_in_use), " of ", human_bytes(limits_[e.device]),
                          " in use); ", op_name(op), " runs on ",
                          short_name(rt_.device(choice.device)), " instead"));
  }
}

uint64_t CostPolicy::cache_key(OpId op, DType dtype, absl::Span<const Tensor* const> inputs,
                               int64_t footprint, int64_t out_bytes) const {
  if (inputs.size() > 7) return 0;
  // Op, dtype, footprint bucket, 5 bits of device per input, whether each of the first five
  // inputs is mirrored (Note [The copy cache] in runtime/cost/copy_cache.h; where, when there are
  // but two devices, is the other one: with more, an op on a mirrored input is not cached), then
  // the output's octave against the footprint's in 4 bits (Note [Cost decision cache]); bit 63
  // marks a key. At most 7 inputs: an eighth's device would take the cached copies' bits.
  const int bucket = footprint_bucket(footprint);
  const int out_octave = std::clamp(footprint_bucket(out_bytes) - bucket, -7, 8) + 7;
  uint64_t key = uint64_t{1} << 63 | static_cast<uint64_t>(op) | static_cast<uint64_t>(dtype) << 8 |
                 static_cast<uint64_t>(bucket) << 12 | static_cast<uint64_t>(out_octave) << 59;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int index = index_of(*inputs[i]->impl()->device);
    if (index < 0 || index >= 31) return 0;
    key |= static_cast<uint64_t>(index + 1) << (19 + 5 * i);
    // uses_copy_cache() only for a mirrored input: most ops have none, and this is every op's path.
    if (inputs[i]->impl()->cached_copy.load(std::memory_order_relaxed) != nullptr &&
        uses_copy_cache(op)) {
      if (i >= 5 || model_->num_devices() > 2) return 0;
      key |= uint64_t{1} << (54 + i);
    }
  }
  return key;
}

absl::StatusOr<Placement> CostPolicy::place(OpId op, DType dtype,
                                            absl::Span<const Tensor* const> inputs,
                                            int64_t out_bytes, bool one_output, std::string* why) {
  Candidates storage;
  const absl::Span<const int> candidates =
      this->candidates(op, dtype, inputs, one_output, &storage);
  if (candidates.size() <= 1) return rt_.default_placement(op, dtype);  // nothing to choose
  if (__builtin_expect(!bus_ready_.load(std::memory_order_acquire), 0)) calibrate_bus();
  const int64_t footprint = cost_footprint(inputs, out_bytes);
  const uint64_t key = cache_key(op, dtype, inputs, footprint, out_bytes);
  const bool cacheable = key != 0;
  DecisionEntry& e = cache_slot(key);
  const uint64_t epoch = Context::get().epoch();
  const uint64_t generation = model_->generation();
  const bool hit = cacheable && e.key == key && e.epoch == epoch && e.generation == generation;
  if (hit && --e.uses_left > 0 && fits(e.placement.device, inputs, out_bytes)) {
    if (__builtin_expect(why != nullptr, 0)) {  // the cached device first, the estimates now
      CostChoice now = decide(op, dtype, candidates, inputs, out_bytes, /*counts=*/false);
      for (const CostEstimate& c : now.estimates) {
        if (c.device == e.placement.device) now.device = c.device;
      }
      *why = words(now);
    }
    return e.placement;  // queued once launched (note_launched)
  }
  // Note [Looking along the data]: this op reads what its inputs' ops made, as often as it
  // ran since its previous decision (Note [Read rates]).
  const uint32_t packed = CostModel::pack(CostKey{op, dtype, footprint_bucket(footprint)});
  const int uses = uses_since_decision(e, hit);
  model_->note_uses(packed, uses);
  CostChoice choice = decide(op, dtype, candidates, inputs, out_bytes);
  absl::InlinedVector<uint32_t, 4> noted;  // each producer once: add(x, x) reads x once
  for (const Tensor* t : inputs) {
    const uint32_t producer = t->impl()->producer.load(std::memory_order_relaxed);
    if (absl::c_linear_search(noted, producer)) continue;
    noted.push_back(producer);
    model_->note_consumer(producer, packed, out_bytes, uses);
  }
  bool skipped = false;
  for (const CostEstimate& c : choice.estimates) skipped |= !c.fits;
  if (skipped) log_skips(op, choice, inputs, out_bytes);
  if (why != nullptr) *why = words(choice);
  const double exec_ns = choice.chosen().known ? choice.chosen().exec_ns : 0;
  Placement p{choice.device,
              rt_.placer().kernel(choice.device, op, dtype),
              PlacementReason::kCost,
              /*measure=*/true,
              packed,
              exec_ns};
  // A skip lasts as long as the memory; a refresh, one run.
  if (cacheable && choice.calibrated && !skipped && !choice.refreshing) {
    Placement cached = p;
    cached.measure = false;
    e = DecisionEntry{epoch, model_->generation(), key, cached, kReevaluateEvery};
  } else if (cacheable && e.key == key) {
    e.uses_left = 0;  // its uses are counted (uses_since_decision); the next use decides
  }
  return p;
}

absl::StatusOr<PlacementPolicy::Explained> CostPolicy::explain(
    OpId op, DType dtype, absl::Span<const Tensor* const> inputs, int64_t out_bytes) {
  Candidates storage;
  const absl::Span<const int> candidates =
      this->candidates(op, dtype, inputs, /*one_output=*/true, &storage);
  if (candidates.size() <= 1) {
    MT_ASSIGN_OR_RETURN(Placement p, rt_.default_placement(op, dtype));
    return Explained{p, ""};
  }
  if (!bus_ready_.load(std::memory_order_acquire)) calibrate_bus();
  const CostChoice choice = decide(op, dtype, candidates, inputs, out_bytes, /*counts=*/false);
  return Explained{Placement{choice.device, rt_.placer().kernel(choice.device, op, dtype),
                             PlacementReason::kCost},
                   words(choice)};
}

CostTiming CostPolicy::begin(Device& device) {
  // The mark first: the host time is the launch's alone, not the event's record as well.
  void* mark = device.record_mark();
  return CostTiming{model_->clock().now_ns(), mark};
}

std::string CostPolicy::words(const CostChoice& choice) const {
  return absl::StrCat("cost policy: ", model_->describe(choice));
}

int CostPolicy::index_of(const Device& device) const {
  for (int i = 0; i < rt_.num_devices(); ++i) {
    if (&rt_.device(i) == &device) return i;
  }
  return -1;
}

TensorImpl* CostPolicy::kept_copy(OpId op, TensorImpl& src, const Device& device) {
  return uses_copy_cache(op) ? cached_copy_on(src, device) : nullptr;
}

void CostPolicy::copied(OpId op, TensorImpl& src, TensorImpl& copy) {
  if (uses_copy_cache(op)) keep_cached_copy(src, copy);
}

bool CostPolicy::holds_copy(OpId op, const TensorImpl& src, const Device& device) const {
  return uses_copy_cache(op) && cached_copy_device(src) == &device;
}

void CostPolicy::writing(TensorImpl& t) { drop_cached_copy(t); }

void CostPolicy::launched(const Placement& p, absl::Span<const Tensor> outputs) {
  note_launched(p);
  if (p.cost_key == 0) return;  // Note [Looking along the data] in runtime/cost/cost_model.h
  for (const Tensor& t : outputs) t.impl()->producer.store(p.cost_key, std::memory_order_relaxed);
}

void CostPolicy::abandoned(const CostTiming& timing, Device& device) {
  device.release_mark(timing.mark_begin);
}

CostPolicy& cost_policy(const Runtime& rt) { return static_cast<CostPolicy&>(*rt.policy()); }

std::unique_ptr<PlacementPolicy> make_cost_policy(const Runtime& rt) {
  return std::make_unique<CostPolicy>(rt);
}

void CostPolicy::measured(const CostTiming& timing, Device& device, OpId op, DType dtype,
                          absl::Span<const Tensor* const> inputs, int64_t out_bytes) {
  const double host_ns = static_cast<double>(model_->clock().now_ns() - timing.host_begin_ns);
  const int index = index_of(device);
  if (index < 0) {  // a device of an older runtime
    device.release_mark(timing.mark_begin);
    return;
  }
  const int64_t footprint = cost_footprint(inputs, out_bytes);
  const CostKey key{op, dtype, footprint_bucket(footprint)};
  if (timing.mark_begin == nullptr) {
    model_->record(key, index, footprint, host_ns);
    return;
  }
  // Everything enqueued up to the op, itself included (note_launched came first), read
  // before the end mark: work another thread queues after the mark is not yet drained by it.
  const int64_t enqueued = model_->enqueued_total_ns(index);
  void* mark_end = device.record_mark();
  {
    MutexLock lock(&pending_mu_);
    if (mark_end != nullptr && pending_.size() < kMaxPending) {
      pending_.push_back(
          Pending{key, index, &device, footprint, host_ns, timing.mark_begin, mark_end, enqueued});
      return;
    }
  }
  device.release_mark(timing.mark_begin);
  device.release_mark(mark_end);
}

void CostPolicy::poll_pending() {
  MutexLock lock(&pending_mu_);
  // A device runs its stream in order: after one of its timings that has not completed, the
  // later ones of that device are not asked (they wait for the next poll).
  absl::InlinedVector<const Device*, 2> busy;
  size_t kept = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    const bool behind = absl::c_linear_search(busy, p.owner);
    std::optional<double> ms;
    if (!behind) ms = p.owner->try_mark_elapsed_ms(p.begin, p.end);
    if (!ms.has_value()) {
      if (!behind) busy.push_back(p.owner);
      pending_[kept++] = p;
      continue;
    }
    p.owner->release_mark(p.begin);
    p.owner->release_mark(p.end);
    if (*ms < 0) continue;  // the events failed: nothing learnt
    model_->note_drained(p.device, p.enqueued_total);
    model_->record(p.key, p.device, p.footprint, std::max(p.host_ns, *ms * 1e6));
  }
  pending_.resize(kept);
}

absl::Status CostPolicy::save_history(const std::string& path) const {
  std::vector<CostRecord> records = model_->history();
  // A task's figures depend on the cluster, not this machine (Note [Remote candidates]).
  records.erase(
      std::remove_if(records.begin(), records.end(),
                     [&](const CostRecord& r) { return model_->device(r.device).remote; }),
      records.end());
  std::string text = serialize_cost_history(*model_, records, machine_);
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    return absl::InvalidArgumentError(
        absl::StrCat("[save_placement_history] cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

bool CostPolicy::load_history(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "minitensor: placement history '%s' not loaded: cannot open it\n",
                 path.c_str());
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<CostRecord>> records =
      parse_cost_history(*model_, text.str(), machine_);
  if (!records.ok()) {
    std::fprintf(stderr, "minitensor: placement history '%s' not loaded: %s\n", path.c_str(),
                 std::string(records.status().message()).c_str());
    return false;
  }
  model_->load_history(*records);
  return true;
}

}  // namespace mt::internal
