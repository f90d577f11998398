// The extension module: its parts, and the one place mt::Error becomes a Python exception
// of minitensor.errors, chosen by the error's absl::StatusCode as TensorFlow does.
#include <nanobind/nanobind.h>

#include "python/src/bindings.h"
#include "runtime/eager/error.h"

namespace mt::python {
namespace {

// Returns the name of the minitensor.errors class for `code`, TensorFlow's.
const char* error_class(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kCancelled:
      return "CancelledError";
    case absl::StatusCode::kInvalidArgument:
      return "InvalidArgumentError";
    case absl::StatusCode::kDeadlineExceeded:
      return "DeadlineExceededError";
    case absl::StatusCode::kNotFound:
      return "NotFoundError";
    case absl::StatusCode::kAlreadyExists:
      return "AlreadyExistsError";
    case absl::StatusCode::kPermissionDenied:
      return "PermissionDeniedError";
    case absl::StatusCode::kResourceExhausted:
      return "ResourceExhaustedError";
    case absl::StatusCode::kFailedPrecondition:
      return "FailedPreconditionError";
    case absl::StatusCode::kAborted:
      return "AbortedError";
    case absl::StatusCode::kOutOfRange:
      return "OutOfRangeError";
    case absl::StatusCode::kUnimplemented:
      return "UnimplementedError";
    case absl::StatusCode::kInternal:
      return "InternalError";
    case absl::StatusCode::kUnavailable:
      return "UnavailableError";
    case absl::StatusCode::kDataLoss:
      return "DataLossError";
    case absl::StatusCode::kUnauthenticated:
      return "UnauthenticatedError";
    default:
      return "UnknownError";
  }
}

// Raises the minitensor.errors exception for `e`: cls(None, None, message).
void raise_error(const Error& e) {
  nb::object cls = nb::module_::import_("minitensor.errors").attr(error_class(e.code()));
  nb::object exc = cls(nb::none(), nb::none(), e.what());
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

}  // namespace
}  // namespace mt::python

NB_MODULE(_minitensor, m) {
  using namespace mt::python;
  m.doc() = "minitensor's C++ runtime; import minitensor instead.";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const mt::Error& e) {
      raise_error(e);
    }
  });
  bind_tensor(m);
  bind_array_ops(m);
  bind_nn_ops(m);
  bind_conv_ops(m);
  bind_batch_norm_ops(m);
  bind_layer_norm_ops(m);
  bind_attention_ops(m);
  bind_config(m);
  bind_debugging(m);
  bind_memory_snapshot(m);
  bind_threading(m);
  bind_dlpack(m);
  bind_trace(m);
  bind_random(m);
  bind_training(m);
  bind_checkpoint(m);
  bind_strategy(m);
  bind_function(m);
  bind_distributed(m);
}
