// The GPU guide's first example on another process: two worker tasks on loopback, and
// this process as the client. The matmul runs on /job:worker/task:1; its result stays there
// until printed. Usage: remote_guide_example [DEVICE] (default "/job:worker/task:1").
//
// The workers are forked before anything else, as mt-server would run them:
//   mt-server --cluster worker=127.0.0.1:P0,127.0.0.1:P1 --job worker --task 1
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "distributed/distributed.h"
#include "runtime/minitensor.h"

namespace {

pid_t start_worker(const mt::distributed::ClusterSpec& cluster, int task) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  mt::distributed::Server server(cluster, "worker", task);
  server.join();  // until killed
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = argc > 1 ? argv[1] : "/job:worker/task:1";
  mt::distributed::ClusterSpec cluster{
      {"worker",
       {absl::StrCat("127.0.0.1:", mt::distributed::pick_unused_loopback_port()),
        absl::StrCat("127.0.0.1:", mt::distributed::pick_unused_loopback_port())}}};
  pid_t workers[] = {start_worker(cluster, 0), start_worker(cluster, 1)};
  int status = 0;
  try {
    mt::config::experimental_connect_to_cluster(cluster);
    for (const auto& d : mt::config::list_logical_devices()) std::cout << d.name << "\n";
    mt::debugging::set_log_sink([](std::string_view line) { std::cout << line << "\n"; });
    mt::debugging::set_log_device_placement(true);
    mt::Tensor c;
    {
      mt::DeviceScope scope(device);
      mt::Tensor a = mt::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
      mt::Tensor b = mt::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
      c = mt::matmul(a, b);
    }
    std::cout << c << "\n";
  } catch (const mt::Error& e) {
    std::cout << "error: " << e.what() << "\n";
    status = 1;
  }
  for (pid_t pid : workers) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return status;
}
