// Bus calibration: the cache file's path, measuring when there is no file, reading it when
// there is one of this machine, and measuring again over a corrupt or foreign one.
#include "runtime/cost/bus_calibration.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "runtime/eager/context.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class BusCalibrationTest : public testing::RuntimeTest {
 protected:
  void SetUp() override {
    testing::RuntimeTest::SetUp();
    // One directory per test and process: ctest runs these tests in parallel processes.
    dir_ = ::testing::TempDir() + "/bus_calibration_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
           std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    path_ = dir_ + "/minitensor/bus_calibration.txt";
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    testing::RuntimeTest::TearDown();
  }
  const internal::Runtime& runtime() { return *internal::Context::get().runtime().value(); }

  std::string dir_, path_;
};

TEST_F(BusCalibrationTest, ThePathFollowsXdgCacheHomeThenHome) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string saved_xdg = xdg ? xdg : "", saved_home = home ? home : "";
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  EXPECT_EQ(internal::bus_cache_path(), "/x/minitensor/bus_calibration.txt");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(internal::bus_cache_path(), "/h/.cache/minitensor/bus_calibration.txt");
  unsetenv("HOME");
  EXPECT_EQ(internal::bus_cache_path(), "");
  if (xdg) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (home) setenv("HOME", saved_home.c_str(), 1);
}

TEST_F(BusCalibrationTest, MeasuresWithoutAFileAndWritesOne) {
  BusModel bus = internal::load_or_measure_bus(runtime(), "m", path_);
  EXPECT_TRUE(bus.has(Link::kHostToHost));
  EXPECT_GT(bus.get(Link::kHostToHost).bytes_per_ns, 0);
  EXPECT_EQ(read(path_), bus.serialize("m"));
}

TEST_F(BusCalibrationTest, ReadsTheFileOfThisMachine) {
  std::filesystem::create_directories(dir_ + "/minitensor");
  std::ofstream(path_) << "minitensor-bus 2\nmachine m\nH2H 123 45\n";
  BusModel bus = internal::load_or_measure_bus(runtime(), "m", path_);
  EXPECT_EQ(bus.get(Link::kHostToHost).latency_ns, 123);
  EXPECT_EQ(bus.get(Link::kHostToHost).bytes_per_ns, 45);
}

TEST_F(BusCalibrationTest, MeasuresAgainOverACorruptOrForeignFile) {
  std::filesystem::create_directories(dir_ + "/minitensor");
  for (const char* text :
       {"minitensor-bus 2\nmachine elsewhere\nH2H 123 45\n", "minitensor-bus 2\nmachine m\n?",
        "minitensor-bus 1\nmachine m\nH2H 123 45\n"}) {  // a file of the previous version
    std::ofstream(path_) << text;
    ::testing::internal::CaptureStderr();
    BusModel bus = internal::load_or_measure_bus(runtime(), "m", path_);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("minitensor: measuring the bus again: " + path_), std::string::npos) << err;
    EXPECT_NE(bus.get(Link::kHostToHost).latency_ns, 123);
    EXPECT_EQ(read(path_), bus.serialize("m"));  // rewritten for this machine
  }
}

TEST_F(BusCalibrationTest, WithoutAConnectedTaskThereIsNoNetworkToMeasure) {
  EXPECT_FALSE(internal::measure_network(runtime()).has_value());
}

TEST_F(BusCalibrationTest, AnEmptyPathMeasuresAndWritesNothing) {
  BusModel bus = internal::load_or_measure_bus(runtime(), "m", "");
  EXPECT_TRUE(bus.has(Link::kHostToHost));
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

}  // namespace
}  // namespace mt
