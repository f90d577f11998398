"""Progbar (keras.utils.Progbar): the progress line ``fit``, ``evaluate`` and ``predict``
print, in Keras 3's format.

verbose=1 redraws one line in place (backspaces and a carriage return, bold and coloured
with ANSI codes, as Keras does on any POSIX system), at most every ``interval`` seconds:

    32/32 ━━━━━━━━━━━━━━━━━━━━ 0s 1ms/step - accuracy: 0.9500 - loss: 0.1234

verbose=2 prints one plain line when the target is reached:

    32/32 - 0s - 1ms/step - accuracy: 0.9500 - loss: 0.1234
"""

import re as _re
import sys as _sys
import time as _time

__all__ = ["Progbar"]

_BOLD, _GREEN, _WHITE, _RESET = "\x1b[1m", "\x1b[32m", "\x1b[37m", "\x1b[0m"
_ANSI = _re.compile(r"\x1b\[[0-9;]*m")


def format_step_time(seconds, unit_name="step"):
    """Returns " 12ms/step" style text: seconds, milliseconds or microseconds."""
    if seconds >= 1 or seconds == 0:
        return f" {seconds:.0f}s/{unit_name}"
    if seconds >= 1e-3:
        return f" {seconds * 1e3:.0f}ms/{unit_name}"
    return f" {seconds * 1e6:.0f}us/{unit_name}"


def _eta(seconds):
    if seconds > 3600:
        return "%d:%02d:%02d" % (seconds // 3600, (seconds % 3600) // 60, seconds % 60)
    if seconds > 60:
        return "%d:%02d" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


class Progbar:
    """A progress line for ``target`` steps (None: unknown). ``update(current, values)``
    shows step ``current`` with ``values``, a list of (name, number) pairs shown as given."""

    def __init__(self, target, width=20, verbose=1, interval=0.05, unit_name="step"):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self._start = _time.time()
        self._after_first_step = None
        self._last_update = 0.0
        self._shown_width = 0

    def update(self, current, values=None, finalize=None):
        """Shows step ``current``; ``finalize`` (default: current reached the target) ends
        the line."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        now = _time.time()
        step_time = self._step_time(current, now)
        values = values or []
        if self.verbose == 1 and (finalize or now - self._last_update >= self.interval):
            self._write(self._dynamic_line(current, values, finalize, now, step_time))
            self._last_update = now
        elif self.verbose == 2 and finalize and self.target:
            count = f"{current:>{len(str(self.target))}}/{self.target}"
            line = f"{count} - {now - self._start:.0f}s -" + \
                format_step_time(step_time, self.unit_name)
            self._write(line + "".join(f" - {k}: {_number(v, signed=False)}"
                                       for k, v in values) + "\n")

    def _dynamic_line(self, current, values, finalize, now, step_time):
        if self.target:
            count = f"{current:>{len(str(self.target))}}/{self.target}"
            done = int(self.width * current / self.target)
            bar = f"{_BOLD}{count}{_RESET} "
            if done > 0:
                bar += f"{_GREEN}{'━' * done}{_RESET}"
            bar += f"{_WHITE}{'━' * (self.width - done)}{_RESET}"
        else:
            bar = "%7d/Unknown" % current
        if self.target and not finalize:
            clock = _eta(step_time * (self.target - current))
        else:
            clock = f"{now - self._start:.0f}s"
        text = bar + f" {_BOLD}{clock}{_RESET}" + format_step_time(step_time, self.unit_name)
        text += "".join(f" - {k}: {_number(v, signed=True)}" for k, v in values)
        width = len(_ANSI.sub("", text))
        line = "\b" * self._shown_width + "\r" + text
        line += " " * max(0, self._shown_width - width)
        self._shown_width = width
        return line + ("\n" if finalize else "")

    def _step_time(self, current, now):
        """Seconds per step, leaving the first (slower) step out once there are others."""
        if not current:
            return 0.0
        if self._after_first_step is not None and current > 1:
            seconds = (now - self._after_first_step) / (current - 1)
        else:
            seconds = (now - self._start) / current
        if current == 1:
            self._after_first_step = now
        return seconds

    @staticmethod
    def _write(text):
        _sys.stdout.write(text)
        _sys.stdout.flush()


def _number(value, signed):
    """Formats a metric as Keras: four decimals, or exponent form when small (verbose=2
    compares the signed value, verbose=1 its magnitude)."""
    value = float(value)
    small = abs(value) <= 1e-3 if signed else value <= 1e-3
    return f"{value:.4e}" if small else f"{value:.4f}"
