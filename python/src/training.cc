// Variables, the gradient tape and the optimizers (runtime/train/variable.h,
// runtime/autodiff/gradient_tape.h, runtime/train/optimizers.h). The package gives them
// TensorFlow's Python shape: minitensor.Variable adds NumPy and the operators
// (_variables.py), minitensor.GradientTape the `with` block and nested sources
// (_tape.py), minitensor.keras.optimizers the Keras names.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

using Release = nb::call_guard<nb::gil_scoped_release>;

nb::tuple shape_of(const Shape& s) {
  nb::list dims;
  for (int64_t d : s.dims()) dims.append(d);
  return nb::tuple(dims);
}

}  // namespace

Tensor variable_value(const Variable& v) {
  Tensor value = v.read_value();
  if (t_autocast && *t_autocast != v.dtype() && is_floating(v.dtype()) &&
      is_floating(*t_autocast)) {
    return cast(value, *t_autocast);
  }
  return value;
}

namespace {

// Returns each gradient, or None where the source is not connected to the target.
nb::list to_list(const std::vector<Tensor>& grads) {
  nb::list out;
  for (const Tensor& g : grads) out.append(g.defined() ? nb::cast(g) : nb::none());
  return out;
}

void bind_variable(nb::module_& m) {
  nb::class_<Variable>(m, "_Variable")
      .def(nb::init<const Tensor&, bool, std::string>(), nb::arg("initial_value"),
           nb::arg("trainable") = true, nb::arg("name") = "")
      .def("read_value", &Variable::read_value, Release())
      .def("_assign", &Variable::assign, Release(), nb::arg("value"))
      .def("_assign_add", &Variable::assign_add, Release(), nb::arg("delta"))
      .def("_assign_sub", &Variable::assign_sub, Release(), nb::arg("delta"))
      .def_prop_ro("dtype", &Variable::dtype)
      .def_prop_ro("shape", [](const Variable& v) { return shape_of(v.shape()); })
      .def_prop_ro("device", &Variable::device)
      .def_prop_ro("_name", &Variable::name)
      .def_prop_ro("trainable", &Variable::trainable)
      .def("_same", [](const Variable& a, const Variable& b) { return a.state() == b.state(); });
  m.def("_variable_value", &variable_value, nb::arg("variable"));
  // Sets this thread's autocast dtype (None: off) and returns the one it replaces.
  m.def(
      "_set_autocast",
      [](std::optional<DType> dtype) {
        const std::optional<DType> before = t_autocast;
        t_autocast = dtype;
        return before;
      },
      nb::arg("dtype").none());
}

void bind_tape(nb::module_& m) {
  nb::class_<GradientTape>(m, "_Tape")
      .def(nb::init<bool, bool>(), nb::arg("persistent"), nb::arg("watch_accessed_variables"))
      .def("watch", nb::overload_cast<const Tensor&>(&GradientTape::watch))
      .def("watch_variable", nb::overload_cast<const Variable&>(&GradientTape::watch))
      .def("stop", &GradientTape::stop)
      .def("pause", [](GradientTape& t) { return t.stop_recording(); })
      .def(
          "gradient",
          [](GradientTape& tape, const Tensor& target, const std::vector<Tensor>& tensors,
             const std::vector<Variable>& variables, std::optional<Tensor> output_gradient) {
            std::vector<const Variable*> vars;
            for (const Variable& v : variables) vars.push_back(&v);
            std::vector<Tensor> grads;
            {
              nb::gil_scoped_release release;
              grads = tape.gradient(target, tensors, vars, output_gradient.value_or(Tensor()));
            }
            return to_list(grads);
          },
          nb::arg("target"), nb::arg("tensors"), nb::arg("variables"),
          nb::arg("output_gradient") = nb::none())
      .def("watched_variables", &GradientTape::watched_variables);
  nb::class_<GradientTape::Pause>(m, "_TapePause").def("end", &GradientTape::Pause::end);
  m.def("stop_gradient", &stop_gradient, Release(), nb::arg("input"));
  m.def("unsorted_segment_sum", &unsorted_segment_sum, Release(), nb::arg("data"),
        nb::arg("segment_ids"), nb::arg("num_segments"));
}

// A learning rate from Python: a number, or a callable of the step (a schedule).
optimizers::LearningRate learning_rate(nb::handle value) {
  if (PyCallable_Check(value.ptr())) {
    nb::object fn = nb::borrow(value);
    return optimizers::LearningRate([fn](int64_t step) {
      nb::gil_scoped_acquire gil;
      return nb::cast<double>(fn(step));
    });
  }
  return optimizers::LearningRate(nb::cast<double>(value));
}

void bind_optimizers(nb::module_& m) {
  using optimizers::GradAndVar;
  nb::class_<optimizers::Optimizer>(m, "_Optimizer")
      .def("_apply",
           [](optimizers::Optimizer& o,
              const std::vector<std::pair<std::optional<Tensor>, Variable>>& pairs) {
             std::vector<GradAndVar> grads;
             for (const auto& [g, v] : pairs) grads.emplace_back(g.value_or(Tensor()), v);
             // Inside MirroredStrategy.run this waits for the other replicas' threads.
             nb::gil_scoped_release release;
             o.apply_gradients(grads);
           })
      .def_prop_ro("iterations", &optimizers::Optimizer::iterations)
      .def_prop_ro("_learning_rate", &optimizers::Optimizer::learning_rate)
      .def("_set_learning_rate",
           [](optimizers::Optimizer& o, nb::handle lr) { o.set_learning_rate(learning_rate(lr)); });
  nb::class_<optimizers::SGD, optimizers::Optimizer>(m, "_SGD").def(
      "__init__", [](optimizers::SGD* o, nb::handle lr, double momentum, bool nesterov) {
        new (o) optimizers::SGD(learning_rate(lr), momentum, nesterov);
      });
  nb::class_<optimizers::Adam, optimizers::Optimizer>(m, "_Adam")
      .def("__init__", [](optimizers::Adam* o, nb::handle lr, double b1, double b2, double eps) {
        new (o) optimizers::Adam(learning_rate(lr), b1, b2, eps);
      });
  nb::class_<optimizers::AdamW, optimizers::Adam>(m, "_AdamW")
      .def("__init__",
           [](optimizers::AdamW* o, nb::handle lr, double wd, double b1, double b2, double eps) {
             new (o) optimizers::AdamW(learning_rate(lr), wd, b1, b2, eps);
           });
  nb::class_<optimizers::RMSprop, optimizers::Optimizer>(m, "_RMSprop")
      .def("__init__", [](optimizers::RMSprop* o, nb::handle lr, double rho, double momentum,
                          double eps, bool centered) {
        new (o) optimizers::RMSprop(learning_rate(lr), rho, momentum, eps, centered);
      });
}

}  // namespace

void bind_training(nb::module_& m) {
  bind_variable(m);
  nb::implicitly_convertible<Variable, Tensor>();
  bind_tape(m);
  bind_optimizers(m);
}

}  // namespace mt::python
