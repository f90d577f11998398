// Zero-copy interchange: DLPack (__dlpack__, __dlpack_device__, from_dlpack) on the CPU and
// the GPU, and the buffer protocol for CPU tensors (bf_getbuffer, installed by tensor.cc
// through buffer_slots()). An exported buffer holds a Tensor handle, so its pool block
// stays alive while another framework holds it; an imported one is a tensor over the
// producer's memory, which it keeps alive until the tensor's last handle goes.
//
// Streams: before exporting a GPU tensor, its device is synchronised, so any consumer
// stream sees the data. On import, minitensor.from_dlpack passes the device's stream to
// the producer's __dlpack__(stream=...), so the producer orders its work before ours.
#include <nanobind/ndarray.h>

#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "runtime/cost/copy_cache.h"
#include "runtime/eager/context.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

constexpr int kDLCPU = 1;
constexpr int kDLCUDA = 2;

int dlpack_device_type(const internal::TensorImpl& impl) {
  return impl.device->type() == DeviceType::kGPU ? kDLCUDA : kDLCPU;
}

nb::tuple dlpack_device(const Tensor& t) {
  const internal::TensorImpl& impl = *t.impl();
  return nb::make_tuple(dlpack_device_type(impl), impl.device->hardware_ordinal());
}

// Note [DLPack device requests]: DLPack 1.0's consumer may ask for its own device
// (dl_device) and say whether a copy is wanted (copy: None when allowed, True always,
// False never). A request for the CPU of a GPU tensor, or copy=True for a CPU tensor, is
// served by a host copy exported instead (np.from_dlpack(t, device="cpu")); copy=False
// with a GPU tensor and a CPU consumer, any other device, or copy=True of a GPU tensor on
// its own device is BufferError, as the array API asks. Without a request the tensor's own
// buffer is exported.

// Returns a DLPack capsule over a host copy of `t`'s elements.
nb::object dlpack_host_copy(const Tensor& t, nb::kwargs kwargs) {
  HostCopy copy = host_copy(t);
  nb::ndarray<nb::array_api> view(copy.data, copy.shape.size(), copy.shape.data(), copy.owner,
                                  nullptr, dlpack_dtype(t.dtype()), kDLCPU, 0);
  return nb::cast(view).attr("__dlpack__")(**kwargs);
}

