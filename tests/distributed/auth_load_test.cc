// 8 authenticated clients and one without the token hammer one task: every authenticated
// op is right, none of the intruder's runs. 10 s; MT_AUTH_LOAD_SECONDS sets another length
// (the figure is 60).
#include <atomic>
#include <cstdlib>
#include <thread>

#include "gmock/gmock.h"
#include "tests/distributed/auth_fixture.h"
#include "tests/distributed/raw_client.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::RawClient;

int load_seconds() {
  const char* env = std::getenv("MT_AUTH_LOAD_SECONDS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 10;
}

// One authenticated client's loop: a + b read back and checked, then freed. Returns the
// ops it ran (3 allocations each round), or -1 at the first wrong answer or failed call,
// which it describes in `failure`.
int64_t hammer(const std::string& address, int id, std::chrono::steady_clock::time_point end,
               std::string* failure) {
  RawClient client(address, "s3cret-token");
  int64_t ops = 0;
  for (int round = 0; std::chrono::steady_clock::now() < end; ++round) {
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

TEST(AuthLoadTest, EightClientsAndAnIntruderShareATask) {
  testing::TempDir dir;
  testing::write_text(dir / "token", "s3cret-token");
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  testing::WorkerProcess worker;
  worker.set_stderr((dir / "server.log").string());
  worker.start(spec, 0, {"--auth_token_file", (dir / "token").string()});
  const std::string& address = spec["worker"][0];
  RawClient watcher(address, "s3cret-token");
  int64_t bytes = 0, allocs = 0;
  ASSERT_TRUE(watcher.memory(&bytes, &allocs).ok());

  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(load_seconds());
  std::vector<int64_t> ops(8);
  std::vector<std::string> failures(8);
  std::vector<std::thread> clients;
  for (int id = 0; id < 8; ++id) {
    clients.emplace_back([&, id] { ops[id] = hammer(address, id, end, &failures[id]); });
  }
  std::atomic<int64_t> refused{0}, let_through{0};
  std::string intruder_got;  // the first answer other than Unauthenticated
  std::thread intruder([&] {
    RawClient none(address), wrong(address, "guessed-token");
    uint64_t h = 0;
    std::vector<float> got;
    while (std::chrono::steady_clock::now() < end) {
      for (RawClient* c : {&none, &wrong}) {
        for (grpc::Status s : {c->constant({1.f, 2.f}, &h), c->enqueue_fill(1234),
                               c->upload(5678, {1.f}), c->fetch(h, &got)}) {
          if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
            ++refused;
          } else if (let_through++ == 0) {
            intruder_got = absl::StrCat("code ", s.error_code(), " ", s.error_message());
          }
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
  EXPECT_EQ(let_through.load(), 0) << intruder_got;
  EXPECT_GT(refused.load(), 0);
  int64_t bytes_after = 0, allocs_after = 0;
  ASSERT_TRUE(watcher.memory(&bytes_after, &allocs_after).ok());
  EXPECT_EQ(bytes_after, bytes);
  EXPECT_EQ(allocs_after - allocs, total);  // the authenticated clients' allocations, no more
  std::string log = testing::read_text(dir / "server.log");
  int64_t lines = 0;
  for (size_t at = log.find("[Server] refused "); at != std::string::npos;
       at = log.find("[Server] refused ", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, refused.load());
  std::printf("%lld authenticated ops in %d s, %lld refused calls\n", static_cast<long long>(total),
              load_seconds(), static_cast<long long>(refused));
}

}  // namespace
}  // namespace mt
