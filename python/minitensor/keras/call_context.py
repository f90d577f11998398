"""The training mode of the layer calls in progress, as Keras 3 passes ``training=`` down.

A layer call resolves its mode from, in order: its own ``training=`` argument, the mode of
the layer call it runs inside (on this thread), and else none (``call``'s own default
applies). The resolved mode reaches ``call`` when ``call`` takes a ``training`` argument,
and every layer called inside it inherits the mode:

    model(x, training=True)   # a Dropout inside, however deeply nested, drops
    model.fit(x, y)           # calls the model with training=True; evaluate and predict
                              # with training=False

The mode is per thread, so the replicas of a strategy, each on its own thread, keep theirs.
"""

import contextlib as _contextlib
import inspect as _inspect
import threading as _threading

__all__ = ["entered", "resolved", "takes_training"]

_local = _threading.local()
_TAKES_TRAINING = {}  # a class's call function -> whether it takes `training`


def resolved(training):
    """Returns ``training`` when given (not None), else the mode of the enclosing call."""
    if training is not None:
        return training
    return getattr(_local, "training", None)


@_contextlib.contextmanager
def entered(training):
    """Makes ``training`` the mode of the calls made inside the block (None leaves the
    enclosing mode to them)."""
    outer = getattr(_local, "training", None)
    _local.training = outer if training is None else training
    try:
        yield
    finally:
        _local.training = outer


def takes_training(call):
    """Returns whether the function ``call`` names a ``training`` parameter (as Keras, a
    ``**kwargs`` alone does not count)."""
    function = getattr(call, "__func__", call)
    known = _TAKES_TRAINING.get(function)
    if known is None:
        known = "training" in _inspect.signature(function).parameters
        _TAKES_TRAINING[function] = known
    return known
