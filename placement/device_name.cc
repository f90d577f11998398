#include "placement/device_name.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/printable.h"
#include "core/status.h"

namespace mt {
namespace {

// absl::string_view is not std::string_view in this absl build.
absl::string_view sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

constexpr std::string_view kComponent =
    "'/job:', '/replica:', '/task:', '/device:', '/cpu' or '/gpu'";
constexpr std::string_view kLocal = "'/', 'CPU' or 'GPU'";
constexpr std::string_view kJob = "a job name [A-Za-z][A-Za-z0-9_]* or '*'";
constexpr std::string_view kType = "a device type [A-Za-z][A-Za-z0-9_]* or '*'";

// Returns "Malformed device name '<name>': expected <expected> after '<name[0, pos)>'".
absl::Status malformed(std::string_view name, size_t pos, std::string_view expected) {
  std::string where = pos == 0
                          ? std::string("at the start")
                          : absl::StrCat("after '", internal::printable(name.substr(0, pos)), "'");
  return absl::InvalidArgumentError(absl::StrCat("Malformed device name '",
                                                 internal::printable(name), "': expected ",
                                                 sv(expected), " ", where));
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

// Returns "CPU" or "GPU" for the legacy type cpu or gpu in any case, else nullptr.
const char* legacy_type(std::string_view type) {
  if (absl::EqualsIgnoreCase(sv(type), "cpu")) return "CPU";
  if (absl::EqualsIgnoreCase(sv(type), "gpu")) return "GPU";
  return nullptr;
}

// Parses name[begin, end) as N or "*" into `out`; `what` names the field in errors.
absl::Status parse_index(std::string_view name, size_t begin, size_t end, std::string_view what,
                         std::optional<int>* out) {
  std::string_view text = name.substr(begin, end - begin);
  if (text == "*") {
    out->reset();
    return absl::OkStatus();
  }
  bool digits = !text.empty();
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (!digits) return malformed(name, begin, absl::StrCat(sv(what), " >= 0 or '*'"));
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc()) return malformed(name, begin, absl::StrCat(sv(what), " <= ", INT_MAX));
  *out = value;
  return absl::OkStatus();
}

// Parses a name without a leading '/': LEGACY [":" (N | "*")].
absl::Status parse_local(std::string_view name, DeviceSpec* spec) {
  size_t colon = name.find(':');
  const char* type = legacy_type(name.substr(0, colon));
  if (type == nullptr) return malformed(name, 0, kLocal);
  spec->type = type;
  if (colon == std::string_view::npos) return absl::OkStatus();
  return parse_index(name, colon + 1, name.size(), "a device id", &spec->id);
}

// Parses (TYPE | "*") ":" (N | "*") in name[begin, end), the rest of a "/device:" component.
absl::Status parse_device(std::string_view name, size_t begin, size_t end, DeviceSpec* spec) {
  size_t colon = name.find(':', begin);
  if (colon > end) colon = end;
  std::string_view type = name.substr(begin, colon - begin);
  if (type != "*" && !is_identifier(type)) return malformed(name, begin, kType);
  if (type != "*") {
    const char* legacy = legacy_type(type);
    spec->type = legacy != nullptr ? std::string(legacy) : std::string(type);
  }
  if (colon == end) return absl::OkStatus();  // "/device:CPU": any CPU, as TensorFlow
  return parse_index(name, colon + 1, end, "a device id", &spec->id);
}

// Which components a name has had so far; each may appear once.
struct Seen {
  bool job = false;
  bool replica = false;
  bool task = false;
  bool device = false;
};

// Marks `*seen`, or returns an error for a second component of the same kind at `begin`.
absl::Status mark_seen(std::string_view name, size_t begin, std::string_view what, bool* seen) {
  if (*seen) return malformed(name, begin, absl::StrCat("at most one ", sv(what), " component"));
  *seen = true;
  return absl::OkStatus();
}

// Parses the component name[begin, end), which starts with '/' and runs to the next '/'.
absl::Status parse_component(std::string_view name, size_t begin, size_t end, Seen* seen,
                             DeviceSpec* spec) {
  std::string_view body = name.substr(begin + 1, end - begin - 1);
  size_t colon = body.find(':');
  std::string_view key = body.substr(0, colon);
  size_t value = colon == std::string_view::npos ? end : begin + 1 + colon + 1;
  bool has_value = colon != std::string_view::npos;
  if (key == "job" && has_value) {
    MT_RETURN_IF_ERROR(mark_seen(name, begin, "'/job:'", &seen->job));
    std::string_view job = name.substr(value, end - value);
    if (job == "*") return absl::OkStatus();
    if (!is_identifier(job)) return malformed(name, value, kJob);
    spec->job = std::string(job);
    return absl::OkStatus();
  }
  if (key == "replica" && has_value) {
    MT_RETURN_IF_ERROR(mark_seen(name, begin, "'/replica:'", &seen->replica));
    return parse_index(name, value, end, "a replica index", &spec->replica);
  }
  if (key == "task" && has_value) {
    MT_RETURN_IF_ERROR(mark_seen(name, begin, "'/task:'", &seen->task));
    return parse_index(name, value, end, "a task index", &spec->task);
  }
  bool device = key == "device" && has_value;
  const char* legacy = device ? nullptr : legacy_type(key);
  if (!device && legacy == nullptr) return malformed(name, begin, kComponent);
  MT_RETURN_IF_ERROR(mark_seen(name, begin, "device", &seen->device));
  if (device) return parse_device(name, value, end, spec);
  spec->type = legacy;
  return has_value ? parse_index(name, value, end, "a device id", &spec->id) : absl::OkStatus();
}

// Formats `index` into `buffer`, or returns "*" when unset.
absl::string_view index_text(std::optional<int> index, char (&buffer)[16]) {
  if (!index) return "*";
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), *index);
  return absl::string_view(buffer, static_cast<size_t>(ptr - buffer));
}

