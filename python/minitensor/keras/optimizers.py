"""tf.keras.optimizers: SGD, Adam, AdamW and RMSprop with Keras 3's formulas and defaults,
run by the C++ runtime (runtime/train/optimizers.h): each update is in place on the variable's
device, with its slot variables beside it.

    opt = mt.keras.optimizers.Adam(learning_rate=1e-3)
    opt.apply_gradients(zip(grads, model_variables))
"""

import weakref

from .. import _minitensor as _mt

__all__ = ["Adam", "AdamW", "Optimizer", "RMSprop", "SGD"]


class _WeakRate:
    """A callable learning rate as the C++ optimizer holds it: weakly, while the Python
    optimizer holds it strongly. Python's collector cannot see references held in C++, so
    a strong one there closed a cycle it could never free (the callable's globals hold the
    optimizer, which holds the C++ object), and nanobind reported the leak at exit."""

    __slots__ = ("_ref",)

    def __init__(self, fn):
        self._ref = weakref.ref(fn)

    def __call__(self, step):
        return self._ref()(step)


class Optimizer:
    """The methods every optimizer shares."""

    def _rate(self, learning_rate):
        """What the C++ optimizer takes for ``learning_rate``: a number, or a callable of
        the step (a schedule) that this object keeps alive."""
        if not callable(learning_rate):
            return learning_rate
        self._learning_rate_fn = learning_rate
        try:
            return _WeakRate(learning_rate)
        except TypeError:  # no weak references to it: it holds no globals either
            return learning_rate

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
        self._impl = _mt._SGD(self._rate(learning_rate), float(momentum), bool(nesterov))


class Adam(Optimizer):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="adam"):
        self.name = name
        self._impl = _mt._Adam(self._rate(learning_rate), beta_1, beta_2, epsilon)


class AdamW(Optimizer):
    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, name="adamw"):
        self.name = name
        self._impl = _mt._AdamW(self._rate(learning_rate), weight_decay, beta_1, beta_2, epsilon)


class RMSprop(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name="rmsprop"):
        self.name = name
        self._impl = _mt._RMSprop(self._rate(learning_rate), rho, momentum, epsilon, centered)
