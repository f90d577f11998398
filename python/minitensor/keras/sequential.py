"""Sequential (tf.keras.Sequential): a plain stack of layers, each called on the output of
the one before.

    model = mt.keras.Sequential([mt.keras.layers.Input(shape=(2,)),
                                 mt.keras.layers.Dense(8, activation="relu"),
                                 mt.keras.layers.Dense(1)])

With an Input (or a first layer given ``input_shape=``, or a first layer that is a model
of known input shape) the variables are made at once; otherwise at the first call, fit,
evaluate or predict. A model is a layer like any other:

    probability_model = mt.keras.Sequential([model, mt.keras.layers.Softmax()])
"""

from .keras_tensor import KerasTensor
from .layers.input_layer import InputLayer
from .layers.layer import Layer, unique_name
from .model import Model

__all__ = ["Sequential"]


class Sequential(Model):
    """A Model whose layers run one after the other. Raises ValueError, with Keras's
    message, when given something other than a layer."""

    def __init__(self, layers=None, name=None, trainable=True):
        super().__init__(name=name or unique_name("sequential"), trainable=trainable)
        self._layers = []
        self._input_shape = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        """Appends ``layer`` (an Input's KerasTensor or InputLayer may come first)."""
        if isinstance(layer, KerasTensor) and isinstance(layer.node.layer, InputLayer):
            layer = layer.node.layer
        if isinstance(layer, InputLayer):
            self._input_shape = layer.batch_shape
            return
        if not isinstance(layer, Layer):
            raise ValueError("Only instances of `keras.Layer` can be added to a Sequential "
                             f"model. Received: {layer} (of type {type(layer)})")
        self._layers.append(layer)
        if self._input_shape is None and not self._layers[:-1]:
            self._input_shape = _known_input_shape(layer)
        if self._input_shape is not None:
            self._build_through(self._input_shape)

    def _build_through(self, input_shape):
        """Builds every layer by a symbolic pass from ``input_shape``."""
        tensor = KerasTensor(input_shape)
        for layer in self._layers:
            tensor = layer(tensor)
        self.built = True
        self._variables_made = True

    @property
    def layers(self):
        return list(self._layers)

    def build(self, input_shape):
        self._build_through((None,) + tuple(input_shape[1:]))

    def call(self, inputs, training=None):
        for layer in self._layers:
            inputs = layer(inputs, training=training)
        return inputs

    def compute_output_shape(self, input_shape):
        for layer in self._layers:
            input_shape = layer.compute_output_shape(input_shape)
        return input_shape


def _known_input_shape(layer):
    """Returns the input shape a first layer declares: its ``input_shape=``, or that of a
    model made on an Input (a Sequential may start with another model); else None."""
    if layer._build_shapes_arg is not None:
        return layer._build_shapes_arg
    if isinstance(layer, Sequential):
        return layer._input_shape
    inputs = getattr(layer, "inputs", None)
    if isinstance(layer, Model) and inputs and len(inputs) == 1:
        return inputs[0].shape
    return None
