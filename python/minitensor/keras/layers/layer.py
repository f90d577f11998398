"""The Layer base class (tf.keras.layers.Layer): a callable that owns variables, made on
its first call (``build``) from the shape of what it is called on.

Called on tensors or arrays, a layer computes (``call``); called on KerasTensors, it
builds, records a Node and returns a KerasTensor of its output shape, which is how a
functional Model is defined. Names are unique per class: dense, dense_1, ...
"""

import collections as _collections
import functools as _functools
import re as _re

import numpy as _np

from ..._constant_op import constant
from ..._converted_ops import cast
from ..._dtypes import as_dtype
from ..._minitensor import Tensor
from ..._variables import Variable
from ... import _minitensor as _mt
from .. import call_context, initializers, mixed_precision, regularizers
from ..keras_tensor import KerasTensor, Node, is_symbolic

__all__ = ["Layer"]

_NAME_COUNTS = _collections.Counter()


def unique_name(prefix):
    """Returns ``prefix`` the first time, then prefix_1, prefix_2, ..."""
    count = _NAME_COUNTS[prefix]
    _NAME_COUNTS[prefix] += 1
    return prefix if count == 0 else f"{prefix}_{count}"


def snake_case(name):
    """Returns a class name as Keras names its layers: ReLU -> re_lu,
    GlobalAveragePooling2D -> global_average_pooling2d."""
    name = _re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return _re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _marks_built(build):
    """Wraps a subclass's ``build`` so that the layer counts as built after it, also when
    called directly (``layer.build(shape)``, as in Keras), so that a call does not build
    it again."""
    @_functools.wraps(build)
    def wrapper(self, *shapes, **kwargs):
        build(self, *shapes, **kwargs)
        self.built = True
    return wrapper


