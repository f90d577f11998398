#include "distributed/tensor_codec.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace mt::distributed::internal {

absl::Status encode_tensor(const mt::internal::TensorImpl& t, proto::TensorValue* out) {
  out->set_dtype(static_cast<int>(t.dtype));
  for (int64_t d : t.shape.dims()) out->add_dims(d);
  std::string* data = out->mutable_data();
  data->resize(t.bytes());
  if (t.bytes() == 0) return absl::OkStatus();
  return t.device->copy_to_host(data->data(), t.data, t.bytes());
}

absl::StatusOr<DType> decode_dtype(int dtype, const char* what) {
  if (dtype < 0 || dtype >= kNumDTypes) {
    return absl::InvalidArgumentError(absl::StrCat(what, " has unknown dtype ", dtype));
  }
  return static_cast<DType>(dtype);
}

absl::StatusOr<DecodedValue> decode_value(const proto::TensorValue& value, const char* what,
                                          bool with_bytes) {
  MT_ASSIGN_OR_RETURN(DType dtype, decode_dtype(value.dtype(), what));
  std::vector<int64_t> dims(value.dims().begin(), value.dims().end());
  absl::StatusOr<Shape> shape = Shape::make(dims);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", shape.status().message()));
  }
  size_t expected = with_bytes ? static_cast<size_t>(shape->num_elements()) * dtype_size(dtype) : 0;
  if (value.data().size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " declares shape ", shape->to_string(), " of ", dtype_name(dtype), " (",
                     expected, " bytes) but carries ", value.data().size(), " bytes"));
  }
  return DecodedValue{dtype, *std::move(shape)};
}

void encode_attrs(const OpAttrs& attrs, proto::Attrs* out) {
  out->set_transpose_a(attrs.transpose_a);
  out->set_transpose_b(attrs.transpose_b);
  for (int64_t axis : attrs.axes) out->add_axes(axis);
  out->set_reduce_all(attrs.reduce_all);
  out->set_keep_dims(attrs.keep_dims);
  out->set_dst_dtype(static_cast<int>(attrs.dst_dtype));
  out->set_value_f(attrs.value.f);
  out->set_value_i(attrs.value.i);
  out->set_value_b(attrs.value.b);
  for (int64_t d : attrs.dims) out->add_dims(d);
  for (int64_t d : attrs.dims2) out->add_dims2(d);
  for (int64_t d : attrs.dims3) out->add_dims3(d);
  out->set_axis(attrs.axis);
  out->set_num_split(attrs.num_split);
  out->set_depth(attrs.depth);
  out->set_off_value_f(attrs.off_value.f);
  out->set_off_value_i(attrs.off_value.i);
  out->set_off_value_b(attrs.off_value.b);
  out->set_begin_mask(attrs.begin_mask);
  out->set_end_mask(attrs.end_mask);
  out->set_ellipsis_mask(attrs.ellipsis_mask);
  out->set_new_axis_mask(attrs.new_axis_mask);
  out->set_shrink_axis_mask(attrs.shrink_axis_mask);
  for (uint32_t w : attrs.philox.key.word) out->add_philox_key(w);
  for (uint32_t w : attrs.philox.counter.word) out->add_philox_counter(w);
  out->set_minval_f(attrs.minval.f);
  out->set_minval_i(attrs.minval.i);
  out->set_maxval_f(attrs.maxval.f);
  out->set_maxval_i(attrs.maxval.i);
  out->set_mean(attrs.mean);
  out->set_stddev(attrs.stddev);
  out->set_beta_1(attrs.beta_1);
  out->set_beta_2(attrs.beta_2);
  out->set_epsilon(attrs.epsilon);
  for (int32_t v : attrs.strides) out->add_strides(v);
  for (int32_t v : attrs.dilations) out->add_dilations(v);
  for (int32_t v : attrs.ksize) out->add_ksize(v);
  out->set_padding(static_cast<int32_t>(attrs.padding));
  for (int32_t v : attrs.explicit_paddings) out->add_explicit_paddings(v);
  out->set_channels_first(attrs.channels_first);
  out->set_exclusive(attrs.exclusive);
  out->set_reverse(attrs.reverse);
  out->set_start_f(attrs.start.f);
  out->set_start_i(attrs.start.i);
  out->set_limit_f(attrs.limit.f);
  out->set_limit_i(attrs.limit.i);
  out->set_delta_f(attrs.delta.f);
  out->set_delta_i(attrs.delta.i);
  out->set_is_training(attrs.is_training);
  out->set_exponential_avg_factor(attrs.exponential_avg_factor);
  out->set_symmetric(attrs.symmetric);
  out->set_k(attrs.k);
  out->set_sorted(attrs.sorted);
  out->set_approximate(attrs.approximate);
  out->set_scale(attrs.scale);
  out->set_causal(attrs.causal);
}

