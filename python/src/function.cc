// mt.function's C++ half: one FunctionCache per decorated function (runtime/function/
// function_cache.h). The package's _function.py flattens the arguments, keys the Python
// constants and structure, and rebuilds the outputs.
#include "runtime/function/function.h"

#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "runtime/function/function_cache.h"
#include "runtime/function/function_recorder.h"
#include "runtime/strategy/replica_hooks.h"

namespace mt::python {

void bind_function(nb::module_& m) {
  using internal::FunctionCache;
  nb::class_<FunctionCache>(m, "_FunctionCache")
      .def(nb::init<std::string>(), nb::arg("name"))
      // Replays the signature of `args` (and `key`), calling `body(list of tensors)` -> list
      // of tensors to trace a new one.
      .def(
          "call",
          [](FunctionCache& cache, const std::vector<Tensor>& args, nb::callable body,
             const std::string& key, const std::vector<std::string>& names) {
            const FunctionCache::Body traced = [&body](absl::Span<const Tensor> a) {
              nb::gil_scoped_acquire gil;
              nb::object out = body(std::vector<Tensor>(a.begin(), a.end()));
              return nb::cast<std::vector<Tensor>>(out);
            };
            nb::gil_scoped_release release;
            return cache.call(args, traced, key, names);
          },
          nb::arg("args"), nb::arg("body"), nb::arg("key"), nb::arg("names"))
      // The fast path of a call with tensors alone: the outputs of replaying `args`' signature
      // (and `key`), or None when only call() can run it (an argument that is not a
      // Tensor, a new or eager signature, a replica's call, functions running eagerly).
      .def(
          "replay",
          [](FunctionCache& cache, nb::tuple args, const std::string& key) -> nb::object {
            if (internal::current_replica_id() >= 0 || t_autocast) return nb::none();
            const nb::handle tensor_type = nb::type<Tensor>();
            std::vector<Tensor> tensors;
            tensors.reserve(args.size());
            for (nb::handle a : args) {
              if (!a.type().is(tensor_type)) return nb::none();
              tensors.push_back(*nb::inst_ptr<Tensor>(a));
            }
            std::optional<std::vector<Tensor>> out;
            {
              nb::gil_scoped_release release;
              out = cache.replay(tensors, key);
            }
            if (!out) return nb::none();
            return nb::cast(std::move(*out));
          },
          nb::arg("args"), nb::arg("key"))
      .def_prop_ro("tracing_count", &FunctionCache::tracing_count)
      .def_prop_ro("replay_count", &FunctionCache::replay_count)
      .def_prop_ro("replay_kind", &FunctionCache::replay_kind)
      .def_prop_ro("arena_bytes", &FunctionCache::arena_bytes);
  // What a function's Python key adds for the context of the call: inside
  // MirroredStrategy::run each replica traces its own signature, and its outputs' structure
  // is its own; inside a mixed-precision layer's call variables read as the autocast dtype
  // (Note [Autocast]), so a trace made there is another signature. Empty for a plain call,
  // the only kind the fast path (replay above) takes.
  m.def("_context_key", [] {
    std::string key;
    const int replica = internal::current_replica_id();
    if (replica >= 0) {
      key = "@" + std::to_string(internal::current_strategy_id()) + "/" + std::to_string(replica);
    }
    if (t_autocast) key += "~autocast " + std::string(dtype_name(*t_autocast));
    return key;
  });
  // Marks the function this thread traces as unable to replay this signature, for
  // `reason` (mt.cond's host decision): it then runs its body eagerly at every call. Does
  // nothing when no function traces.
  m.def(
      "_mark_unreplayable",
      [](const std::string& reason) {
        if (internal::FunctionRecorder* recorder = internal::active_recorder()) {
          recorder->set_unreplayable(absl::UnimplementedError(reason));
        }
      },
      nb::arg("reason"));
  m.def("run_functions_eagerly", &config::run_functions_eagerly, nb::arg("run_eagerly"));
  m.def("functions_run_eagerly", &config::functions_run_eagerly);
}

}  // namespace mt::python
