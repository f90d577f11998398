// Crash safety as a user meets it: a writer process that saves in a loop is SIGKILLed at
// random moments; each time, a fresh restore of the latest checkpoint is whole and of one
// step. The writer is this test binary run again with MT_CKPT_CRASH_WRITER set.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "runtime/ops/constant.h"
#include "runtime/ops/ops.h"
#include "runtime/train/checkpoint_manager.h"
#include "tests/runtime/checkpoint_fixture.h"

extern char** environ;

namespace mt::testing {
namespace {

constexpr int64_t kElements = 64 * 1024;  // 256 KiB a variable: saves take a while

// The writer's state: a and b hold step and -step everywhere, and the scalar holds step.
struct State {
  Variable a{fill({kElements}, 0, DType::kFloat32), true, "a"};
  Variable b{fill({kElements}, 0, DType::kFloat32), true, "b"};
  int64_t step = 0;
  train::Checkpoint ckpt;
  State() {
    ckpt.track("a", a);
    ckpt.track("b", b);
    ckpt.track("step", step);
  }
};

class CheckpointCrashTest : public CheckpointTestBase {};
class CheckpointCrashWriter : public RuntimeTest {};  // no folder of its own: it is killed

// The child: resumes from the latest checkpoint, then saves steps until killed.
TEST_F(CheckpointCrashWriter, WriterLoop) {
  const char* dir = std::getenv("MT_CKPT_CRASH_WRITER");
  if (dir == nullptr)
    GTEST_SKIP() << "runs only as the writer of CrashedWritersLeaveWholeCheckpoints";
  State s;
  train::CheckpointManager manager(s.ckpt, dir, /*max_to_keep=*/2);
  if (auto latest = manager.latest_checkpoint()) s.ckpt.restore(*latest);
  for (;;) {
    ++s.step;
    s.a.assign(fill({kElements}, static_cast<double>(s.step), DType::kFloat32));
    s.b.assign(fill({kElements}, -static_cast<double>(s.step), DType::kFloat32));
    manager.save(s.step, /*async=*/s.step % 2 == 0);  // kills land in async saves too
  }
}

pid_t start_writer(const std::string& dir) {
  std::string env = "MT_CKPT_CRASH_WRITER=" + dir;
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(env.data());
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=CheckpointCrashWriter.WriterLoop";
  char exe[] = "/proc/self/exe";
  char* argv[] = {exe, filter.data(), nullptr};
  pid_t pid = 0;
  EXPECT_EQ(::posix_spawn(&pid, exe, nullptr, nullptr, argv, envp.data()), 0);
  return pid;
}

// Returns how long a writer takes from its start to its first whole checkpoint (under a
// sanitizer, much longer than in a release build), killing it then.
std::chrono::milliseconds time_to_first_save(const std::string& dir) {
  auto start = std::chrono::steady_clock::now();
  pid_t pid = start_writer(dir);
  while (!train::latest_checkpoint(dir).has_value() &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  auto took = std::chrono::steady_clock::now() - start;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(took);
}

TEST_F(CheckpointCrashTest, CrashedWritersLeaveWholeCheckpoints) {
  std::mt19937 rng(12345);
  // Kills land from half the start-up time to a few saves past it: before, during and
  // between saves.
  const int64_t first = time_to_first_save(dir_).count();
  ASSERT_TRUE(train::latest_checkpoint(dir_).has_value()) << "no save within 30 s";
  int64_t last_step = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(12);
  int kills = 0;
  for (; kills < 25 && std::chrono::steady_clock::now() < deadline; ++kills) {
    pid_t pid = start_writer(dir_);
    ASSERT_GT(pid, 0);
    int64_t delay = first / 2 + static_cast<int64_t>(rng() % (first + 100));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself: " << status;
    std::optional<std::string> latest = train::latest_checkpoint(dir_);
    ASSERT_TRUE(latest.has_value());  // the first save's, at least
    State fresh;
    fresh.ckpt.restore(*latest);
    ASSERT_GE(fresh.step, last_step);  // never older than what was seen
    last_step = fresh.step;
    float step = static_cast<float>(fresh.step);
    for (float x : fresh.a.read_value().to_vector<float>()) ASSERT_EQ(x, step);
    for (float x : fresh.b.read_value().to_vector<float>()) ASSERT_EQ(x, -step);
  }
  EXPECT_GE(kills, 5);
  RecordProperty("kills", kills);
  RecordProperty("last_step", static_cast<int>(last_step));
  EXPECT_GT(last_step, 1) << "no writer finished a save after the first one";
}

}  // namespace
}  // namespace mt::testing
