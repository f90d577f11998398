// The shape and data movement ops (runtime/ops/array_ops.h) under TensorFlow's names and
// argument names, Tensor.__getitem__ (through StridedSlice with TensorFlow's masks) and
// Tensor.T. Shape-like arguments take ints, sequences of ints or int tensors.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

// Converts a value convert_to_tensor takes (a Tensor passes through).
Tensor to_tensor(nb::handle value) {
  if (nb::isinstance<Tensor>(value)) return nb::cast<Tensor>(value);
  return nb::cast<Tensor>(nb::module_::import_("minitensor").attr("convert_to_tensor")(value));
}

// Converts an int, a sequence of ints or an int32/int64 tensor to a list of ints.
Ints to_ints(nb::handle value) {
  if (nb::isinstance<Tensor>(value)) {
    check_host_read("a tensor's value as a shape, axis or size");
    const Tensor t = nb::cast<Tensor>(value);
    if (t.dtype() == DType::kInt32) {
      const std::vector<int32_t> v = t.to_vector<int32_t>();
      return Ints(v.begin(), v.end());
    }
    return t.to_vector<int64_t>();
  }
  if (PyIndex_Check(value.ptr())) return Ints{nb::cast<int64_t>(value)};
  Ints out;
  for (nb::handle item : value) out.push_back(nb::cast<int64_t>(item));
  return out;
}

// Converts flattened (before, after) pairs to Paddings.
Paddings to_paddings(nb::handle value) {
  const Ints flat = to_ints(value);
  Paddings out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) out.emplace_back(flat[i], flat[i + 1]);
  return out;
}

// Converts tf.pad's upper-case mode name.
PadMode to_pad_mode(const std::string& mode) {
  if (mode == "REFLECT") return PadMode::kReflect;
  if (mode == "SYMMETRIC") return PadMode::kSymmetric;
  if (mode == "CONSTANT") return PadMode::kConstant;
  throw nb::value_error(("unknown pad mode " + mode).c_str());
}

std::vector<Tensor> to_tensors(nb::handle values) {
  std::vector<Tensor> out;
  for (nb::handle v : values) out.push_back(to_tensor(v));
  return out;
}

// Reads a slice bound: None sets the mask bit and gives 0.
int64_t bound(nb::handle v, int bit, int32_t* mask) {
  if (v.is_none()) {
    *mask |= 1 << bit;
    return 0;
  }
  return nb::cast<int64_t>(v);
}

}  // namespace

Tensor tensor_getitem(const Tensor& t, nb::handle key) {
  nb::tuple items =
      nb::isinstance<nb::tuple>(key) ? nb::borrow<nb::tuple>(key) : nb::make_tuple(key);
  Ints begin, end, strides;
  StridedSliceOptions o;
  int bit = 0;
  for (nb::handle item : items) {
    int64_t b = 0, e = 0, s = 1;
    if (item.is_none()) {
      o.new_axis_mask |= 1 << bit;
    } else if (item.ptr() == Py_Ellipsis) {
      if (o.ellipsis_mask != 0) throw nb::index_error("an index can only have a single ellipsis");
      o.ellipsis_mask |= 1 << bit;
    } else if (PySlice_Check(item.ptr())) {
      nb::object step = item.attr("step");
      s = step.is_none() ? 1 : nb::cast<int64_t>(step);
      if (s == 0) throw nb::value_error("slice step cannot be zero");
      b = bound(item.attr("start"), bit, &o.begin_mask);
      e = bound(item.attr("stop"), bit, &o.end_mask);
    } else if (PyIndex_Check(item.ptr()) && !PyBool_Check(item.ptr())) {
      b = nb::cast<int64_t>(item);
      e = b + 1;
      o.shrink_axis_mask |= 1 << bit;
    } else {
      throw nb::type_error(
          "Only integers, slices (`:`), ellipsis (`...`) and None (tf.newaxis) are valid "
          "indices");
    }
    begin.push_back(b);
    end.push_back(e);
    strides.push_back(s);
    ++bit;
  }
  nb::gil_scoped_release release;
  return strided_slice(t, begin, end, strides, o);
}

