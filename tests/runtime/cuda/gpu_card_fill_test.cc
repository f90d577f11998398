// A card filled by another process: a filler process (this binary again, in the role
// "filler") cudaMallocs all but kLeaveBytes of GPU 0's free memory and waits. Then, each in
// a fresh process (settings freeze at initialisation), minitensor's default pool, growth
// mode and a fixed limit larger than what remains each run a 64 MiB op and then ask for
// more than the card has left: every step must either work (right values) or fail with
// ResourceExhausted naming the GPU and the bytes, never crash or hang. A fourth process
// first takes all but 1 MiB of what is left itself, then starts the default pool on a card
// with (almost) nothing free. Skips without a GPU.
//
// Each process prints one "[card fill]" line; scripts/gpu-run.sh's `cardfill` step shows them.
#include <cuda_runtime.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/minitensor.h"

extern char** environ;

namespace mt {
namespace {

constexpr const char* kRoleEnv = "MT_CARD_FILL_ROLE";
constexpr const char* kChildTest = "GpuCardFillTest.RunsTheRoleOfAChildProcess";
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kLeaveBytes = int64_t{3} << 30;  // free after the filler: about 3 GiB
constexpr int kChildSeconds = 120;                 // a child still running then has hung

int64_t env_int(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::atoll(text) : 0;
}

// A child process running this binary's kChildTest, with its stdin and stdout piped.
struct Child {
  pid_t pid = -1;
  int to_child = -1;    // its stdin: closing it tells the filler to exit
  int from_child = -1;  // its stdout and stderr
};

Child spawn(const std::vector<std::string>& extra_env) {
  std::vector<std::string> env(extra_env);
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string filter = absl::StrCat("--gtest_filter=", kChildTest);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, filter.data(), nullptr};
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls until execve
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(in[1]);
    close(out[0]);
    execve(self, argv, envp.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  return {pid, in[1], out[0]};
}

// Reads the child's output until `marker` has appeared (empty: until it closes its
// output) or `seconds` have passed; returns everything read. Sets *found.
std::string read_output(const Child& c, const std::string& marker, int seconds, bool* found) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::string text;
  *found = false;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{c.from_child, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(c.from_child, buf, sizeof(buf));
    if (n <= 0) {
      *found = marker.empty();
      return text;
    }
    text.append(buf, static_cast<size_t>(n));
    if (!marker.empty() && text.find(marker) != std::string::npos) {
      *found = true;
      return text;
    }
  }
  return text;
}

// Returns the child's exit status, killing it first when `kill_it` (a hang).
int finish(Child& c, bool kill_it) {
  if (kill_it) kill(c.pid, SIGKILL);
  close(c.to_child);  // the filler lets its memory go when its stdin closes
  int status = 0;
  // Before closing its output: a last line written into a closed pipe is SIGPIPE.
  waitpid(c.pid, &status, 0);
  close(c.from_child);
  return status;
}

// The lines of `text` that start with "[card fill]".
std::string card_fill_lines(const std::string& text) {
  std::string out;
  for (size_t at = text.find("[card fill]"); at != std::string::npos;
       at = text.find("[card fill]", at + 1)) {
    if (at != 0 && text[at - 1] != '\n') continue;
    out += text.substr(at, text.find('\n', at) - at + 1);
  }
  return out;
}

// The filler: holds all but kLeaveBytes of GPU 0's free memory until its stdin closes.
void run_filler() {
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  int64_t take = static_cast<int64_t>(free_bytes) - kLeaveBytes;
  void* p = nullptr;
  while (take > 0 && cudaMalloc(&p, static_cast<size_t>(take)) != cudaSuccess) {
    cudaGetLastError();
    take -= 256 * kMiB;
  }
  ASSERT_GT(take, 0) << "could not fill the card";
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  std::printf("[card fill] filler holds %lld bytes; free %lld total %lld\n",
              static_cast<long long>(take), static_cast<long long>(free_bytes),
              static_cast<long long>(total));
  std::fflush(stdout);
  char byte;
  while (read(0, &byte, 1) > 0) {
  }
  cudaFree(p);
}

// Leaves about `leave` bytes of GPU 0 free (this process's CUDA context is made first);
// returns the block it holds, nullptr when it could take nothing.
void* take_all_but(int64_t leave) {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return nullptr;
  void* p = nullptr;
  for (int64_t take = static_cast<int64_t>(free_bytes) - leave; take > 0; take -= 16 * kMiB) {
    if (cudaMalloc(&p, static_cast<size_t>(take)) == cudaSuccess) return p;
    cudaGetLastError();
  }
  return nullptr;
}

// Returns what a step's error says about it, and fails the test unless it is a clear OOM.
std::string judge(const std::string& step, const Error& e) {
  const std::string what = e.what();
  const std::string first_line = what.substr(0, what.find('\n'));
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted) << step << ": " << what;
  EXPECT_NE(what.find("GPU"), std::string::npos) << step << ": names no GPU: " << what;
  EXPECT_NE(what.find("bytes"), std::string::npos) << step << ": names no bytes: " << what;
  return absl::StrCat(step, " failed: ", absl::StatusCodeToString(e.code()), " \"", first_line,
                      "\"");
}

