// A random::Generator whose state lives on a GPU: its draws are TensorFlow's numbers, and a
// checkpoint restores it onto the GPU (a copy to the device, since only CPU variables take
// the read buffer). Skips without a GPU.
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "gmock/gmock.h"
#include "runtime/eager/device_scope.h"
#include "runtime/ops/random_generator.h"
#include "runtime/train/checkpoint.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

class GpuRandomGeneratorTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty())
      GTEST_SKIP() << "needs a GPU: none is visible";
    std::string pattern = (std::filesystem::temp_directory_path() / "mt_rng_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    RuntimeTest::TearDown();
  }
  std::string dir_;
};

TEST_F(GpuRandomGeneratorTest, GpuStateGivesTensorFlowsNumbersAndRestores) {
  std::optional<random::Generator> made;
  {
    DeviceScope scope("/GPU:0");
    made = random::Generator::from_seed(1234);
  }
  random::Generator& gpu = *made;
  ASSERT_NE(gpu.state().device().find("GPU:0"), std::string::npos) << gpu.state().device();
  EXPECT_EQ(gpu.uniform({3}).to_vector<float>(),
            (std::vector<float>{0.3581475019454956f, 0.11322760581970215f, 0.566709041595459f}));
  train::Checkpoint ckpt;
  ckpt.track("rng/state", gpu.state());
  ckpt.write(dir_ + "/c");
  std::vector<float> next = gpu.normal({1000}).to_vector<float>();
  ckpt.restore(dir_ + "/c");
  EXPECT_NE(gpu.state().device().find("GPU:0"), std::string::npos);
  EXPECT_EQ(gpu.normal({1000}).to_vector<float>(), next);
}

}  // namespace
}  // namespace mt
