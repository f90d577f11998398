// Dot-product attention (runtime/ops/attention_ops.h): DotProductAttention with its two
// outputs and its gradient. python/minitensor/_attention.py converts the arguments and gives
// Keras's signature (mt.nn.dot_product_attention).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/tuple.h>

#include <optional>
#include <tuple>

#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {

void bind_attention_ops(nb::module_& m) {
  m.def(
      "dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<double> scale,
         bool causal) {
        nb::gil_scoped_release release;
        nn::DotProductAttentionResult r = nn::dot_product_attention(q, k, v, {scale, causal});
        return std::make_tuple(r.o, r.lse);
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("scale") = nb::none(),
      nb::arg("causal") = false);
  m.def(
      "dot_product_attention_grad",
      [](const Tensor& d_o, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
         const Tensor& lse, std::optional<double> scale, bool causal) {
        nb::gil_scoped_release release;
        nn::DotProductAttentionGradResult g =
            nn::dot_product_attention_grad(d_o, q, k, v, o, lse, {scale, causal});
        return std::make_tuple(g.dq, g.dk, g.dv);
      },
      nb::arg("do"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("o"), nb::arg("lse"),
      nb::arg("scale") = nb::none(), nb::arg("causal") = false);
}

}  // namespace mt::python
