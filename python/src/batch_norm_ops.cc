// Batch normalisation (runtime/ops/batch_norm_ops.h): FusedBatchNormV3 with all five
// outputs and its gradient, data_format "NHWC" or "NCHW". python/minitensor/_batch_norm.py
// gives them TensorFlow's signatures (tf.compat.v1.nn.fused_batch_norm).
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <stdexcept>
#include <string>
#include <tuple>

#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

nn::FusedBatchNormOptions batch_norm_options(double epsilon, double exponential_avg_factor,
                                             const std::string& data_format, bool is_training) {
  nn::FusedBatchNormOptions o;
  o.epsilon = epsilon;
  o.exponential_avg_factor = exponential_avg_factor;
  if (data_format != "NHWC" && data_format != "NCHW") {
    throw std::invalid_argument("data_format must be NHWC or NCHW, got " + data_format);
  }
  o.channels_first = data_format == "NCHW";
  o.is_training = is_training;
  return o;
}

}  // namespace

void bind_batch_norm_ops(nb::module_& m) {
  m.def(
      "fused_batch_norm_v3",
      [](const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
         const Tensor& variance, double epsilon, double exponential_avg_factor,
         const std::string& data_format, bool is_training) {
        const nn::FusedBatchNormOptions o =
            batch_norm_options(epsilon, exponential_avg_factor, data_format, is_training);
        nb::gil_scoped_release release;
        nn::FusedBatchNormResult r = nn::fused_batch_norm(x, scale, offset, mean, variance, o);
        return std::make_tuple(r.y, r.batch_mean, r.batch_variance, r.reserve_space_1,
                               r.reserve_space_2);
      },
      nb::arg("x"), nb::arg("scale"), nb::arg("offset"), nb::arg("mean"), nb::arg("variance"),
      nb::arg("epsilon") = 0.001, nb::arg("exponential_avg_factor") = 1.0,
      nb::arg("data_format") = "NHWC", nb::arg("is_training") = true);
  m.def(
      "fused_batch_norm_grad",
      [](const Tensor& y_backprop, const Tensor& x, const Tensor& scale,
         const Tensor& reserve_space_1, const Tensor& reserve_space_2, double epsilon,
         const std::string& data_format, bool is_training) {
        const nn::FusedBatchNormOptions o =
            batch_norm_options(epsilon, 1.0, data_format, is_training);
        nb::gil_scoped_release release;
        nn::FusedBatchNormGradResult g =
            nn::fused_batch_norm_grad(y_backprop, x, scale, reserve_space_1, reserve_space_2, o);
        return std::make_tuple(g.x_backprop, g.scale_backprop, g.offset_backprop);
      },
      nb::arg("y_backprop"), nb::arg("x"), nb::arg("scale"), nb::arg("reserve_space_1"),
      nb::arg("reserve_space_2"), nb::arg("epsilon") = 0.001, nb::arg("data_format") = "NHWC",
      nb::arg("is_training") = true);
}

}  // namespace mt::python
