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
// With --mutual_tls the task requires a client certificate (certificates made with openssl
// in a temporary folder, as the authentication tests make them) and the client shows one:
// bench/distributed/tls_compare.sh runs both ways in alternating rounds and prints what TLS
// costs on each figure. --bulk_connections=N sets ConnectOptions::bulk_connections (default
// 0: one per hardware thread, at most 8); 1 sends every tensor whole on one connection, as
// before large tensors went in parts.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "distributed/distributed.h"
#include "runtime/minitensor.h"
#include "tests/distributed/certs.h"

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

// Removes --mutual_tls and --bulk_connections=N from argv, setting `mutual_tls` and
// `bulk_connections` from them.
void take_flags(int* argc, char** argv, bool* mutual_tls, int* bulk_connections) {
  constexpr std::string_view kConnections = "--bulk_connections=";
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--mutual_tls") {
      *mutual_tls = true;
    } else if (arg.substr(0, kConnections.size()) == kConnections) {
      *bulk_connections = std::atoi(argv[i] + kConnections.size());
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
}

}  // namespace

int main(int argc, char** argv) {
  bool mutual_tls = false;
  int bulk_connections = 0;
  take_flags(&argc, argv, &mutual_tls, &bulk_connections);
  mt::distributed::ClusterSpec cluster{
      {"worker", {absl::StrCat("127.0.0.1:", mt::distributed::pick_unused_loopback_port())}}};
  mt::testing::TempDir dir;
  mt::distributed::ServerOptions server_options;
  mt::config::ConnectOptions connect_options;
  connect_options.bulk_connections = bulk_connections;
  if (mutual_tls) {
    if (!mt::testing::make_certs(dir.path())) {
      std::fprintf(stderr, "remote_benchmark: openssl could not make the certificates\n");
      return 1;
    }
    const auto pem = [&](const char* name) { return mt::testing::read_text(dir / name); };
    server_options.tls.server_cert_pem = pem("server1.pem");
    server_options.tls.server_key_pem = pem("server1.key");
    server_options.tls.client_ca_pem = pem("ca1.pem");
    connect_options.tls.root_cert_pem = pem("ca1.pem");
    connect_options.tls.client_cert_pem = pem("client1.pem");
    connect_options.tls.client_key_pem = pem("client1.key");
  }
  pid_t worker = fork();
  if (worker == 0) {
    mt::distributed::Server server(cluster, "worker", 0, server_options);
    server.join();
    _exit(0);
  }
  mt::config::experimental_connect_to_cluster(cluster, "localhost", 0, connect_options);
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("transport", mutual_tls ? "mutual TLS" : "plaintext");
  benchmark::AddCustomContext("bulk_connections", std::to_string(bulk_connections));
  benchmark::RunSpecifiedBenchmarks();
  kill(worker, SIGKILL);
  waitpid(worker, nullptr, 0);
  return 0;
}
