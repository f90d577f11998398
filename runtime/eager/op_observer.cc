#include "runtime/eager/op_observer.h"

#include "absl/strings/str_cat.h"
#include "core/check.h"

namespace mt::internal {
namespace {

// The process's observers: a fixed array of slots, read without a lock by every op while
// observed() (an observer outlives its registration, so a stale read calls a live object).
constexpr int kProcessSlots = 4;
std::atomic<OpObserver*> g_process[kProcessSlots];

std::atomic<OomListener> g_oom_listener{nullptr};

}  // namespace

absl::Status add_process_observer(OpObserver* observer) {
  for (std::atomic<OpObserver*>& slot : g_process) {
    OpObserver* empty = nullptr;
    if (slot.compare_exchange_strong(empty, observer, std::memory_order_acq_rel)) {
      g_observers.fetch_add(1, std::memory_order_relaxed);
      return absl::OkStatus();
    }
  }
  return absl::FailedPreconditionError(
      absl::StrCat("[observers] at most ", kProcessSlots, " process observers at a time"));
}

void remove_process_observer(OpObserver* observer) {
  for (std::atomic<OpObserver*>& slot : g_process) {
    OpObserver* expected = observer;
    if (slot.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) {
      g_observers.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
}

void ThreadObservers::add(OpObserver* observer) {
  g_observers.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i < n_; ++i) {
    if (entries_[i].observer == observer) {
      ++entries_[i].count;
      return;
    }
  }
  MT_CHECK(n_ < kMax);  // more kinds of thread observers than the list holds
  entries_[n_++] = Entry{observer, 1};
}

void ThreadObservers::remove(OpObserver* observer) {
  for (int i = 0; i < n_; ++i) {
    if (entries_[i].observer != observer) continue;
    g_observers.fetch_sub(1, std::memory_order_relaxed);
    if (--entries_[i].count > 0) return;
    for (int j = i + 1; j < n_; ++j) entries_[j - 1] = entries_[j];
    --n_;
    return;
  }
}

ThreadObservers& thread_observers() {
  thread_local ThreadObservers list;
  return list;
}

ObserverSet::ObserverSet() {
  for (std::atomic<OpObserver*>& slot : g_process) {
    if (OpObserver* o = slot.load(std::memory_order_acquire)) list_[n_++] = o;
  }
  const ThreadObservers& mine = thread_observers();
  for (int i = 0; i < mine.n_; ++i) list_[n_++] = mine.entries_[i].observer;
}

bool ObserverSet::wants_reasons() const {
  for (int i = 0; i < n_; ++i) {
    if (list_[i]->wants_reasons()) return true;
  }
  return false;
}

void ObserverSet::on_placed(const OpEvent& op) const {
  for (int i = 0; i < n_; ++i) list_[i]->on_placed(op);
}

void ObserverSet::before_copy(const Tensor& t, Device& dst, int dst_index) const {
  for (int i = 0; i < n_; ++i) list_[i]->before_copy(t, dst, dst_index);
}

void ObserverSet::after_copy(const Tensor& t, Device& dst,
                             const absl::StatusOr<Tensor>& copy) const {
  for (int i = 0; i < n_; ++i) list_[i]->after_copy(t, dst, copy);
}

void ObserverSet::before_kernel(const OpEvent& op) const {
  for (int i = 0; i < n_; ++i) list_[i]->before_kernel(op);
}

void ObserverSet::on_done(const OpEvent& op, const absl::Status& status) const {
  for (int i = 0; i < n_; ++i) list_[i]->on_done(op, status);
}

void set_oom_listener(OomListener listener) {
  g_oom_listener.store(listener, std::memory_order_release);
}

void notify_oom(Device& device, const std::string& message) {
  if (OomListener listener = g_oom_listener.load(std::memory_order_acquire)) {
    listener(device, message);
  }
}

}  // namespace mt::internal
