"""Model (tf.keras.Model): a Layer made of layers, with the training API (trainer.py).

Two ways to make one, as in Keras:

    # functional: the graph of layer calls from Input to outputs
    inputs = mt.keras.layers.Input(shape=(1,))
    model = mt.keras.models.Model(inputs=inputs, outputs=mt.keras.layers.Dense(1)(inputs))

    # subclassed: layers as attributes, and a call()
    class Linear(mt.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = mt.keras.layers.Dense(1)
        def call(self, x):
            return self.dense(x)

A model made inside a distribution strategy's scope keeps that strategy
(``_distribute_strategy``), which ``fit`` trains with (training_step.py).
"""

from . import functional
from .layers.layer import Layer, unique_name
from .model_saving import ModelSaving
from .model_summary import summary_lines
from .trainer import Trainer
from .training_step import captured_strategy

__all__ = ["Model"]


class Model(ModelSaving, Trainer, Layer):
    """A functional model when given ``inputs`` and ``outputs`` (KerasTensors, or lists of
    them), else a subclassed one. Raises ValueError, with Keras's messages, for inputs or
    outputs that are not KerasTensors and for a disconnected graph."""

    _casts_integer_inputs = False  # its layers convert what they take (Layer._converted)

    def __init__(self, inputs=None, outputs=None, name=None, **kwargs):
        functional_model = inputs is not None or outputs is not None
        default = "functional" if functional_model else None
        super().__init__(name=name or (unique_name(default) if default else None), **kwargs)
        self._distribute_strategy = captured_strategy()
        self._functional = None
        if functional_model:
            self._init_graph(inputs, outputs)

    def _init_graph(self, inputs, outputs):
        flat_inputs = functional.check_keras_tensors(inputs, "inputs")
        flat_outputs = functional.check_keras_tensors(outputs, "outputs")
        nodes = functional.ordered_nodes(flat_inputs, flat_outputs)
        self._functional = (flat_inputs, flat_outputs, nodes, isinstance(outputs, (list, tuple)))
        self.inputs, self.outputs = flat_inputs, flat_outputs
        self.built = self._variables_made = True

    @property
    def layers(self):
        """The layers, in the order they run (a functional model's Input layers first)."""
        if self._functional is not None:
            inputs, _, nodes, _ = self._functional
            found = [t.node.layer for t in inputs] + [n.layer for n in nodes]
        else:
            found = [v for v in vars(self).values() if isinstance(v, Layer)]
            for value in vars(self).values():
                if isinstance(value, (list, tuple)):
                    found += [v for v in value if isinstance(v, Layer)]
        unique = []
        for layer in found:
            if all(layer is not seen for seen in unique):
                unique.append(layer)
        return unique

    @property
    def weights(self):
        found = list(self._weights)
        for layer in self.layers:
            found += [w for w in layer.weights if all(w is not f for f in found)]
        return found

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        found = [w for w in self._weights if w.trainable]
        for layer in self.layers:
            found += [w for w in layer.trainable_weights if all(w is not f for f in found)]
        return found

    trainable_variables = trainable_weights
    variables = weights

    @property
    def losses(self):
        """The regularization penalties of the model's own weights and of its layers'."""
        found = super().losses
        for layer in self.layers:
            found += layer.losses
        return found

    def __call__(self, inputs, training=None, **kwargs):
        """Runs the model. Until a call has run, a model made under a strategy's scope
        is called inside that scope when none is open, so that the variables it builds
        then are the strategy's."""
        strategy = self._distribute_strategy
        if strategy is None or self._variables_made or captured_strategy() is not None:
            outputs = super().__call__(inputs, training=training, **kwargs)
        else:
            with strategy.scope():
                outputs = super().__call__(inputs, training=training, **kwargs)
        self._variables_made = True
        return outputs

    _variables_made = False

    def call(self, inputs, training=None):
        if self._functional is None:
            raise NotImplementedError(
                f"Model {self.name} has no layers graph: pass inputs and outputs, or define "
                "call() in a subclass")
        flat_inputs, flat_outputs, nodes, several = self._functional
        values = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        if len(values) != len(flat_inputs):
            raise ValueError(f"Model {self.name} expects {len(flat_inputs)} input(s), but it "
                             f"received {len(values)} input tensors.")
        computed = functional.run_nodes(nodes, flat_inputs, values)
        outputs = [computed[id(t)] if id(t) in computed else values[flat_inputs.index(t)]
                   for t in flat_outputs]
        return outputs if several else outputs[0]

    def _check_input(self, shape):
        if self._functional is None:
            return
        shapes = shape if isinstance(shape, list) else [shape]
        for i, (expected, got) in enumerate(zip(self._functional[0], shapes)):
            if len(expected.shape) != len(got) or any(
                    e is not None and e != g for e, g in zip(expected.shape, got)):
                raise ValueError(
                    f"Input {i} of layer '{self.name}' is incompatible with the layer: "
                    f"expected shape={expected.shape}, found shape={tuple(got)}")

    def compute_output_shape(self, input_shape):
        if self._functional is None:
            raise NotImplementedError("A subclassed model has no output shape before a call")
        shapes = [(input_shape[0] if not isinstance(input_shape, list) else None,) +
                  t.shape[1:] for t in self._functional[1]]
        return shapes if self._functional[3] else shapes[0]

    def summary(self, print_fn=None):
        """Prints each layer's name, type, output shape and parameter count, and the
        totals."""
        for line in summary_lines(self):
            (print_fn or print)(line)
