// The ring all-reduce over in-process links, and CollectiveGroup between workers whose
// servers run in this process, each worker on a thread of its own (the multi-process
// runs, a worker killed among them, are tests/python/test_multi_worker.py's).
#include "distributed/collective_group.h"

#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/distributed.h"
#include "distributed/ring_all_reduce.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/distributed/certs.h"
#include "tests/distributed/worker_process.h"

namespace mt::distributed::internal {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// Links between the workers of one process: a send lands in the next worker's mailbox in
// slices of `slice_bytes`, which may end inside an element.
class FakeLinks final : public RingLinks {
 public:
  FakeLinks(std::vector<CollectiveMailbox>& boxes, int rank, size_t slice_bytes)
      : boxes_(boxes), rank_(rank), size_(static_cast<int>(boxes.size())), slice_(slice_bytes) {}

  absl::Status send(uint32_t step, uint32_t chunk, const std::string& what, const char* data,
                    size_t bytes) override {
    CollectiveMailbox::Message message{what, {}};
    for (size_t at = 0; at < bytes; at += slice_) {
      message.bytes.emplace_back(data + at, std::min(slice_, bytes - at));
    }
    boxes_[(rank_ + 1) % size_].deliver({1, 1, step, chunk, rank_}, std::move(message));
    return absl::OkStatus();
  }
  absl::StatusOr<CollectiveMailbox::Message> receive(uint32_t step, uint32_t chunk) override {
    return boxes_[rank_].take({1, 1, step, chunk, (rank_ + size_ - 1) % size_},
                              Clock::now() + std::chrono::seconds(10), std::chrono::seconds(1),
                              [] { return absl::OkStatus(); });
  }
  std::string previous_name() const override {
    return absl::StrCat("worker ", (rank_ + size_ - 1) % size_);
  }

 private:
  std::vector<CollectiveMailbox>& boxes_;
  const int rank_, size_;
  const size_t slice_;
};

// Runs fn(rank) for every rank at once and returns each one's status.
std::vector<absl::Status> on_every_worker(int n, const std::function<absl::Status(int)>& fn) {
  std::vector<absl::Status> out(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { out[r] = fn(r); });
  for (std::thread& t : threads) t.join();
  return out;
}

template <typename T>
std::vector<std::vector<T>> ring_sum(int n, int64_t elements, size_t slice_bytes, DType dtype) {
  std::vector<CollectiveMailbox> boxes(n);
  std::vector<std::vector<T>> data(n, std::vector<T>(elements));
  for (int r = 0; r < n; ++r) {
    for (int64_t i = 0; i < elements; ++i) data[r][i] = static_cast<T>((r + 1) * (i % 1000));
  }
  for (const absl::Status& s : on_every_worker(n, [&](int r) {
         FakeLinks links(boxes, r, slice_bytes);
         return ring_all_reduce(links, r, n, dtype, data[r].data(), elements);
       })) {
    EXPECT_TRUE(s.ok()) << s;
  }
  return data;
}

TEST(RingAllReduceTest, GivesEveryWorkerTheSum) {
  for (int n : {1, 2, 3, 4, 5}) {
    for (int64_t elements : {0, 1, 3, 1001}) {
      auto data = ring_sum<float>(n, elements, 7, DType::kFloat32);
      for (int r = 0; r < n; ++r) {
        for (int64_t i = 0; i < elements; ++i) {
          ASSERT_EQ(data[r][i], static_cast<float>(n * (n + 1) / 2 * (i % 1000)))
              << "n " << n << " rank " << r << " element " << i;
        }
      }
    }
  }
  auto ints = ring_sum<int64_t>(3, 10, 5, DType::kInt64);
  EXPECT_EQ(ints[2][7], 6 * 7);
}

TEST(RingAllReduceTest, SendsLargeSegmentsInChunks) {
  // Two segments of 6 MiB: two chunks each, delivered in slices of 1 MiB plus 3 bytes.
  const int64_t elements = int64_t{3} << 20;
  auto data = ring_sum<float>(2, elements, (size_t{1} << 20) + 3, DType::kFloat32);
  for (int64_t i : {int64_t{0}, elements / 2 - 1, elements / 2, elements - 1}) {
    EXPECT_EQ(data[0][i], 3.f * static_cast<float>(i % 1000));
    EXPECT_EQ(data[1][i], data[0][i]);
  }
}

TEST(RingAllReduceTest, RefusesWorkersThatDisagree) {
  std::vector<CollectiveMailbox> boxes(2);
  std::vector<float> a(10), b(12);
  auto statuses = on_every_worker(2, [&](int r) {
    FakeLinks links(boxes, r, 64);
    absl::Status s = ring_all_reduce(links, r, 2, DType::kFloat32, r == 0 ? a.data() : b.data(),
                                     r == 0 ? 10 : 12);
    if (!s.ok()) boxes[1 - r].abort(1, s);  // as CollectiveGroup tells the others
    return s;
  });
  // Whichever worker received first found the fault; the other one has its status.
  for (const absl::Status& s : statuses) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), ::testing::AnyOf(HasSubstr("worker 1 sent elements 0 to 6 of a "
                                                        "segment of 6 of 12 float32 (24 bytes) "
                                                        "where this worker expected elements 0 "
                                                        "to 5 of a segment of 5 of 10 float32"),
                                              HasSubstr("worker 0 sent elements 0 to 5 of a "
                                                        "segment of 5 of 10 float32 (20 bytes) "
                                                        "where this worker expected elements 0 "
                                                        "to 6 of a segment of 6 of 12 float32")));
    EXPECT_THAT(s.message(), HasSubstr("every worker must all-reduce values of one shape"));
  }
  FakeLinks links(boxes, 0, 64);
  absl::Status s = ring_all_reduce(links, 0, 2, DType::kBool, a.data(), 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("dtype bool cannot be all-reduced between workers"));
}

