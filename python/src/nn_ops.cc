// The neural-network ops (runtime/nn_ops.h): softmax and log_softmax over the last axis.
// python/minitensor/nn.py gives them TensorFlow's signatures (the `axis` argument).
#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {

void bind_nn_ops(nb::module_& m) {
  using Release = nb::call_guard<nb::gil_scoped_release>;
  m.def("softmax", &nn::softmax, Release(), nb::arg("logits"));
  m.def("log_softmax", &nn::log_softmax, Release(), nb::arg("logits"));
}

}  // namespace mt::python
