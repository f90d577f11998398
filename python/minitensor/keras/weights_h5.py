"""Keras 3's weights file (``model.save_weights("x.weights.h5")``), both ways: HDF5 groups
named as Keras walks a model, each with a "vars" group of datasets "0", "1", ... in the
order of the object's own variables:

    vars                          the model's own (none), attribute name = the model's name
    layers/dense/vars/0, 1        a Sequential or functional model's layers, named by class
    layers/dense_1/vars/0, 1        (snake_case, numbered from the second of a class)
    layers/multi_head_attention/query_dense/vars/0, 1
                                  a layer's sublayers, by attribute name
    dense/vars/0, 1               a subclassed model's layer attributes, by attribute name
    optimizer/vars/0, 1, 2...     iterations, learning rate, then the slots variable by
                                  variable (Adam: momentum, velocity)

h5py is an optional dependency (``pip install minitensor[keras]``); without it these raise
ImportError naming it.
"""

import re as _re

import numpy as _np
from .._constant_op import constant
from .. import _minitensor as _mt
from . import model_saving
from .layers.input_layer import InputLayer
from .layers.layer import Layer, snake_case
from .model import Model
from .optimizers import Optimizer

__all__ = ["load_weights", "save_weights", "walk_keras"]


def h5py():
    """Returns the h5py module, or raises ImportError saying how to install it."""
    try:
        import h5py as module
    except ImportError:
        raise ImportError("Reading and writing Keras weights files (.weights.h5, .keras) "
                          "needs the h5py package: pip install h5py (or minitensor[keras])"
                          ) from None
    return module


def _natural_key(name):
    return [int(p) if p.isdigit() else p for p in _re.split(r"(\d+)", name)]


def walk_keras(model):
    """Returns [(path, object)] for the model, its layers and its optimizer, each object
    once, with Keras's paths ("" for the model)."""
    out, seen = [], set()

    def visit(obj, path):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        out.append((path, obj))
        join = (lambda name: f"{path}/{name}") if path else (lambda name: name)
        if isinstance(obj, Layer):
            for name, layer in obj._sublayers():  # query_dense, ...: by attribute name
                visit(layer, join(name))
        if not isinstance(obj, Model):
            return
        if obj._functional is not None or hasattr(obj, "_layers"):  # Sequential, functional
            used = {}
            for layer in obj.layers:
                name = snake_case(type(layer).__name__)  # conv2d, re_lu: Keras's names
                used[name] = used.get(name, -1) + 1
                visit(layer, join("layers/" + (f"{name}_{used[name]}" if used[name] else name)))
        for attr in sorted(vars(obj), key=_natural_key):
            value = getattr(obj, attr)
            if attr.startswith("_") or attr in ("inputs", "outputs"):
                continue
            if isinstance(value, (Layer, Optimizer)) and not isinstance(value, InputLayer):
                visit(value, join(attr))
    visit(model, "")
    return out


def _own_variables(obj):
    """Returns the object's own variables in Keras's order (None for one not made yet)."""
    if isinstance(obj, Optimizer):
        return None  # handled by _optimizer_values
    return list(obj._weights)


def _optimizer_values(optimizer, model):
    """Returns the optimizer's variables as Keras orders them: iterations, learning rate,
    then each trainable variable's slots; None when it has no slots yet."""
    slots = [_mt._optimizer_slots(optimizer._impl, v) for v in model.trainable_variables]
    if not any(slots):
        return None
    values = [_np.asarray(optimizer.iterations, _np.int64),
              _np.asarray(optimizer.learning_rate, _np.float32)]
    for per_var in slots:
        values += [s.read_value().numpy() for s in per_var]
    return values


def save_weights(model, filepath, include_optimizer=True):
    """Writes ``filepath`` (ending in .weights.h5) in Keras 3's layout."""
    with h5py().File(filepath, "w") as f:
        for path, obj in walk_keras(model):
            if isinstance(obj, Optimizer):
                values = _optimizer_values(obj, model) if include_optimizer else None
                if values is None:
                    continue
                name = obj.name
            else:
                values = [w.numpy() for w in _own_variables(obj)]
                name = obj.name
            group = f.create_group(f"{path}/vars" if path else "vars")
            group.attrs["name"] = name
            for i, value in enumerate(values):
                group.create_dataset(str(i), data=value)


def _check_shapes(obj, variables, values):
    if len(values) != len(variables):
        raise ValueError(
            f"Layer '{obj.name}' expected {len(variables)} variables, but received "
            f"{len(values)} variables during loading. Expected: "
            f"{[v._name.rsplit('/', 1)[-1] for v in variables]}")
    for var, value in zip(variables, values):
        if tuple(var.shape) != value.shape:
            raise ValueError(
                "The shape of the target variable and the shape of the target value in "
                f"`variable.assign(value)` must match. variable.shape={tuple(var.shape)}, "
                f"Received: value.shape={value.shape}. Target variable: {var.name}")


def load_weights(model, filepath, skip_mismatch=False):
    """Loads a Keras 3 weights file into the built ``model``: all layers' values are read
    and checked before any is assigned. The optimizer's are loaded when it has its slots
    and the counts agree. Raises ValueError for an unbuilt model or mismatched layers."""
    if not model.built and not model.weights:
        raise ValueError(f"Model '{model.name}' is not built: call it on data (or give it an "
                         "Input) before load_weights.")
    plan = []
    with h5py().File(filepath, "r") as f:
        for path, obj in walk_keras(model):
            key = f"{path}/vars" if path else "vars"
            values = [f[key][str(i)][()] for i in range(len(f[key]))] if key in f else []
            if isinstance(obj, Optimizer):
                mine = _optimizer_values(obj, model)
                if mine is not None and len(mine) == len(values):
                    plan.append((obj, values))
                continue
            variables = _own_variables(obj)
            try:
                _check_shapes(obj, variables, [_np.asarray(v) for v in values])
            except ValueError:
                if skip_mismatch:
                    continue
                raise
            plan += [(var, value) for var, value in zip(variables, values)]
    for target, value in plan:
        if isinstance(target, Optimizer):
            _mt._optimizer_set_iterations(target._impl, int(value[0]))
            slots = [_mt._optimizer_slots(target._impl, v) for v in model.trainable_variables]
            flat = [s for per_var in slots for s in per_var]
            for slot, v in zip(flat, value[2:]):
                slot._assign(constant(_np.asarray(v, slot.dtype.as_numpy_dtype)))
        else:
            target.assign(_np.asarray(value, target.dtype.as_numpy_dtype))


model_saving.register_format("save_weights", save_weights)
model_saving.register_format("load_weights", load_weights)