// `n` workers whose servers run in this process.
struct Workers {
  Workers(int n, const ServerOptions& options = {}) : spec(testing::loopback_workers(n)) {
    for (int i = 0; i < n; ++i)
      servers.push_back(std::make_unique<Server>(spec, "worker", i, options));
  }
  ClusterSpec spec;
  std::vector<std::unique_ptr<Server>> servers;
};

CollectiveOptions with_timeout(int64_t ms, std::string token = "") {
  CollectiveOptions options;
  options.timeout_ms = ms;
  options.connect.auth_token = std::move(token);
  return options;
}

TEST(CollectiveGroupTest, SumsBetweenTwoAndFourWorkers) {
  for (int n : {2, 4}) {
    Workers workers(n);
    const uint64_t group = 1;
    std::vector<std::vector<float>> data(n);
    auto statuses = on_every_worker(n, [&](int r) -> absl::Status {
      auto g = CollectiveGroup::create(workers.spec, "worker", r, group, with_timeout(5000));
      if (!g.ok()) return g.status();
      data[r].assign(5 << 20, static_cast<float>(r + 1));  // 20 MiB: several chunks
      for (int round = 0; round < 2; ++round) {
        absl::Status s = (*g)->all_reduce_sum(DType::kFloat32, data[r].data(), 5 << 20);
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    });
    const float expected = static_cast<float>(n * (n + 1) / 2 * n);  // summed twice
    for (int r = 0; r < n; ++r) {
      ASSERT_TRUE(statuses[r].ok()) << statuses[r];
      EXPECT_EQ(data[r].front(), expected);
      EXPECT_EQ(data[r].back(), expected);
    }
  }
}

TEST(CollectiveGroupTest, AWorkerGoneFailsEverySurvivorNamingIt) {
  Workers workers(3);
  const uint64_t group = 1;
  std::vector<std::unique_ptr<CollectiveGroup>> groups(3);
  for (const absl::Status& s : on_every_worker(3, [&](int r) -> absl::Status {
         auto g = CollectiveGroup::create(workers.spec, "worker", r, group, with_timeout(3000));
         if (g.ok()) groups[r] = *std::move(g);
         return g.status();
       })) {
    ASSERT_TRUE(s.ok()) << s;
  }
  workers.servers[2].reset();  // worker 2 goes away
  groups[2].reset();
  const std::string lost = absl::StrCat("worker /job:worker/replica:0/task:2 at ",
                                        workers.spec["worker"][2], " is unavailable");
  const auto start = Clock::now();
  std::vector<float> xs(2, 1.f);
  auto statuses = on_every_worker(
      2, [&](int r) { return groups[r]->all_reduce_sum(DType::kFloat32, &xs[r], 1); });
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(3000));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(statuses[r].code(), absl::StatusCode::kUnavailable) << statuses[r];
    EXPECT_THAT(statuses[r].message(), HasSubstr(lost)) << "worker " << r;
    // The group stays failed: the next collective fails at once, alike.
    absl::Status again = groups[r]->all_reduce_sum(DType::kFloat32, &xs[r], 1);
    EXPECT_THAT(again.message(), HasSubstr(lost));
  }
}

TEST(CollectiveGroupTest, TheHeartbeatFindsAWorkerGoneBetweenCollectives) {
  Workers workers(3);
  std::vector<std::unique_ptr<CollectiveGroup>> groups(3);
  for (const absl::Status& s : on_every_worker(3, [&](int r) -> absl::Status {
         auto g = CollectiveGroup::create(workers.spec, "worker", r, 1, with_timeout(1000));
         if (g.ok()) groups[r] = *std::move(g);
         return g.status();
       })) {
    ASSERT_TRUE(s.ok()) << s;
  }
  workers.servers[1].reset();
  groups[1].reset();
  // No collective runs: the heartbeat (every 200 ms here) fails both survivors' groups.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while ((groups[0]->status().ok() || groups[2]->status().ok()) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int r : {0, 2}) {
    EXPECT_EQ(groups[r]->status().code(), absl::StatusCode::kUnavailable) << groups[r]->status();
    EXPECT_THAT(groups[r]->status().message(),
                HasSubstr(absl::StrCat("worker /job:worker/replica:0/task:1 at ",
                                       workers.spec["worker"][1], " is unavailable")));
  }
}

