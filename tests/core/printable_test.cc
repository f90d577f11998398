#include "core/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace mt::internal {
namespace {

TEST(PrintableTest, LeavesPrintableAsciiAlone) {
  EXPECT_EQ(printable("/job:localhost/device:GPU:0 'x' *"), "/job:localhost/device:GPU:0 'x' *");
  EXPECT_EQ(printable(""), "");
}

TEST(PrintableTest, QuotesControlBytesHighBytesAndBackslashes) {
  EXPECT_EQ(printable(std::string("GPU\0:0", 6)), "GPU\\x00:0");
  EXPECT_EQ(printable("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f");
  EXPECT_EQ(printable("\xc3\xa9"), "\\xc3\\xa9");
  EXPECT_EQ(printable("a\\b"), "a\\\\b");
}

}  // namespace
}  // namespace mt::internal
