"""Placement logging (tf.debugging.set_log_device_placement) and why each op goes where it
goes (docs/placement.md, "Seeing why").

    mt.debugging.set_log_device_placement(True)
    mt.matmul(a, b)
    # stderr: Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:0

``set_log_sink(print)`` sends the lines to a Python callable instead (the examples send
them to stdout, so that log lines and printed results come in one order). Without a sink
of the user's, the lines go to the process's stderr when ``sys.stderr`` is it, and through
``sys.stderr`` when it is not (a Jupyter notebook's, which never shows the process's).
``set_log_placement_reasons(True)`` appends each decision's reason to its line, and
``explain_placement(op, inputs)`` returns the decision without running the op.
"""

import sys

from . import _minitensor as _mt
from ._constant_op import convert_to_tensor
from ._dtypes import as_dtype

__all__ = ["explain_placement", "get_log_device_placement", "get_log_placement_reasons",
           "set_log_device_placement", "set_log_placement_reasons", "set_log_sink"]


_user_sink = None  # the sink set_log_sink was last given


def _to_sys_stderr(line):
    sys.stderr.write(line + "\n")


def _default_sink():
    """None (the C++ side writes to file descriptor 2) when ``sys.stderr`` is the process's
    own; otherwise a sink that writes through whatever ``sys.stderr`` is when a line comes
    (a notebook replaces it, and shows nothing written to the descriptor)."""
    if sys.stderr is None or sys.stderr is sys.__stderr__:
        return None
    return _to_sys_stderr


def set_log_device_placement(enabled):
    """Logs the device of every op, _EagerConst included, when ``enabled`` is true."""
    if enabled and _user_sink is None:
        _mt.set_log_sink(_default_sink())
    _mt.set_log_device_placement(bool(enabled))


def get_log_device_placement():
    return _mt.get_log_device_placement()


def set_log_sink(sink):
    """Calls ``sink(line)`` for each log line (without its newline); None restores stderr
    (``sys.stderr`` when it is not the process's: see above)."""
    global _user_sink
    _user_sink = sink
    _mt.set_log_sink(sink if sink is not None else _default_sink())


def set_log_placement_reasons(enabled):
    """Appends why to each placement log line ("(no GPU kernel for Cast on float32; asked
    for /device:GPU:0)") and the inputs copied; off by default, when the lines are
    TensorFlow's. Takes effect while set_log_device_placement is on."""
    _mt.set_log_placement_reasons(bool(enabled))


def get_log_placement_reasons():
    return _mt.get_log_placement_reasons()


def explain_placement(op, inputs, dtype="float32"):
    """Returns where ``op`` (TensorFlow's name: "MatMul", "AddV2", "_EagerConst") would run
    on ``inputs`` under this thread's device scopes, and why, without running it: a
    PlacementExplanation with ``op``, ``device``, ``requested``, ``reason`` ("default",
    "scope", "no_kernel_fallback", "soft_fallback", "small_op_on_host",
    "resource_device", "cost"), ``detail`` and ``copies`` (``input``, ``source``,
    ``bytes``). ``dtype`` is the op's when it has no input. Raises InvalidArgumentError for
    an unknown op or a dtype no device has a kernel for, NotFoundError for a scope naming
    no device while soft placement is off."""
    return _mt.explain_placement(op, [convert_to_tensor(t) for t in inputs], as_dtype(dtype))
