"""minitensor.GradientTape and stop_gradient, with tf.GradientTape's Python interface:
nested sources (lists, tuples, dicts), None for unconnected sources (or zeros with
``unconnected_gradients=mt.UnconnectedGradients.ZERO``), ``stop_recording()``,
``persistent=True`` and higher-order gradients from nested tapes."""

import contextlib as _contextlib
import enum as _enum

from . import _minitensor as _mt
from ._constant_op import convert_to_tensor
from ._converted_ops import add_n, zeros_like
from ._minitensor import reduce_sum


class UnconnectedGradients(_enum.Enum):
    """What gradient() returns for a source the target does not depend on."""
    NONE = "none"
    ZERO = "zero"


def _flatten(structure, out):
    if isinstance(structure, dict):
        for key in sorted(structure):
            _flatten(structure[key], out)
    elif isinstance(structure, (list, tuple)):
        for item in structure:
            _flatten(item, out)
    else:
        out.append(structure)
    return out


def _pack(structure, flat):
    if isinstance(structure, dict):
        return {key: _pack(structure[key], flat) for key in sorted(structure)}
    if isinstance(structure, (list, tuple)):
        items = [_pack(item, flat) for item in structure]
        return type(structure)(items) if not hasattr(structure, "_fields") else \
            type(structure)(*items)
    return next(flat)


class GradientTape:
    """Records operations for automatic differentiation (tf.GradientTape)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._tape = None
        self._recording = False

    def __enter__(self):
        if self._tape is None:
            self._tape = _mt._Tape(self._persistent, self._watch_accessed)
        self._recording = True
        return self

    def __exit__(self, *exc):
        self._tape.stop()
        self._recording = False
        return False

    def watch(self, tensor):
        """Watches a tensor, a variable, or a nested structure of them."""
        if self._tape is None:
            raise ValueError("GradientTape.watch must be called inside the `with` block")
        for t in _flatten(tensor, []):
            if isinstance(t, _mt._Variable):
                self._tape.watch_variable(t)
            else:
                self._tape.watch(convert_to_tensor(t))

    @_contextlib.contextmanager
    def stop_recording(self):
        """Records nothing inside the block."""
        if not self._recording:
            raise ValueError("Tape must be recording to stop recording.")
        pause = self._tape.pause()
        try:
            yield
        finally:
            pause.end()

    def watched_variables(self):
        return tuple(self._tape.watched_variables()) if self._tape else ()

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Returns the gradients of ``target`` (a tensor, or a list whose sum is meant) with
        respect to ``sources``, in the structure of ``sources``."""
        if self._tape is None:
            raise RuntimeError("GradientTape.gradient can only be called once on "
                               "non-persistent tapes.")
        if isinstance(target, (list, tuple)):
            if output_gradients is not None:
                raise ValueError("output_gradients with several targets is not supported")
            target = add_n([reduce_sum(t) for t in target])
        flat = _flatten(sources, [])
        for s in flat:
            if not isinstance(s, (_mt.Tensor, _mt._Variable)):
                raise TypeError(f"sources must be tensors or variables, got {type(s).__name__}")
        tensors = [s for s in flat if not isinstance(s, _mt._Variable)]
        variables = [s for s in flat if isinstance(s, _mt._Variable)]
        if output_gradients is not None:
            output_gradients = convert_to_tensor(output_gradients, target.dtype)
        grads = self._tape.gradient(target, tensors, variables, output_gradients)
        by_tensor, by_variable = iter(grads[:len(tensors)]), iter(grads[len(tensors):])
        ordered = [next(by_variable) if isinstance(s, _mt._Variable) else next(by_tensor)
                   for s in flat]
        if UnconnectedGradients(unconnected_gradients) == UnconnectedGradients.ZERO:
            ordered = [zeros_like(s.read_value() if isinstance(s, _mt._Variable) else s)
                       if g is None else g for s, g in zip(flat, ordered)]
        return _pack(sources, iter(ordered))


def stop_gradient(input, name=None):  # noqa: A002
    """Returns ``input`` as a tensor no tape differentiates through (StopGradient)."""
    return _mt.stop_gradient(convert_to_tensor(input))
