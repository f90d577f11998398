// CheckpointManager: numbering, max_to_keep, TensorFlow's "checkpoint" file, recovery of
// the folder's state and of a killed save's temporary files.
#include "runtime/train/checkpoint_manager.h"

#include "runtime/ops/constant.h"
#include "tests/runtime/checkpoint_fixture.h"

namespace mt::testing {
namespace {

class CheckpointManagerTest : public CheckpointTestBase {};

TEST_F(CheckpointManagerTest, KeepsTheNewestAndRecordsThemAsTensorFlowDoes) {
  Variable w(constant({1.f}), true, "w");
  train::Checkpoint ckpt;
  ckpt.track("w", w);
  train::CheckpointManager manager(ckpt, dir_ + "/run", /*max_to_keep=*/2);
  EXPECT_EQ(manager.latest_checkpoint(), std::nullopt);
  EXPECT_EQ(train::latest_checkpoint(dir_ + "/run"), std::nullopt);
  for (int i = 0; i < 3; ++i) manager.save();
  EXPECT_EQ(manager.checkpoints(),
            (std::vector<std::string>{dir_ + "/run/ckpt-2", dir_ + "/run/ckpt-3"}));
  EXPECT_EQ(manager.latest_checkpoint(), dir_ + "/run/ckpt-3");
  EXPECT_EQ(train::latest_checkpoint(dir_ + "/run"), dir_ + "/run/ckpt-3");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/run/ckpt-1.manifest"));
  EXPECT_EQ(read(dir_ + "/run/checkpoint"),
            "model_checkpoint_path: \"ckpt-3\"\n"
            "all_model_checkpoint_paths: \"ckpt-2\"\n"
            "all_model_checkpoint_paths: \"ckpt-3\"\n");
  EXPECT_EQ(manager.save(10), dir_ + "/run/ckpt-10");
}

TEST_F(CheckpointManagerTest, TakesUpTheFolderAndRemovesTemporaryFiles) {
  Variable w(constant({1.f}), true, "w");
  train::Checkpoint ckpt;
  ckpt.track("w", w);
  {
    train::CheckpointManager first(ckpt, dir_, 3, "model");
    first.save();
    first.save();
  }
  write(dir_ + "/model-3.safetensors.tmp.123", "torn");
  train::CheckpointManager second(ckpt, dir_, 3, "model");
  EXPECT_EQ(second.checkpoints().size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/model-3.safetensors.tmp.123"));
  EXPECT_EQ(second.save(), dir_ + "/model-3");
}

TEST_F(CheckpointManagerTest, FailsOnAFolderItCannotMake) {
  write(dir_ + "/file", "x");
  train::Checkpoint ckpt;
  expect_error([&] { train::CheckpointManager m(ckpt, dir_ + "/file/sub"); },
               absl::StatusCode::kInternal,
               "[checkpoint] cannot make folder " + dir_ + "/file/sub");
}

}  // namespace
}  // namespace mt::testing
