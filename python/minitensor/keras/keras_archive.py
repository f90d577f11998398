"""Keras 3's model archive (``model.save("x.keras")``, ``keras.models.load_model``), both
ways, for the layers minitensor has (InputLayer, Dense) in Sequential and functional
models: a zip of config.json (the model's config, Keras's serialization), metadata.json
and model.weights.h5 (weights_h5.py's layout).
"""

import datetime as _datetime
import io as _io
import json as _json
import os as _os
import tempfile as _tempfile
import zipfile as _zipfile

from . import regularizers
from . import model_saving
from . import weights_h5 as _weights
from .layers.dense import Dense
from .layers.input_layer import Input
from .layers.input_layer import InputLayer
from .model import Model
from .sequential import Sequential

__all__ = ["load_model", "save_model"]

# The Keras version whose archive layout these files follow (checked against TensorFlow's).
_KERAS_FORMAT = "3.15.1"
_POLICY = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
           "registered_name": None}


def _initializer_config(init):
    name = type(init).__name__
    config = init.get_config() if hasattr(init, "get_config") else {}
    if name in ("Zeros", "Ones"):
        config = {}
    elif name == "GlorotUniform":
        config = {"seed": config.get("seed"), "input_axes": None, "output_axes": None}
    return {"module": "keras.initializers", "class_name": name, "config": config,
            "registered_name": None}


def _regularizer_config(regularizer):
    """Keras's serialization of an L1, L2 or L1L2 regularizer (None for None)."""
    if regularizer is None:
        return None
    if not isinstance(regularizer, (regularizers.L1, regularizers.L2, regularizers.L1L2)):
        raise NotImplementedError(f"Saving the regularizer {regularizer!r} to a .keras file is "
                                  "not supported (L1, L2 and L1L2 are)")
    return {"module": "keras.regularizers", "class_name": type(regularizer).__name__,
            "config": regularizer.get_config(), "registered_name": None}


def _regularizer(config):
    if config is None:
        return None
    return getattr(regularizers, config["class_name"]).from_config(config["config"])


def _activation_name(fn):
    return getattr(fn, "__name__", "linear")


def _layer_config(layer, input_shape):
    if isinstance(layer, InputLayer):
        return {"module": "keras.layers", "class_name": "InputLayer", "registered_name": None,
                "config": {"batch_shape": list(layer.batch_shape), "dtype": layer.dtype,
                           "sparse": False, "ragged": False, "name": layer.name,
                           "optional": False}}
    if not isinstance(layer, Dense):
        raise NotImplementedError(f"Saving a layer of type {type(layer).__name__} to a .keras "
                                  "file is not supported (InputLayer and Dense are)")
    config = {"name": layer.name, "trainable": layer.trainable,
              "dtype": dict(_POLICY, config={"name": layer.dtype_policy.name}),
              "units": layer.units,
              "activation": _activation_name(layer.activation), "use_bias": layer.use_bias,
              "kernel_initializer": _initializer_config(layer.kernel_initializer),
              "bias_initializer": _initializer_config(layer.bias_initializer),
              "kernel_regularizer": _regularizer_config(layer.kernel_regularizer),
              "bias_regularizer": _regularizer_config(layer.bias_regularizer),
              "activity_regularizer": None, "kernel_constraint": None,
              "bias_constraint": None}
    out = {"module": "keras.layers", "class_name": "Dense", "config": config,
           "registered_name": None}
    if input_shape is not None:
        out["build_config"] = {"input_shape": list(input_shape)}
    return out


def _model_config(model):
    if isinstance(model, Sequential):
        shape, layers = model._input_shape, []
        if shape is not None:
            layers.append({"module": "keras.layers", "class_name": "InputLayer",
                           "registered_name": None,
                           "config": {"batch_shape": list(shape), "dtype": "float32",
                                      "sparse": False, "ragged": False,
                                      "name": "input_layer", "optional": False}})
        for layer in model.layers:
            layers.append(_layer_config(layer, shape))
            shape = None if shape is None else layer.compute_output_shape(tuple(shape))
        config = {"name": model.name, "trainable": model.trainable, "dtype": _POLICY,
                  "layers": layers}
        if model._input_shape is not None:
            config["build_input_shape"] = list(model._input_shape)
        return {"module": "keras", "class_name": "Sequential", "config": config,
                "registered_name": None,
                "build_config": {"input_shape": list(model._input_shape or []) or None},
                "compile_config": None}
    if model._functional is None:
        raise NotImplementedError("Saving a subclassed model to a .keras file is not "
                                  "supported: use save_weights")
    return _functional_config(model)


