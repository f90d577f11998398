#pragma once
// Memory labels (internal): names for pool blocks that no op allocated, so that memory
// snapshots and the report can say whose they are. An mt::Function's arena is the one user
// today: a snapshot shows its block as op "function 'train_step'" instead of leaving it
// unnamed or naming whatever op last had that address.
//
// Thread safety: every function may be called from any thread.

#include <cstdint>
#include <string>

namespace mt::internal {

// Names the block at `data` until unlabel_block(data).
void label_block(const void* data, std::string label);
void unlabel_block(const void* data);

// Sets *label to the label of the block at `data` and returns true, if it has one.
bool find_block_label(uintptr_t data, std::string* label);

}  // namespace mt::internal
