#pragma once
// Device names, as TensorFlow writes them.
//
// Grammar (components in any order, each optional, each at most once):
//   name      := "" | component+ | local
//   component := "/job:" JOB | "/replica:" N | "/task:" N | "/device:" TYPE ":" (N | "*")
//              | "/" legacy_type ":" (N | "*")              legacy: "/cpu:0", "/GPU:1"
//   local     := TYPE ":" (N | "*") | TYPE                  "GPU:1", "gpu:1", "GPU"
//   JOB := [A-Za-z][A-Za-z0-9_]*    N := decimal >= 0    TYPE := [A-Za-z][A-Za-z0-9_]*
//   A "*" in place of JOB, N or the id means "unset".
// "cpu" and "gpu" in any case are normalised to "CPU" and "GPU"; other types keep their
// spelling. Unset fields are wildcards when matching.
//
// Canonical form: "/job:localhost/replica:0/task:0/device:GPU:1".
//
//   MT_ASSIGN_OR_RETURN(DeviceSpec spec, parse_device_name("/GPU:1"));
//   spec.type;              // "GPU"
//   spec.id;                // 1
//   to_string(spec);        // "/device:GPU:1"

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace mt {

// A possibly partial device name. An unset field matches any value.
struct DeviceSpec {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;  // "CPU", "GPU", or another type as written
  std::optional<int> id;

  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

// Parses `name`. Returns InvalidArgument quoting `name` and saying what was expected for a
// malformed name ("/device:GPU:-1", "/GPU:0/CPU:0", "/foo:0", "GPU:x", "/device:GPU:0abc").
absl::StatusOr<DeviceSpec> parse_device_name(std::string_view name);

// Returns the name with only the set fields, in canonical order: "/job:localhost/device:GPU:1";
// a type with no id prints as "/device:GPU:*"; an empty spec prints as "".
std::string to_string(const DeviceSpec& spec);

// Returns the canonical full name, filling unset job, replica and task with localhost, 0
// and 0: "/job:localhost/replica:0/task:0/device:GPU:1" (an unset type or id prints "*").
std::string canonical_name(const DeviceSpec& spec);

// Returns true when every field set in `spec` equals that field of `device`.
bool matches(const DeviceSpec& spec, const DeviceSpec& device);

// Returns `outer` overridden field by field by the fields set in `inner`. When inner sets a
// type different from outer's, outer's id is dropped (a "/CPU" scope inside "/GPU:1" means
// any CPU, not CPU:1).
DeviceSpec merge(const DeviceSpec& outer, const DeviceSpec& inner);

}  // namespace mt
