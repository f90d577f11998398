#pragma once
// The pieces of the extension module minitensor._minitensor (internal to the package):
// each bind_* function adds one family of names to the module. The Python package
// (python/minitensor/) arranges them under TensorFlow's names.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <optional>
#include <vector>

#include "core/dtype.h"
#include "runtime/config.h"
#include "runtime/eager/tensor.h"
#include "runtime/train/variable.h"

namespace mt::python {

namespace nb = nanobind;

// Tensor, DType, the ops and the device scope (tensor.cc).
void bind_tensor(nb::module_& m);
// The shape and data movement ops: reshape, transpose, concat, ... (array_ops.cc).
void bind_array_ops(nb::module_& m);
// Tensor.__getitem__: ints, slices, Ellipsis and None, through StridedSlice (array_ops.cc).
Tensor tensor_getitem(const Tensor& t, nb::handle key);
// mt.config and mt.debugging (config.cc).
void bind_config(nb::module_& m);
// mt.debugging's placement reasons: explain_placement, set_log_placement_reasons
// (debugging.cc).
void bind_debugging(nb::module_& m);
// mt.config.experimental's memory_snapshot and last_oom_snapshot (memory_snapshot.cc).
void bind_memory_snapshot(nb::module_& m);
// mt.config.threading: intra- and inter-op threads, the CPU's ISA level (threading.cc).
void bind_threading(nb::module_& m);
// Returns get_memory_info's dict of `info`: current, peak, reserved, ... (config.cc).
nb::dict memory_info_dict(const MemoryInfo& info);
// mt.trace: recordings and their JSON and HTML report (trace.cc).
void bind_trace(nb::module_& m);
// The random ops, as random_* functions for minitensor.random (random_ops.cc).
void bind_random(nb::module_& m);
// softmax and log_softmax (nn_ops.cc), exported by minitensor.nn.
void bind_nn_ops(nb::module_& m);
void bind_conv_ops(nb::module_& m);
// fused_batch_norm_v3 and fused_batch_norm_grad (batch_norm_ops.cc), exported by minitensor.nn.
void bind_batch_norm_ops(nb::module_& m);
// layer_norm, add_layer_norm and layer_norm_grad (layer_norm_ops.cc), exported by
// minitensor.nn.
void bind_layer_norm_ops(nb::module_& m);
// dot_product_attention and its gradient (attention_ops.cc), exported by minitensor.nn.
void bind_attention_ops(nb::module_& m);
// Variables, GradientTape and the optimizers (training.cc); after bind_tensor.
void bind_training(nb::module_& m);
// Checkpoint files (checkpoint.cc).
void bind_checkpoint(nb::module_& m);
// MirroredStrategy and its ReplicaContext for minitensor.distribute (strategy.cc).
void bind_strategy(nb::module_& m);
// mt.distribute.Server and experimental_connect_to_cluster (distributed.cc; with no gRPC,
// no_distributed.cc: the same names, raising UnimplementedError).
void bind_distributed(nb::module_& m);
// mt.function's trace-and-replay cache and run_functions_eagerly (function.cc).
void bind_function(nb::module_& m);
// __dlpack__, __dlpack_device__ and from_dlpack (dlpack.cc); after bind_tensor.
void bind_dlpack(nb::module_& m);

// Note [Autocast]: Keras's mixed precision reads a layer's floating variables in its
// compute dtype while the layer's call runs. The Python Layer sets this thread's autocast
// dtype around the call (_set_autocast); wherever a variable converts to a tensor (the
// implicit conversion of an op's argument, convert_to_tensor) the read is then cast, which
// the tape differentiates back to the variable's own dtype. Unset, a read is the value.
inline thread_local std::optional<DType> t_autocast;

// Returns `v`'s value, cast to the autocast dtype when one is set and `v` is floating.
Tensor variable_value(const Variable& v);

// A copy of a tensor's elements in host memory of its own, which `owner` frees (tensor.cc):
// what .numpy() returns and what a DLPack request for the CPU exports.
struct HostCopy {
  char* data;
  nb::capsule owner;
  std::vector<size_t> shape;
};
HostCopy host_copy(const Tensor& t);

// The buffer protocol of Tensor (dlpack.cc): a read-only view of a CPU tensor.
// Returns the DLPack element type of `dtype`: bfloat16 is DLPack's bfloat (code 4), 16 bits.
nb::dlpack::dtype dlpack_dtype(DType dtype);

int get_buffer(PyObject* self, Py_buffer* view, int flags);
// Raises minitensor._host_reads's tracing error, naming `what`, when this thread traces an
// mt.function (a value read on the host there would be frozen into the trace); one
// thread-local load otherwise.
void check_host_read(const char* what);
void release_buffer(PyObject* self, Py_buffer* view);

}  // namespace mt::python
