// The random ops (runtime/ops/random_ops.h) for python/minitensor/random.py, which gives them
// TensorFlow's signatures and checks. Each releases the GIL while it runs.
#include "runtime/ops/random_ops.h"

#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <vector>

#include "python/src/bindings.h"
#include "runtime/ops/random_generator.h"

namespace mt::python {
namespace {

using Release = nb::call_guard<nb::gil_scoped_release>;
using Dims = std::vector<int64_t>;
using Seed = std::optional<int64_t>;

// mt.random.Generator's C++ generator, over the Python Generator's state variable.
void bind_generator(nb::module_& m) {
  using random::Generator;
  nb::class_<Generator>(m, "_Generator")
      .def(nb::init<Variable>(), nb::arg("state"))
      .def_prop_ro("state", &Generator::state)
      .def(
          "uniform",
          [](Generator& g, const Dims& shape, double minval, std::optional<double> maxval,
             DType dtype) { return g.uniform(shape, minval, maxval, dtype); },
          Release(), nb::arg("shape"), nb::arg("minval"), nb::arg("maxval").none(),
          nb::arg("dtype"))
      .def(
          "normal",
          [](Generator& g, const Dims& shape, double mean, double stddev, DType dtype) {
            return g.normal(shape, mean, stddev, dtype);
          },
          Release(), nb::arg("shape"), nb::arg("mean"), nb::arg("stddev"), nb::arg("dtype"))
      .def(
          "truncated_normal",
          [](Generator& g, const Dims& shape, double mean, double stddev, DType dtype) {
            return g.truncated_normal(shape, mean, stddev, dtype);
          },
          Release(), nb::arg("shape"), nb::arg("mean"), nb::arg("stddev"), nb::arg("dtype"));
}

}  // namespace

void bind_random(nb::module_& m) {
  bind_generator(m);
  m.def("random_set_seed", &random::set_seed, Release(), nb::arg("seed").none());
  m.def(
      "random_uniform",
      [](const Dims& shape, double minval, double maxval, DType dtype, Seed seed) {
        return random::uniform(shape, minval, maxval, dtype, seed);
      },
      Release(), nb::arg("shape"), nb::arg("minval"), nb::arg("maxval"), nb::arg("dtype"),
      nb::arg("seed").none());
  m.def(
      "random_uniform_int",
      [](const Dims& shape, int64_t minval, int64_t maxval, DType dtype, Seed seed) {
        return random::uniform_int(shape, minval, maxval, dtype, seed);
      },
      Release(), nb::arg("shape"), nb::arg("minval"), nb::arg("maxval"), nb::arg("dtype"),
      nb::arg("seed").none());
  auto normal = [&m](const char* name, Tensor (*op)(absl::Span<const int64_t>, double, double,
                                                    DType, std::optional<int64_t>)) {
    m.def(
        name,
        [op](const Dims& shape, double mean, double stddev, DType dtype, Seed seed) {
          return op(shape, mean, stddev, dtype, seed);
        },
        Release(), nb::arg("shape"), nb::arg("mean"), nb::arg("stddev"), nb::arg("dtype"),
        nb::arg("seed").none());
  };
  normal("random_normal", &random::normal);
  normal("random_truncated_normal", &random::truncated_normal);
  m.def(
      "random_stateless_uniform",
      [](const Dims& shape, random::StatelessSeed seed, double minval, double maxval, DType dtype) {
        return random::stateless_uniform(shape, seed, minval, maxval, dtype);
      },
      Release(), nb::arg("shape"), nb::arg("seed"), nb::arg("minval"), nb::arg("maxval"),
      nb::arg("dtype"));
  m.def(
      "random_stateless_uniform_int",
      [](const Dims& shape, random::StatelessSeed seed, int64_t minval, int64_t maxval,
         DType dtype) { return random::stateless_uniform_int(shape, seed, minval, maxval, dtype); },
      Release(), nb::arg("shape"), nb::arg("seed"), nb::arg("minval"), nb::arg("maxval"),
      nb::arg("dtype"));
  auto stateless_normal =
      [&m](const char* name,
           Tensor (*op)(absl::Span<const int64_t>, random::StatelessSeed, double, double, DType)) {
        m.def(
            name,
            [op](const Dims& shape, random::StatelessSeed seed, double mean, double stddev,
                 DType dtype) { return op(shape, seed, mean, stddev, dtype); },
            Release(), nb::arg("shape"), nb::arg("seed"), nb::arg("mean"), nb::arg("stddev"),
            nb::arg("dtype"));
      };
  stateless_normal("random_stateless_normal", &random::stateless_normal);
  stateless_normal("random_stateless_truncated_normal", &random::stateless_truncated_normal);
}

}  // namespace mt::python
