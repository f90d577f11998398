// MirroredStrategy (runtime/strategy/mirrored_strategy.h) for minitensor.distribute,
// whose mirrored_strategy.py gives it TensorFlow's Python shape. run() calls the Python
// function on the strategy's C++ replica threads, each taking the GIL while it runs Python
// and releasing it inside every op, so replicas meet at collectives without deadlock.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

using distribute::CrossDeviceOptions;
using distribute::MirroredStrategy;
using distribute::ReduceOp;
using distribute::ReplicaContext;
using Release = nb::call_guard<nb::gil_scoped_release>;

ReduceOp reduce_op(const std::string& name) {
  if (name == "SUM") return ReduceOp::kSum;
  if (name == "MEAN") return ReduceOp::kMean;
  throw nb::value_error(("reduce_op must be ReduceOp.SUM or ReduceOp.MEAN, got " + name).c_str());
}

// Holds a MirroredStrategy::Scope while Python's `with strategy.scope():` is open.
struct PyScope {
  std::optional<MirroredStrategy::Scope> scope;
};

// What a replica's Python function raised; thrown through run() so the other replicas stop.
struct ReplicaRaised {
  int replica;
};

// Runs `fn(ctx)` on every replica; returns each replica's result, or raises the Python
// exception of the replica that failed first.
std::vector<nb::object> run(MirroredStrategy& strategy, nb::callable fn) {
  const int n = static_cast<int>(strategy.devices().size());  // this process's replicas
  std::vector<nb::object> results(n);
  std::vector<std::unique_ptr<nb::python_error>> raised(n);
  std::optional<int> failed;
  {
    nb::gil_scoped_release release;
    try {
      strategy.run([&](ReplicaContext& ctx) {
        const int r = ctx.local_replica_id();
        nb::gil_scoped_acquire gil;
        try {
          results[r] = fn(nb::cast(&ctx, nb::rv_policy::reference));
        } catch (nb::python_error& e) {
          raised[r] = std::make_unique<nb::python_error>(std::move(e));
          throw ReplicaRaised{r};
        }
      });
    } catch (const ReplicaRaised& e) {
      failed = e.replica;
    }
  }
  if (failed.has_value()) throw nb::python_error(std::move(*raised[*failed]));
  return results;
}

}  // namespace

void bind_strategy(nb::module_& m) {
  nb::class_<ReplicaContext>(m, "_ReplicaContext")
      .def_prop_ro("replica_id_in_sync_group", &ReplicaContext::replica_id_in_sync_group)
      .def_prop_ro("num_replicas_in_sync", &ReplicaContext::num_replicas_in_sync)
      .def_prop_ro("_local_replica_id", &ReplicaContext::local_replica_id)
      .def_prop_ro("device", &ReplicaContext::device)
      .def(
          "_all_reduce",
          [](ReplicaContext& ctx, const std::string& op, const std::vector<Tensor>& values) {
            const ReduceOp reduce = reduce_op(op);
            nb::gil_scoped_release release;
            return ctx.all_reduce(reduce, values);
          },
          nb::arg("reduce_op"), nb::arg("values"));
  nb::class_<PyScope>(m, "_StrategyScope").def("_exit", [](PyScope& s) { s.scope.reset(); });
  nb::class_<MirroredStrategy>(m, "_MirroredStrategy")
      .def(
          "__init__",
          [](MirroredStrategy* s, std::vector<std::string> devices, const std::string& kind,
             int64_t bucket_bytes, const std::string& reduce_to_device) {
            CrossDeviceOptions options;
            options.kind = kind == "nccl"         ? CrossDeviceOptions::Kind::kNcclAllReduce
                           : kind == "one_device" ? CrossDeviceOptions::Kind::kReductionToOneDevice
                                                  : CrossDeviceOptions::Kind::kAuto;
            options.bucket_bytes = bucket_bytes;
            options.reduce_to_device = reduce_to_device;
            new (s) MirroredStrategy(std::move(devices), options);
          },
          nb::arg("devices"), nb::arg("kind"), nb::arg("bucket_bytes"), nb::arg("reduce_to_device"))
      .def_prop_ro("num_replicas_in_sync", &MirroredStrategy::num_replicas_in_sync)
      .def_prop_ro("devices", &MirroredStrategy::devices)
      .def_prop_ro("cross_device_ops_name", &MirroredStrategy::cross_device_ops_name)
      .def("_enter_scope",
           [](MirroredStrategy& s) {
             auto scope = std::make_unique<PyScope>();
             scope->scope.emplace(s.scope());
             return scope.release();
           })
      .def("_run", &run, nb::arg("fn"))
      .def(
          "_reduce",
          [](MirroredStrategy& s, const std::string& op, const std::vector<Tensor>& values,
             std::optional<int> axis) {
            const ReduceOp reduce = reduce_op(op);
            nb::gil_scoped_release release;
            return s.reduce(reduce, values, axis);
          },
          nb::arg("reduce_op"), nb::arg("values"), nb::arg("axis") = nb::none());
  m.def(
      "_replica_context", [] { return distribute::get_replica_context(); },
      nb::rv_policy::reference);
}

}  // namespace mt::python
