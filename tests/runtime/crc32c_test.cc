// CRC32C against the published check value and RFC 3720's vectors, by both paths.
#include "runtime/train/crc32c.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace mt::internal {
namespace {

TEST(Crc32cTest, MatchesKnownValues) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xFF), ascending(32);
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(crc32c(ascending.data(), 32), 0x46DD794Eu);
}

TEST(Crc32cTest, PortablePathAgreesAtEveryLengthAndSplit) {
  std::string data;
  for (int i = 0; i < 300; ++i) data += static_cast<char>(i * 131 + 7);
  for (size_t n = 0; n <= data.size(); n += 7) {
    uint32_t whole = crc32c(data.data(), n);
    EXPECT_EQ(crc32c_extend_portable(0, data.data(), n), whole) << n;
    size_t half = n / 3;
    EXPECT_EQ(crc32c_extend(crc32c(data.data(), half), data.data() + half, n - half), whole);
  }
}

// Lengths past 3 * 4096 bytes go through the instruction's three streams, joined.
TEST(Crc32cTest, ThreeStreamPathAgreesWithTheTables) {
  std::string data;
  for (int i = 0; i < 5 * 12288 + 100; ++i) data += static_cast<char>((i * 2654435761u) >> 13);
  for (size_t n : {12287u, 12288u, 12289u, 12295u, 24576u, 40000u, 61540u}) {
    ASSERT_LE(n, data.size());
    EXPECT_EQ(crc32c(data.data(), n), crc32c_extend_portable(0, data.data(), n)) << n;
    EXPECT_EQ(crc32c_extend(crc32c(data.data(), 5), data.data() + 5, n - 5),
              crc32c_extend_portable(0, data.data(), n))
        << n;
  }
}

// Pieces checksummed apart, as a parallel restore reads them, join into the whole's CRC.
TEST(Crc32cTest, CombineJoinsPiecesAtEverySplit) {
  std::string data;
  for (int i = 0; i < 20000; ++i) data += static_cast<char>((i * 40503u) >> 7);
  const uint32_t whole = crc32c(data.data(), data.size());
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{4096}, size_t{12289}, data.size()}) {
    uint32_t a = crc32c(data.data(), split);
    uint32_t b = crc32c(data.data() + split, data.size() - split);
    EXPECT_EQ(crc32c_combine(a, b, data.size() - split), whole) << split;
  }
  uint32_t joined = 0;  // three unequal pieces, left to right
  for (auto [begin, end] : {std::pair<size_t, size_t>{0, 333}, {333, 9000}, {9000, 20000}}) {
    joined = crc32c_combine(joined, crc32c(data.data() + begin, end - begin), end - begin);
  }
  EXPECT_EQ(joined, whole);
  EXPECT_EQ(crc32c_combine(0x12345678u, 0u, 0), 0x12345678u);  // B empty
}

}  // namespace
}  // namespace mt::internal
