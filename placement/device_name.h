#pragma once
// Device names, as TensorFlow writes them.
//
// Grammar (components in any order, each optional, each at most once; "/device:" and the
// legacy form both name the device, so only one of them may appear):
//   name      := "" | "/" | component+ | local              "" and "/": an empty request
//   component := "/job:" (JOB | "*") | "/replica:" (N | "*") | "/task:" (N | "*")
//              | "/device:" (TYPE | "*") [":" (N | "*")]  "/device:CPU": any CPU
//              | "/" LEGACY [":" (N | "*")]               legacy: "/cpu:0", "/GPU:1", "/GPU"
//   local     := LEGACY [":" (N | "*")]                    "GPU:1", "gpu:1", "GPU"
//   JOB, TYPE := [A-Za-z][A-Za-z0-9_]*   N := decimal >= 0 that fits in int
//   LEGACY    := "cpu" | "gpu", in any case
// A "*", or a missing id, means "unset". Types other than CPU and GPU are written only in
// the "/device:" form ("/device:TPU:0"), as TensorFlow accepts short forms only for the
// types it knows; "cpu" and "gpu" in any case are normalised to "CPU" and "GPU", other
// types keep their spelling. Unset fields are wildcards when matching.
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
#include "core/device_type.h"

namespace mt {

// A possibly partial device name. An unset field matches any value. The explicit
// initialisers let GCC 12 accept `DeviceSpec{.type = "GPU"}` under -Wextra.
struct DeviceSpec {
  std::optional<std::string> job = std::nullopt;
  std::optional<int> replica = std::nullopt;
  std::optional<int> task = std::nullopt;
  std::optional<std::string> type = std::nullopt;  // "CPU", "GPU", or another as written
  std::optional<int> id = std::nullopt;

  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

// Parses `name`; allocates nothing beyond the spec's strings. Returns InvalidArgument for a
// malformed name ("/device:GPU:-1", "/GPU:0/CPU:0", "/foo:0", "GPU:x", "/device:GPU:0abc"):
// "Malformed device name '<name>': expected <what> after '<text before the fault>'" (or
// "at the start"). For a spec of valid fields, parse_device_name(to_string(spec)) == spec.
absl::StatusOr<DeviceSpec> parse_device_name(std::string_view name);

// Returns the name with only the set fields, in canonical order: "/job:localhost/device:GPU:1";
// a type with no id prints as "/device:GPU:*"; an empty spec prints as "".
std::string to_string(const DeviceSpec& spec);

// Returns the canonical full name, filling unset job, replica and task with localhost, 0
// and 0: "/job:localhost/replica:0/task:0/device:GPU:1" (an unset type or id prints "*").
std::string canonical_name(const DeviceSpec& spec);

// Returns the full spec of this process's device `type`:`id`:
// /job:localhost/replica:0/task:0/device:<type>:<id>.
DeviceSpec local_device_spec(DeviceType type, int id);

// Returns true when every field set in `spec` equals that field of `device` (a field set in
// `spec` but unset in `device` does not match).
bool matches(const DeviceSpec& spec, const DeviceSpec& device);

// Returns `outer` overridden field by field by the fields set in `inner`. When inner sets a
// type different from the type outer sets, outer's id is dropped (a "/CPU" scope inside
// "/GPU:1" means any CPU, not CPU:1); an id under an unset outer type is kept.
DeviceSpec merge(const DeviceSpec& outer, const DeviceSpec& inner);

}  // namespace mt
