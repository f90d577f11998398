#include "runtime/cost/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/check.h"

namespace mt {
namespace {

// Note [Measured execution time]: the first measurement of a key on a device pays for
// warm-up; up to kRefreshSamples the estimate is the smallest sample since, so that one slow
// sample (a pool growing by cudaMalloc between the kernel's events on the GPU, the CPU's
// threads waking the first time) cannot fix a device's estimate at that. A device that
// loses is otherwise not measured again, so a calibrated choice runs the op once more on a
// loser that has fewer than kRefreshSamples samples, when its estimate is within
// kCalibrationRatio of the winner's (a hopeless one, a large product on the CPU, is left
// alone), and, within kRefreshRatio, once every kRefreshAfterLosses decisions it loses, in
// a burst (Note [Refresh bursts] in cost_model.h): one process on an H100 had its GPU Relu at 33 us
// (7-9 us in every other) and, never measured again, ran every Relu on the CPU. Later samples move
// the mean by a quarter, so that an estimate follows a machine whose speed changes (clocks, other
// processes) within a few runs; each is first brought within kSampleRange of the mean, so that one
// sample cannot move it far: a GPU's events span whatever the host did between them (a library's
// first call, a pool growing by cudaMalloc), and a second run that loaded a history of 32 us for a
// MatMul took its first sample, 93 ms with cuBLAS starting, into the mean: 23 ms, after which the
// GPU, hopeless by 700x, was never tried again and every step ran on the CPU, 2.7 ms against
// 0.05 (an H200, 2026-11-26). A slower machine still moves the mean, by up to 1.75x a sample.
// And a key loaded from a history file takes its first sample in this process as warm-up,
// as a new one does: recorded (its count grows), not averaged; unless that sample is a
// refresh burst's, whose first run is its warm-up already (the burst would otherwise end one
// sample short and take its last from a later, ordinary run).
constexpr double kSmoothing = 0.25;
constexpr double kSampleRange = 4;

std::string micros(double ns) { return absl::StrFormat("%.1f us", ns / 1000); }

}  // namespace

const CostEstimate& CostChoice::chosen() const {
  for (const CostEstimate& e : estimates) {
    if (e.device == device) return e;
  }
  MT_CHECK(false);
  return estimates[0];
}

CostModel::CostModel(std::vector<CostDevice> devices, const CostClock* clock)
    : devices_(std::move(devices)),
      clock_(clock),
      busy_until_ns_(new std::atomic<int64_t>[devices_.size()]),
      enqueued_ns_(new std::atomic<int64_t>[devices_.size()]) {
  for (size_t i = 0; i < devices_.size(); ++i) {
    busy_until_ns_[i].store(0);
    enqueued_ns_[i].store(0);
  }
}

uint64_t CostModel::stat_key(const CostKey& key, int device) {
  return static_cast<uint64_t>(key.op) | static_cast<uint64_t>(key.dtype) << 16 |
         static_cast<uint64_t>(key.bucket) << 24 | static_cast<uint64_t>(device) << 32;
}

Link CostModel::link(int from, int to) const {
  if (devices_[from].remote || devices_[to].remote) return Link::kNetwork;
  return link_between(devices_[from].type, devices_[to].type);
}

uint64_t CostModel::fit_key(OpId op, int device) {
  return static_cast<uint64_t>(op) | static_cast<uint64_t>(device) << 32;
}

void CostModel::set_bus(const BusModel& bus) {
  {
    internal::MutexLock lock(&mu_);
    const LinkCost network = bus_.get(Link::kNetwork);
    bus_ = bus;
    if (!bus.has(Link::kNetwork)) bus_.set(Link::kNetwork, network);
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

void CostModel::set_link(Link link, const LinkCost& cost) {
  {
    internal::MutexLock lock(&mu_);
    bus_.set(link, cost);
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

BusModel CostModel::bus() const {
  internal::MutexLock lock(&mu_);
  return bus_;
}

bool CostModel::exec_estimate(const CostKey& key, int device, int64_t footprint, double* ns) const {
  auto it = stats_.find(stat_key(key, device));
  if (it != stats_.end() && it->second.count >= kMinSamples) {
    *ns = it->second.mean_ns;
    return true;
  }
  auto fit = fits_.find(fit_key(key.op, device));
  if (fit == fits_.end() || !fit->second.ready()) return false;
  *ns = fit->second.predict(static_cast<double>(footprint));
  return true;
}

bool CostModel::measured(uint32_t key, int device, double* ns) const {
  const CostKey k{static_cast<OpId>(key >> 16), static_cast<DType>((key >> 8) & 0xff),
                  static_cast<int>(key & 0x7f)};
  auto it = stats_.find(stat_key(k, device));
  if (it == stats_.end() || it->second.count < kMinSamples) return false;
  *ns = it->second.mean_ns;
  return true;
}

int CostModel::chain_along(const CostKey& key, absl::Span<const int> candidates,
                           absl::Span<const bool> fits, Reader* chain) const {
  const uint32_t self = pack(key);
  uint32_t at = self;
  int n = 0;
  while (n < kLookAhead) {
    auto it = along_.find(at);
    if (it == along_.end() || it->second.reader.key == 0 || it->second.reader.key == self ||
        it->second.decisions - it->second.noted_at > kReaderForgottenAfter) {
      break;
    }
    const Along& a = it->second;
    at = a.reader.key;
    const auto seen = [&](const Reader& r) { return r.key == at; };
    if (std::any_of(chain, chain + n, seen)) break;  // a loop
    for (size_t i = 0; i < candidates.size(); ++i) {
      double ns;
      if (fits[i] && !measured(at, candidates[i], &ns)) return n;
    }
    chain[n] = a.reader;
    for (const Along::Rate& r : a.rates) {  // Note [Read rates]
      if (r.key == at) chain[n].rate = r.rate;
    }
    ++n;
  }
  return n;
}

void CostModel::look_along(absl::Span<const Reader> chain, absl::Span<const int> candidates,
                           absl::Span<const bool> fits, int64_t out_bytes, double* next) const {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  const size_t k = candidates.size();
  absl::InlinedVector<double, 4> to_go(k, 0.0), run(k);  // V_j+1(d); exec(reader j, d) + V_j+1(d)
  for (int j = static_cast<int>(chain.size()) - 1; j >= 0; --j) {
    for (size_t to = 0; to < k; ++to) {
      double exec = 0;
      run[to] =
          fits[to] && measured(chain[j].key, candidates[to], &exec) ? exec + to_go[to] : kNever;
    }
    const double bytes = static_cast<double>(j == 0 ? out_bytes : chain[j - 1].out_bytes);
    for (size_t from = 0; from < k; ++from) {
      double best = run[from];
      for (size_t to = 0; to < k; ++to) {
        const Link l = link(candidates[from], candidates[to]);
        if (to != from && bus_.has(l)) best = std::min(best, bus_.transfer_ns(l, bytes) + run[to]);
      }
      to_go[from] = std::isfinite(best) ? chain[j].rate * best : best;  // Note [Read rates]
    }
  }
  for (size_t i = 0; i < k; ++i) next[i] = std::isfinite(to_go[i]) ? to_go[i] : 0;
}

void CostModel::note_consumer(uint32_t producer, uint32_t consumer, int64_t consumer_out_bytes,
                              int uses) {
  if (producer == 0 || consumer == 0 || producer == consumer) return;
  internal::MutexLock lock(&mu_);
  Along& a = along_[producer];
  a.reader = Reader{consumer, consumer_out_bytes};
  a.noted_at = a.decisions;
  // Note [Read rates]: halfway to its reads over the outputs since its previous note.
  Along::Rate* r = nullptr;
  for (Along::Rate& slot : a.rates) {
    if (slot.key == consumer) r = &slot;
  }
  const bool seen = r != nullptr;
  if (!seen) r = &a.rates[a.next_rate++ % kRatedReaders];
  const double outputs =
      static_cast<double>(std::max<int64_t>(a.uses - (seen ? r->uses_at_note : 0), 1));
  const double now = std::min(1.0, std::max(uses, 1) / outputs);
  *r = Along::Rate{consumer, a.uses, seen ? (r->rate + now) / 2 : now};
}

void CostModel::note_uses(uint32_t key, int uses) {
  if (key == 0) return;
  internal::MutexLock lock(&mu_);
  along_[key].uses += std::max(uses, 1);
}

CostEstimate CostModel::estimate(const CostKey& key, int device, int64_t footprint,
                                 absl::Span<const CostInput> inputs, int home,
                                 bool after_queued_work, bool holds_inputs,
                                 int64_t out_bytes) const {
  CostEstimate e;
  e.device = device;
  e.known = exec_estimate(key, device, footprint, &e.exec_ns);
  // Note [What the host waits for]
  e.wait_ns = queues(device) && after_queued_work ? 0 : queued_ns(device);
  for (const CostInput& in : inputs) {
    if (in.device == device || in.cached_copy == device || in.device < 0 ||
        in.device >= num_devices())
      continue;
    // A copy to the host waits for its source's queue; a GPU's copy is queued behind it.
    if (!queues(device)) e.wait_ns = std::max(e.wait_ns, queued_ns(in.device));
    const Link link = this->link(in.device, device);
    if (!bus_.has(link)) {
      e.known = false;
      continue;
    }
    e.copy_ns += bus_.transfer_ns(link, static_cast<double>(in.bytes));
  }
  // Note [Leaving the inputs' device]: not from the host to its GPU, the way data flows.
  const bool feeds_gpu = home >= 0 && devices_[home].type == DeviceType::kCPU &&
                         !devices_[home].remote && queues(device);
  if (home >= 0 && home != device && out_bytes > 0 && !feeds_gpu && !holds_inputs) {
    const Link back = link(device, home);
    if (bus_.has(back)) {
      e.back_ns = bus_.transfer_ns(back, static_cast<double>(out_bytes));
    } else {
      e.known = false;
    }
  }
  return e;
}

CostChoice CostModel::choose(const CostKey& key, int64_t footprint,
                             absl::Span<const int> candidates, absl::Span<const bool> fits,
                             absl::Span<const CostInput> inputs, int64_t out_bytes, bool counts) {
  MT_CHECK(!candidates.empty() && fits.size() == candidates.size());
  // The inputs' device: the one holding most of their bytes (on a tie, the one that reached
  // the most first); and whether an input is on a device's queue (Note [What the host waits
  // for]).
  // And the devices that hold every input, on them or mirrored there (bit d for device d).
  int home = -1;
  bool after_queued_work = false;
  uint64_t holds = ~uint64_t{0};
  {
    absl::InlinedVector<int64_t, 4> bytes(devices_.size(), 0);
    for (const CostInput& in : inputs) {
      if (in.device < 0 || in.device >= num_devices()) continue;
      bytes[in.device] += in.bytes;
      if (home < 0 || bytes[in.device] > bytes[home]) home = in.device;
      after_queued_work |= queues(in.device);
      uint64_t here = in.device < 64 ? uint64_t{1} << in.device : 0;
      if (in.cached_copy >= 0 && in.cached_copy < 64) here |= uint64_t{1} << in.cached_copy;
      holds &= here;
    }
  }
  internal::MutexLock lock(&mu_);
  Reader chain[kLookAhead];  // Note [Looking along the data]
  const int along = out_bytes > 0 ? chain_along(key, candidates, fits, chain) : 0;
  absl::InlinedVector<double, 4> next(candidates.size(), 0.0);
  if (along > 0)
    look_along(absl::MakeConstSpan(chain, along), candidates, fits, out_bytes, next.data());
  CostChoice c;
  c.calibrated = true;
  int first_fitting = -1, best = -1, explore = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    CostEstimate& e = c.estimates.emplace_back(
        estimate(key, candidates[i], footprint, inputs, home, after_queued_work,
                 candidates[i] < 64 && (holds >> candidates[i] & 1) != 0, out_bytes));
    if (e.known) e.next_ns = next[i];
    e.fits = fits[i];
    if (!e.fits) continue;
    if (first_fitting < 0) first_fitting = static_cast<int>(i);
    if (!e.known) {
      c.calibrated = false;
      if (explore < 0 && stats_[stat_key(key, e.device)].tries < kMaxTries) {
        explore = static_cast<int>(i);
      }
      continue;
    }
    if (best < 0 || e.finish_ns() < c.estimates[best].finish_ns()) best = static_cast<int>(i);
  }
  // Note [Where data is born]
  if (op_has_flag(key.op, kSource) && key.op != OpId::kEagerConst && inputs.empty() &&
      out_bytes > kSmallSourceBytes) {
    c.device = c.estimates[first_fitting >= 0 ? first_fitting : 0].device;
    c.calibrated = true;  // nothing to measure elsewhere: the decision stands
    c.first_keeps = true;
    return c;
  }
  int pick = best;
  if (!c.calibrated) {  // Note [Calibrating the cost model]
    if (footprint > kExploreMaxBytes) {
      pick = first_fitting;
    } else if (explore >= 0) {
      pick = explore;
    } else if (best < 0) {
      pick = first_fitting;
    }
  }
  if (c.calibrated && best >= 0) {  // Note [Measured execution time]: refresh a loser
    const double winner = c.estimates[best].finish_ns();
    for (size_t i = 0; i < c.estimates.size(); ++i) {
      const CostEstimate& e = c.estimates[i];
      if (static_cast<int>(i) == best || !e.fits || !e.known) continue;
      Stat& loser = stats_[stat_key(key, e.device)];
      if (loser.burst > 0) {  // Note [Refresh bursts]: it goes on, whatever the estimates
        if (counts) --loser.burst;
      } else if (loser.count < kRefreshSamples) {
        if (e.finish_ns() > kCalibrationRatio * winner) continue;
      } else {
        if (e.finish_ns() > kRefreshRatio * winner) continue;
        if (!counts || ++loser.losses < kRefreshAfterLosses) continue;
        loser.losses = 0;
        loser.burst = kRefreshBurst - 1;
        loser.burst_samples = kRefreshBurst;
      }
      pick = static_cast<int>(i);
      c.refreshing = true;
      break;
    }
  }
  if (pick < 0) pick = 0;  // nothing fits: the priority device, which will report the OOM
  c.device = c.estimates[pick].device;
  if (!c.calibrated && counts) ++stats_[stat_key(key, c.device)].tries;
  if (counts) ++along_[pack(key)].decisions;  // Note [Looking along the data]
  return c;
}

void CostModel::add_point(const CostKey& key, int device, const Stat& stat) {
  SizeFit& fit = fits_[fit_key(key.op, device)];
  bool was_ready = fit.ready();
  fit.set_point(key.bucket * 16 + static_cast<int>(key.dtype), stat.mean_bytes, stat.mean_ns);
  if (!was_ready && fit.ready()) generation_.fetch_add(1, std::memory_order_acq_rel);
}

void CostModel::record(const CostKey& key, int device, int64_t bytes, double ns) {
  MT_CHECK(device >= 0 && device < num_devices());
  internal::MutexLock lock(&mu_);
  Stat& s = stats_[stat_key(key, device)];
  ++s.count;
  if (s.loaded) {  // Note [Measured execution time]: this process's warm-up
    s.loaded = false;
    if (s.burst_samples == 0) return;  // a burst's own first run is its warm-up
  }
  if (s.burst_samples > 0) {  // Note [Refresh bursts]
    const int run = kRefreshBurst - s.burst_samples--;
    if (run > 0) s.burst_ns[run - 1] = ns;  // the first is warm-up
    if (s.burst_samples > 0) return;
    std::sort(s.burst_ns, s.burst_ns + kRefreshBurst - 1);
    s.mean_ns = s.burst_ns[(kRefreshBurst - 1) / 2];
    s.mean_bytes = static_cast<double>(bytes);
    add_point(key, device, s);
    return;
  }
  if (s.count > kRefreshSamples && s.mean_ns > 0 && std::isfinite(s.mean_ns)) {
    ns = std::clamp(ns, s.mean_ns / kSampleRange, s.mean_ns * kSampleRange);
  }
  if (s.count == 1) {  // Note [Measured execution time]
    s.mean_ns = ns;
    s.mean_bytes = static_cast<double>(bytes);
  } else if (s.count <= kRefreshSamples) {
    if (ns < s.mean_ns) {
      s.mean_ns = ns;
      s.mean_bytes = static_cast<double>(bytes);
    }
  } else {
    s.mean_ns += kSmoothing * (ns - s.mean_ns);
    s.mean_bytes += kSmoothing * (static_cast<double>(bytes) - s.mean_bytes);
  }
  if (s.count < kMinSamples) return;
  if (s.count == kMinSamples) generation_.fetch_add(1, std::memory_order_acq_rel);
  add_point(key, device, s);
}

void CostModel::note_enqueued(int device, double exec_ns) {
  if (!queues(device)) return;  // runs inline, or remotely: nothing the model follows
  const int64_t now = clock_->now_ns();
  // An extrapolated estimate can be huge: clamp it to an hour before it becomes an integer.
  const int64_t ns = static_cast<int64_t>(std::clamp(exec_ns, 0.0, 3.6e12));
  enqueued_ns_[device].fetch_add(ns, std::memory_order_relaxed);
  std::atomic<int64_t>& busy = busy_until_ns_[device];
  int64_t old = busy.load(std::memory_order_relaxed);
  int64_t next;
  do {
    next = std::max(old, now) + ns;
  } while (!busy.compare_exchange_weak(old, next, std::memory_order_relaxed));
}

int64_t CostModel::enqueued_total_ns(int device) const {
  return enqueued_ns_[device].load(std::memory_order_relaxed);
}

void CostModel::note_drained(int device, int64_t enqueued_total) {
  if (!queues(device)) return;
  // Note [A queue that follows the device]
  const int64_t after = enqueued_ns_[device].load(std::memory_order_relaxed) - enqueued_total;
  const int64_t bound = clock_->now_ns() + std::max<int64_t>(after, 0);
  std::atomic<int64_t>& busy = busy_until_ns_[device];
  int64_t old = busy.load(std::memory_order_relaxed);
  while (old > bound && !busy.compare_exchange_weak(old, bound, std::memory_order_relaxed)) {
  }
}

double CostModel::queued_ns(int device) const {
  if (!queues(device)) return 0;
  int64_t left = busy_until_ns_[device].load(std::memory_order_relaxed) - clock_->now_ns();
  return left > 0 ? static_cast<double>(left) : 0;
}

std::vector<CostRecord> CostModel::history() const {
  internal::MutexLock lock(&mu_);
  std::vector<CostRecord> out;
  for (const auto& [k, s] : stats_) {
    if (s.count == 0) continue;
    out.push_back(CostRecord{static_cast<OpId>(k & 0xffff), static_cast<DType>((k >> 16) & 0xff),
                             static_cast<int>((k >> 24) & 0xff), static_cast<int>(k >> 32), s.count,
                             s.mean_ns, s.mean_bytes});
  }
  std::sort(out.begin(), out.end(), [](const CostRecord& a, const CostRecord& b) {
    return std::tie(a.device, a.op, a.dtype, a.bucket) <
           std::tie(b.device, b.op, b.dtype, b.bucket);
  });
  return out;
}

void CostModel::load_history(absl::Span<const CostRecord> records) {
  {
    internal::MutexLock lock(&mu_);
    stats_.clear();
    fits_.clear();
    for (const CostRecord& r : records) {
      CostKey key{r.op, r.dtype, r.bucket};
      Stat& s = stats_[stat_key(key, r.device)];
      s.count = r.count;
      s.mean_ns = r.mean_ns;
      s.mean_bytes = r.mean_bytes;
      s.loaded = r.count >= kMinSamples;
      if (s.count >= kMinSamples) add_point(key, r.device, s);
    }
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::string CostModel::describe(const CostChoice& choice) const {
  std::string out = choice.first_keeps  ? "new data made on the first device: "
                    : choice.calibrated ? ""
                                        : "calibrating: ";
  auto one = [&](const CostEstimate& e) {
    std::string s = devices_[e.device].name;
    if (!e.fits) return absl::StrCat(s, " skipped: its pool cannot take the output");
    if (!e.known) return absl::StrCat(s, " not measured yet");
    absl::StrAppend(&s, " ", micros(e.exec_ns));
    if (e.copy_ns > 0) absl::StrAppend(&s, " + copy ", micros(e.copy_ns));
    if (e.back_ns > 0) absl::StrAppend(&s, " + back ", micros(e.back_ns));
    if (e.wait_ns > 0) absl::StrAppend(&s, " + queued ", micros(e.wait_ns));
    if (e.next_ns > 0) absl::StrAppend(&s, " + next ", micros(e.next_ns));
    return s;
  };
  absl::StrAppend(&out, one(choice.chosen()));
  for (const CostEstimate& e : choice.estimates) {
    if (e.device != choice.device) absl::StrAppend(&out, " vs ", one(e));
  }
  return out;
}

}  // namespace mt
