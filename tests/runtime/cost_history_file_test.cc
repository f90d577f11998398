// The cost policy's history file: round trip, and the files it refuses (corrupt, another
// machine or version) or reads in part (devices and ops this process lacks).
#include "runtime/cost/cost_history_file.h"

#include "gtest/gtest.h"
#include "tests/runtime/fake_cost_clock.h"

namespace mt {
namespace {

class CostHistoryFileTest : public ::testing::Test {
 protected:
  testing::FakeCostClock clock_;
  CostModel model_{{{DeviceType::kCPU, "CPU:0"}, {DeviceType::kGPU, "GPU:0"}}, &clock_};
};

TEST_F(CostHistoryFileTest, RoundTripsEveryRecord) {
  std::vector<CostRecord> records = {
      {OpId::kMatMul, DType::kFloat32, 21, 1, 12, 8345.25, 1048576},
      {OpId::kAddV2, DType::kInt32, 4, 0, 3, 310, 12},
  };
  std::string text = serialize_cost_history(model_, records, "host,CPU:0,GPU:0");
  EXPECT_EQ(text,
            "minitensor-placement-history 1\nmachine host,CPU:0,GPU:0\n"
            "GPU:0 MatMul float32 21 12 8345.25 1048576\nCPU:0 AddV2 int32 4 3 310 12\n");
  absl::StatusOr<std::vector<CostRecord>> back =
      parse_cost_history(model_, text, "host,CPU:0,GPU:0");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].op, OpId::kMatMul);
  EXPECT_EQ((*back)[0].device, 1);
  EXPECT_EQ((*back)[0].count, 12);
  EXPECT_DOUBLE_EQ((*back)[0].mean_ns, 8345.25);
  EXPECT_EQ((*back)[1].dtype, DType::kInt32);
}

TEST_F(CostHistoryFileTest, RefusesAFileOfAnotherMachine) {
  std::string text = serialize_cost_history(model_, {}, "host-a,CPU:0,GPU:0");
  absl::Status s = parse_cost_history(model_, text, "host-b,CPU:0").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "written on another machine ('host-a,CPU:0,GPU:0', this is 'host-b,CPU:0')");
}

TEST_F(CostHistoryFileTest, RefusesACorruptFileWhole) {
  const std::string head = "minitensor-placement-history 1\nmachine m\n";
  for (std::string text :
       {std::string(""), std::string("\x01\x02 binary"),
        std::string("minitensor-placement-history 9\n"),
        head + "GPU:0 MatMul float32 21 12 8345.25\n", head + "GPU:0 MatMul float32 x 12 1 1\n",
        head + "GPU:0 MatMul float32 21 0 1 1\n", head + "GPU:0 MatMul float32 99 1 1 1\n",
        head + "GPU:0 MatMul float32 21 1 -5 1\n"}) {
    EXPECT_EQ(parse_cost_history(model_, text, "m").status().code(),
              absl::StatusCode::kInvalidArgument)
        << text;
  }
  EXPECT_EQ(parse_cost_history(model_, head + "CPU:0 AddV2 int32 4 3 310 12\nbad\n", "m")
                .status()
                .message(),
            "line 4 does not parse");
}

TEST_F(CostHistoryFileTest, SkipsEntriesOfDevicesAndOpsThisProcessLacks) {
  const std::string text =
      "minitensor-placement-history 1\nmachine m\n"
      "GPU:7 MatMul float32 21 12 1 1\nCPU:0 NoSuchOp float32 21 12 1 1\n"
      "CPU:0 MatMul float99 21 12 1 1\nCPU:0 MatMul float32 21 12 1 1\n";
  absl::StatusOr<std::vector<CostRecord>> back = parse_cost_history(model_, text, "m");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].device, 0);
}

}  // namespace
}  // namespace mt
