"""Reading a tensor's value on the host while mt.function traces is an error.

A trace records kernels; a Python value read from a tensor during it (``bool(t)`` in an
``if``, ``float(t)``, ``t.numpy()``, ``np.asarray(t)``, ``memoryview(t)``) would be fixed at its trace-time value and every replay
would reuse it, silently. So while a function traces a new signature, these reads raise
``mt.errors.OperatorNotAllowedInGraphError`` (a TypeError, as TensorFlow's for
``bool(symbolic_tensor)``), naming the user's file and line:

    @mt.function
    def h(x):
        return x if mt.reduce_sum(x) > 0 else -x   # raises, naming this line
    # instead: mt.cond(mt.reduce_sum(x) > 0, lambda: x, lambda: -x), or mt.where

The body of a signature that cannot replay (it runs eagerly at every call) reads freely.
Library code that must read on the host (mt.cond's predicate) does so inside ``reading()``.
"""

import contextlib
import linecache
import os
import sys
import threading

from . import _minitensor as _mt
from .errors import OperatorNotAllowedInGraphError

__all__ = ["check", "reading", "tracing", "traced_function"]

_local = threading.local()
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


@contextlib.contextmanager
def tracing(name):
    """Marks this thread as tracing function ``name`` until the block ends (nested
    functions, which the outer recording takes in, run inside it)."""
    stack = _local.__dict__.setdefault("functions", [])
    stack.append(name)
    _mt._add_tracing_depth(1)  # the buffer protocol (np.asarray, memoryview) checks too
    try:
        yield
    finally:
        _mt._add_tracing_depth(-1)
        stack.pop()


@contextlib.contextmanager
def reading():
    """Lets library code read tensors on the host while tracing (it has made the recording
    unreplayable first, or reads what no replay depends on)."""
    _local.reading = getattr(_local, "reading", 0) + 1
    try:
        yield
    finally:
        _local.reading -= 1


def traced_function():
    """Returns the name of the function this thread traces, or None."""
    stack = getattr(_local, "functions", None)
    if not stack or getattr(_local, "reading", 0):
        return None
    return stack[-1]


def check(what):
    """Raises OperatorNotAllowedInGraphError when this thread traces a function; ``what``
    names the read ("a Python `bool`", "`.numpy()`")."""
    if getattr(_local, "functions", None):
        name = traced_function()
        if name is not None:
            raise OperatorNotAllowedInGraphError(_message(what, name))


def _user_frame():
    """The innermost frame of the stack outside this package (the user's code)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return frame


def _message(what, name):
    frame = _user_frame()
    where = ""
    if frame is not None:
        filename, line = frame.f_code.co_filename, frame.f_lineno
        source = linecache.getline(filename, line).strip()
        where = f' at File "{filename}", line {line}' + (f": `{source}`" if source else "")
    return (f"Using a tensor as {what} is not allowed while mt.function traces "
            f"'{name}'{where}. A value read on the host during the trace would be fixed "
            "there and reused by every later call. Move the read outside the function, or "
            "decide with mt.cond / mt.while_loop, or choose element-wise on the device with "
            "mt.where (docs/function.md, \"Reading values while tracing\").")
