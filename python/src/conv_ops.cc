// The convolutions and pools (runtime/ops/conv_ops.h), with their attributes normalised:
// strides, dilations and ksize of 4 entries, padding "VALID", "SAME" or "EXPLICIT",
// explicit_paddings of 8 (or none), data_format "NHWC" or "NCHW". python/minitensor/nn.py
// gives them TensorFlow's signatures (an int or 2 entries for strides, pairs of paddings).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

std::array<int32_t, 4> four(const std::vector<int32_t>& v, const char* what) {
  if (v.size() != 4) {
    throw std::invalid_argument(std::string(what) + " must have 4 elements, got " +
                                std::to_string(v.size()));
  }
  return {v[0], v[1], v[2], v[3]};
}

Padding padding_of(const std::string& padding) {
  if (padding == "VALID") return Padding::kValid;
  if (padding == "SAME") return Padding::kSame;
  if (padding == "EXPLICIT") return Padding::kExplicit;
  throw std::invalid_argument("padding must be VALID, SAME or EXPLICIT, got " + padding);
}

std::array<int32_t, 8> paddings_of(const std::vector<int32_t>& v) {
  std::array<int32_t, 8> out = {};
  if (v.empty()) return out;
  if (v.size() != 8) {
    throw std::invalid_argument("explicit_paddings must have 8 elements, got " +
                                std::to_string(v.size()));
  }
  for (int i = 0; i < 8; ++i) out[i] = v[i];
  return out;
}

bool channels_first(const std::string& data_format) {
  if (data_format == "NHWC") return false;
  if (data_format == "NCHW") return true;
  throw std::invalid_argument("data_format must be NHWC or NCHW, got " + data_format);
}

nn::Conv2DOptions conv_options(const std::vector<int32_t>& strides, const std::string& padding,
                               const std::vector<int32_t>& explicit_paddings,
                               const std::string& data_format,
                               const std::vector<int32_t>& dilations) {
  nn::Conv2DOptions o;
  o.strides = four(strides, "strides");
  o.padding = padding_of(padding);
  o.explicit_paddings = paddings_of(explicit_paddings);
  o.channels_first = channels_first(data_format);
  o.dilations = four(dilations, "dilations");
  return o;
}

nn::PoolOptions pool_options(const std::vector<int32_t>& ksize, const std::vector<int32_t>& strides,
                             const std::string& padding,
                             const std::vector<int32_t>& explicit_paddings,
                             const std::string& data_format) {
  nn::PoolOptions o;
  o.ksize = four(ksize, "ksize");
  o.strides = four(strides, "strides");
  o.padding = padding_of(padding);
  o.explicit_paddings = paddings_of(explicit_paddings);
  o.channels_first = channels_first(data_format);
  return o;
}

}  // namespace

void bind_conv_ops(nb::module_& m) {
  m.def(
      "conv2d",
      [](const Tensor& input, const Tensor& filters, const std::vector<int32_t>& strides,
         const std::string& padding, const std::vector<int32_t>& explicit_paddings,
         const std::string& data_format, const std::vector<int32_t>& dilations) {
        const nn::Conv2DOptions o =
            conv_options(strides, padding, explicit_paddings, data_format, dilations);
        nb::gil_scoped_release release;
        return nn::conv2d(input, filters, o);
      },
      nb::arg("input"), nb::arg("filters"), nb::arg("strides"), nb::arg("padding"),
      nb::arg("explicit_paddings"), nb::arg("data_format"), nb::arg("dilations"));
  m.def(
      "conv2d_backprop_input",
      [](const std::vector<int64_t>& input_sizes, const Tensor& filters, const Tensor& out_backprop,
         const std::vector<int32_t>& strides, const std::string& padding,
         const std::vector<int32_t>& explicit_paddings, const std::string& data_format,
         const std::vector<int32_t>& dilations) {
        const nn::Conv2DOptions o =
            conv_options(strides, padding, explicit_paddings, data_format, dilations);
        nb::gil_scoped_release release;
        return nn::conv2d_backprop_input(input_sizes, filters, out_backprop, o);
      },
      nb::arg("input_sizes"), nb::arg("filters"), nb::arg("out_backprop"), nb::arg("strides"),
      nb::arg("padding"), nb::arg("explicit_paddings"), nb::arg("data_format"),
      nb::arg("dilations"));
  m.def(
      "conv2d_backprop_filter",
      [](const Tensor& input, const std::vector<int64_t>& filter_sizes, const Tensor& out_backprop,
         const std::vector<int32_t>& strides, const std::string& padding,
         const std::vector<int32_t>& explicit_paddings, const std::string& data_format,
         const std::vector<int32_t>& dilations) {
        const nn::Conv2DOptions o =
            conv_options(strides, padding, explicit_paddings, data_format, dilations);
        nb::gil_scoped_release release;
        return nn::conv2d_backprop_filter(input, filter_sizes, out_backprop, o);
      },
      nb::arg("input"), nb::arg("filter_sizes"), nb::arg("out_backprop"), nb::arg("strides"),
      nb::arg("padding"), nb::arg("explicit_paddings"), nb::arg("data_format"),
      nb::arg("dilations"));
  m.def(
      "max_pool2d",
      [](const Tensor& input, const std::vector<int32_t>& ksize,
         const std::vector<int32_t>& strides, const std::string& padding,
         const std::vector<int32_t>& explicit_paddings, const std::string& data_format) {
        const nn::PoolOptions o =
            pool_options(ksize, strides, padding, explicit_paddings, data_format);
        nb::gil_scoped_release release;
        return nn::max_pool2d(input, o);
      },
      nb::arg("input"), nb::arg("ksize"), nb::arg("strides"), nb::arg("padding"),
      nb::arg("explicit_paddings"), nb::arg("data_format"));
  m.def(
      "avg_pool2d",
      [](const Tensor& input, const std::vector<int32_t>& ksize,
         const std::vector<int32_t>& strides, const std::string& padding,
         const std::string& data_format) {
        const nn::PoolOptions o = pool_options(ksize, strides, padding, {}, data_format);
        nb::gil_scoped_release release;
        return nn::avg_pool2d(input, o);
      },
      nb::arg("input"), nb::arg("ksize"), nb::arg("strides"), nb::arg("padding"),
      nb::arg("data_format"));
  m.def(
      "max_pool_grad",
      [](const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
         const std::vector<int32_t>& ksize, const std::vector<int32_t>& strides,
         const std::string& padding, const std::vector<int32_t>& explicit_paddings,
         const std::string& data_format) {
        const nn::PoolOptions o =
            pool_options(ksize, strides, padding, explicit_paddings, data_format);
        nb::gil_scoped_release release;
        return nn::max_pool_grad(orig_input, orig_output, grad, o);
      },
      nb::arg("orig_input"), nb::arg("orig_output"), nb::arg("grad"), nb::arg("ksize"),
      nb::arg("strides"), nb::arg("padding"), nb::arg("explicit_paddings"), nb::arg("data_format"));
  m.def(
      "avg_pool_grad",
      [](const std::vector<int64_t>& orig_input_shape, const Tensor& grad,
         const std::vector<int32_t>& ksize, const std::vector<int32_t>& strides,
         const std::string& padding, const std::string& data_format) {
        const nn::PoolOptions o = pool_options(ksize, strides, padding, {}, data_format);
        nb::gil_scoped_release release;
        return nn::avg_pool_grad(orig_input_shape, grad, o);
      },
      nb::arg("orig_input_shape"), nb::arg("grad"), nb::arg("ksize"), nb::arg("strides"),
      nb::arg("padding"), nb::arg("data_format"));
}

}  // namespace mt::python