// Returns a DLPack capsule over `t`'s buffer (the producer side of the protocol).
nb::object dlpack(const Tensor& t, nb::kwargs kwargs) {
  internal::TensorImpl& impl = *t.impl();
  // Note [DLPack device requests]: the request is answered here; nanobind's own
  // __dlpack__ sees neither key.
  nb::object copy = nb::none(), want = nb::none();
  if (kwargs.contains("copy")) {
    copy = kwargs["copy"];
    PyDict_DelItemString(kwargs.ptr(), "copy");
  }
  if (kwargs.contains("dl_device")) {
    want = kwargs["dl_device"];
    PyDict_DelItemString(kwargs.ptr(), "dl_device");
  }
  const int type = dlpack_device_type(impl);
  const int ordinal = impl.device->hardware_ordinal();
  bool host_copy = copy.is(nb::bool_(true));
  bool to_host = false;  // a request for the CPU of a tensor that lives elsewhere
  if (!want.is_none()) {
    int want_type = -1, want_id = -1;
    if (nb::isinstance<nb::tuple>(want) && nb::len(want) == 2 &&
        nb::isinstance<nb::int_>(want[0]) && nb::isinstance<nb::int_>(want[1])) {
      want_type = nb::cast<int>(want[0]);
      want_id = nb::cast<int>(want[1]);
    }
    const bool own = want_type == type && want_id == ordinal;
    if (!own && !(want_type == kDLCPU && want_id == 0)) {
      throw nb::buffer_error(("[__dlpack__] a tensor on " + t.device() +
                              " can be exported to its own device or the CPU, (1, 0); not to " +
                              std::string(nb::repr(want).c_str()))
                                 .c_str());
    }
    if (!own) {
      if (copy.is(nb::bool_(false))) {
        throw nb::buffer_error(("[__dlpack__] a tensor on " + t.device() +
                                " reaches the CPU only by a copy, and copy=False forbids one")
                                   .c_str());
      }
      host_copy = to_host = true;
    }
  }
  if (host_copy) {
    if (type != kDLCPU && !to_host) {  // copy=True with no device or this GPU asked for
      throw nb::buffer_error(("[__dlpack__] copy=True of a tensor on " + t.device() +
                              " to its own device is not supported; dl_device=(1, 0) copies "
                              "it to the host")
                                 .c_str());
    }
    return dlpack_host_copy(t, kwargs);
  }
  internal::share_buffer(
      impl);  // the consumer may write it: no cached copy (runtime/cost/copy_cache.h)
  if (impl.device->type() == DeviceType::kGPU) {
    nb::gil_scoped_release release;
    internal::throw_if_error(impl.device->synchronize());
  }
  nb::capsule owner(new Tensor(t), [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(impl.shape.dims().begin(), impl.shape.dims().end());
  nb::dlpack::dtype dtype = dlpack_dtype(impl.dtype);
  nb::ndarray<nb::array_api> view(impl.data, shape.size(), shape.data(), owner, nullptr, dtype,
                                  dlpack_device_type(impl), impl.device->hardware_ordinal());
  // nanobind's ndarray object implements the protocol, versions and stream argument included.
  return nb::cast(view).attr("__dlpack__")(**kwargs);
}

}  // namespace

nb::dlpack::dtype dlpack_dtype(DType dtype) {
  return visit_dtype(dtype, [](auto tag) -> nb::dlpack::dtype {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bfloat16>) {
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
    } else if constexpr (std::is_same_v<T, float16>) {
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    } else {
      return nb::dtype<T>();
    }
  });
}

namespace {

// Returns the element type of `dtype`, or throws TypeError.
DType from_dlpack_dtype(nb::dlpack::dtype dtype) {
  for (int d = 0; d < kNumDTypes; ++d) {
    if (dlpack_dtype(static_cast<DType>(d)) == dtype) return static_cast<DType>(d);
  }
  throw nb::type_error("[from_dlpack] unsupported element type");
}

// Returns the logical device that owns memory of DLPack device (type, id): CPU:0, or the
// first logical GPU on CUDA device `id`.
internal::Device& find_device(int type, int id) {
  internal::Runtime* rt = internal::value_or_throw(internal::Context::get().runtime());
  for (int i = 0; i < rt->num_devices(); ++i) {
    internal::Device& d = rt->device(i);
    if (type == kDLCPU && d.type() == DeviceType::kCPU) return d;
    if (type == kDLCUDA && d.type() == DeviceType::kGPU && d.hardware_ordinal() == id) return d;
  }
  throw nb::value_error("[from_dlpack] no minitensor device holds memory of this DLPack device");
}

uintptr_t dlpack_stream(int id) { return find_device(kDLCUDA, id).stream_handle(); }

// Creates a tensor over the memory of `array` without copying; `array` stays referenced
// until the tensor's last handle goes.
Tensor from_dlpack(nb::ndarray<nb::c_contig> array) {
  DType dtype = from_dlpack_dtype(array.dtype());
  internal::Device& device = find_device(array.device_type(), array.device_id());
  std::vector<int64_t> dims(array.ndim());
  for (size_t i = 0; i < array.ndim(); ++i) dims[i] = static_cast<int64_t>(array.shape(i));
  Shape shape = internal::value_or_throw(Shape::make(dims));
  void* data = shape.num_elements() > 0 ? array.data() : nullptr;
  auto* impl = new internal::TensorImpl(dtype, std::move(shape), &device, data);
  impl->external_arg = new nb::ndarray<nb::c_contig>(std::move(array));
  impl->external_release = [](void* arg) {
    nb::gil_scoped_acquire acquire;  // the producer's deleter may run Python code
    delete static_cast<nb::ndarray<nb::c_contig>*>(arg);
  };
  return Tensor(impl);
}

// Returns the struct-module format of `dtype`'s elements; null for bfloat16, which has none.
const char* buffer_format(DType dtype) {
  return visit_dtype(dtype, [](auto tag) -> const char* {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) return "f";
    if constexpr (std::is_same_v<T, double>) return "d";
    if constexpr (std::is_same_v<T, int32_t>) return "i";
    if constexpr (std::is_same_v<T, int64_t>) return "q";
    if constexpr (std::is_same_v<T, bool>) return "?";
    if constexpr (std::is_same_v<T, float16>) return "e";
    return nullptr;
  });
}