namespace {

// The dtype one_hot writes when none is given: that of on_value/off_value, else float32.
DType one_hot_dtype(nb::handle on, nb::handle off) {
  for (nb::handle v : {on, off}) {
    if (v.is_none()) continue;
    if (PyBool_Check(v.ptr())) return DType::kBool;
    if (PyLong_Check(v.ptr())) return DType::kInt32;
    return DType::kFloat32;
  }
  return DType::kFloat32;
}

void bind_shape_ops(nb::module_& m) {
  m.def(
      "reshape",
      [](nb::handle t, nb::handle shape) { return reshape(to_tensor(t), to_ints(shape)); },
      nb::arg("tensor"), nb::arg("shape"));
  m.def(
      "transpose",
      [](nb::handle a, nb::handle perm) {
        return transpose(to_tensor(a), perm.is_none() ? Ints{} : to_ints(perm));
      },
      nb::arg("a"), nb::arg("perm") = nb::none());
  m.def(
      "expand_dims", [](nb::handle x, int64_t axis) { return expand_dims(to_tensor(x), axis); },
      nb::arg("input"), nb::arg("axis"));
  m.def(
      "squeeze",
      [](nb::handle x, nb::handle axis) {
        return squeeze(to_tensor(x), axis.is_none() ? Ints{} : to_ints(axis));
      },
      nb::arg("input"), nb::arg("axis") = nb::none());
  m.def(
      "concat", [](nb::handle values, int64_t axis) { return concat(to_tensors(values), axis); },
      nb::arg("values"), nb::arg("axis"));
  m.def(
      "stack", [](nb::handle values, int64_t axis) { return stack(to_tensors(values), axis); },
      nb::arg("values"), nb::arg("axis") = 0);
  m.def(
      "split",
      [](nb::handle value, nb::handle splits, int64_t axis) {
        const Tensor t = to_tensor(value);
        if (PyIndex_Check(splits.ptr())) return split(t, nb::cast<int64_t>(splits), axis);
        return split(t, to_ints(splits), axis);
      },
      nb::arg("value"), nb::arg("num_or_size_splits"), nb::arg("axis") = 0);
  m.def(
      "slice",
      [](nb::handle x, nb::handle begin, nb::handle size) {
        return slice(to_tensor(x), to_ints(begin), to_ints(size));
      },
      nb::arg("input_"), nb::arg("begin"), nb::arg("size"));
  m.def(
      "strided_slice",
      [](nb::handle x, nb::handle begin, nb::handle end, nb::handle strides, int32_t begin_mask,
         int32_t end_mask, int32_t ellipsis_mask, int32_t new_axis_mask, int32_t shrink_axis_mask) {
        const StridedSliceOptions o{begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                                    shrink_axis_mask};
        return strided_slice(to_tensor(x), to_ints(begin), to_ints(end),
                             strides.is_none() ? Ints{} : to_ints(strides), o);
      },
      nb::arg("input_"), nb::arg("begin"), nb::arg("end"), nb::arg("strides") = nb::none(),
      nb::arg("begin_mask") = 0, nb::arg("end_mask") = 0, nb::arg("ellipsis_mask") = 0,
      nb::arg("new_axis_mask") = 0, nb::arg("shrink_axis_mask") = 0);
}

void bind_copy_ops(nb::module_& m) {
  m.def(
      "gather",
      [](nb::handle params, nb::handle indices, nb::handle axis, int64_t batch_dims) {
        if (batch_dims != 0) {
          throw nb::value_error("[GatherV2] batch_dims other than 0 is not supported");
        }
        return gather(to_tensor(params), to_tensor(indices),
                      axis.is_none() ? 0 : nb::cast<int64_t>(axis));
      },
      nb::arg("params"), nb::arg("indices"), nb::arg("axis") = nb::none(),
      nb::arg("batch_dims") = 0);
  m.def(
      "one_hot",
      [](nb::handle indices, int64_t depth, nb::handle on, nb::handle off, nb::handle axis,
         std::optional<DType> dtype) {
        const double on_value = on.is_none() ? 1.0 : nb::cast<double>(on);
        const double off_value = off.is_none() ? 0.0 : nb::cast<double>(off);
        return one_hot(to_tensor(indices), depth, on_value, off_value,
                       axis.is_none() ? -1 : nb::cast<int64_t>(axis),
                       dtype ? *dtype : one_hot_dtype(on, off));
      },
      nb::arg("indices"), nb::arg("depth"), nb::arg("on_value") = nb::none(),
      nb::arg("off_value") = nb::none(), nb::arg("axis") = nb::none(),
      nb::arg("dtype") = nb::none());
  m.def(
      "broadcast_to",
      [](nb::handle x, nb::handle shape) { return broadcast_to(to_tensor(x), to_ints(shape)); },
      nb::arg("input"), nb::arg("shape"));
  m.def(
      "tile",
      [](nb::handle x, nb::handle multiples) { return tile(to_tensor(x), to_ints(multiples)); },
      nb::arg("input"), nb::arg("multiples"));
  m.def(
      "cumsum",
      [](nb::handle x, int64_t axis, bool exclusive, bool reverse) {
        return cumsum(to_tensor(x), axis, exclusive, reverse);
      },
      nb::arg("x"), nb::arg("axis") = 0, nb::arg("exclusive") = false, nb::arg("reverse") = false);
  m.def(
      "band_part",
      [](nb::handle x, int64_t num_lower, int64_t num_upper) {
        return linalg::band_part(to_tensor(x), num_lower, num_upper);
      },
      nb::arg("input"), nb::arg("num_lower"), nb::arg("num_upper"));
  // mt.pad and mt.math.top_k check and convert their arguments in Python (_pad_ops.py): the
  // paddings come flattened, the mode upper-case.
  m.def(
      "pad",
      [](nb::handle x, nb::handle paddings, const std::string& mode, double constant_values) {
        return pad(to_tensor(x), to_paddings(paddings), to_pad_mode(mode), constant_values);
      },
      nb::arg("input"), nb::arg("paddings"), nb::arg("mode") = "CONSTANT",
      nb::arg("constant_values") = 0);
  m.def(
      "mirror_pad_grad",
      [](nb::handle x, nb::handle paddings, const std::string& mode) {
        return mirror_pad_grad(to_tensor(x), to_paddings(paddings), to_pad_mode(mode));
      },
      nb::arg("input"), nb::arg("paddings"), nb::arg("mode"));
  m.def(
      "top_k",
      [](nb::handle x, int64_t k, bool sorted) {
        math::TopKResult r = math::top_k(to_tensor(x), k, sorted);
        return nb::make_tuple(r.values, r.indices);
      },
      nb::arg("input"), nb::arg("k") = 1, nb::arg("sorted") = true);
  // mt.scatter_nd and the tensor scatters convert their arguments as TensorFlow's do in
  // Python (_scatter_ops.py).
  m.def(
      "scatter_nd",
      [](const Tensor& indices, const Tensor& updates, std::vector<int64_t> shape) {
        return scatter_nd(indices, updates, shape);
      },
      nb::call_guard<nb::gil_scoped_release>(), nb::arg("indices"), nb::arg("updates"),
      nb::arg("shape"));
  m.def("tensor_scatter_nd_update", &tensor_scatter_nd_update,
        nb::call_guard<nb::gil_scoped_release>(), nb::arg("tensor"), nb::arg("indices"),
        nb::arg("updates"));
  m.def("tensor_scatter_nd_add", &tensor_scatter_nd_add, nb::call_guard<nb::gil_scoped_release>(),
        nb::arg("tensor"), nb::arg("indices"), nb::arg("updates"));
  m.def(
      "zeros_like", [](nb::handle x) { return zeros_like(to_tensor(x)); }, nb::arg("input"));
  m.def(
      "ones_like", [](nb::handle x) { return ones_like(to_tensor(x)); }, nb::arg("input"));
}

}  // namespace

void bind_array_ops(nb::module_& m) {
  bind_shape_ops(m);
  bind_copy_ops(m);
}

}  // namespace mt::python