namespace {

// Fills `out` from a repeated field of its size, or leaves it when the field is empty.
template <typename Field, size_t N>
absl::Status decode_array(const Field& field, const char* name, std::array<int32_t, N>* out) {
  if (field.empty()) return absl::OkStatus();
  if (static_cast<size_t>(field.size()) != N) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute ", name, " must have ", N, " entries, got ", field.size()));
  }
  std::copy(field.begin(), field.end(), out->begin());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OpAttrs> decode_attrs(const proto::Attrs& in) {
  OpAttrs attrs;
  attrs.transpose_a = in.transpose_a();
  attrs.transpose_b = in.transpose_b();
  attrs.axes.assign(in.axes().begin(), in.axes().end());
  attrs.reduce_all = in.reduce_all();
  attrs.keep_dims = in.keep_dims();
  MT_ASSIGN_OR_RETURN(attrs.dst_dtype, decode_dtype(in.dst_dtype(), "attribute dst_dtype"));
  attrs.value = Scalar{in.value_f(), in.value_i(), in.value_b()};
  attrs.dims.assign(in.dims().begin(), in.dims().end());
  attrs.dims2.assign(in.dims2().begin(), in.dims2().end());
  attrs.dims3.assign(in.dims3().begin(), in.dims3().end());
  attrs.axis = in.axis();
  attrs.num_split = in.num_split();
  attrs.depth = in.depth();
  attrs.off_value = Scalar{in.off_value_f(), in.off_value_i(), in.off_value_b()};
  attrs.begin_mask = in.begin_mask();
  attrs.end_mask = in.end_mask();
  attrs.ellipsis_mask = in.ellipsis_mask();
  attrs.new_axis_mask = in.new_axis_mask();
  attrs.shrink_axis_mask = in.shrink_axis_mask();
  // An empty key and counter (a peer that predates the random ops) leave them zero.
  if (in.philox_key_size() != 0 && in.philox_key_size() != 2) {
    return absl::InvalidArgumentError("attribute philox_key must have 2 words");
  }
  if (in.philox_counter_size() != 0 && in.philox_counter_size() != 4) {
    return absl::InvalidArgumentError("attribute philox_counter must have 4 words");
  }
  for (int i = 0; i < in.philox_key_size(); ++i) attrs.philox.key.word[i] = in.philox_key(i);
  for (int i = 0; i < in.philox_counter_size(); ++i) {
    attrs.philox.counter.word[i] = in.philox_counter(i);
  }
  attrs.minval = Scalar{in.minval_f(), in.minval_i(), false};
  attrs.maxval = Scalar{in.maxval_f(), in.maxval_i(), false};
  attrs.mean = in.mean();
  attrs.stddev = in.stddev();
  attrs.beta_1 = in.beta_1();
  attrs.beta_2 = in.beta_2();
  attrs.epsilon = in.epsilon();
  MT_RETURN_IF_ERROR(decode_array(in.strides(), "strides", &attrs.strides));
  MT_RETURN_IF_ERROR(decode_array(in.dilations(), "dilations", &attrs.dilations));
  MT_RETURN_IF_ERROR(decode_array(in.ksize(), "ksize", &attrs.ksize));
  MT_RETURN_IF_ERROR(
      decode_array(in.explicit_paddings(), "explicit_paddings", &attrs.explicit_paddings));
  if (in.padding() < 0 || in.padding() > static_cast<int32_t>(Padding::kExplicit)) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute padding ", in.padding(), " is not VALID, SAME or EXPLICIT"));
  }
  attrs.padding = static_cast<Padding>(in.padding());
  attrs.channels_first = in.channels_first();
  attrs.exclusive = in.exclusive();
  attrs.reverse = in.reverse();
  attrs.start = Scalar{in.start_f(), in.start_i(), false};
  attrs.limit = Scalar{in.limit_f(), in.limit_i(), false};
  attrs.delta = Scalar{in.delta_f(), in.delta_i(), false};
  attrs.is_training = in.is_training();
  attrs.exponential_avg_factor = in.exponential_avg_factor();
  attrs.symmetric = in.symmetric();
  attrs.k = in.k();
  attrs.sorted = in.sorted();
  attrs.approximate = in.approximate();
  attrs.scale = in.scale();
  attrs.causal = in.causal();
  return attrs;
}

}  // namespace mt::distributed::internal
