// Fuzzes the device-name grammar (placement/device_name.h) with two names, `outer` and
// `inner`. Each either parses or fails with InvalidArgument and the documented message; a
// parsed spec prints back to itself through to_string and canonical_name; matches and
// merge keep the invariants their comments state.
#include <fuzzer/FuzzedDataProvider.h>

#include <cctype>
#include <optional>
#include <string>

#include "core/printable.h"
#include "fuzz/fuzz_util.h"
#include "placement/device_name.h"

namespace {

using mt::DeviceSpec;

bool is_identifier(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Checks the error for a name that does not parse: "Malformed device name '<name>':
// expected <what> " then "at the start" or "after '<a prefix of name>'", with the name
// quoted by mt::internal::printable so that the message holds printable ASCII only.
void check_malformed(const std::string& name, const absl::Status& status) {
  using mt::internal::printable;
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  const std::string message(status.message());
  for (char c : message) FUZZ_CHECK(c >= 0x20 && c < 0x7f);
  const std::string head = "Malformed device name '" + printable(name) + "': expected ";
  FUZZ_CHECK(message.rfind(head, 0) == 0);
  const std::string tail = "at the start";
  bool placed = message.size() >= head.size() + tail.size() &&
                message.compare(message.size() - tail.size(), tail.size(), tail) == 0;
  for (size_t pos = 1; pos <= name.size() && !placed; ++pos) {
    const std::string after = " after '" + printable(name.substr(0, pos)) + "'";
    placed = message.size() >= head.size() + after.size() &&
             message.compare(message.size() - after.size(), after.size(), after) == 0;
  }
  FUZZ_CHECK(placed);
}

// Checks the fields of a parsed spec against the grammar.
void check_fields(const DeviceSpec& s) {
  FUZZ_CHECK(!s.job || is_identifier(*s.job));
  FUZZ_CHECK(!s.type || is_identifier(*s.type));
  FUZZ_CHECK(s.replica.value_or(0) >= 0 && s.task.value_or(0) >= 0 && s.id.value_or(0) >= 0);
  if (s.type && s.type->size() == 3) {
    std::string lower = *s.type;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "cpu" || lower == "gpu") FUZZ_CHECK(*s.type == "CPU" || *s.type == "GPU");
  }
}

// Returns `s` with an unset job, replica and task filled as canonical_name fills them.
DeviceSpec filled(DeviceSpec s) {
  if (!s.job) s.job = "localhost";
  if (!s.replica) s.replica = 0;
  if (!s.task) s.task = 0;
  return s;
}

// Checks the round trips of a parsed spec.
void check_round_trips(const DeviceSpec& s) {
  check_fields(s);
  const std::string text = mt::to_string(s);
  absl::StatusOr<DeviceSpec> again = mt::parse_device_name(text);
  FUZZ_CHECK(again.ok() && *again == s);
  FUZZ_CHECK(mt::to_string(*again) == text);
  absl::StatusOr<DeviceSpec> full = mt::parse_device_name(mt::canonical_name(s));
  FUZZ_CHECK(full.ok() && *full == filled(s));
  FUZZ_CHECK(mt::matches(s, s) && mt::matches(s, *full) && mt::matches(DeviceSpec{}, s));
  FUZZ_CHECK(mt::to_string(DeviceSpec{}).empty());
}

// Checks merge(outer, inner) field by field against its contract.
void check_merge(const DeviceSpec& outer, const DeviceSpec& inner) {
  const DeviceSpec m = mt::merge(outer, inner);
  FUZZ_CHECK(m.job == (inner.job ? inner.job : outer.job));
  FUZZ_CHECK(m.replica == (inner.replica ? inner.replica : outer.replica));
  FUZZ_CHECK(m.task == (inner.task ? inner.task : outer.task));
  FUZZ_CHECK(m.type == (inner.type ? inner.type : outer.type));
  std::optional<int> id = outer.id;
  if (inner.type && outer.type && *inner.type != *outer.type) id.reset();
  if (inner.id) id = inner.id;
  FUZZ_CHECK(m.id == id);
  FUZZ_CHECK(mt::merge(outer, DeviceSpec{}) == outer);
  FUZZ_CHECK(mt::merge(DeviceSpec{}, inner) == inner);
  FUZZ_CHECK(mt::merge(m, inner) == m);
  FUZZ_CHECK(mt::matches(inner, m));  // every field inner sets survives
  absl::StatusOr<DeviceSpec> device = mt::parse_device_name(mt::canonical_name(m));
  FUZZ_CHECK(device.ok() && mt::matches(m, *device) && mt::matches(inner, *device));
  check_round_trips(m);
}

std::optional<DeviceSpec> parse(const std::string& name) {
  absl::StatusOr<DeviceSpec> spec = mt::parse_device_name(name);
  if (!spec.ok()) {
    check_malformed(name, spec.status());
    return std::nullopt;
  }
  FUZZ_CHECK(!name.empty() || *spec == DeviceSpec{});
  check_round_trips(*spec);
  return *spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  const std::string outer_name = input.ConsumeRandomLengthString(128);
  const std::string inner_name = input.ConsumeRemainingBytesAsString();
  std::optional<DeviceSpec> outer = parse(outer_name);
  std::optional<DeviceSpec> inner = parse(inner_name);
  if (outer && inner) check_merge(*outer, *inner);
  return 0;
}