TEST(CollectiveGroupTest, AWorkerThatNeverStartsFailsTheOthersWithinTheTimeout) {
  ClusterSpec spec = testing::loopback_workers(2);
  Server server(spec, "worker", 0);
  const auto start = Clock::now();
  auto g = CollectiveGroup::create(spec, "worker", 0, 1, with_timeout(1000));
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(2500));
  ASSERT_EQ(g.status().code(), absl::StatusCode::kUnavailable) << g.status();
  EXPECT_THAT(g.status().message(), HasSubstr(absl::StrCat("[MultiWorkerMirroredStrategy] worker "
                                                           "/job:worker/replica:0/task:1 at ",
                                                           spec["worker"][1],
                                                           " did not answer within 1000 ms of this "
                                                           "worker's start: is it started?")));
}

TEST(CollectiveGroupTest, RidesTheClustersToken) {
  ServerOptions options;
  options.auth_token = "s3cret";
  Workers workers(2, options);
  const uint64_t group = 1;
  std::vector<float> data(2, 0.f);
  auto statuses = on_every_worker(2, [&](int r) -> absl::Status {
    auto g =
        CollectiveGroup::create(workers.spec, "worker", r, group, with_timeout(5000, "s3cret"));
    if (!g.ok()) return g.status();
    data[r] = static_cast<float>(r + 1);
    return (*g)->all_reduce_sum(DType::kFloat32, &data[r], 1);
  });
  EXPECT_TRUE(statuses[0].ok()) << statuses[0];
  EXPECT_TRUE(statuses[1].ok()) << statuses[1];
  EXPECT_EQ(data[0], 3.f);
  EXPECT_EQ(data[1], 3.f);
  auto refused = CollectiveGroup::create(workers.spec, "worker", 0, 2, with_timeout(5000, "wrong"));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("task:1"));
}

TEST(CollectiveGroupTest, RidesTheClustersMutualTls) {
  testing::TempDir dir;
  if (!testing::make_certs(dir.path())) GTEST_SKIP() << "openssl could not make certificates";
  ServerOptions options;
  options.tls.server_cert_pem = testing::read_text(dir / "server1.pem");
  options.tls.server_key_pem = testing::read_text(dir / "server1.key");
  options.tls.client_ca_pem = testing::read_text(dir / "ca1.pem");
  Workers workers(2, options);
  CollectiveOptions client = with_timeout(5000);
  client.connect.tls.root_cert_pem = testing::read_text(dir / "ca1.pem");
  client.connect.tls.client_cert_pem = testing::read_text(dir / "client1.pem");
  client.connect.tls.client_key_pem = testing::read_text(dir / "client1.key");
  std::vector<double> data(2, 0.0);
  auto statuses = on_every_worker(2, [&](int r) -> absl::Status {
    auto g = CollectiveGroup::create(workers.spec, "worker", r, 1, client);
    if (!g.ok()) return g.status();
    data[r] = r + 0.5;
    return (*g)->all_reduce_sum(DType::kFloat64, &data[r], 1);
  });
  EXPECT_TRUE(statuses[0].ok()) << statuses[0];
  EXPECT_TRUE(statuses[1].ok()) << statuses[1];
  EXPECT_EQ(data[0], 2.0);
  EXPECT_EQ(data[1], 2.0);
  // Without a client certificate the handshake fails: the peer is unavailable to it.
  CollectiveOptions no_certificate = with_timeout(500);
  no_certificate.connect.tls.root_cert_pem = client.connect.tls.root_cert_pem;
  auto refused = CollectiveGroup::create(workers.spec, "worker", 0, 2, no_certificate);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
}

TEST(CollectiveGroupTest, RefusesBadArguments) {
  ClusterSpec spec = testing::loopback_workers(2);
  auto no_server = CollectiveGroup::create(spec, "worker", 0, 1, with_timeout(1000));
  EXPECT_EQ(no_server.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(no_server.status().message(), HasSubstr("this process runs no server for"));
  auto bad_task = CollectiveGroup::create(spec, "worker", 2, 1, with_timeout(1000));
  EXPECT_EQ(bad_task.status().code(), absl::StatusCode::kInvalidArgument);
  auto bad_timeout = CollectiveGroup::create(spec, "worker", 0, 1, with_timeout(0));
  EXPECT_EQ(bad_timeout.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_timeout.status().message(), HasSubstr("timeout must be in (0, 2^31) ms, got 0"));
}

}  // namespace
}  // namespace mt::distributed::internal
