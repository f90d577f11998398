// Discovery's report when no GPU is usable: plain words, once per process. Runs on any
// machine with the CUDA backend built, a GPU or not.
#include "runtime/eager/gpu_backend.h"

#include <string>

#include "gtest/gtest.h"

namespace mt::internal {
namespace {

TEST(GpuBackendTest, NoGpuMessageSaysPlainlyThatNoDriverWasFound) {
  EXPECT_EQ(no_gpu_message(0, "CUDA driver version is insufficient for CUDA runtime version"),
            "minitensor: could not find an NVIDIA driver on this machine; ops run on the CPU");
  EXPECT_EQ(no_gpu_message(13000, "no CUDA-capable device is detected"),
            "minitensor: no GPU visible (no CUDA-capable device is detected); ops run on the CPU");
  EXPECT_EQ(no_gpu_message(13000, nullptr),
            "minitensor: no GPU visible (no CUDA device); ops run on the CPU");
}

TEST(GpuBackendTest, DiscoveryReportsNoGpuAtMostOncePerProcess) {
  ::testing::internal::CaptureStderr();
  const bool found = !discover_gpus().empty();
  discover_gpus();
  discover_gpus();
  const std::string err = ::testing::internal::GetCapturedStderr();
  if (found) GTEST_SKIP() << "a GPU is visible: discovery reports nothing";
  size_t lines = 0;
  for (char c : err) lines += c == '\n';
  EXPECT_LE(lines, 1u) << err;  // none when an earlier test already discovered
}

}  // namespace
}  // namespace mt::internal
