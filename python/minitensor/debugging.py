"""Placement logging (tf.debugging.set_log_device_placement).

    mt.debugging.set_log_device_placement(True)
    mt.matmul(a, b)
    # stderr: Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:0

``set_log_sink(print)`` sends the lines to a Python callable instead (the examples send
them to stdout, so that log lines and printed results come in one order).
"""

from . import _minitensor as _mt


def set_log_device_placement(enabled):
    """Logs the device of every op, _EagerConst included, when ``enabled`` is true."""
    _mt.set_log_device_placement(bool(enabled))


def get_log_device_placement():
    return _mt.get_log_device_placement()


def set_log_sink(sink):
    """Calls ``sink(line)`` for each log line (without its newline); None restores stderr."""
    _mt.set_log_sink(sink)
