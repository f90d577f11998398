// Large tensors in parts over several connections (Note [Transfers over several
// connections] in distributed/bulk_service.h): bit-exact both ways, and every way a part
// can be wrong refused with nothing left on the task.
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "distributed/bulk_service.h"
#include "gmock/gmock.h"
#include "tests/distributed/distributed_fixture.h"
#include "tests/distributed/raw_client.h"

namespace mt {
namespace {

using ::testing::HasSubstr;
using testing::RawClient;
namespace proto = distributed::proto;
using distributed::internal::part_count;
using distributed::internal::part_range;

// The client splits large tensors over 3 connections: parts of uneven ends.
class BulkPartsTest : public testing::DistributedTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    config::ConnectOptions options;
    options.rpc_timeout_ms = 10'000;
    options.connect_timeout_ms = 10'000;
    options.bulk_connections = 3;
    config::experimental_connect_to_cluster(*spec_, "localhost", 0, options);
  }
  static int64_t pool_bytes(RawClient& client) {
    int64_t bytes = 0, allocs = 0;
    EXPECT_TRUE(client.memory(&bytes, &allocs).ok());
    return bytes;
  }
};

// An upload in parts' first call: a float32 tensor of `count` values in `parts` parts.
proto::UploadRequest header(uint64_t handle, int64_t count, int parts) {
  proto::UploadRequest h;
  h.set_handle(handle);
  h.mutable_value()->set_dtype(static_cast<int>(DType::kFloat32));
  h.mutable_value()->add_dims(count);
  h.set_parts(parts);
  return h;
}

proto::UploadRequest part(uint64_t handle, int part) {
  proto::UploadRequest h;
  h.set_handle(handle);
  h.set_part(part);
  return h;
}

// Part `i` (1-based) of `parts` of `bytes`.
std::string_view part_bytes(std::string_view bytes, int parts, int i) {
  auto [begin, end] = part_range(bytes.size(), parts, i - 1);
  return bytes.substr(begin, end - begin);
}

std::string_view as_bytes(const std::vector<float>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)};
}

TEST(PartRangeTest, SplitsEvenlyWithoutGapsOrEmptyParts) {
  EXPECT_EQ(part_count(size_t{64} << 20, 8), 8);
  EXPECT_EQ(part_count(size_t{64} << 20, 32), 16);  // no part under 4 MiB
  EXPECT_EQ(part_count(size_t{9} << 20, 8), 2);
  EXPECT_EQ(part_count(size_t{5} << 20, 8), 1);  // whole
  EXPECT_EQ(part_count(size_t{64} << 20, 1), 1);
  for (size_t bytes : {size_t{7}, size_t{64}, size_t{1000003}}) {
    for (int parts : {2, 3, 7}) {
      size_t at = 0;
      for (int i = 0; i < parts; ++i) {
        auto [begin, end] = part_range(bytes, parts, i);
        EXPECT_EQ(begin, at);
        EXPECT_GE(end - begin, bytes / parts);
        EXPECT_LE(end - begin, bytes / parts + 1);
        at = end;
      }
      EXPECT_EQ(at, bytes);
    }
  }
}

TEST_F(BulkPartsTest, SendsAndReadsATensorInPartsBitExact) {
  const int64_t n = (int64_t{20} << 20) / 4 + 3;  // 20 MiB and 12 bytes: 3 parts, 2 pieces each
  ASSERT_EQ(part_count(n * 4, 3), 3);
  std::vector<int32_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<int32_t>(i * 2654435761u);
  Tensor local = constant(values, {n});
  const int64_t before0 = config::get_memory_info(worker_cpu(0)).current;
  const int64_t before1 = config::get_memory_info(worker_cpu(1)).current;
  Tensor on0, on1;
  {
    DeviceScope scope(worker_cpu(0));
    on0 = identity(local);
  }
  {
    DeviceScope scope(worker_cpu(1));
    on1 = identity(on0);  // read from task 0 in parts, sent to task 1 in parts
  }
  EXPECT_EQ(on0.to_vector<int32_t>(), values);
  EXPECT_EQ(on1.to_vector<int32_t>(), values);
  on0 = Tensor();
  on1 = Tensor();
  EXPECT_EQ(config::get_memory_info(worker_cpu(0)).current, before0);
  EXPECT_EQ(config::get_memory_info(worker_cpu(1)).current, before1);
}

TEST_F(BulkPartsTest, RefusesATensorUntilEveryPartArrived) {
  RawClient client(address(0));
  const int64_t before = pool_bytes(client);
  std::vector<float> values(1000);
  std::iota(values.begin(), values.end(), 0.f);
  const std::string_view bytes = as_bytes(values);
  ASSERT_TRUE(client.upload(header(501, 1000, 2), {}).ok());
  ASSERT_TRUE(client.upload(part(501, 2), {part_bytes(bytes, 2, 2)}).ok());  // any order
  proto::FetchRequest whole;
  whole.set_handle(501);
  std::string back;
  grpc::Status s = client.fetch_pieces(whole, bytes.size(), &back);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(),
              HasSubstr("[Fetch] tensor handle 501 is still being uploaded (parts are missing)"));
  uint64_t sum = 0;
  s = client.add(501, 501, &sum);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("[AddV2] tensor handle 501 is still being uploaded"));
  ASSERT_TRUE(client.upload(part(501, 1), {part_bytes(bytes, 2, 1)}).ok());
  ASSERT_TRUE(client.fetch_pieces(whole, bytes.size(), &back).ok());
  EXPECT_EQ(back, bytes);
  proto::FetchRequest some = whole;  // a part of it: values 1 and 2
  some.set_offset(4);
  some.set_length(8);
  ASSERT_TRUE(client.fetch_pieces(some, 8, &back).ok());
  EXPECT_EQ(back, bytes.substr(4, 8));
  ASSERT_TRUE(client.remove({501}).ok());
  EXPECT_EQ(pool_bytes(client), before);
}

