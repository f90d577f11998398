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
//   BM_Upload64MiB       the upload half of BM_RoundTrip64MiB, no read: the tensor sent,
//                        then (as there) an Identity op copies it on the task, which runs
//                        while the next upload arrives; BM_Read64MiB is the other half
// The 64 MiB benchmarks also count the CPU milliseconds the client and the task spent per
// iteration (client_cpu_ms, task_cpu_ms: every thread of each process).
//   BM_Read64MiB         a 64 MiB tensor on the task read back
// With --mutual_tls the task requires a client certificate (certificates made with openssl
// in a temporary folder, as the authentication tests make them) and the client shows one:
// bench/distributed/tls_compare.sh runs both ways in alternating rounds and prints what TLS
// costs on each figure. --bulk_connections=N sets ConnectOptions::bulk_connections (default
// 0: one per hardware thread, at most 8); 1 sends every tensor whole on one connection, as
// before large tensors went in parts. --num_cqs=N, --min_pollers=N and --max_pollers=N set
// the task's ServerOptions (gRPC's sync server queues and pollers, as mt-server's flags of
// those names; tls_compare.sh's MT_TLSBENCH_SERVER_FLAGS compares settings of them).
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "distributed/distributed.h"
#include "runtime/minitensor.h"
#include "tests/distributed/certs.h"

namespace {

constexpr char kTask[] = "/job:worker/task:0";
pid_t g_task = 0;  // the forked task's process

// Returns the CPU seconds process `pid` (0: this one) has used so far, all its threads.
double cpu_seconds(pid_t pid) {
  clockid_t clock = CLOCK_PROCESS_CPUTIME_ID;
  if (pid != 0 && clock_getcpuclockid(pid, &clock) != 0) return 0;
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Counts the CPU time of the client (this process) and of the task over its lifetime, per
// iteration, as counters client_cpu_ms and task_cpu_ms: where the cores went, which the
// wall time alone does not say on a machine whose cores are all busy.
class CpuCounters {
 public:
  explicit CpuCounters(benchmark::State& state)
      : state_(state), client_(cpu_seconds(0)), task_(cpu_seconds(g_task)) {}
  ~CpuCounters() {
    const auto per_iteration = [](double seconds) {
      return benchmark::Counter(seconds * 1e3, benchmark::Counter::kAvgIterations);
    };
    state_.counters["client_cpu_ms"] = per_iteration(cpu_seconds(0) - client_);
    state_.counters["task_cpu_ms"] = per_iteration(cpu_seconds(g_task) - task_);
  }

 private:
  benchmark::State& state_;
  double client_, task_;
};

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
  CpuCounters cpu(state);
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
  CpuCounters cpu(state);
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

void BM_Upload64MiB(benchmark::State& state) {
  mt::Tensor local = mt::zeros({16 << 20});
  CpuCounters cpu(state);
  for (auto _ : state) {
    mt::DeviceScope scope(kTask);
    benchmark::DoNotOptimize(mt::identity(local));  // returns once the task holds it
  }
  state.SetBytesProcessed(state.iterations() * int64_t{64 << 20});
}
BENCHMARK(BM_Upload64MiB)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Read64MiB(benchmark::State& state) {
  mt::Tensor remote;
  {
    mt::DeviceScope scope(kTask);
    remote = mt::zeros({16 << 20});
  }
  CpuCounters cpu(state);
  for (auto _ : state) benchmark::DoNotOptimize(remote.to_vector<float>());
  state.SetBytesProcessed(state.iterations() * int64_t{64 << 20});
}
BENCHMARK(BM_Read64MiB)->UseRealTime()->Unit(benchmark::kMillisecond);

// What the benchmark's own flags ask for.
struct Flags {
  bool mutual_tls = false;
  int bulk_connections = 0;
  mt::distributed::ServerOptions server;  // its num_cqs, min_pollers, max_pollers
};

// Removes --mutual_tls and the --NAME=N flags of Flags from argv, setting `f` from them;
// exits with status 2 on a value that is not a whole number.
void take_flags(int* argc, char** argv, Flags* f) {
  const std::pair<std::string_view, int*> numbers[] = {
      {"--bulk_connections=", &f->bulk_connections},
      {"--num_cqs=", &f->server.num_cqs},
      {"--min_pollers=", &f->server.min_pollers},
      {"--max_pollers=", &f->server.max_pollers}};
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    std::string_view arg = argv[i];
    bool taken = arg == "--mutual_tls";
    if (taken) f->mutual_tls = true;
    for (auto [prefix, value] : numbers) {
      if (taken || arg.substr(0, prefix.size()) != prefix) continue;
      taken = true;
      if (!absl::SimpleAtoi(argv[i] + prefix.size(), value)) {
        std::fprintf(stderr, "remote_benchmark: %s needs a whole number\n", argv[i]);
        std::exit(2);
      }
    }
    if (!taken) argv[out++] = argv[i];
  }
  *argc = out;
}

// Forks the task, serving `cluster` with `options`; returns its process id once it listens,
// or -1 when it could not start (it said why on stderr).
pid_t start_task(const mt::distributed::ClusterSpec& cluster,
                 const mt::distributed::ServerOptions& options) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  pid_t task = fork();
  if (task == 0) {
    close(ready[0]);
    try {
      mt::distributed::Server server(cluster, "worker", 0, options);
      char ok = 1;
      if (write(ready[1], &ok, 1) != 1) _exit(1);
      server.join();
    } catch (const mt::Error& e) {
      std::fprintf(stderr, "remote_benchmark: the task did not start: %s\n", e.what());
      _exit(1);
    }
    _exit(0);
  }
  close(ready[1]);
  char ok = 0;
  bool started = task > 0 && read(ready[0], &ok, 1) == 1;
  close(ready[0]);
  if (!started && task > 0) waitpid(task, nullptr, 0);
  return started ? task : -1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  take_flags(&argc, argv, &flags);
  mt::distributed::ClusterSpec cluster{
      {"worker", {absl::StrCat("127.0.0.1:", mt::distributed::pick_unused_loopback_port())}}};
  mt::testing::TempDir dir;
  mt::distributed::ServerOptions server_options = flags.server;
  mt::config::ConnectOptions connect_options;
  connect_options.bulk_connections = flags.bulk_connections;
  if (flags.mutual_tls) {
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
  pid_t worker = start_task(cluster, server_options);
  if (worker < 0) return 1;
  g_task = worker;
  mt::config::experimental_connect_to_cluster(cluster, "localhost", 0, connect_options);
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("transport", flags.mutual_tls ? "mutual TLS" : "plaintext");
  benchmark::AddCustomContext("bulk_connections", std::to_string(flags.bulk_connections));
  benchmark::AddCustomContext(
      "task_sync_server",
      absl::StrCat("num_cqs=", flags.server.num_cqs, " min_pollers=", flags.server.min_pollers,
                   " max_pollers=", flags.server.max_pollers, " (0: gRPC's default)"));
  benchmark::RunSpecifiedBenchmarks();
  kill(worker, SIGKILL);
  waitpid(worker, nullptr, 0);
  return 0;
}
