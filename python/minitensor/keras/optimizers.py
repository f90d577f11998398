"""tf.keras.optimizers: SGD, Adam, AdamW and RMSprop with Keras 3's formulas and defaults,
run by the C++ runtime (runtime/train/optimizers.h): each update is in place on the variable's
device, with its slot variables beside it.

    opt = mt.keras.optimizers.Adam(learning_rate=1e-3)
    opt.apply_gradients(zip(grads, model_variables))
"""

from .. import _minitensor as _mt

__all__ = ["Adam", "AdamW", "Optimizer", "RMSprop", "SGD"]


class Optimizer:
    """The methods every optimizer shares."""

    def apply_gradients(self, grads_and_vars):
        """Applies one step; a None gradient leaves its variable alone."""
        pairs = []
        for grad, var in grads_and_vars:
            if grad is not None and not isinstance(grad, _mt.Tensor):
                from .. import convert_to_tensor
                grad = convert_to_tensor(grad, var.dtype)
            pairs.append((grad, var))
        self._impl._apply(pairs)

    @property
    def iterations(self):
        return self._impl.iterations

    @property
    def learning_rate(self):
        return self._impl._learning_rate


class SGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD"):
        self.name = name
        self._impl = _mt._SGD(learning_rate, float(momentum), bool(nesterov))


class Adam(Optimizer):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="adam"):
        self.name = name
        self._impl = _mt._Adam(learning_rate, beta_1, beta_2, epsilon)


class AdamW(Optimizer):
    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, name="adamw"):
        self.name = name
        self._impl = _mt._AdamW(learning_rate, weight_decay, beta_1, beta_2, epsilon)


class RMSprop(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name="rmsprop"):
        self.name = name
        self._impl = _mt._RMSprop(learning_rate, rho, momentum, epsilon, centered)
