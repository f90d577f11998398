#include "runtime/trace/memory_labels.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "core/mutex.h"

namespace mt::internal {
namespace {

struct Labels {
  Mutex mu;
  absl::flat_hash_map<uintptr_t, std::string> by_address ABSL_GUARDED_BY(mu);
};

Labels& labels() {
  static auto* made = new Labels;  // process lifetime: arenas may outlive main
  return *made;
}

}  // namespace

void label_block(const void* data, std::string label) {
  Labels& l = labels();
  MutexLock lock(&l.mu);
  l.by_address[reinterpret_cast<uintptr_t>(data)] = std::move(label);
}

void unlabel_block(const void* data) {
  Labels& l = labels();
  MutexLock lock(&l.mu);
  l.by_address.erase(reinterpret_cast<uintptr_t>(data));
}

bool find_block_label(uintptr_t data, std::string* label) {
  Labels& l = labels();
  MutexLock lock(&l.mu);
  auto it = l.by_address.find(data);
  if (it == l.by_address.end()) return false;
  *label = it->second;
  return true;
}

}  // namespace mt::internal
