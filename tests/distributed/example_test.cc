// examples/distributed/remote_guide_example prints what docs/distributed.md shows (CPU-only
// workers; skips where the example was not built or not bundled).
#include <cstdio>
#include <filesystem>

#include "gtest/gtest.h"

namespace mt {
namespace {

TEST(RemoteExampleTest, PrintsTheDocumentedOutput) {
  std::error_code ec;
  auto path =
      std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "remote_guide_example";
  if (ec || !std::filesystem::exists(path)) path = MT_REMOTE_EXAMPLE_PATH;  // "" when not built
  if (path.empty() || !std::filesystem::exists(path)) GTEST_SKIP() << "no remote_guide_example";
  std::string cmd = "CUDA_VISIBLE_DEVICES= " + path.string();
  FILE* out = popen(cmd.c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::string text;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof(buf), out)) text.append(buf, n);
  EXPECT_EQ(pclose(out), 0);
  EXPECT_EQ(text,
            "/job:localhost/replica:0/task:0/device:CPU:0\n"
            "/job:worker/replica:0/task:0/device:CPU:0\n"
            "/job:worker/replica:0/task:1/device:CPU:0\n"
            "Executing op _EagerConst in device /job:worker/replica:0/task:1/device:CPU:0\n"
            "Executing op _EagerConst in device /job:worker/replica:0/task:1/device:CPU:0\n"
            "Executing op MatMul in device /job:worker/replica:0/task:1/device:CPU:0\n"
            "Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)\n");
}

}  // namespace
}  // namespace mt
