// Remote eager over loopback: one worker task forked at start, this process the client.
// Compare with tf_remote_benchmark.py (TensorFlow's own remote eager, same measurements;
// bench/distributed/compare.sh runs both, in alternating rounds):
//   BM_RemoteAdd         1-element add on the task, the result left there: the time to
//                        enqueue it, as both runtimes return a remote handle at once
//   BM_RemoteAddAndRead  the same, then the result read back (waits for the add)
//   BM_RoundTrip64MiB    a 64 MiB tensor sent to the task and read back; the same local
//                        tensor each time, which TensorFlow sends only once (it keeps
//                        the task's copy beside the local tensor, "mirroring") and
//                        minitensor every time
//   BM_RoundTripNew64MiB the same with a new local tensor each time (a local fill):
//                        both runtimes send it and read it back
//   BM_Read64MiB         a 64 MiB tensor on the task read back
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "distributed/distributed.h"
#include "runtime/minitensor.h"

namespace {

constexpr char kTask[] = "/job:worker/task:0";

void BM_RemoteAdd(benchmark::State& state) {
  mt::DeviceScope scope(kTask);
  mt::Tensor x = mt::constant({1.f});
  for (auto _ : state) benchmark::DoNotOptimize(x + x);
}
BENCHMARK(BM_RemoteAdd)->UseRealTime();

void BM_RemoteAddAndRead(benchmark::State& state) {
  mt::DeviceScope scope(kTask);
  mt::Tensor x = mt::constant({1.f});
  for (auto _ : state) benchmark::DoNotOptimize((x + x).to_vector<float>());
}
BENCHMARK(BM_RemoteAddAndRead)->UseRealTime();

void BM_RoundTrip64MiB(benchmark::State& state) {
  mt::Tensor local = mt::zeros({16 << 20});
  for (auto _ : state) {
    mt::Tensor remote;
    {
      mt::DeviceScope scope(kTask);
      remote = mt::identity(local);
    }
    benchmark::DoNotOptimize(remote.to_vector<float>());
  }
  state.SetBytesProcessed(state.iterations() * int64_t{2} * (64 << 20));
}
BENCHMARK(BM_RoundTrip64MiB)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_RoundTripNew64MiB(benchmark::State& state) {
  float value = 0;
  for (auto _ : state) {
    mt::Tensor local = mt::fill({16 << 20}, value++);
    mt::Tensor remote;
    {
      mt::DeviceScope scope(kTask);
      remote = mt::identity(local);
    }
    benchmark::DoNotOptimize(remote.to_vector<float>());
  }
  state.SetBytesProcessed(state.iterations() * int64_t{2} * (64 << 20));
}
BENCHMARK(BM_RoundTripNew64MiB)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Read64MiB(benchmark::State& state) {
  mt::Tensor remote;
  {
    mt::DeviceScope scope(kTask);
    remote = mt::zeros({16 << 20});
  }
  for (auto _ : state) benchmark::DoNotOptimize(remote.to_vector<float>());
  state.SetBytesProcessed(state.iterations() * int64_t{64 << 20});
}
BENCHMARK(BM_Read64MiB)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  mt::distributed::ClusterSpec cluster{
      {"worker", {absl::StrCat("127.0.0.1:", mt::distributed::pick_unused_loopback_port())}}};
  pid_t worker = fork();
  if (worker == 0) {
    mt::distributed::Server server(cluster, "worker", 0);
    server.join();
    _exit(0);
  }
  mt::config::experimental_connect_to_cluster(cluster);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  kill(worker, SIGKILL);
  waitpid(worker, nullptr, 0);
  return 0;
}
