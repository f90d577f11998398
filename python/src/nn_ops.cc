// The neural-network ops (runtime/ops/nn_ops.h): softmax and log_softmax over the last axis,
// bias_add, sparse_softmax_cross_entropy_with_logits and gelu.
// python/minitensor/nn.py gives them TensorFlow's signatures (the `axis` argument).
#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {

void bind_nn_ops(nb::module_& m) {
  using Release = nb::call_guard<nb::gil_scoped_release>;
  m.def("softmax", &nn::softmax, Release(), nb::arg("logits"));
  m.def("log_softmax", &nn::log_softmax, Release(), nb::arg("logits"));
  m.def("gelu", &nn::gelu, Release(), nb::arg("features"), nb::arg("approximate") = false);
  m.def("bias_add", &nn::bias_add, Release(), nb::arg("value"), nb::arg("bias"));
  m.def("sparse_softmax_cross_entropy_with_logits", &nn::sparse_softmax_cross_entropy_with_logits,
        Release(), nb::arg("labels"), nb::arg("logits"));
}

}  // namespace mt::python