absl::string_view type_text(const DeviceSpec& spec) {
  return spec.type ? absl::string_view(*spec.type) : absl::string_view("*");
}

template <typename T>
bool field_matches(const std::optional<T>& pattern, const std::optional<T>& value) {
  return !pattern || pattern == value;
}

}  // namespace

absl::StatusOr<DeviceSpec> parse_device_name(std::string_view name) {
  DeviceSpec spec;
  if (name.empty() || name == "/") return spec;  // "/" is an empty request, as in TensorFlow
  if (name[0] != '/') {
    MT_RETURN_IF_ERROR(parse_local(name, &spec));
    return spec;
  }
  Seen seen;
  for (size_t begin = 0; begin < name.size();) {
    size_t end = name.find('/', begin + 1);
    if (end == std::string_view::npos) end = name.size();
    MT_RETURN_IF_ERROR(parse_component(name, begin, end, &seen, &spec));
    begin = end;
  }
  return spec;
}

std::string to_string(const DeviceSpec& spec) {
  std::string out;
  if (spec.job) absl::StrAppend(&out, "/job:", *spec.job);
  if (spec.replica) absl::StrAppend(&out, "/replica:", *spec.replica);
  if (spec.task) absl::StrAppend(&out, "/task:", *spec.task);
  if (spec.type || spec.id) {
    char buffer[16];
    absl::StrAppend(&out, "/device:", type_text(spec), ":", index_text(spec.id, buffer));
  }
  return out;
}

std::string canonical_name(const DeviceSpec& spec) {
  char replica[16], task[16], id[16];
  absl::string_view job = spec.job ? absl::string_view(*spec.job) : "localhost";
  return absl::StrCat("/job:", job, "/replica:", index_text(spec.replica.value_or(0), replica),
                      "/task:", index_text(spec.task.value_or(0), task),
                      "/device:", type_text(spec), ":", index_text(spec.id, id));
}

DeviceSpec local_device_spec(DeviceType type, int id) {
  return DeviceSpec{"localhost", 0, 0, device_type_name(type), id};
}

bool matches(const DeviceSpec& spec, const DeviceSpec& device) {
  return field_matches(spec.job, device.job) && field_matches(spec.replica, device.replica) &&
         field_matches(spec.task, device.task) && field_matches(spec.type, device.type) &&
         field_matches(spec.id, device.id);
}

DeviceSpec merge(const DeviceSpec& outer, const DeviceSpec& inner) {
  DeviceSpec merged = outer;
  if (inner.job) merged.job = inner.job;
  if (inner.replica) merged.replica = inner.replica;
  if (inner.task) merged.task = inner.task;
  if (inner.type) {
    // A different type makes outer's id meaningless: "/CPU" inside "/GPU:1" is any CPU.
    if (outer.type && *outer.type != *inner.type) merged.id.reset();
    merged.type = inner.type;
  }
  if (inner.id) merged.id = inner.id;
  return merged;
}

}  // namespace mt