def _history(tensor):
    return [tensor.node.layer.name, 0, 0]


def _functional_config(model):
    inputs, outputs, nodes, several = model._functional
    layers = []
    for t in inputs:
        entry = _layer_config(t.node.layer, None)
        entry.update(name=t.node.layer.name, inbound_nodes=[])
        layers.append(entry)
    for node in nodes:
        args = [{"class_name": "__keras_tensor__",
                 "config": {"shape": list(t.shape), "dtype": "float32",
                            "keras_history": _history(t)}}
                for t in (node.inputs if isinstance(node.inputs, list) else [node.inputs])]
        entry = _layer_config(node.layer, node.inputs.shape)
        entry.update(name=node.layer.name, inbound_nodes=[{"args": args, "kwargs": {}}])
        layers.append(entry)
    ins = [_history(t) for t in inputs]
    outs = [_history(t) for t in outputs]
    return {"module": "keras.src.models.functional", "class_name": "Functional",
            "registered_name": "Functional", "build_config": {"input_shape": None},
            "compile_config": None,
            "config": {"name": model.name, "trainable": model.trainable, "layers": layers,
                       "input_layers": ins if len(ins) > 1 else ins[0],
                       "output_layers": outs if several else outs[0]}}


def save_model(model, filepath):
    """Writes ``model`` as a Keras 3 archive at ``filepath`` (ending in .keras)."""
    config = _json.dumps(_model_config(model))
    metadata = _json.dumps({"keras_version": _KERAS_FORMAT, "date_saved":
                            _datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")})
    with _tempfile.TemporaryDirectory() as tmp:
        weights = _os.path.join(tmp, "model.weights.h5")
        _weights.save_weights(model, weights, include_optimizer=False)
        with _zipfile.ZipFile(filepath, "w") as z:
            z.writestr("metadata.json", metadata)
            z.writestr("config.json", config)
            z.write(weights, "model.weights.h5")


def _make_layer(entry):
    config = entry["config"]
    if entry["class_name"] != "Dense":
        raise ValueError(f"Unknown layer: '{entry['class_name']}'. minitensor's Keras has "
                         "InputLayer and Dense.")
    init = {k: config[k]["class_name"] for k in ("kernel_initializer", "bias_initializer")}
    dtype = config.get("dtype")  # Keras 3 writes a DTypePolicy's config, older files a name
    if isinstance(dtype, dict):
        dtype = dtype.get("config", {}).get("name")
    return Dense(config["units"], activation=config.get("activation"), dtype=dtype,
                 use_bias=config.get("use_bias", True), name=config["name"],
                 trainable=config.get("trainable", True),
                 kernel_regularizer=_regularizer(config.get("kernel_regularizer")),
                 bias_regularizer=_regularizer(config.get("bias_regularizer")), **init)


def model_from_config(config):
    """Builds the model a Keras 3 config describes (Sequential or functional)."""
    kind, inner = config["class_name"], config["config"]
    if kind == "Sequential":
        layers = []
        for entry in inner["layers"]:
            if entry["class_name"] == "InputLayer":
                shape = entry["config"]["batch_shape"]
                layers.append(Input(shape=tuple(shape[1:]), batch_size=shape[0]))
            else:
                layers.append(_make_layer(entry))
        return Sequential(layers, name=inner["name"])
    if kind not in ("Functional", "Model"):
        raise ValueError(f"Unknown model class: '{kind}'")
    tensors = {}
    for entry in inner["layers"]:
        name = entry.get("name", entry["config"]["name"])
        if entry["class_name"] == "InputLayer":
            shape = entry["config"]["batch_shape"]
            tensors[name] = Input(shape=tuple(shape[1:]), name=name)
            continue
        args = entry["inbound_nodes"][0]["args"]
        sources = [tensors[a["config"]["keras_history"][0]] for a in args]
        tensors[name] = _make_layer(entry)(sources[0] if len(sources) == 1 else sources)
    pick = lambda spec: [tensors[s[0]] for s in spec] if isinstance(spec[0], list) \
        else tensors[spec[0]]  # noqa: E731
    return Model(inputs=pick(inner["input_layers"]), outputs=pick(inner["output_layers"]),
                 name=inner["name"])


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a Keras 3 archive: the model from config.json, then its weights."""
    with _zipfile.ZipFile(filepath) as z:
        config = _json.loads(z.read("config.json"))
        weights = z.read("model.weights.h5")
    model = model_from_config(config)
    _weights.load_weights(model, _io.BytesIO(weights))
    return model


model_saving.register_format("save_model", save_model)
