"""tf.keras.optimizers: SGD, Adam, AdamW and RMSprop with Keras 3's formulas and defaults,
run by the C++ runtime (runtime/train/optimizers.h): each update is in place on the variable's
device, with its slot variables beside it.

    opt = mt.keras.optimizers.Adam(learning_rate=1e-3, global_clipnorm=1.0)
    opt.apply_gradients(zip(grads, model_variables))

A learning rate is a number, a schedule (``schedules``, or a subclass of
``LearningRateSchedule`` whose ``__call__`` takes the step as an int64 scalar tensor) or a
callable of no arguments (Keras 3's, e.g. ``lambda: lr_variable``); either is computed again
at every step, also at each replay of an mt.function. ``clipnorm``,
``clipvalue`` and ``global_clipnorm`` clip the gradients first, as Keras 3 does, with ops a
function records.
"""

import numbers
import weakref

from ... import _minitensor as _mt
from ... import _clip_ops
from ... import _host_reads
from . import schedules
from ..._constant_op import constant, convert_to_tensor
from ..._dtypes import int64

__all__ = ["Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "schedules"]


class _WeakRate:
    """A callable learning rate as the C++ optimizer holds it: weakly, while the Python
    optimizer holds it strongly. Python's collector cannot see references held in C++, so
    a strong one there closed a cycle it could never free (the callable's globals hold the
    optimizer, which holds the C++ object), and nanobind reported the leak at exit.

    The C++ optimizer calls it with the step, at each step and at every replay of an
    mt.function: a plain callable is called with no arguments (Keras 3's), a library
    schedule gives its host value (which runs no op), a schedule of the user's is called
    with the step as an int64 scalar tensor. The value is read on the host, which is allowed
    while a function traces since the replay computes it again."""

    __slots__ = ("_ref", "_kind")

    def __init__(self, fn, kind):
        self._ref = weakref.ref(fn)
        self._kind = kind

    def __call__(self, step):
        fn = self._ref()
        with _host_reads.reading():
            if self._kind == "host_value":
                return float(fn._host_value(step))
            if self._kind == "schedule":
                return float(fn(constant(step, int64)))
            return float(fn())


class Optimizer:
    """The methods every optimizer shares: the learning rate and the gradients' clipping."""

    def __init__(self, name, clipnorm=None, clipvalue=None, global_clipnorm=None):
        if sum(x is not None for x in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                f"global_clipnorm={global_clipnorm}")
        self.name = name
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm

    def _rate(self, learning_rate):
        """What the C++ optimizer takes for ``learning_rate``: a number, or a callable of
        the step (a schedule) that this object keeps alive."""
        if isinstance(learning_rate, numbers.Real):
            return learning_rate
        if not callable(learning_rate) and hasattr(learning_rate, "__float__"):
            return float(learning_rate)  # a scalar tensor or variable: its value now
        if not callable(learning_rate):
            raise ValueError(
                "Argument `learning_rate` should be float, or an instance of "
                "LearningRateSchedule, or a callable (that takes in the current iteration "
                "value and returns the corresponding learning rate value). Received instead: "
                f"learning_rate={learning_rate}")
        self._learning_rate_fn = learning_rate
        if isinstance(learning_rate, schedules.LearningRateSchedule):
            overridden = type(learning_rate).__call__ is not schedules.LearningRateSchedule.__call__
            return _WeakRate(learning_rate, "schedule" if overridden else "host_value")
        try:
            return _WeakRate(learning_rate, "callable")
        except TypeError:  # no weak references to it: it holds no globals either
            return lambda step: float(learning_rate())

    def _clip(self, grads):
        """Keras 3's clipping of the step's gradients (None stays None)."""
        if self.clipnorm and self.clipnorm > 0:
            return [g if g is None else _clip_ops.clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm and self.global_clipnorm > 0:
            if all(g is None for g in grads):
                return grads
            return _clip_ops.clip_by_global_norm(grads, self.global_clipnorm)[0]
        if self.clipvalue and self.clipvalue > 0:
            return [g if g is None else _clip_ops.clip_by_value(g, -self.clipvalue,
                                                                 self.clipvalue) for g in grads]
        return grads

    def apply_gradients(self, grads_and_vars):
        """Applies one step; a None gradient leaves its variable alone."""
        grads, variables = [], []
        for grad, var in grads_and_vars:
            if grad is not None and not isinstance(grad, _mt.Tensor):
                grad = convert_to_tensor(grad, var.dtype)
            grads.append(grad)
            variables.append(var)
        self._impl._apply(list(zip(self._clip(grads), variables)))

    @property
    def iterations(self):
        return self._impl.iterations

    @property
    def learning_rate(self):
        return self._impl._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        """Keras's setter: a number, a scalar tensor, a schedule or a callable; the next
        step and every later replay of a function that applies this optimizer use it. A rate
        that is a schedule takes no number (Keras's TypeError)."""
        if not callable(value):
            if isinstance(getattr(self, "_learning_rate_fn", None),
                          schedules.LearningRateSchedule):
                raise TypeError(
                    "This optimizer was created with a `LearningRateSchedule` object as its "
                    "`learning_rate` constructor argument, hence its learning rate is not "
                    "settable. If you need the learning rate to be settable, you should "
                    "instantiate the optimizer with a float `learning_rate` argument.")
            if isinstance(value, (str, bytes)) or not (
                    isinstance(value, numbers.Real) or hasattr(value, "__float__")):
                raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype float")
        rate = self._rate(value)
        self._impl._set_learning_rate(rate)
        if not callable(value):
            self._learning_rate_fn = None  # the callable it replaces may go


class SGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD",
                 clipnorm=None, clipvalue=None, global_clipnorm=None):
        super().__init__(name, clipnorm, clipvalue, global_clipnorm)
        self._impl = _mt._SGD(self._rate(learning_rate), float(momentum), bool(nesterov))


class Adam(Optimizer):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="adam", clipnorm=None, clipvalue=None, global_clipnorm=None):
        super().__init__(name, clipnorm, clipvalue, global_clipnorm)
        self._impl = _mt._Adam(self._rate(learning_rate), beta_1, beta_2, epsilon)


class AdamW(Optimizer):
    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, name="adamw", clipnorm=None, clipvalue=None,
                 global_clipnorm=None):
        super().__init__(name, clipnorm, clipvalue, global_clipnorm)
        self._impl = _mt._AdamW(self._rate(learning_rate), weight_decay, beta_1, beta_2, epsilon)


class RMSprop(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name="rmsprop", clipnorm=None, clipvalue=None,
                 global_clipnorm=None):
        super().__init__(name, clipnorm, clipvalue, global_clipnorm)
        self._impl = _mt._RMSprop(self._rate(learning_rate), rho, momentum, epsilon, centered)
