#pragma once
// A fresh runtime plus a temporary folder for each checkpoint test, and helpers that
// damage files the way disks and crashes do.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "runtime/eager/error.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {

class CheckpointTestBase : public RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    std::string pattern = (std::filesystem::temp_directory_path() / "mt_ckpt_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    RuntimeTest::TearDown();
  }

  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void write(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  }

  std::string dir_;
};

// Expects `fn` to throw mt::Error with `code` and a message containing `text`.
template <typename Fn>
void expect_error(Fn&& fn, absl::StatusCode code, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected " << absl::StatusCodeToString(code) << ": " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_THAT(e.what(), ::testing::HasSubstr(text));
  }
}

}  // namespace mt::testing
