#pragma once
// mt::Error: the one exception type of the public API. It carries the absl::StatusCode of
// the failure and its message; what() returns the message.
//
//   try {
//     mt::DeviceScope scope("/GPU:2");
//     mt::matmul(a, b);
//   } catch (const mt::Error& e) {
//     if (e.code() == absl::StatusCode::kNotFound) ...
//   }

#include <stdexcept>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mt {

class Error : public std::runtime_error {
 public:
  Error(absl::StatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}

  absl::StatusCode code() const { return code_; }

 private:
  absl::StatusCode code_;
};

namespace internal {

// Throws mt::Error for a non-OK status: the one place a Status becomes an exception.
[[noreturn]] void throw_error(const absl::Status& status);

inline void throw_if_error(const absl::Status& status) {
  if (__builtin_expect(!status.ok(), 0)) throw_error(status);
}

template <typename T>
T value_or_throw(absl::StatusOr<T>&& value) {
  if (__builtin_expect(!value.ok(), 0)) throw_error(value.status());
  return *std::move(value);
}

}  // namespace internal
}  // namespace mt
