// The attributes of an op call as a remote task receives them (distributed/tensor_codec.h):
// those of batch normalisation, whose defaults differ from the protocol's zeros.
#include "distributed/tensor_codec.h"

#include "gtest/gtest.h"

namespace mt::distributed::internal {
namespace {

TEST(TensorCodecTest, BatchNormAttributesRoundTrip) {
  for (bool training : {true, false}) {
    OpAttrs attrs;
    attrs.epsilon = 0.5;
    attrs.exponential_avg_factor = 0.25;
    attrs.is_training = training;
    attrs.channels_first = true;
    proto::Attrs wire;
    encode_attrs(attrs, &wire);
    const absl::StatusOr<OpAttrs> back = decode_attrs(wire);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->epsilon, 0.5);
    EXPECT_EQ(back->exponential_avg_factor, 0.25);
    EXPECT_EQ(back->is_training, training);
    EXPECT_TRUE(back->channels_first);
  }
  // TensorFlow's defaults (training, a factor of 1) survive the trip too.
  proto::Attrs wire;
  encode_attrs(OpAttrs(), &wire);
  const absl::StatusOr<OpAttrs> back = decode_attrs(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->is_training);
  EXPECT_EQ(back->exponential_avg_factor, 1);
}

}  // namespace
}  // namespace mt::distributed::internal
