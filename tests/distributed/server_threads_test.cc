// The sync server's completion queues and pollers (ServerOptions::num_cqs, min_pollers,
// max_pollers; mt-server --num_cqs, --min_pollers, --max_pollers): bad settings refused
// with what was wrong, and a task with more of both serving large tensors in parts.
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/bulk_service.h"
#include "gmock/gmock.h"
#include "tests/distributed/auth_fixture.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::expect_error;
using ::testing::HasSubstr;

class ServerThreadsTest : public testing::RuntimeTest {
 protected:
  testing::TempDir dir_;
};

TEST_F(ServerThreadsTest, RefusesSettingsOutOfRange) {
  struct Case {
    int num_cqs, min_pollers, max_pollers;
    std::string message;
  } cases[] = {
      {-1, 0, 0, "[Server] num_cqs must be in [0, 64] (0: gRPC's default), got -1"},
      {65, 0, 0, "[Server] num_cqs must be in [0, 64] (0: gRPC's default), got 65"},
      {0, 257, 0, "[Server] min_pollers must be in [0, 256] (0: gRPC's default), got 257"},
      {0, 0, -2, "[Server] max_pollers must be in [0, 256] (0: gRPC's default), got -2"},
      {0, 8, 4, "[Server] min_pollers (8) must not exceed max_pollers (4)"},
  };
  for (const Case& c : cases) {
    distributed::ServerOptions options;
    options.num_cqs = c.num_cqs;
    options.min_pollers = c.min_pollers;
    options.max_pollers = c.max_pollers;
    Error e = expect_error(
        [&] { distributed::Server(testing::loopback_workers(1), "worker", 0, options); });
    EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(e.what(), HasSubstr(c.message));
  }
}

TEST_F(ServerThreadsTest, MtServerRefusesBadFlags) {
  std::string spec = absl::StrCat("worker=127.0.0.1:", distributed::pick_unused_loopback_port());
  testing::expect_server_refuses(
      spec,
      {
          {{"--num_cqs", "65"}, 1, "mt-server: [Server] num_cqs must be in [0, 64]"},
          {{"--min_pollers", "8", "--max_pollers", "4"},
           1,
           "mt-server: [Server] min_pollers (8) must not exceed max_pollers (4)"},
          {{"--max_pollers", "-1"}, 2, "mt-server: --max_pollers needs a number >= 0"},
          {{"--num_cqs", "four"}, 2, "mt-server: --num_cqs needs a number >= 0"},
      },
      dir_ / "log");
}

// min_pollers alone above gRPC's default maximum (2) raises the maximum with it.
TEST_F(ServerThreadsTest, ServesTensorsInPartsWithMoreQueuesAndPollers) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  testing::WorkerProcess worker;
  worker.start(spec, 0, {"--num_cqs", "4", "--min_pollers", "4"});
  config::ConnectOptions options;
  options.connect_timeout_ms = 10'000;
  options.bulk_connections = 4;
  config::experimental_connect_to_cluster(spec, "localhost", 0, options);
  const int64_t n = (int64_t{16} << 20) / 4 + 1;  // 16 MiB and 4 bytes: 4 parts
  ASSERT_EQ(distributed::internal::part_count(n * 4, 4), 4);
  std::vector<int32_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<int32_t>(i * 2654435761u);
  Tensor remote;
  {
    DeviceScope scope("/job:worker/task:0");
    remote = identity(constant(values, {n}));
  }
  EXPECT_EQ(remote.to_vector<int32_t>(), values);
}

}  // namespace
}  // namespace mt
