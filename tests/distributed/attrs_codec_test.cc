// Op attributes through worker.proto and back (distributed/tensor_codec.h): the fields of
// the later rows (Cumsum's exclusive and reverse, Range's bounds, MirrorPad's mode, TopKV2's
// k and sorted, Gelu's approximate, ScatterNd's shape, attention's scale and causal) survive
// the trip, and a message without them (a peer that predates them) decodes to the defaults.
#include <vector>

#include "distributed/tensor_codec.h"
#include "gtest/gtest.h"

namespace mt {
namespace {

using distributed::internal::decode_attrs;
using distributed::internal::encode_attrs;

TEST(AttrsCodecTest, RoundTripsCumsumAndRangeAttributes) {
  OpAttrs attrs;
  attrs.axis = -1;
  attrs.exclusive = true;
  attrs.reverse = true;
  attrs.start = Scalar{0.5, -3, false};
  attrs.limit = Scalar{7.25, 9, false};
  attrs.delta = Scalar{-0.125, 2, false};
  distributed::proto::Attrs message;
  encode_attrs(attrs, &message);
  absl::StatusOr<OpAttrs> back = decode_attrs(message);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->axis, -1);
  EXPECT_TRUE(back->exclusive);
  EXPECT_TRUE(back->reverse);
  EXPECT_EQ(back->start.f, 0.5);
  EXPECT_EQ(back->start.i, -3);
  EXPECT_EQ(back->limit.f, 7.25);
  EXPECT_EQ(back->limit.i, 9);
  EXPECT_EQ(back->delta.f, -0.125);
  EXPECT_EQ(back->delta.i, 2);
}

TEST(AttrsCodecTest, RoundTripsPadAndTopKAttributes) {
  OpAttrs attrs;
  attrs.dims = {1, 2, 0, 3};
  attrs.value = Scalar{2.5, 2, true};
  attrs.symmetric = true;
  attrs.k = 7;
  attrs.sorted = false;
  distributed::proto::Attrs message;
  encode_attrs(attrs, &message);
  absl::StatusOr<OpAttrs> back = decode_attrs(message);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dims, attrs.dims);
  EXPECT_EQ(back->value.f, 2.5);
  EXPECT_TRUE(back->symmetric);
  EXPECT_EQ(back->k, 7);
  EXPECT_FALSE(back->sorted);
  attrs.symmetric = false;
  attrs.sorted = true;
  distributed::proto::Attrs second;  // encode_attrs appends to repeated fields
  encode_attrs(attrs, &second);
  back = decode_attrs(second);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->symmetric);
  EXPECT_TRUE(back->sorted);
}

TEST(AttrsCodecTest, RoundTripsGeluAndScatterNdAttributes) {
  OpAttrs attrs;
  attrs.approximate = true;
  attrs.dims = {5, 3, 33};  // ScatterNd's shape
  distributed::proto::Attrs message;
  encode_attrs(attrs, &message);
  absl::StatusOr<OpAttrs> back = decode_attrs(message);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->approximate);
  EXPECT_EQ(std::vector<int64_t>(back->dims.begin(), back->dims.end()),
            (std::vector<int64_t>{5, 3, 33}));
}

TEST(AttrsCodecTest, RoundTripsAttentionAttributes) {
  OpAttrs attrs;
  attrs.scale = 0.125;
  attrs.causal = true;
  distributed::proto::Attrs message;
  encode_attrs(attrs, &message);
  absl::StatusOr<OpAttrs> back = decode_attrs(message);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->scale, 0.125);
  EXPECT_TRUE(back->causal);
}

TEST(AttrsCodecTest, AnOlderMessageDecodesToTheDefaults) {
  absl::StatusOr<OpAttrs> back = decode_attrs(distributed::proto::Attrs());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->exclusive);
  EXPECT_FALSE(back->reverse);
  EXPECT_FALSE(back->approximate);
  EXPECT_FALSE(back->causal);
  EXPECT_EQ(back->start.i, 0);
  EXPECT_EQ(back->limit.i, 0);
}

}  // namespace
}  // namespace mt
