// Tensor, DType, the ops and the device scope. Every op releases the GIL while it runs, so
// Python threads (each with its own device scopes, as in C++) run ops in parallel.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>
#include <sstream>
#include <vector>

#include "core/check.h"
#include "kernels/op_id.h"
#include "python/src/bindings.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

using Release = nb::call_guard<nb::gil_scoped_release>;
using HostArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// Returns the nanobind dtype of `dtype`'s elements.
nb::dlpack::dtype to_dlpack(DType dtype) { return dlpack_dtype(dtype); }

// Creates a tensor (_EagerConst) from a C-contiguous host array whose elements are `dtype`.
Tensor constant_from_array(const HostArray& array, DType dtype) {
  if (array.dtype() != to_dlpack(dtype)) {
    throw nb::type_error("[constant] the array's element type does not match the dtype");
  }
  std::vector<int64_t> shape(array.ndim());
  for (size_t i = 0; i < array.ndim(); ++i) shape[i] = static_cast<int64_t>(array.shape(i));
  const void* data = array.data();
  size_t count = array.size();
  nb::gil_scoped_release release;
  return internal::make_constant(dtype, data, count, shape);
}

}  // namespace

HostCopy host_copy(const Tensor& t) {
  const internal::TensorImpl& impl = *t.impl();
  char* host = new char[impl.bytes() > 0 ? impl.bytes() : 1];
  HostCopy copy{host, nb::capsule(host, [](void* p) noexcept { delete[] static_cast<char*>(p); }),
                std::vector<size_t>(impl.shape.dims().begin(), impl.shape.dims().end())};
  if (impl.bytes() > 0) {
    nb::gil_scoped_release release;
    internal::throw_if_error(impl.device->copy_to_host(host, impl.data, impl.bytes()));
  }
  return copy;
}

