// write_async and CheckpointManager's async saves: the values of the call are written while
// the caller goes on assigning, the record follows the write, errors come from sync().
// Listed with the concurrency tests, so that CI runs it under ThreadSanitizer.
#include "runtime/ops/constant.h"
#include "runtime/train/checkpoint_manager.h"
#include "tests/runtime/checkpoint_fixture.h"

namespace mt::testing {
namespace {

class CheckpointAsyncTest : public CheckpointTestBase {};

TEST_F(CheckpointAsyncTest, AsyncSavesTakeTheValuesOfTheirCall) {
  Variable w(constant({1.f, 2.f}), true, "w");
  int64_t step = 1;
  train::Checkpoint ckpt;
  ckpt.track("w", w);
  ckpt.track("step", step);
  train::CheckpointManager manager(ckpt, dir_, /*max_to_keep=*/1);
  manager.save(std::nullopt, /*async=*/true);
  w.assign(constant({9.f, 9.f}));  // while the first save may still be writing
  step = 2;
  manager.save(std::nullopt, /*async=*/true);  // waits for the first
  w.assign(constant({0.f, 0.f}));
  ckpt.sync();
  EXPECT_EQ(train::latest_checkpoint(dir_), dir_ + "/ckpt-2");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/ckpt-1.manifest"));
  ckpt.restore(dir_ + "/ckpt-2");
  EXPECT_EQ(w.read_value().to_vector<float>(), (std::vector<float>{9.f, 9.f}));
  EXPECT_EQ(step, 2);
}

TEST_F(CheckpointAsyncTest, AsyncErrorsComeFromSync) {
  Variable w(constant({1.f}), true, "w");
  train::Checkpoint ckpt;
  ckpt.track("w", w);
  ckpt.write_async(dir_ + "/no/such/folder/c");
  expect_error([&] { ckpt.sync(); }, absl::StatusCode::kNotFound,
               "[checkpoint] cannot create " + dir_ + "/no/such/folder/c.safetensors.tmp.");
  ckpt.sync();  // the error is reported once
}

}  // namespace
}  // namespace mt::testing
