#pragma once
// Inline only.
// status_of (internal): the inverse of throw_if_error for the strategy's collectives, whose
// outcome goes from the thread that ran them to every replica as a Status.

#include <exception>

#include "absl/status/status.h"
#include "runtime/eager/error.h"

namespace mt::internal {

// Runs `fn` and returns the status of what it threw (an mt::Error keeps its code; anything
// else is Internal), OK when it returned.
template <typename Fn>
absl::Status status_of(Fn&& fn) {
  try {
    fn();
    return absl::OkStatus();
  } catch (const Error& e) {
    return absl::Status(e.code(), e.what());
  } catch (const std::exception& e) {
    return absl::InternalError(e.what());
  }
}

}  // namespace mt::internal
