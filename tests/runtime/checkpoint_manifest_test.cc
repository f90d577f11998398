// The manifest: its text round-trips, and a manifest that is well formed and checksummed
// but wrong (hand-made, or of another checkpoint) is still DataLoss naming what is wrong.
#include <cstdio>

#include "runtime/ops/constant.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/crc32c.h"
#include "tests/runtime/checkpoint_fixture.h"

namespace mt::testing {
namespace {

using internal::Manifest;

// Returns `json` followed by its checksum line, as a manifest is written.
std::string with_checksum(std::string json) {
  json += '\n';
  char line[32];
  std::snprintf(line, sizeof(line), "crc32c %08x\n", internal::crc32c(json.data(), json.size()));
  return json + line;
}

void expect_bad_manifest(const std::string& json, const std::string& text) {
  absl::StatusOr<Manifest> m = internal::parse_manifest(with_checksum(json), "m");
  ASSERT_FALSE(m.ok()) << json;
  EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(m.status().message()), ::testing::HasSubstr("[checkpoint] m: " + text));
}

TEST(CheckpointManifestTest, RoundTrips) {
  Manifest m{"a \"b\".safetensors", 123, 7, {{"x/y", 0xFFFFFFFFu}, {"z", 0}}};
  absl::StatusOr<Manifest> back = internal::parse_manifest(internal::encode_manifest(m), "m");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->data_file, m.data_file);
  EXPECT_EQ(back->data_bytes, 123u);
  EXPECT_EQ(back->header_crc32c, 7u);
  ASSERT_EQ(back->tensors.size(), 2u);
  EXPECT_EQ(back->tensors[0].crc32c, 0xFFFFFFFFu);
}

TEST(CheckpointManifestTest, RejectsWellFormedButWrongManifests) {
  const std::string head = R"({"format":"minitensor.checkpoint","version":1,)";
  expect_bad_manifest(R"({"format":"minitensor.checkpoint","version":2})",
                      "not a version 1 minitensor checkpoint manifest");
  expect_bad_manifest(R"({"version":1})", "not a version 1 minitensor checkpoint manifest");
  expect_bad_manifest(head + R"("data_file":"../x","data_bytes":1,"header_crc32c":1})",
                      "no data_file, data_bytes and header_crc32c");
  expect_bad_manifest(head + R"("data_file":"x","data_bytes":1,"header_crc32c":4294967296})",
                      "no data_file, data_bytes and header_crc32c");
  expect_bad_manifest(head + R"("data_file":"x","data_bytes":1,"header_crc32c":1})",
                      "no \"tensors\" list");
  expect_bad_manifest(
      head + R"("data_file":"x","data_bytes":1,"header_crc32c":1,"tensors":[{"name":"a"}]})",
      "a tensor entry without a name and crc32c");
  expect_bad_manifest("{\"a\": }", "[json] unexpected character");
}

class CheckpointManifestFileTest : public CheckpointTestBase {
 protected:
  // Writes checkpoint "c" of two variables, then replaces its manifest with `edit`'s.
  template <typename Edit>
  void expect_loss(Edit edit, const std::string& text) {
    Variable a(constant({1.f}), true, "a"), b(constant({2.f}), true, "b");
    train::Checkpoint ckpt;
    ckpt.track("a", a);
    ckpt.track("b", b);
    ckpt.write(dir_ + "/c");
    std::string path = dir_ + "/c.manifest";
    absl::StatusOr<Manifest> m = internal::parse_manifest(read(path), path);
    ASSERT_TRUE(m.ok()) << m.status();
    edit(*m);
    write(path, internal::encode_manifest(*m));
    a.assign(constant({5.f}));
    expect_error([&] { ckpt.restore(dir_ + "/c"); }, absl::StatusCode::kDataLoss, text);
    EXPECT_EQ(a.read_value().to_vector<float>(), std::vector<float>{5.f});
  }
};

TEST_F(CheckpointManifestFileTest, ManifestsThatDisagreeWithTheDataAreDataLoss) {
  expect_loss([](Manifest& m) { m.tensors.pop_back(); },
              "c.safetensors: 2 tensors, the manifest names 1");
  expect_loss([](Manifest& m) { m.tensors[1].name = "q"; },
              "c.safetensors: tensor 'q' of the manifest is missing");
  expect_loss([](Manifest& m) { m.data_file = "other.safetensors"; }, "c.manifest: its data file ");
  expect_loss([](Manifest& m) { m.data_bytes += 1; }, "bytes, the manifest says");
}

TEST_F(CheckpointManifestFileTest, ABoolThatIsNotZeroOrOneIsDataLoss) {
  Variable flag(constant({true}), false, "flag");
  train::Checkpoint ckpt;
  ckpt.track("flag", flag);
  ckpt.write(dir_ + "/c");
  std::string data = read(dir_ + "/c.safetensors");
  data.back() = 2;  // checksummed afresh below: only the value check can tell
  write(dir_ + "/c.safetensors", data);
  std::string path = dir_ + "/c.manifest";
  absl::StatusOr<Manifest> m = internal::parse_manifest(read(path), path);
  ASSERT_TRUE(m.ok()) << m.status();
  m->tensors[0].crc32c = internal::crc32c("\x02", 1);
  write(path, internal::encode_manifest(*m));
  expect_error([&] { ckpt.restore(dir_ + "/c"); }, absl::StatusCode::kDataLoss,
               "c.safetensors: tensor 'flag': a bool that is not 0 or 1");
}

}  // namespace
}  // namespace mt::testing
