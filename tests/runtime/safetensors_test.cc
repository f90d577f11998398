// The safetensors header: written and read back, and every malformed header a clear error.
#include "runtime/train/safetensors.h"

#include <string>

#include "gmock/gmock.h"

namespace mt::internal {
namespace {

using ::testing::HasSubstr;

// Returns a file of `json` as its header (unpadded) followed by `data_bytes` zero bytes.
std::string file_of(const std::string& json, size_t data_bytes) {
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + json + std::string(data_bytes, '\0');
}

absl::Status parse(const std::string& file) {
  return parse_safetensors(file, file.size(), "f.safetensors").status();
}

void expect_loss(const std::string& json, size_t data_bytes, const std::string& text,
                 absl::StatusCode code = absl::StatusCode::kDataLoss) {
  absl::Status s = parse(file_of(json, data_bytes));
  EXPECT_EQ(s.code(), code) << json << ": " << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("[safetensors] f.safetensors: "));
  EXPECT_THAT(std::string(s.message()), HasSubstr(text)) << json;
}

TEST(SafetensorsTest, ReadsBackWhatItWrites) {
  std::vector<SafetensorsTensor> tensors = {{"w", DType::kFloat32, {2, 3}},
                                            {"b", DType::kBFloat16, {3}},
                                            {"step", DType::kInt64, {}},
                                            {"empty", DType::kFloat16, {0, 4}}};
  std::string head = encode_safetensors_header(tensors, {{"format", "pt"}});
  EXPECT_EQ(head.size() % 8, 0u);
  EXPECT_EQ(tensors[1].begin, 24u);
  EXPECT_EQ(tensors[2].end, 38u);
  std::string file = head + std::string(38, '\0');
  absl::StatusOr<SafetensorsLayout> layout = parse_safetensors(file, file.size(), "f");
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->data_start, head.size());
  ASSERT_EQ(layout->tensors.size(), 4u);
  EXPECT_EQ(layout->metadata, (SafetensorsMetadata{{"format", "pt"}}));
  // Sorted by offset: the empty tensor (0 bytes at 38) comes last.
  EXPECT_EQ(layout->tensors[0].name, "w");
  EXPECT_EQ(layout->tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(layout->tensors[1].dtype, DType::kBFloat16);
  EXPECT_EQ(layout->tensors[3].name, "empty");
  EXPECT_STREQ(safetensors_dtype_name(DType::kFloat16), "F16");
  EXPECT_STREQ(safetensors_dtype_name(DType::kBool), "BOOL");
}

TEST(SafetensorsTest, RejectsBadHeaderLengths) {
  absl::Status s = parse(std::string(5, '\0'));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("5 bytes are shorter than the 8-byte"));
  std::string file = file_of("{}", 0);
  file[0] = 9;  // one byte more than there is
  s = parse(file);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("header length of 9 bytes past the end"));
  file[0] = 0;
  file[4] = 1;  // 2^32 bytes
  s = parse(file);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("(at most 100000000)"));
}

TEST(SafetensorsTest, RejectsMalformedJson) {
  expect_loss("{\"a\":", 0, "the header: [json] unexpected end");
  expect_loss("[1, 2]", 0, "the header is not a JSON object");
  expect_loss(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}} x)", 4,
              "text after the value");
}

TEST(SafetensorsTest, RejectsUnknownAndUnheldDTypes) {
  expect_loss(R"({"a": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 4]}})", 4,
              "tensor 'a': unknown dtype 'Q7'");
  expect_loss(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})", 1,
              "tensor 'a': minitensor holds no dtype U8", absl::StatusCode::kUnimplemented);
  expect_loss(R"({"a": {"shape": [1], "data_offsets": [0, 4]}})", 4, "no \"dtype\" string");
}

TEST(SafetensorsTest, RejectsHugeAndNegativeShapes) {
  expect_loss(
      R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}})", 4,
      "tensor 'a': its shape holds more bytes than the file's data");
  expect_loss(R"({"a": {"dtype": "F32", "shape": [1000], "data_offsets": [0, 4]}})", 4,
              "its shape holds more bytes");
  expect_loss(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4,
              "a dimension that is not a non-negative integer");
  expect_loss(R"({"a": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4,
              "a dimension that is not a non-negative integer");
  expect_loss(R"({"a": {"dtype": "F32", "shape": 3, "data_offsets": [0, 4]}})", 4,
              "no \"shape\" array");
}

TEST(SafetensorsTest, RejectsBadOffsets) {
  expect_loss(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 4,
              "tensor 'a': data_offsets [4, 8] lie outside the data's 4 bytes");
  expect_loss(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}})", 4, "lie outside");
  expect_loss(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 12,
              "data_offsets [0, 8] hold 8 bytes, its dtype and shape 12");
  expect_loss(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})", 4,
              "no \"data_offsets\" pair of integers");
}

TEST(SafetensorsTest, RejectsOverlapsHolesAndTrailingBytes) {
  expect_loss(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                  "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
              8, "tensor 'b': its data overlaps another tensor's");
  expect_loss(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8,
              "tensor 'a': a hole in the data before it");
  expect_loss(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 8,
              "the tensors hold 4 bytes, the data section 8");
}

TEST(SafetensorsTest, RejectsDuplicatesAndBadMetadata) {
  expect_loss(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                  "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
              8, "tensor 'a': named twice");
  expect_loss(R"({"__metadata__": {"k": 1}})", 0, "__metadata__ 'k' is not a string");
  expect_loss(R"({"__metadata__": [1]})", 0, "__metadata__ not an object");
  expect_loss(R"({"a": 1})", 0, "tensor 'a': not an object");
}

}  // namespace
}  // namespace mt::internal
