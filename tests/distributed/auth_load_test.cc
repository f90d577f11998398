// 8 authenticated clients and one intruder hammer one task: every authenticated op is
// right, none of the intruder's runs. Once with a token (the intruder sends none or a
// wrong one), once with mutual TLS (the intruder shows no certificate, another
// authority's or an expired one, on a new connection each time). 5 s each;
// MT_AUTH_LOAD_SECONDS sets another length (the figure is 60).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include "gmock/gmock.h"
#include "tests/distributed/auth_fixture.h"
#include "tests/distributed/raw_client.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::RawClient;
using Clock = std::chrono::steady_clock;

int load_seconds() {
  const char* env = std::getenv("MT_AUTH_LOAD_SECONDS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 5;
}

// One authenticated client's loop: a + b read back and checked, then freed. Returns the
// ops it ran (3 allocations each round), or -1 at the first wrong answer or failed call,
// which it describes in `failure`.
int64_t hammer(RawClient client, int id, Clock::time_point end, std::string* failure) {
  // Connected first: a new channel's first connection can fail on a loaded machine
  // ("failed to connect to all addresses"), which is not what this test is about.
  // GetMemoryInfo allocates nothing.
  int64_t unused = 0;
  for (int attempt = 0; attempt < 100 && !client.memory(&unused, &unused).ok(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int64_t ops = 0;
  for (int round = 0; Clock::now() < end; ++round) {
    std::vector<float> a(64), b(64);
    for (int i = 0; i < 64; ++i) {
      a[i] = static_cast<float>(id * 1000 + i);
      b[i] = static_cast<float>(round % 997);
    }
    uint64_t ha = 0, hb = 0, sum = 0;
    std::vector<float> got;
    for (grpc::Status s :
         {client.constant(a, &ha), client.constant(b, &hb), client.add(ha, hb, &sum),
          client.fetch(sum, &got), client.remove({ha, hb, sum})}) {
      if (!s.ok()) {
        *failure = absl::StrCat("round ", round, ": code ", s.error_code(), " ", s.error_message());
        return -1;
      }
    }
    for (int i = 0; i < 64; ++i) {
      if (got[i] != a[i] + b[i]) {
        *failure = absl::StrCat("round ", round, ": element ", i, " is ", got[i]);
        return -1;
      }
    }
    ops += 3;
  }
  return ops;
}

class AuthLoadTest : public ::testing::Test {
 protected:
  // Runs 8 clients from `good` and one thread calling `intrude` (which returns the
  // statuses of its calls) for load_seconds(); checks that every intruding call got
  // `refused_code` and that the task allocated for the good clients only. Returns the
  // intruder's calls.
  int64_t run(std::function<RawClient()> good, std::function<std::vector<grpc::Status>()> intrude,
              grpc::StatusCode refused_code) {
    RawClient watcher = good();
    int64_t bytes = 0, allocs = 0;
    EXPECT_TRUE(watcher.memory(&bytes, &allocs).ok());
    Clock::time_point end = Clock::now() + std::chrono::seconds(load_seconds());
    std::vector<int64_t> ops(8);
    std::vector<std::string> failures(8);
    std::vector<std::thread> clients;
    for (int id = 0; id < 8; ++id) {
      clients.emplace_back([&, id] { ops[id] = hammer(good(), id, end, &failures[id]); });
    }
    int64_t refused = 0, let_through = 0;
    std::string intruder_got;  // the first answer that was not a refusal
    std::thread intruder([&] {
      while (Clock::now() < end) {
        for (const grpc::Status& s : intrude()) {
          if (s.error_code() == refused_code) {
            ++refused;
          } else if (let_through++ == 0) {
            intruder_got = absl::StrCat("code ", s.error_code(), " ", s.error_message());
          }
        }
      }
    });
    for (std::thread& t : clients) t.join();
    intruder.join();
    int64_t total = 0;
    for (int id = 0; id < 8; ++id) {
      EXPECT_GT(ops[id], 0) << "client " << id << ": " << failures[id];
      total += ops[id];
    }
    EXPECT_EQ(let_through, 0) << intruder_got;
    EXPECT_GT(refused, 0);
    int64_t bytes_after = 0, allocs_after = 0;
    EXPECT_TRUE(watcher.memory(&bytes_after, &allocs_after).ok());
    EXPECT_EQ(bytes_after, bytes);
    EXPECT_EQ(allocs_after - allocs, total);  // the good clients' allocations, no more
    std::printf("%lld authenticated ops in %d s, %lld refused calls\n",
                static_cast<long long>(total), load_seconds(), static_cast<long long>(refused));
    return refused;
  }

  testing::TempDir dir_;
};

TEST_F(AuthLoadTest, EightClientsAndAnIntruderWithoutTheTokenShareATask) {
  testing::write_text(dir_ / "token", "s3cret-token");
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  testing::WorkerProcess worker;
  worker.set_stderr((dir_ / "server.log").string());
  worker.start(spec, 0, {"--auth_token_file", (dir_ / "token").string()});
  const std::string address = spec["worker"][0];
  RawClient none(address), wrong(address, "guessed-token");
  uint64_t h = 0;
  std::vector<float> got;
  int64_t refused =
      run([&] { return RawClient(address, "s3cret-token"); },
          [&] {
            std::vector<grpc::Status> out;
            for (RawClient* c : {&none, &wrong}) {
              for (grpc::Status s : {c->constant({1.f, 2.f}, &h), c->enqueue_fill(1234),
                                     c->upload(5678, {1.f}), c->fetch(h, &got)}) {
                out.push_back(s);
              }
            }
            return out;
          },
          grpc::StatusCode::UNAUTHENTICATED);
  // Each refused call logged once. The server may write its last lines just after the
  // client saw the status: wait for them a little (a loaded machine lags).
  int64_t lines = 0;
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);;) {
    const std::string log = testing::read_text(dir_ / "server.log");
    lines = 0;
    for (size_t at = log.find("[Server] refused "); at != std::string::npos;
         at = log.find("[Server] refused ", at + 1)) {
      ++lines;
    }
    if (lines >= refused || std::chrono::steady_clock::now() > end) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(lines, refused);
}

TEST_F(AuthLoadTest, EightClientsAndAnIntruderWithoutACertificateShareATask) {
  if (!testing::make_certs(dir_.path())) GTEST_SKIP() << "openssl could not make certificates";
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  testing::WorkerProcess worker;
  worker.set_stderr((dir_ / "server.log").string());
  worker.start(spec, 0, testing::mtls_flags(dir_.path(), "server1", "ca1"));
  const std::string address = spec["worker"][0];
  auto as = [&](const std::string& cert, const std::string& key) {
    return RawClient(address, "", testing::client_tls(dir_.path(), "ca1", cert, key));
  };
  run([&] { return as("client1", "client1"); },
      [&] {  // a new connection, so a new handshake, every time
        uint64_t h = 0;
        return std::vector<grpc::Status>{as("", "").constant({1.f}, &h),
                                         as("client2", "client2").constant({1.f}, &h),
                                         as("client1-expired", "client1").constant({1.f}, &h)};
      },
      grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(worker.stop(SIGTERM), 0);  // not SIGKILL: it removes its copies of the keys
}

}  // namespace
}  // namespace mt
