#pragma once
// WorkerProcess: one mt-server child process on a loopback port, for tests. It is started
// with the whole cluster's addresses, waits (10 s at most) until the server says it
// listens, and is killed (SIGKILL) and reaped by kill() or the destructor. Workers see no
// GPU unless started with `gpus` (CUDA_VISIBLE_DEVICES=""), so that CPU tests place alike
// on every machine. mt-server is taken from $MT_SERVER, else from beside this test
// program (scripts/gpu-check.sh bundles both), else from the build.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distributed/distributed.h"
#include "gtest/gtest.h"

namespace mt::testing {

// Returns a cluster spec of `n` workers on unused loopback ports.
inline distributed::ClusterSpec loopback_workers(int n) {
  distributed::ClusterSpec spec;
  for (int i = 0; i < n; ++i) {
    spec["worker"].push_back(absl::StrCat("127.0.0.1:", distributed::pick_unused_loopback_port()));
  }
  return spec;
}

inline std::string mt_server_path() {
  if (const char* env = std::getenv("MT_SERVER")) return env;
  std::error_code ec;
  auto beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "mt-server";
  if (!ec && std::filesystem::exists(beside)) return beside.string();
  return MT_SERVER_PATH;
}

class WorkerProcess {
 public:
  WorkerProcess() = default;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess() { kill(); }

  // Sends the worker's stderr to `path` (appending) from the next start on.
  void set_stderr(std::string path) { stderr_path_ = std::move(path); }

  // Starts task `task` of job "worker" of `spec`; `extra` flags go to mt-server.
  void start(const distributed::ClusterSpec& spec, int task, std::vector<std::string> extra = {},
             bool gpus = false) {
    std::vector<std::string> args = {mt_server_path(), "--job", "worker", "--task",
                                     std::to_string(task)};
    for (const auto& [job, tasks] : spec) {
      args.push_back("--cluster");
      args.push_back(absl::StrCat(job, "=", absl::StrJoin(tasks, ",")));
    }
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;  // built before fork: the child only execs
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    std::string hide = "CUDA_VISIBLE_DEVICES=";
    for (char** e = environ; *e != nullptr; ++e) {
      if (!gpus && std::string_view(*e).substr(0, hide.size()) == hide) continue;
      envp.push_back(*e);
    }
    if (!gpus) envp.push_back(hide.data());
    envp.push_back(nullptr);
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    int err =
        stderr_path_.empty() ? -1 : open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      if (err >= 0) dup2(err, STDERR_FILENO);
      close(out[0]);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(out[1]);
    if (err >= 0) close(err);
    pollfd p{out[0], POLLIN, 0};
    std::string said;
    char buf[256];
    while (said.find('\n') == std::string::npos && poll(&p, 1, 10'000) > 0) {
      ssize_t n = read(out[0], buf, sizeof(buf));
      if (n <= 0) break;
      said.append(buf, n);
    }
    close(out[0]);
    ASSERT_NE(said.find("mt-server: serving"), std::string::npos) << "mt-server said: " << said;
  }

  // Sends `signal` (SIGSTOP, SIGCONT) to the worker. SIGSTOP returns once every thread of
  // it has stopped (kill returns earlier, and a thread not told yet may still answer).
  void signal(int signal) {
    if (pid_ <= 0) return;
    ::kill(pid_, signal);
    int status = 0;
    if (signal == SIGSTOP) {
      ASSERT_EQ(waitpid(pid_, &status, WUNTRACED), pid_);
      if (!WIFSTOPPED(status)) pid_ = -1;  // it exited instead (and is reaped): nothing to kill
      ASSERT_TRUE(WIFSTOPPED(status)) << "the worker exited instead of stopping";
    }
  }

  pid_t pid() const { return pid_; }

  // Sends `signal` and returns the worker's exit status once it exited (-1: killed by a
  // signal, or not running). Waits 10 s at most, then kills it.
  int stop(int signal) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    pid_t reaped = 0;
    for (int i = 0; i < 1000 && (reaped = waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
      usleep(10'000);
    }
    if (reaped != pid_) {  // still running
      kill();
      return -1;
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  std::string stderr_path_;
};

}  // namespace mt::testing
