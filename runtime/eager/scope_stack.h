#pragma once
// Inline only; device_scope.cc pushes and pops.
// The thread's stack of merged device scopes (internal). Each entry holds the merge of
// every enclosing scope and a hash of it, so that the per-op placement cache can key on
// the hash without walking the stack.

#include <cstdint>
#include <vector>

#include "placement/device_name.h"

namespace mt::internal {

struct ScopeEntry {
  DeviceSpec spec;
  uint64_t hash = 0;
};

// Returns a hash of every field of `spec`.
uint64_t hash_spec(const DeviceSpec& spec);

class ScopeStack {
 public:
  ScopeStack() { entries_.reserve(16); }

  // Returns the merged request of the innermost scope; nullptr when no scope is open.
  const ScopeEntry* top() const { return entries_.empty() ? nullptr : &entries_.back(); }

  void push(const DeviceSpec& spec) {
    ScopeEntry& entry = entries_.emplace_back();
    entry.spec = entries_.size() == 1 ? spec : merge(entries_[entries_.size() - 2].spec, spec);
    entry.hash = hash_spec(entry.spec);
  }
  void pop() { entries_.pop_back(); }

 private:
  std::vector<ScopeEntry> entries_;
};

// Returns this thread's stack.
inline ScopeStack& scope_stack() {
  thread_local ScopeStack stack;
  return stack;
}

}  // namespace mt::internal