namespace {

// Copies `t`'s elements into a new NumPy array (from any device).
// NumPy has no bfloat16: a bfloat16 tensor raises TypeError rather than guess a wider type.
nb::ndarray<nb::numpy> to_numpy(const Tensor& t) {
  const internal::TensorImpl& impl = *t.impl();
  if (impl.dtype == DType::kBFloat16) {
    throw nb::type_error(
        "[numpy] NumPy has no bfloat16; cast to float32 first: minitensor.cast(t, "
        "minitensor.float32).numpy()");
  }
  HostCopy copy = host_copy(t);
  return nb::ndarray<nb::numpy>(copy.data, copy.shape.size(), copy.shape.data(), copy.owner,
                                nullptr, to_dlpack(impl.dtype));
}

nb::tuple shape_tuple(const Tensor& t) {
  nb::list dims;
  for (int64_t d : t.shape().dims()) dims.append(d);
  return nb::tuple(dims);
}

std::string to_string(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// Converts a reduction's `axis` (None, an int or a list of ints) to Axes.
Axes to_axes(const nb::object& axis) {
  if (axis.is_none()) return Axes();
  if (nb::isinstance<nb::int_>(axis)) return Axes(nb::cast<int64_t>(axis));
  return Axes(absl::MakeConstSpan(nb::cast<std::vector<int64_t>>(axis)));
}

// Converts the other operand of an operator (a scalar, a list, an array) to a tensor of
// `like`'s dtype through minitensor.convert_to_tensor.
Tensor convert(const nb::handle& value, const Tensor& like) {
  nb::object fn = nb::module_::import_("minitensor").attr("convert_to_tensor");
  return nb::cast<Tensor>(fn(value, nb::arg("dtype") = like.dtype()));
}

// Converts any value convert_to_tensor takes to a tensor, with its default dtype.
Tensor convert(const nb::handle& value) {
  if (nb::isinstance<Tensor>(value)) return nb::cast<Tensor>(value);
  nb::object fn = nb::module_::import_("minitensor").attr("convert_to_tensor");
  return nb::cast<Tensor>(fn(value));
}

// Returns the Python name a row binds in the extension: the last part of its py_name
// ("nn.relu" -> "relu"; minitensor's modules re-export it under the full name).
const char* bound_name(const char* py_name) {
  const char* dot = std::strrchr(py_name, '.');
  return dot == nullptr ? py_name : dot + 1;
}

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
using UnaryFn = Tensor (*)(const Tensor&);

// Binds a binary op: two tensors (the GIL released), or values that convert_to_tensor takes,
// converted to the dtype of the operand that is a tensor, as TensorFlow's binary ops do.
template <BinaryFn op>
void def_binary(nb::module_& m, const char* name) {
  m.def(name, op, Release(), nb::arg("x"), nb::arg("y"));
  m.def(
      name,
      [](nb::handle x, nb::handle y) {
        if (nb::isinstance<Tensor>(x))
          return op(nb::cast<Tensor>(x), convert(y, nb::cast<Tensor>(x)));
        if (nb::isinstance<Tensor>(y))
          return op(convert(x, nb::cast<Tensor>(y)), nb::cast<Tensor>(y));
        Tensor a = convert(x);
        return op(a, convert(y, a));
      },
      nb::arg("x"), nb::arg("y"));
}

// Binds a unary op: a tensor (the GIL released), or any value convert_to_tensor takes.
template <UnaryFn op>
void def_unary(nb::module_& m, const char* name) {
  m.def(name, op, Release(), nb::arg("x"));
  m.def(
      name, [](nb::handle x) { return op(convert(x)); }, nb::arg("x"));
}

using BinaryOp = Tensor (*)(const Tensor&, const Tensor&);

// a @ b: MatMul, or BatchMatMulV2 above rank 2.
Tensor matmul_operator(const Tensor& a, const Tensor& b) { return matmul(a, b); }

// Adds `name` (a Tensor operand or any value convert() takes) and its reflected form.
template <BinaryOp op>
void def_operator(nb::class_<Tensor>& cls, const char* name, const char* reflected) {
  cls.def(
         name, [](const Tensor& a, const Tensor& b) { return op(a, b); }, Release())
      .def(name, [](const Tensor& a, nb::handle b) { return op(a, convert(b, a)); })
      .def(reflected, [](const Tensor& b, nb::handle a) { return op(convert(a, b), b); });
}

// A `with mt.device(name):` block: a DeviceScope from __enter__ to __exit__.
class DeviceBlock {
 public:
  explicit DeviceBlock(std::string name) : name_(std::move(name)) {}
  void enter() { scope_.emplace(name_); }
  void exit(nb::args) { scope_.reset(); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::optional<DeviceScope> scope_;
};

void bind_tensor_class(nb::module_& m) {
  static PyType_Slot slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(&get_buffer)},
                                {Py_bf_releasebuffer, reinterpret_cast<void*>(&release_buffer)},
                                {0, nullptr}};
  nb::class_<Tensor> cls(m, "Tensor", nb::type_slots(slots));
  // A variable converts to its value wherever a tensor is expected (training.cc makes the
  // conversion implicit).
  cls.def(
         "__init__", [](Tensor* t, const Variable& v) { new (t) Tensor(variable_value(v)); },
         nb::arg("variable"))
      .def_prop_ro("shape", &shape_tuple)
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro("ndim", [](const Tensor& t) { return t.shape().rank(); })
      .def("numpy", &to_numpy, "Copies the elements into a new NumPy array.")
      .def("__str__", &to_string)
      .def("__getitem__", &tensor_getitem, nb::arg("key"))
      // NumPy's ndarray.T: every dimension reversed (tf.Tensor has none; issue 19 asks for it).
      .def_prop_ro("T", [](const Tensor& t) { return transpose(t); })
      .def("__len__", [](const Tensor& t) {
        if (t.shape().rank() == 0) throw nb::type_error("Scalar tensor has no `len()`");
        return t.shape().dims()[0];
      });
  def_operator<&add>(cls, "__add__", "__radd__");
  def_operator<&sub>(cls, "__sub__", "__rsub__");
  def_operator<&mul>(cls, "__mul__", "__rmul__");
  def_operator<&div>(cls, "__truediv__", "__rtruediv__");
  def_operator<&::mt::pow>(cls, "__pow__", "__rpow__");
  def_operator<&::mt::floordiv>(cls, "__floordiv__", "__rfloordiv__");
  def_operator<&::mt::floormod>(cls, "__mod__", "__rmod__");
  def_operator<&::mt::logical_and>(cls, "__and__", "__rand__");  // bool tensors only
  def_operator<&::mt::logical_or>(cls, "__or__", "__ror__");
  def_operator<&matmul_operator>(cls, "__matmul__", "__rmatmul__");
  cls.def(
         "__invert__", [](const Tensor& x) { return logical_not(x); }, Release())
      .def(
          "__neg__", [](const Tensor& x) { return neg(x); }, Release())
      .def(
          "__abs__", [](const Tensor& x) { return abs(x); }, Release());
}

void bind_ops(nb::module_& m) {
  m.def("constant_from_array", &constant_from_array, nb::arg("array"), nb::arg("dtype"));
  m.def(
      "fill",
      [](std::vector<int64_t> dims, double value, DType dtype) { return fill(dims, value, dtype); },
      Release(), nb::arg("dims"), nb::arg("value"), nb::arg("dtype"));
  // mt.range infers the dtype and converts the arguments in Python (_range.py).
  m.def(
      "range",
      [](double start, double limit, double delta, DType dtype) {
        return range(start, limit, delta, dtype);
      },
      Release(), nb::arg("start"), nb::arg("limit"), nb::arg("delta"), nb::arg("dtype"));
  // mt.clip_by_value converts the bounds and checks their shapes as TensorFlow does
  // (_clip_ops.py).
  m.def("clip_by_value", &clip_by_value, Release(), nb::arg("t"), nb::arg("clip_value_min"),
        nb::arg("clip_value_max"));
  m.def("matmul", &matmul, Release(), nb::arg("a"), nb::arg("b"), nb::arg("transpose_a") = false,
        nb::arg("transpose_b") = false, nb::arg("adjoint_a") = false, nb::arg("adjoint_b") = false);
  m.def(
      "add_n", [](std::vector<Tensor> inputs) { return add_n(inputs); }, Release(),
      nb::arg("inputs"));
  // The uniform families of the op table (kernels/op_table.h), one binding per row.
#define MT_BIND_BINARY(Name, tf, cc, py, ...) def_binary<&::mt::cc>(m, bound_name(py));
  MT_BINARY_OPS(MT_BIND_BINARY)
#undef MT_BIND_BINARY
#define MT_BIND_UNARY(Name, tf, cc, py, ...) def_unary<&::mt::cc>(m, bound_name(py));
  MT_UNARY_OPS(MT_BIND_UNARY)
#undef MT_BIND_UNARY
  auto reduction = [&m](const char* name, Tensor (*op)(const Tensor&, const Axes&, bool)) {
    m.def(
        name,
        [op](nb::handle input, const nb::object& axis, bool keepdims) {
          Tensor x = convert(input);
          Axes axes = to_axes(axis);
          nb::gil_scoped_release release;
          return op(x, axes, keepdims);
        },
        nb::arg("input_tensor"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false);
  };
#define MT_BIND_REDUCTION(Name, tf, cc, py, ...) reduction(bound_name(py), &::mt::cc);
  MT_REDUCTION_OPS(MT_BIND_REDUCTION)
#undef MT_BIND_REDUCTION
  // mt.where, mt.argmax and mt.argmin convert their arguments in Python (_index_ops.py).
  m.def("select_v2", &where, Release(), nb::arg("condition"), nb::arg("x"), nb::arg("y"));
  m.def("arg_max", &argmax, Release(), nb::arg("input"), nb::arg("axis"), nb::arg("output_type"));
  m.def("arg_min", &argmin, Release(), nb::arg("input"), nb::arg("axis"), nb::arg("output_type"));
  m.def("cast", &cast, Release(), nb::arg("x"), nb::arg("dtype"));
  m.def("identity", &identity, Release(), nb::arg("input"));

  // Every row as the package re-exports it (python/minitensor/_op_table.py): its py_name
  // and its family list in kernels/op_table.h, in table order.
  nb::list rows;
#define MT_PY_ROW(Name, tf, cc, py, ...) rows.append(nb::make_tuple(py, family));
#define MT_PY_FAMILY(list, name) \
  {                              \
    const char* family = name;   \
    list(MT_PY_ROW)              \
  }
  MT_PY_FAMILY(MT_DATA_OPS, "data")
  MT_PY_FAMILY(MT_MATH_OPS, "math")
  MT_PY_FAMILY(MT_BINARY_OPS, "binary")  // the comparisons included
  MT_PY_FAMILY(MT_UNARY_OPS, "unary")
  MT_PY_FAMILY(MT_REDUCTION_OPS, "reduction")
  MT_PY_FAMILY(MT_ARG_OPS, "arg")
  MT_PY_FAMILY(MT_ARRAY_OPS, "array")
  MT_PY_FAMILY(MT_RANDOM_OPS, "random")
  MT_PY_FAMILY(MT_NN_OPS, "nn")
  MT_PY_FAMILY(MT_CONV_OPS, "conv")
  MT_PY_FAMILY(MT_BATCH_NORM_OPS, "batch_norm")
  MT_PY_FAMILY(MT_LAYER_NORM_OPS, "layer_norm")
  MT_PY_FAMILY(MT_ATTENTION_OPS, "attention")
  MT_PY_FAMILY(MT_RESOURCE_OPS, "resource")
#undef MT_PY_FAMILY
#undef MT_PY_ROW
  MT_CHECK(rows.size() == static_cast<size_t>(kNumOps));  // a family list missing above
  m.attr("_op_rows") = nb::tuple(rows);
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::enum_<DType>(m, "DType")
      .value("float32", DType::kFloat32)
      .value("float64", DType::kFloat64)
      .value("int32", DType::kInt32)
      .value("int64", DType::kInt64)
      .value("bool", DType::kBool)
      .value("bfloat16", DType::kBFloat16)
      .value("float16", DType::kFloat16)
      .def_prop_ro("size", [](DType d) { return dtype_size(d); });
  bind_tensor_class(m);
  bind_ops(m);
  nb::class_<DeviceBlock>(m, "DeviceBlock")
      .def(nb::init<std::string>(), nb::arg("device_name"))
      .def("__enter__", &DeviceBlock::enter)
      .def("__exit__", &DeviceBlock::exit)
      .def_prop_ro("name", &DeviceBlock::name);
}

}  // namespace mt::python
