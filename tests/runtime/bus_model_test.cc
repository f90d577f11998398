// BusModel: the links' arithmetic, the two-copy solve and the cache file's format.
#include "runtime/cost/bus_model.h"

#include "gtest/gtest.h"

namespace mt {
namespace {

TEST(BusModelTest, NamesTheLinkBetweenTwoDeviceTypes) {
  EXPECT_EQ(link_between(DeviceType::kCPU, DeviceType::kGPU), Link::kHostToDevice);
  EXPECT_EQ(link_between(DeviceType::kGPU, DeviceType::kCPU), Link::kDeviceToHost);
  EXPECT_EQ(link_between(DeviceType::kGPU, DeviceType::kGPU), Link::kDeviceToDevice);
  EXPECT_EQ(link_between(DeviceType::kCPU, DeviceType::kCPU), Link::kHostToHost);
  EXPECT_STREQ(link_name(Link::kDeviceToHost), "D2H");
}

TEST(BusModelTest, TransferIsLatencyPlusBytesOverBandwidth) {
  BusModel bus;
  EXPECT_FALSE(bus.has(Link::kHostToDevice));
  bus.set(Link::kHostToDevice, LinkCost{9000, 25});
  EXPECT_TRUE(bus.has(Link::kHostToDevice));
  EXPECT_DOUBLE_EQ(bus.transfer_ns(Link::kHostToDevice, 1 << 20), 9000 + (1 << 20) / 25.0);
}

TEST(BusModelTest, SolvesLatencyAndBandwidthFromTwoCopies) {
  LinkCost c = solve_link(4096, 9000 + 4096 / 20.0, 8 << 20, 9000 + (8 << 20) / 20.0);
  EXPECT_NEAR(c.latency_ns, 9000, 1e-6);
  EXPECT_NEAR(c.bytes_per_ns, 20, 1e-9);
}

TEST(BusModelTest, ALargeCopyNoSlowerThanTheSmallGivesNoLatency) {
  LinkCost c = solve_link(4096, 5000, 8 << 20, 4000);
  EXPECT_EQ(c.latency_ns, 0);
  EXPECT_DOUBLE_EQ(c.bytes_per_ns, (8 << 20) / 4000.0);
}

TEST(BusModelTest, RoundTripsThroughItsFile) {
  BusModel bus;
  bus.set(Link::kHostToDevice, LinkCost{9000, 25.5});
  bus.set(Link::kHostToHost, LinkCost{120, 11});
  std::string text = bus.serialize("host-a,CPU:0,GPU:0");
  EXPECT_EQ(text, "minitensor-bus 2\nmachine host-a,CPU:0,GPU:0\nH2H 120 11\nH2D 9000 25.5\n");
  absl::StatusOr<BusModel> back = BusModel::parse(text, "host-a,CPU:0,GPU:0");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_DOUBLE_EQ(back->get(Link::kHostToDevice).bytes_per_ns, 25.5);
  EXPECT_FALSE(back->has(Link::kDeviceToHost));
}

TEST(BusModelTest, RefusesAFileOfAnotherMachine) {
  std::string text = BusModel().serialize("host-a,CPU:0");
  absl::StatusOr<BusModel> back = BusModel::parse(text, "host-b,CPU:0");
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(back.status().message(),
            "written for another machine ('host-a,CPU:0', this is 'host-b,CPU:0')");
}

TEST(BusModelTest, TheNetworkIsNeverWrittenToTheMachinesFile) {
  BusModel bus;
  bus.set(Link::kHostToHost, LinkCost{120, 11});
  bus.set(Link::kNetwork, LinkCost{90000, 1.5});
  EXPECT_EQ(bus.serialize("m"), "minitensor-bus 2\nmachine m\nH2H 120 11\n");
  EXPECT_STREQ(link_name(Link::kNetwork), "NET");
}

TEST(BusModelTest, RefusesACorruptFile) {
  for (const char* text :
       {"", "garbage", "minitensor-bus 3\nmachine m\n",
        "minitensor-bus 2\nmachine m\nH2D nine 25\n", "minitensor-bus 2\nmachine m\nH2D 1 0\n",
        "minitensor-bus 2\nmachine m\nX2Y 1 2\n"}) {
    EXPECT_EQ(BusModel::parse(text, "m").status().code(), absl::StatusCode::kInvalidArgument)
        << text;
  }
  EXPECT_EQ(BusModel::parse("minitensor-bus 2\nmachine m\nH2D nine 25\n", "m").status().message(),
            "line 3 does not parse");
}

}  // namespace
}  // namespace mt
