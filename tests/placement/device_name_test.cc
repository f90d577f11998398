#include "placement/device_name.h"

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace mt {
namespace {

// Each table below is one parameterised suite; gtest needs one fixture class per suite, so
// the suites are DeviceName<Aspect>Test rather than a single DeviceNameTest.

// ---------------------------------------------------------------------------------------
// Parsing valid names.

struct ParseCase {
  std::string label;
  std::string name;
  DeviceSpec expected;
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << "'" << c.name << "'"; }

const std::vector<ParseCase>& parse_cases() {
  static const auto* cases = new std::vector<ParseCase>{
      {"Empty", "", {}},
      {"LoneSlash", "/", {}},  // an empty request, as TensorFlow's C++ and Python parsers
      {"FullName",
       "/job:localhost/replica:0/task:0/device:GPU:1",
       {.job = "localhost", .replica = 0, .task = 0, .type = "GPU", .id = 1}},
      {"FullNameReversed",
       "/device:GPU:1/task:0/replica:0/job:localhost",
       {.job = "localhost", .replica = 0, .task = 0, .type = "GPU", .id = 1}},
      {"FullNameShuffled",
       "/task:2/device:CPU:0/job:worker/replica:1",
       {.job = "worker", .replica = 1, .task = 2, .type = "CPU", .id = 0}},
      {"JobOnly", "/job:worker", {.job = "worker"}},
      {"JobWithDigitsAndUnderscore", "/job:ps_2", {.job = "ps_2"}},
      {"ReplicaOnly", "/replica:3", {.replica = 3}},
      {"TaskOnly", "/task:7", {.task = 7}},
      {"JobAndDevice", "/job:localhost/device:CPU:0", {.job = "localhost", .type = "CPU", .id = 0}},
      {"TaskBeforeJob", "/task:1/job:worker", {.job = "worker", .task = 1}},
      {"DeviceGpu", "/device:GPU:1", {.type = "GPU", .id = 1}},
      {"DeviceLowerCaseGpu", "/device:gpu:1", {.type = "GPU", .id = 1}},
      {"DeviceMixedCaseCpu", "/device:Cpu:0", {.type = "CPU", .id = 0}},
      {"DeviceWildcardId", "/device:GPU:*", {.type = "GPU"}},
      {"DeviceWithoutId", "/device:CPU", {.type = "CPU"}},  // any CPU, as TensorFlow's C++
      {"DeviceWildcardTypeWithoutId", "/device:*", {}},
      {"DeviceWithoutIdAfterJob", "/job:localhost/device:GPU", {.job = "localhost", .type = "GPU"}},
      {"DeviceWildcardType", "/device:*:1", {.id = 1}},
      {"DeviceAllWildcards", "/device:*:*", {}},
      {"DeviceTpu", "/device:TPU:0", {.type = "TPU", .id = 0}},
      {"DeviceOtherTypeKeepsSpelling", "/device:my_Accel2:3", {.type = "my_Accel2", .id = 3}},
      {"JobWildcard", "/job:*", {}},
      {"ReplicaWildcard", "/replica:*", {}},
      {"TaskWildcard", "/task:*/device:GPU:0", {.type = "GPU", .id = 0}},
      {"AllWildcards", "/job:*/replica:*/task:*/device:GPU:*", {.type = "GPU"}},
      {"LegacyCpu", "/cpu:0", {.type = "CPU", .id = 0}},
      {"LegacyUpperCaseGpu", "/GPU:1", {.type = "GPU", .id = 1}},
      {"LegacyLowerCaseGpu", "/gpu:1", {.type = "GPU", .id = 1}},
      {"LegacyMixedCaseGpu", "/Gpu:2", {.type = "GPU", .id = 2}},
      {"LegacyWildcardId", "/gpu:*", {.type = "GPU"}},
      {"LegacyWithoutId", "/GPU", {.type = "GPU"}},
      {"LegacyAfterJobAndReplica",
       "/job:worker/replica:1/gpu:0",
       {.job = "worker", .replica = 1, .type = "GPU", .id = 0}},
      {"LocalGpu", "GPU:1", {.type = "GPU", .id = 1}},
      {"LocalLowerCaseGpu", "gpu:1", {.type = "GPU", .id = 1}},
      {"LocalCpu", "cpu:0", {.type = "CPU", .id = 0}},
      {"LocalWildcardId", "GPU:*", {.type = "GPU"}},
      {"BareGpu", "GPU", {.type = "GPU"}},
      {"BareCpu", "CPU", {.type = "CPU"}},
      {"BareLowerCaseCpu", "cpu", {.type = "CPU"}},
      {"LeadingZeros", "/device:GPU:007", {.type = "GPU", .id = 7}},
      {"LargestId", "/device:GPU:2147483647", {.type = "GPU", .id = 2147483647}},
      {"LargestReplicaAndTask",
       "/replica:2147483647/task:2147483647",
       {.replica = 2147483647, .task = 2147483647}},
  };
  return *cases;
}

class DeviceNameParseTest : public testing::TestWithParam<ParseCase> {};

TEST_P(DeviceNameParseTest, ParsesValidName) {
  const ParseCase& c = GetParam();
  absl::StatusOr<DeviceSpec> spec = parse_device_name(c.name);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(*spec, c.expected) << "got '" << to_string(*spec) << "', want '"
                               << to_string(c.expected) << "'";
}

INSTANTIATE_TEST_SUITE_P(Names, DeviceNameParseTest, testing::ValuesIn(parse_cases()),
                         [](const auto& info) { return info.param.label; });

// ---------------------------------------------------------------------------------------
// Rejecting malformed names: code and exact message.

struct ErrorCase {
  std::string label;
  std::string name;
  std::string message;
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << "'" << c.name << "'"; }

constexpr char kComponent[] =
    "expected '/job:', '/replica:', '/task:', '/device:', '/cpu' or '/gpu'";
constexpr char kLocal[] = "expected '/', 'CPU' or 'GPU' at the start";
constexpr char kId[] = "expected a device id >= 0 or '*'";
constexpr char kType[] = "expected a device type [A-Za-z][A-Za-z0-9_]* or '*' after '/device:'";
constexpr char kJob[] = "expected a job name [A-Za-z][A-Za-z0-9_]* or '*' after '/job:'";

// Returns the message for malformed `name`: "Malformed device name '<name>': <rest>".
std::string malformed(const std::string& name, const std::string& rest) {
  return "Malformed device name '" + name + "': " + rest;
}

ErrorCase error_case(std::string label, std::string name, std::string rest) {
  std::string message = malformed(name, rest);
  return {std::move(label), std::move(name), std::move(message)};
}

const std::vector<ErrorCase>& error_cases() {
  const std::string id = kId;
  const std::string component = kComponent;
  static const auto* cases = new std::vector<ErrorCase>{
      error_case("NegativeId", "/device:GPU:-1", id + " after '/device:GPU:'"),
      error_case("TwoDeviceComponents", "/GPU:0/CPU:0",
                 "expected at most one device component after '/GPU:0'"),
      error_case("DeviceThenLegacy", "/device:GPU:0/cpu:0",
                 "expected at most one device component after '/device:GPU:0'"),
      error_case("UnknownComponent", "/foo:0", component + " at the start"),
      error_case("LegacyFormOfOtherType", "/TPU:0", component + " at the start"),
      error_case("UpperCaseJobKey", "/JOB:a", component + " at the start"),
      error_case("LegacyTypeGluedToId", "/gpu0", component + " at the start"),
      error_case("LocalNonNumericId", "GPU:x", id + " after 'GPU:'"),
      error_case("LocalMissingId", "GPU:", id + " after 'GPU:'"),
      error_case("LocalNegativeId", "gpu:-1", id + " after 'gpu:'"),
      error_case("LocalThenComponent", "GPU:0/job:a", id + " after 'GPU:'"),
      error_case("LocalOtherType", "TPU:0", kLocal),
      error_case("IdWithTrailingLetters", "/device:GPU:0abc", id + " after '/device:GPU:'"),
      error_case("IdWithSecondColon", "/device:GPU:0:1", id + " after '/device:GPU:'"),
      error_case("IdWithPlusSign", "/GPU:+1", id + " after '/GPU:'"),
      error_case("LegacyMissingId", "/cpu:", id + " after '/cpu:'"),
      error_case("EmptyType", "/device::0", kType),
      error_case("MissingType", "/device:", kType),
      error_case("TypeWithDash", "/device:G-PU:0", kType),
      error_case("TypeStartingWithDigit", "/device:1GPU:0", kType),
      error_case("DeviceEmptyId", "/device:GPU:", id + " after '/device:GPU:'"),
      error_case("EmptyJob", "/job:", kJob),
      error_case("JobStartingWithDigit", "/job:1a", kJob),
      error_case("JobWithDash", "/job:a-b", kJob),
      error_case("NonNumericReplica", "/replica:x",
                 "expected a replica index >= 0 or '*' after '/replica:'"),
      error_case("EmptyTask", "/task:", "expected a task index >= 0 or '*' after '/task:'"),
      error_case("DuplicateJob", "/job:a/job:b",
                 "expected at most one '/job:' component after '/job:a'"),
      error_case("DuplicateWildcardJob", "/job:*/job:a",
                 "expected at most one '/job:' component after '/job:*'"),
      error_case("DuplicateReplica", "/replica:0/task:0/replica:1",
                 "expected at most one '/replica:' component after '/replica:0/task:0'"),
      error_case("DuplicateTask", "/task:0/task:0",
                 "expected at most one '/task:' component after '/task:0'"),
      error_case("TrailingSlash", "/job:a/", component + " after '/job:a'"),
      error_case("SlashBeforeAComponent", "//job:a", component + " at the start"),
      error_case("DoubleSlash", "//", component + " at the start"),
      error_case("DoubleSlashInside", "/job:a//device:GPU:0", component + " after '/job:a'"),
      error_case("Garbage", "garbage", kLocal),
      error_case("GarbageSymbols", "#!?", kLocal),
      error_case("LeadingSpace", " /GPU:0", kLocal),
      error_case("IdOverflow", "/device:GPU:2147483648",
                 "expected a device id <= 2147483647 after '/device:GPU:'"),
      error_case("HugeLocalId", "GPU:99999999999999999999",
                 "expected a device id <= 2147483647 after 'GPU:'"),
      error_case("ReplicaOverflow", "/replica:4294967296",
                 "expected a replica index <= 2147483647 after '/replica:'"),
      // Bytes that are not printable ASCII are quoted as \xNN, a backslash as \\.
      {"NulInsideType", std::string("/device:G\0PU:0", 14),
       "Malformed device name '/device:G\\x00PU:0': " + std::string(kType)},
      {"NewlineInsideId", "GPU:0\n", "Malformed device name 'GPU:0\\x0a': " + id + " after 'GPU:'"},
      {"BackslashInJob", "/job:a\\b", malformed("/job:a\\\\b", kJob)},
  };
  return *cases;
}

class DeviceNameErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(DeviceNameErrorTest, RejectsMalformedName) {
  const ErrorCase& c = GetParam();
  absl::StatusOr<DeviceSpec> spec = parse_device_name(c.name);
  ASSERT_FALSE(spec.ok()) << "parsed as '" << to_string(*spec) << "'";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec.status().message(), c.message);
}

INSTANTIATE_TEST_SUITE_P(Names, DeviceNameErrorTest, testing::ValuesIn(error_cases()),
                         [](const auto& info) { return info.param.label; });

// ---------------------------------------------------------------------------------------
// to_string and canonical_name.

struct FormatCase {
  std::string label;
  DeviceSpec spec;
  std::string short_name;
  std::string canonical;
};

void PrintTo(const FormatCase& c, std::ostream* os) { *os << "'" << c.short_name << "'"; }

const std::vector<FormatCase>& format_cases() {
  static const auto* cases = new std::vector<FormatCase>{
      {"Empty", {}, "", "/job:localhost/replica:0/task:0/device:*:*"},
      {"Full",
       {.job = "localhost", .replica = 0, .task = 0, .type = "GPU", .id = 1},
       "/job:localhost/replica:0/task:0/device:GPU:1",
       "/job:localhost/replica:0/task:0/device:GPU:1"},
      {"TypeAndId",
       {.type = "GPU", .id = 1},
       "/device:GPU:1",
       "/job:localhost/replica:0/task:0/device:GPU:1"},
      {"TypeWithoutId",
       {.type = "GPU"},
       "/device:GPU:*",
       "/job:localhost/replica:0/task:0/device:GPU:*"},
      {"IdWithoutType", {.id = 2}, "/device:*:2", "/job:localhost/replica:0/task:0/device:*:2"},
      {"JobOnly", {.job = "worker"}, "/job:worker", "/job:worker/replica:0/task:0/device:*:*"},
      {"JobAndDevice",
       {.job = "localhost", .type = "GPU", .id = 1},
       "/job:localhost/device:GPU:1",
       "/job:localhost/replica:0/task:0/device:GPU:1"},
      {"ReplicaAndTask",
       {.replica = 2, .task = 3},
       "/replica:2/task:3",
       "/job:localhost/replica:2/task:3/device:*:*"},
      {"OtherType",
       {.job = "tpu_worker", .type = "TPU", .id = 0},
       "/job:tpu_worker/device:TPU:0",
       "/job:tpu_worker/replica:0/task:0/device:TPU:0"},
      {"LargestIds",
       {.replica = 2147483647, .task = 0, .type = "CPU", .id = 2147483647},
       "/replica:2147483647/task:0/device:CPU:2147483647",
       "/job:localhost/replica:2147483647/task:0/device:CPU:2147483647"},
  };
  return *cases;
}

class DeviceNameFormatTest : public testing::TestWithParam<FormatCase> {};

TEST_P(DeviceNameFormatTest, PrintsSetFieldsInCanonicalOrder) {
  EXPECT_EQ(to_string(GetParam().spec), GetParam().short_name);
}

TEST_P(DeviceNameFormatTest, PrintsCanonicalName) {
  EXPECT_EQ(canonical_name(GetParam().spec), GetParam().canonical);
}

TEST_P(DeviceNameFormatTest, RoundTripsThroughParse) {
  absl::StatusOr<DeviceSpec> spec = parse_device_name(GetParam().short_name);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(*spec == GetParam().spec) << "got '" << to_string(*spec) << "'";
}

INSTANTIATE_TEST_SUITE_P(Specs, DeviceNameFormatTest, testing::ValuesIn(format_cases()),
                         [](const auto& info) { return info.param.label; });

// ---------------------------------------------------------------------------------------
// matches() and merge(), written as names for readability.

DeviceSpec parse(const std::string& name) {
  absl::StatusOr<DeviceSpec> spec = parse_device_name(name);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : DeviceSpec{};
}

constexpr char kGpu1[] = "/job:localhost/replica:0/task:0/device:GPU:1";
constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";

struct MatchCase {
  std::string label;
  std::string spec;
  std::string device;
  bool expected;
};

void PrintTo(const MatchCase& c, std::ostream* os) {
  *os << "'" << c.spec << "' vs '" << c.device << "'";
}

const std::vector<MatchCase>& match_cases() {
  static const auto* cases = new std::vector<MatchCase>{
      {"EmptyMatchesAnything", "", kGpu1, true},
      {"EmptyMatchesEmpty", "", "", true},
      {"SameFullName", kGpu1, kGpu1, true},
      {"TypeMatchesAnyId", "GPU", kGpu1, true},
      {"LegacyNameMatchesFullName", "/gpu:1", kGpu1, true},
      {"OtherTypeDoesNotMatch", "CPU", kGpu1, false},
      {"OtherIdDoesNotMatch", "/GPU:0", kGpu1, false},
      {"OtherJobDoesNotMatch", "/job:worker", kGpu1, false},
      {"OtherReplicaDoesNotMatch", "/replica:1", kGpu1, false},
      {"SameTaskAndDeviceMatch", "/task:0/cpu:0", kCpu0, true},
      {"WildcardsMatch", "/job:*/replica:*/task:*/device:GPU:*", kGpu1, true},
      {"IdWithoutTypeMatchesAnyType", "/device:*:1", kGpu1, true},
      {"SetFieldDoesNotMatchUnsetField", "/GPU:1", "GPU", false},
      {"OtherTypeSpellingDiffers", "/device:TPU:0", "/device:tpu:0", false},
  };
  return *cases;
}

class DeviceNameMatchTest : public testing::TestWithParam<MatchCase> {};

TEST_P(DeviceNameMatchTest, MatchesSetFields) {
  EXPECT_EQ(matches(parse(GetParam().spec), parse(GetParam().device)), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Pairs, DeviceNameMatchTest, testing::ValuesIn(match_cases()),
                         [](const auto& info) { return info.param.label; });

struct MergeCase {
  std::string label;
  std::string outer;
  std::string inner;
  std::string merged;  // to_string of the result
};

void PrintTo(const MergeCase& c, std::ostream* os) {
  *os << "'" << c.outer << "' + '" << c.inner << "'";
}

const std::vector<MergeCase>& merge_cases() {
  static const auto* cases = new std::vector<MergeCase>{
      {"EmptyInnerKeepsOuter", "/job:worker/device:GPU:1", "", "/job:worker/device:GPU:1"},
      {"EmptyOuterTakesInner", "", "/cpu:0", "/device:CPU:0"},
      {"BothEmpty", "", "", ""},
      {"InnerIdOverridesOuterId", "/GPU:1", "/GPU:0", "/device:GPU:0"},
      {"SameTypeKeepsOuterId", "/GPU:1", "GPU", "/device:GPU:1"},
      {"OtherTypeDropsOuterId", "/GPU:1", "/CPU", "/device:CPU:*"},
      {"OtherTypeTakesInnerId", "/GPU:1", "cpu:0", "/device:CPU:0"},
      {"OtherSpelledTypeDropsOuterId", "/device:GPU:1", "/device:TPU:*", "/device:TPU:*"},
      {"UnsetOuterTypeKeepsOuterId", "/device:*:1", "GPU", "/device:GPU:1"},
      {"InnerJobOverridesOuterJob", "/job:a/task:1", "/job:b", "/job:b/task:1"},
      {"FieldsCombine", "/job:worker/replica:1", "/task:2/device:GPU:0",
       "/job:worker/replica:1/task:2/device:GPU:0"},
      {"WildcardsKeepOuter", "/job:worker/device:GPU:1", "/job:*/replica:*/device:GPU:*",
       "/job:worker/device:GPU:1"},
  };
  return *cases;
}

class DeviceNameMergeTest : public testing::TestWithParam<MergeCase> {};

TEST_P(DeviceNameMergeTest, OverridesOuterWithInner) {
  EXPECT_EQ(to_string(merge(parse(GetParam().outer), parse(GetParam().inner))), GetParam().merged);
}

INSTANTIATE_TEST_SUITE_P(Scopes, DeviceNameMergeTest, testing::ValuesIn(merge_cases()),
                         [](const auto& info) { return info.param.label; });

// ---------------------------------------------------------------------------------------
// Single cases.

TEST(DeviceNameTest, ParsesLegacyShortForm) {
  absl::StatusOr<DeviceSpec> spec = parse_device_name("/GPU:1");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->type, "GPU");
  EXPECT_EQ(spec->id, 1);
  EXPECT_EQ(to_string(*spec), "/device:GPU:1");
  EXPECT_EQ(canonical_name(*spec), kGpu1);
}

TEST(DeviceNameTest, ParsesCanonicalNameBack) {
  DeviceSpec spec = parse("gpu:1");
  EXPECT_EQ(parse(canonical_name(spec)), parse(kGpu1));
  EXPECT_TRUE(matches(spec, parse(canonical_name(spec))));
}

}  // namespace
}  // namespace mt