// A part that is wrong ends the upload: the task frees the tensor at once.
TEST_F(BulkPartsTest, FreesTheTensorWhenAPartIsWrong) {
  RawClient client(address(0));
  const int64_t before = pool_bytes(client);
  std::vector<float> values(1000, 1.f);
  const std::string_view bytes = as_bytes(values);
  struct Case {
    const char* name;
    proto::UploadRequest part;
    std::vector<std::string_view> pieces;
    grpc::StatusCode code;
    std::string message;
  };
  const Case cases[] = {
      {"too few bytes",
       part(502, 2),
       {part_bytes(bytes, 2, 2).substr(4)},
       grpc::StatusCode::INVALID_ARGUMENT,
       "[Upload] part 2 of 2 of tensor handle 502 (2000 bytes) but carries 1996 bytes"},
      {"too many bytes",
       part(502, 1),
       {bytes.substr(0, 2004)},
       grpc::StatusCode::INVALID_ARGUMENT,
       "[Upload] part 1 of 2 of tensor handle 502 (2000 bytes) but carries more than that"},
      {"out of range",
       part(502, 3),
       {},
       grpc::StatusCode::INVALID_ARGUMENT,
       "[Upload] part 3 of tensor handle 502 (of 2 parts) is out of range or was sent before"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(client.upload(header(502, 1000, 2), {}).ok());
    ASSERT_GT(pool_bytes(client), before);
    grpc::Status s = client.upload(c.part, c.pieces);
    EXPECT_EQ(s.error_code(), c.code);
    EXPECT_THAT(s.error_message(), HasSubstr(c.message));
    EXPECT_EQ(pool_bytes(client), before);
    s = client.upload(part(502, 1), {part_bytes(bytes, 2, 1)});  // too late: it is gone
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(s.error_message(),
                HasSubstr("[Upload] tensor handle 502 is not on this task waiting for parts"));
  }
  // A part sent twice: refused, and the tensor with it.
  ASSERT_TRUE(client.upload(header(503, 1000, 2), {}).ok());
  ASSERT_TRUE(client.upload(part(503, 1), {part_bytes(bytes, 2, 1)}).ok());
  grpc::Status s = client.upload(part(503, 1), {part_bytes(bytes, 2, 1)});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("part 1 of tensor handle 503 (of 2 parts) is out of "
                                           "range or was sent before"));
  EXPECT_EQ(pool_bytes(client), before);
  // A complete tensor takes no parts, and a part naming it leaves it alone.
  ASSERT_TRUE(client.upload(header(504, 1000, 2), {}).ok());
  ASSERT_TRUE(client.upload(part(504, 1), {part_bytes(bytes, 2, 1)}).ok());
  ASSERT_TRUE(client.upload(part(504, 2), {part_bytes(bytes, 2, 2)}).ok());
  EXPECT_EQ(client.upload(part(504, 2), {part_bytes(bytes, 2, 2)}).error_code(),
            grpc::StatusCode::NOT_FOUND);
  std::vector<float> read;
  ASSERT_TRUE(client.fetch(504, &read).ok());
  EXPECT_EQ(read, values);
  ASSERT_TRUE(client.remove({504}).ok());
  EXPECT_EQ(pool_bytes(client), before);
}

TEST_F(BulkPartsTest, RefusesBadPartCountsAndRanges) {
  RawClient client(address(0));
  const int64_t before = pool_bytes(client);
  for (int parts : {1, distributed::internal::kMaxParts + 1}) {
    grpc::Status s = client.upload(header(505, 1000, parts), {});
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(),
                HasSubstr(absl::StrCat("[Upload] a tensor of 4000 bytes cannot come in ", parts,
                                       " parts (2 to 64, and no more than its bytes)")));
  }
  grpc::Status s = client.upload(header(505, 1, 8), {});  // 4 bytes in 8 parts
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const float one = 1.f;
  s = client.upload(header(505, 1, 2),
                    {std::string_view(reinterpret_cast<const char*>(&one), sizeof(one))});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("[Upload] the first call of an upload in parts "
                                           "carries bytes (its parts carry them)"));
  s = client.upload(part(506, 1), {});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(pool_bytes(client), before);

  uint64_t h = 0;
  ASSERT_TRUE(client.constant({1.f, 2.f, 3.f}, &h).ok());
  const struct {
    uint64_t offset, length;
  } bad[] = {{4, 0}, {0, 13}, {8, 5}, {13, 1}, {UINT64_MAX, 2}, {4, UINT64_MAX}};
  for (const auto& r : bad) {
    proto::FetchRequest request;
    request.set_handle(h);
    request.set_offset(r.offset);
    request.set_length(r.length);
    std::string back;
    s = client.fetch_pieces(request, 12, &back);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << r.offset << " " << r.length;
    EXPECT_THAT(s.error_message(),
                HasSubstr(absl::StrCat("[Fetch] ", r.length, " bytes from byte ", r.offset,
                                       " are not a part of the tensor's 12 bytes")));
  }
  proto::FetchRequest ranged;  // Worker's Fetch reads whole tensors only
  ranged.set_handle(h);
  ranged.set_length(4);
  std::vector<float> values;
  s = client.fetch(ranged, &values);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("[Fetch] a part of a tensor is read on Bulk's Fetch"));
  ASSERT_TRUE(client.remove({h}).ok());
}

}  // namespace
}  // namespace mt