// How many mt.function traces this thread is inside (minitensor._host_reads.tracing sets
// it), so that a buffer read outside any trace costs one thread-local load.
thread_local int tracing_depth = 0;

// Raises the tracing error of minitensor._host_reads.check into Python when this thread
// traces a function (outside library code that reads deliberately); returns whether it did.
bool refuse_read_while_tracing() {
  if (tracing_depth == 0) return false;
  try {
    nb::module_::import_("minitensor._host_reads")
        .attr("check")("a buffer (`np.asarray`, `memoryview`)");
  } catch (nb::python_error& e) {
    e.restore();
    return true;
  }
  return false;
}

}  // namespace

void check_host_read(const char* what) {
  if (tracing_depth == 0) return;
  nb::module_::import_("minitensor._host_reads").attr("check")(what);
}

// The buffer protocol for CPU tensors: a read-only view, with `view->obj` keeping the
// Python tensor, and so its buffer, alive. While mt.function traces, a read is the same
// error as `.numpy()` (docs/function.md, "Reading values while tracing").
int get_buffer(PyObject* self, Py_buffer* view, int flags) {
  if (refuse_read_while_tracing()) return -1;
  const Tensor& t = nb::cast<const Tensor&>(nb::handle(self));
  const internal::TensorImpl& impl = *t.impl();
  if (impl.device->type() != DeviceType::kCPU) {
    PyErr_SetString(PyExc_BufferError, "a GPU tensor has no host buffer; use .numpy()");
    return -1;
  }
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "tensors are immutable; the buffer is read-only");
    return -1;
  }
  const char* format = buffer_format(impl.dtype);
  if (format == nullptr) {
    PyErr_SetString(PyExc_BufferError,
                    "bfloat16 has no buffer format; cast to float32 first (minitensor.cast)");
    return -1;
  }
  int rank = impl.shape.rank();
  auto* dims = new Py_ssize_t[2 * rank + 1];
  Py_ssize_t itemsize = static_cast<Py_ssize_t>(dtype_size(impl.dtype));
  for (int i = rank - 1, stride = 1; i >= 0; --i) {
    dims[i] = impl.shape.dims()[i];
    dims[rank + i] = stride * itemsize;
    stride *= static_cast<int>(dims[i]);
  }
  static char empty[1];
  view->buf = impl.data != nullptr ? impl.data : empty;
  view->obj = nb::handle(self).inc_ref().ptr();
  view->len = static_cast<Py_ssize_t>(impl.bytes());
  view->itemsize = itemsize;
  view->readonly = 1;
  view->ndim = rank;
  view->format = const_cast<char*>(format);
  view->shape = dims;
  view->strides = dims + rank;
  view->suboffsets = nullptr;
  view->internal = dims;
  return 0;
}

void release_buffer(PyObject*, Py_buffer* view) {
  delete[] static_cast<Py_ssize_t*>(view->internal);
}

void bind_dlpack(nb::module_& m) {
  nb::object cls = m.attr("Tensor");
  nb::setattr(cls, "__dlpack__", nb::cpp_function(&dlpack, nb::is_method()));
  nb::setattr(cls, "__dlpack_device__", nb::cpp_function(&dlpack_device, nb::is_method()));
  m.def("from_dlpack", &from_dlpack, nb::arg("array").noconvert());  // never a copy
  m.def("dlpack_stream", &dlpack_stream, nb::arg("device_id"));
  m.def(
      "_add_tracing_depth", [](int delta) { tracing_depth += delta; }, nb::arg("delta"));
}

}  // namespace mt::python
