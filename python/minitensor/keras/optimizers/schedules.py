"""keras.optimizers.schedules: learning rates as functions of the optimizer's step, with
Keras 3's arguments, formulas and float32 values.

    lr = mt.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=100, decay_rate=0.5)
    opt = mt.keras.optimizers.SGD(learning_rate=lr)   # step 0 at 0.1, step 100 at 0.05

An optimizer computes its schedule on the host at each step (``_host_value``, in NumPy
float32 as Keras's ops compute it), also at every replay of an mt.function, where its step
count advances (runtime/function/host_values.h). ``schedule(step)`` returns that value as a
float32 scalar tensor; called by hand inside an mt.function with a Python step, it is a
constant of the trace, as any Python value there.
"""

import math

import numpy as np
from ..._constant_op import constant
from ..._dtypes import float32

__all__ = ["CosineDecay", "ExponentialDecay", "InverseTimeDecay", "LearningRateSchedule",
           "PiecewiseConstantDecay", "PolynomialDecay", "deserialize", "serialize"]

_f32 = np.float32


def _check_decay_steps(decay_steps):
    if decay_steps <= 0:
        raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")


class LearningRateSchedule:
    """The base of the schedules: a callable of the step returning the learning rate.
    A subclass computes ``_host_value(step)`` (a NumPy or Python number) and
    ``get_config()``; one of the user's may override ``__call__(step)`` instead, as in
    Keras, which an optimizer then calls with the step as an int64 scalar tensor at every
    step (and replay), reading its result on the host."""

    def __call__(self, step):
        return constant(float(self._host_value(int(step))), float32)

    def _host_value(self, step):
        raise NotImplementedError(
            f"Learning rate schedule '{self.__class__.__name__}' must override "
            "`__call__(self, step)`.")

    def get_config(self):
        raise NotImplementedError(
            f"Learning rate schedule '{self.__class__.__name__}' must override `get_config()` "
            "in order to be serializable.")

    @classmethod
    def from_config(cls, config):
        """Instantiates a schedule from its ``get_config()``."""
        return cls(**config)


class _StepDecay(LearningRateSchedule):
    """What ExponentialDecay and InverseTimeDecay share: their arguments and the progress
    ``step / decay_steps``, floored with ``staircase``."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase, name):
        _check_decay_steps(decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def _progress(self, step):
        p = _f32(step) / _f32(self.decay_steps)
        return np.floor(p) if self.staircase else p

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_StepDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``; with ``staircase``
    the exponent is floored."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def _host_value(self, step):
        return _f32(self.initial_learning_rate) * np.power(_f32(self.decay_rate),
                                                           self._progress(step))


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < step <= boundaries[i]``, then ``values[-1]``."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, and "
                f"values={values} of length {len(values)}.")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def _host_value(self, step):
        for boundary, value in zip(self.boundaries, self.values):
            if step <= boundary:
                return _f32(value)
        return _f32(self.values[-1])

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """A linear warmup from ``initial_learning_rate`` to ``warmup_target`` over
    ``warmup_steps`` (when ``warmup_target`` is given), then a cosine decay over
    ``decay_steps`` down to ``alpha`` times the rate it starts from."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        _check_decay_steps(decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decay(self, step, decay_from):
        fraction = step / _f32(self.decay_steps)
        cosine = _f32(0.5) * (_f32(1.0) + np.cos(_f32(math.pi) * fraction))
        alpha = _f32(self.alpha)
        return decay_from * ((_f32(1.0) - alpha) * cosine + alpha)

    def _host_value(self, step):
        initial, decay_steps = _f32(self.initial_learning_rate), _f32(self.decay_steps)
        if self.warmup_target is None:
            return self._decay(min(_f32(step), decay_steps), initial)
        target, warmup_steps = _f32(self.warmup_target), _f32(self.warmup_steps)
        step = min(_f32(step), decay_steps + warmup_steps)
        if step < warmup_steps:
            return (target - initial) * (step / warmup_steps) + initial
        return self._decay(step - warmup_steps, target)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


class InverseTimeDecay(_StepDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``; with
    ``staircase`` the quotient is floored."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def _host_value(self, step):
        return _f32(self.initial_learning_rate) / (
            _f32(1.0) + _f32(self.decay_rate) * self._progress(step))


class PolynomialDecay(LearningRateSchedule):
    """From ``initial_learning_rate`` to ``end_learning_rate`` over ``decay_steps`` along
    ``(1 - step / decay_steps) ** power``; with ``cycle`` the decay restarts from a
    multiple of ``decay_steps`` beyond it."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001,
                 power=1.0, cycle=False, name="PolynomialDecay"):
        _check_decay_steps(decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def _host_value(self, step):
        step, decay_steps = _f32(step), _f32(self.decay_steps)
        if self.cycle:
            decay_steps = decay_steps * (_f32(1.0) if step == 0 else np.ceil(step / decay_steps))
        else:
            step = min(step, decay_steps)
        initial, end = _f32(self.initial_learning_rate), _f32(self.end_learning_rate)
        return (initial - end) * np.power(_f32(1.0) - step / decay_steps,
                                          _f32(self.power)) + end

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


_SCHEDULES = {cls.__name__: cls for cls in (CosineDecay, ExponentialDecay, InverseTimeDecay,
                                            PiecewiseConstantDecay, PolynomialDecay)}


def serialize(learning_rate_schedule):
    """Returns Keras's dict for a schedule: its module, class name and config."""
    return {"module": "keras.optimizers.schedules",
            "class_name": type(learning_rate_schedule).__name__,
            "config": learning_rate_schedule.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """Instantiates the schedule ``serialize`` (or Keras) described."""
    classes = dict(_SCHEDULES, **(custom_objects or {}))
    name = config["class_name"]
    if name not in classes:
        raise ValueError(f"Could not interpret learning rate schedule '{name}'")
    return classes[name].from_config(config["config"])
