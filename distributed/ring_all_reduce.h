#pragma once
// The ring all-reduce between worker processes (internal), over an interface to the two
// neighbours in the ring, so that the algorithm is tested apart from the network.
//
// Note [Ring all-reduce]
// n workers sum one buffer of the same dtype and length. The buffer is cut into n
// segments (as even as can be). Reduce-scatter: at step s (0 to n-2) worker r sends
// segment (r - s) mod n to worker r+1 and adds the segment (r - s - 1) mod n it receives
// from worker r-1 into its own; after n-1 steps worker r holds the whole sum of segment
// (r + 1) mod n. All-gather: at step n-1+s worker r sends segment (r + 1 - s) mod n on and
// copies the segment (r - s) mod n it receives over its own. Each worker sends and
// receives 2(n-1)/n of the buffer, whatever n, and every worker ends with the same bits:
// each segment was summed once, in one order, then copied. A step's segment travels in
// chunks of at most kRingChunkBytes, one message each: the send runs on a thread of its
// own while the receiver adds (or copies) each chunk as it comes, so that the addition
// overlaps the transfer, and no message outgrows what a task accepts.
//
//   ring_all_reduce(links, rank, size, DType::kFloat32, data, elements);

#include <cstdint>

#include "absl/status/status.h"
#include "core/dtype.h"
#include "distributed/collective_mailbox.h"

namespace mt::distributed::internal {

// The most bytes of one message of the ring (and of a task's Deliver).
inline constexpr size_t kRingChunkBytes = size_t{4} << 20;

// A worker's two neighbours in the ring.
class RingLinks {
 public:
  virtual ~RingLinks() = default;
  // Sends chunk `chunk` of step `step` (`what` describes it; `bytes` at `data`) to the
  // next worker; returns once it has it.
  virtual absl::Status send(uint32_t step, uint32_t chunk, const std::string& what,
                            const char* data, size_t bytes) = 0;
  // Returns chunk `chunk` of step `step` from the previous worker.
  virtual absl::StatusOr<CollectiveMailbox::Message> receive(uint32_t step, uint32_t chunk) = 0;
  // Names the previous worker in errors ("worker /job:worker/replica:0/task:1 at ...").
  virtual std::string previous_name() const = 0;
};

// Returns whether the ring can sum `dtype` (float32, float64, int32, int64).
bool ring_sums(DType dtype);

// Sums the `elements` elements of `dtype` at `data` over the `size` workers of the ring,
// in place; this worker is `rank`. Every worker must call it alike: a message of another
// dtype or length is InvalidArgument naming both; the links' errors come back as they are.
absl::Status ring_all_reduce(RingLinks& links, int rank, int size, DType dtype, void* data,
                             int64_t elements);

}  // namespace mt::distributed::internal
