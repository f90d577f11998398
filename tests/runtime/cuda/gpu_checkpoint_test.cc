// Checkpoints of GPU variables: variables of several of the writer's 16 MiB host pieces (the
// next copied while one is written, across tensors: Note [Overlapped device pieces]) restore
// bit for bit onto the GPU, with Adam's slots, read straight into GPU memory (Note
// [Restoring onto devices]); an async save keeps the values of its call while the GPU
// variable moves on. Skips without a GPU.
#include <cstdlib>
#include <filesystem>

#include "gmock/gmock.h"
#include "runtime/config.h"
#include "runtime/train/checkpoint.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

class GpuCheckpointTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty())
      GTEST_SKIP() << "needs a GPU: none is visible";
    std::string pattern = (std::filesystem::temp_directory_path() / "mt_ckpt_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    RuntimeTest::TearDown();
  }
  std::string dir_;
};

TEST_F(GpuCheckpointTest, LargeGpuVariablesRoundTripThroughPieces) {
  const int64_t n = (int64_t{80} << 20) / 4 + 3;  // 80 MiB and a ragged end
  Variable w(random::uniform({n}, -1, 1, DType::kFloat32, /*seed=*/3), true, "w");
  ASSERT_NE(w.device().find("GPU:0"), std::string::npos) << w.device();
  optimizers::Adam adam(0.1);
  adam.apply_gradients({{fill({n}, 1, DType::kFloat32), w}});
  train::Checkpoint saved;
  saved.track("w", w);
  saved.track("adam", adam);
  saved.write(dir_ + "/c");
  std::vector<float> expected = w.read_value().to_vector<float>();
  Variable other(fill({n}, 0, DType::kFloat32), true, "other");
  optimizers::Adam adam2(0.1);
  train::Checkpoint restored;
  restored.track("w", other);
  restored.track("adam", adam2);
  config::reset_memory_stats("CPU:0");
  const int64_t host_before = config::get_memory_info("CPU:0").current;
  restored.restore(dir_ + "/c");
  // Three tensors of 80 MiB (w and Adam's two slots) went to the GPU through small host
  // buffers: CPU:0 never held one of them.
  EXPECT_LT(config::get_memory_info("CPU:0").peak - host_before, n * 4 / 2);
  EXPECT_NE(other.device().find("GPU:0"), std::string::npos);
  EXPECT_EQ(other.read_value().to_vector<float>(), expected);
  EXPECT_EQ(adam2.iterations(), 1);
  EXPECT_EQ(adam2.slot_variables(other)[1].read_value().to_vector<float>(),
            adam.slot_variables(w)[1].read_value().to_vector<float>());
}

TEST_F(GpuCheckpointTest, AsyncSavesKeepTheValuesOfTheirCall) {
  Variable w(fill({1 << 20}, 1, DType::kFloat32), true, "w");
  train::Checkpoint ckpt;
  ckpt.track("w", w);
  ckpt.write_async(dir_ + "/c");
  w.assign_add(fill({1 << 20}, 1, DType::kFloat32));  // in place unless the save holds it
  ckpt.sync();
  ckpt.restore(dir_ + "/c");
  EXPECT_THAT(w.read_value().to_vector<float>(), ::testing::Each(1.f));
}

}  // namespace
}  // namespace mt
