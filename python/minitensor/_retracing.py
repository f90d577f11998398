"""Retracing made visible: mt.function's warning when a function keeps tracing.

Each trace notes how many calls of its function came since the trace before. Once five of
the last (up to ten) traces are noted, the function warns, twice at most, on the
"minitensor" logger, with TensorFlow's wording:

    WARNING:minitensor:5 out of the last 9 calls to <function g at 0x...> triggered
    mt.function retracing. Tracing is expensive and the excessive number of tracings ...

As TensorFlow's logger, the "minitensor" logger writes to stderr in logging's basic format
when neither it nor the root logger has a handler.
"""

import collections
import logging
import sys

__all__ = ["RetracingDetector", "logger"]

_THRESHOLD = 5        # traces among the remembered ones before a warning
_HISTORY = 10         # traces remembered
_MAX_WARNINGS = 2     # per function


def logger():
    """The "minitensor" logger, with a stderr handler unless logging is configured."""
    log = logging.getLogger("minitensor")
    if not log.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
        log.addHandler(handler)
    return log


class RetracingDetector:
    """Counts one function's calls and traces; warns as described above."""

    def __init__(self, python_function):
        self._python_function = python_function
        self._calls_since_trace = 0
        self._calls_per_trace = collections.deque(maxlen=_HISTORY)
        self._warnings = 0

    def called(self, count=1):
        self._calls_since_trace += count

    def traced(self):
        """Notes that the latest call traced; warns when the function retraces often."""
        self._calls_per_trace.append(self._calls_since_trace)
        self._calls_since_trace = 0
        if len(self._calls_per_trace) < _THRESHOLD or self._warnings >= _MAX_WARNINGS:
            return
        self._warnings += 1
        logger().warning(
            "%d out of the last %d calls to %r triggered mt.function retracing. Tracing is "
            "expensive and the excessive number of tracings could be due to (1) creating "
            "@mt.function repeatedly in a loop, (2) passing tensors with different shapes, "
            "(3) passing Python objects instead of tensors. For (1), please define your "
            "@mt.function outside of the loop. For (2), @mt.function has "
            "reduce_retracing=True option that can avoid unnecessary retracing. For (3), "
            "please refer to docs/function.md, \"Retracing\", for more details.",
            len(self._calls_per_trace), sum(self._calls_per_trace), self._python_function)