class Layer:
    """A computation with variables. Subclasses define ``build(input_shape)`` (creating
    their variables with ``add_weight``), ``call(inputs)`` and
    ``compute_output_shape(input_shape)``."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            cls.build = _marks_built(cls.__dict__["build"])

    def __init__(self, name=None, trainable=True, dtype=None, input_shape=None, **kwargs):
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments passed to {type(self).__name__}: "
                            f"{kwargs}")
        self.name = name or unique_name(snake_case(type(self).__name__))
        self.trainable = trainable
        # The dtype policy (mixed_precision.py): variables in self.dtype, computation in
        # self.compute_dtype; the global policy unless dtype= names one.
        self.dtype_policy = mixed_precision.policy_of(
            None if dtype is None else _policy_name(dtype))
        self.dtype = self.dtype_policy.variable_dtype
        self.built = False
        self._weights = []
        self._regularized = []  # (variable, regularizer) pairs
        self._build_shapes_arg = None if input_shape is None else \
            (None,) + tuple(input_shape)

    # False for layers that compute in float32 whatever the policy (the normalisations) or
    # read a slice of a variable (Embedding): their variables are not autocast.
    _autocast_variables = True
    # False for models: integer and bool inputs reach their layers as they are (_converted).
    _casts_integer_inputs = True

    @property
    def compute_dtype(self):
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self.dtype_policy.variable_dtype

    def build(self, input_shape):
        self.built = True

    def call(self, inputs):
        raise NotImplementedError(f"Layer {type(self).__name__} does not define call()")

    def compute_output_shape(self, input_shape):
        raise NotImplementedError(
            f"Layer {type(self).__name__} does not define compute_output_shape()")

    def add_weight(self, name, shape, initializer="glorot_uniform", trainable=True,
                   dtype=None, regularizer=None):
        """Creates and tracks a Variable ``<layer name>/<name>`` of ``shape``, filled by
        ``initializer`` (a name or an initializer); ``regularizer`` (a name or callable)
        adds its penalty on the variable to ``losses``."""
        value = initializers.get(initializer)(tuple(shape), dtype or self.dtype)
        variable = Variable(value, trainable=trainable, name=f"{self.name}/{name}")
        self._weights.append(variable)
        regularizer = regularizers.get(regularizer)
        if regularizer is not None:
            self._regularized.append((variable, regularizer))
        return variable

    @property
    def losses(self):
        """The penalties of the weights' regularizers, computed now from their values (a
        list of scalar tensors; differentiable inside a GradientTape)."""
        found = [regularizer(variable) for variable, regularizer in self._regularized
                 if variable.trainable and self.trainable]
        for _, layer in self._sublayers():
            found += layer.losses if self.trainable else []
        return found

    def __call__(self, inputs, training=None, **kwargs):
        """Computes on tensors or arrays; records a Node on KerasTensors. ``training``
        (else the mode of the call this one runs inside) reaches ``call`` when it takes
        that argument, and the layers it calls (call_context.py)."""
        if is_symbolic(inputs):
            shape = _shapes(inputs)
            self._check_input(shape)
            self._build_once(shape)
            output = KerasTensor(self.compute_output_shape(shape), self.compute_dtype)
            output.node = Node(self, inputs, output)
            self._output_shape = output.shape
            return output
        inputs = self._converted(inputs)
        shape = _shapes(inputs)
        self._check_input(shape)
        self._build_once(shape)
        training = call_context.resolved(training)
        if training is not None and call_context.takes_training(self.call):
            kwargs["training"] = training
        mixed = self._autocast_variables and self.compute_dtype != self.dtype
        with call_context.entered(training), \
                mixed_precision.autocast(self.compute_dtype if mixed else None):
            return self.call(inputs, **kwargs)

    def _build_once(self, input_shape):
        if not self.built:
            self.build(input_shape)
            self.built = True

    def _converted(self, inputs):
        """Returns arrays, lists and tensors as tensors of the layer's compute dtype
        (numbers of another type are cast, as Keras casts its inputs); a list of tensors or
        arrays is several inputs."""
        if isinstance(inputs, (list, tuple)) and inputs and all(
                isinstance(i, (Tensor, _mt._Variable, _np.ndarray)) for i in inputs):
            return [self._converted(i) for i in inputs]
        if isinstance(inputs, _mt._Variable):
            inputs = inputs.read_value()
        # Floating inputs take the compute dtype. Integer and bool ones do too in a layer
        # that computes (what Keras's ops give when they promote them), but a model passes
        # them on untouched: its Embedding gets exact ids (a cast through float32 changed
        # ids past 2**24, through bfloat16 past 256).
        if isinstance(inputs, Tensor):
            if not inputs.dtype.is_floating and not self._casts_integer_inputs:
                return inputs
            if inputs.dtype.name != self.compute_dtype:
                inputs = cast(inputs, as_dtype(self.compute_dtype))
            return inputs
        array = _np.asarray(inputs)
        if array.dtype.kind not in "fc" and not self._casts_integer_inputs:
            return constant(array)
        if self.compute_dtype == "bfloat16":  # NumPy has none: through float32
            return cast(constant(array.astype(_np.float32)), as_dtype("bfloat16"))
        return constant(_np.asarray(array, dtype=self.compute_dtype))

    def _check_input(self, shape):
        """Raises ValueError when the layer cannot take inputs of ``shape`` (subclasses)."""

    # The attributes holding layers this one is made of (MultiHeadAttention's projections):
    # their weights count as this layer's, after its own, and Keras's files and checkpoints
    # reach them by these names.
    _sublayer_names = ()

    def _sublayers(self):
        """Returns the (attribute name, layer) pairs of the layers this one is made of."""
        return [(n, getattr(self, n)) for n in self._sublayer_names
                if isinstance(getattr(self, n, None), Layer)]

    def _all_weights(self):
        found = list(self._weights)
        for _, layer in self._sublayers():
            found += [w for w in layer.weights if all(w is not f for f in found)]
        return found

    @property
    def weights(self):
        return self._all_weights()

    @property
    def trainable_weights(self):
        return [w for w in self._all_weights() if w.trainable] if self.trainable else []

    @property
    def non_trainable_weights(self):
        if not self.trainable:
            return self._all_weights()
        return [w for w in self._all_weights() if not w.trainable]

    trainable_variables = trainable_weights
    variables = weights

    def get_weights(self):
        """Returns the values of the weights as NumPy arrays, in creation order."""
        return [w.numpy() for w in self.weights]

    def set_weights(self, weights):
        """Assigns NumPy arrays to the weights, in the order of ``get_weights``; ValueError,
        with Keras's message, for a wrong count or shape."""
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(
                f"You called `set_weights(weights)` on layer '{self.name}' with a weight list "
                f"of length {len(weights)}, but the layer was expecting {len(mine)} weights.")
        for variable, value in zip(mine, weights):
            value = _np.asarray(value)
            if tuple(variable.shape) != value.shape:
                raise ValueError(
                    f"Layer {self.name} weight shape {tuple(variable.shape)} is not compatible "
                    f"with provided weight shape {value.shape}.")
        for variable, value in zip(mine, weights):
            variable.assign(_np.asarray(value, dtype=variable.dtype.as_numpy_dtype))

    def get_config(self):
        """Returns the layer's arguments as a dict (subclasses add theirs)."""
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype_policy.name}

    def count_params(self):
        return int(sum(_np.prod(w.shape) for w in self.weights))

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _policy_name(dtype):
    """A layer's dtype= argument (a DTypePolicy, a policy name, a DType or NumPy type) as
    what DTypePolicy takes."""
    if isinstance(dtype, (mixed_precision.DTypePolicy, str)):
        return dtype
    return as_dtype(dtype).name


def _shapes(inputs):
    """Returns the shape of ``inputs`` as a tuple, or a list of them."""
    if isinstance(inputs, (list, tuple)):
        return [tuple(i.shape) for i in inputs]
    return tuple(inputs.shape)
