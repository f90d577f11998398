// Layer normalisation (runtime/ops/layer_norm_ops.h): LayerNorm with its three outputs, its
// gradient, and AddLayerNorm with its four. python/minitensor/_layer_norm.py converts the
// arguments (mt.nn.layer_norm, mt.nn.add_layer_norm).
#include <nanobind/stl/tuple.h>

#include <tuple>

#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {

void bind_layer_norm_ops(nb::module_& m) {
  m.def(
      "layer_norm",
      [](const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t begin_norm_axis,
         double epsilon) {
        nb::gil_scoped_release release;
        nn::LayerNormResult r = nn::layer_norm(x, gamma, beta, {begin_norm_axis, epsilon});
        return std::make_tuple(r.y, r.mean, r.inv_std);
      },
      nb::arg("x"), nb::arg("gamma"), nb::arg("beta"), nb::arg("begin_norm_axis") = -1,
      nb::arg("epsilon") = 0.001);
  m.def(
      "add_layer_norm",
      [](const Tensor& x, const Tensor& residual, const Tensor& gamma, const Tensor& beta,
         int64_t begin_norm_axis, double epsilon) {
        nb::gil_scoped_release release;
        nn::AddLayerNormResult r =
            nn::add_layer_norm(x, residual, gamma, beta, {begin_norm_axis, epsilon});
        return std::make_tuple(r.y, r.sum, r.mean, r.inv_std);
      },
      nb::arg("x"), nb::arg("residual"), nb::arg("gamma"), nb::arg("beta"),
      nb::arg("begin_norm_axis") = -1, nb::arg("epsilon") = 0.001);
  m.def(
      "layer_norm_grad",
      [](const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
         const Tensor& inv_std, int64_t begin_norm_axis, double epsilon) {
        nb::gil_scoped_release release;
        nn::LayerNormGradResult g =
            nn::layer_norm_grad(dy, x, gamma, mean, inv_std, {begin_norm_axis, epsilon});
        return std::make_tuple(g.dx, g.dgamma, g.dbeta);
      },
      nb::arg("dy"), nb::arg("x"), nb::arg("gamma"), nb::arg("mean"), nb::arg("inv_std"),
      nb::arg("begin_norm_axis") = -1, nb::arg("epsilon") = 0.001);
}

}  // namespace mt::python