// One configuration on the filled card: a 64 MiB op, then one larger than what is left.
void run_config(const std::string& role) {
  const PhysicalDevice gpu = config::list_physical_devices("GPU").at(0);
  config::set_visible_devices(gpu, "GPU");
  const int64_t free_bytes = env_int("MT_CARD_FILL_FREE");
  std::string label = role;
  if (role == "full") {
    ASSERT_NE(take_all_but(kMiB), nullptr) << "could not fill the rest of the card";
    size_t free_now = 0, total = 0;
    cudaMemGetInfo(&free_now, &total);
    label = absl::StrCat("default on a full card (", free_now, " bytes free)");
  }
  if (role == "growth") config::set_memory_growth(gpu, true);
  if (role == "limit") {
    const int64_t limit_mb = env_int("MT_CARD_FILL_LIMIT_MB");
    config::set_logical_device_configuration(gpu, {{limit_mb}});
    label = absl::StrCat("limit ", limit_mb, " MiB");
  }
  std::vector<std::string> outcome;
  try {
    DeviceScope scope("/GPU:0");
    Tensor x = fill({16 * kMiB}, 1.0f);  // 64 MiB
    EXPECT_EQ(reduce_max(neg(x)).to_vector<float>(), (std::vector<float>{-1}));
    outcome.push_back("a 64 MiB op works");
  } catch (const Error& e) {
    outcome.push_back(judge("a 64 MiB op", e));
  }
  const int64_t elements = (free_bytes + (int64_t{1} << 30)) / 4;  // 1 GiB more than is free
  const std::string big = absl::StrCat("a ", elements * 4 / kMiB, " MiB op");
  try {
    DeviceScope scope("/GPU:0");
    Tensor y = fill({elements}, 2.0f);
    outcome.push_back(absl::StrCat(big, " works"));  // possible only if the filler let go
    ADD_FAILURE() << big << " fitted on a card with " << free_bytes << " bytes free";
  } catch (const Error& e) {
    outcome.push_back(judge(big, e));
  }
  std::string pool = "no pool (the device was not created)";
  try {
    const MemoryInfo info = config::get_memory_info("GPU:0");
    pool = absl::StrCat("pool reserved ", info.reserved, " of limit ", info.limit, " bytes");
  } catch (const Error&) {
  }
  std::printf("[card fill] %s: %s; %s; %s\n", label.c_str(), outcome[0].c_str(), outcome[1].c_str(),
              pool.c_str());
  std::fflush(stdout);
}

// Not a test of its own: what a child process started by the test below does.
TEST(GpuCardFillTest, RunsTheRoleOfAChildProcess) {
  const char* role = std::getenv(kRoleEnv);
  if (role == nullptr) GTEST_SKIP() << "runs only in a child process of the test below";
  if (std::string(role) == "filler") return run_filler();
  run_config(role);
}

TEST(GpuCardFillTest, DefaultGrowthAndAFixedLimitFitOrFailWithAClearOom) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    GTEST_SKIP() << "needs a GPU: none is visible";
  }
  if (std::getenv(kRoleEnv) != nullptr) GTEST_SKIP() << "a child process";
  Child filler = spawn({absl::StrCat(kRoleEnv, "=filler")});
  ASSERT_GT(filler.pid, 0);
  bool found = false;
  const std::string said = read_output(filler, "\n[card fill] filler", kChildSeconds, &found);
  std::string line = card_fill_lines(said);
  if (!found || line.empty()) {
    finish(filler, /*kill_it=*/true);
    FAIL() << "the filler did not fill the card:\n" << said;
  }
  long long held = 0, free_bytes = 0, total = 0;
  if (line.find('\n') == std::string::npos) {  // the rest of the line is still coming
    line = card_fill_lines(said + read_output(filler, "\n", 10, &found));
  }
  ASSERT_EQ(std::sscanf(line.c_str(), "[card fill] filler holds %lld bytes; free %lld total %lld",
                        &held, &free_bytes, &total),
            3)
      << line;
  std::cout << line;
  const int64_t limit_mb = std::min<int64_t>(free_bytes / kMiB + 4096, total / kMiB);
  for (const char* role : {"default", "growth", "limit", "full"}) {
    Child c =
        spawn({absl::StrCat(kRoleEnv, "=", role), absl::StrCat("MT_CARD_FILL_FREE=", free_bytes),
               absl::StrCat("MT_CARD_FILL_LIMIT_MB=", limit_mb)});
    ASSERT_GT(c.pid, 0);
    const std::string out = read_output(c, "", kChildSeconds, &found);
    const int status = finish(c, /*kill_it=*/!found);
    std::cout << card_fill_lines(out);
    EXPECT_TRUE(found) << role << ": still running after " << kChildSeconds << " s (hung):\n"
                       << out;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << role << ": " << (WIFSIGNALED(status) ? "crashed, signal " : "exit status ")
        << (WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status)) << "\n"
        << out;
    EXPECT_NE(card_fill_lines(out), "") << role << " printed no result:\n" << out;
  }
  EXPECT_EQ(finish(filler, /*kill_it=*/false), 0) << "the filler failed";
}

}  // namespace
}  // namespace mt
