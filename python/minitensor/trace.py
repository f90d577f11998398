"""Recording what the runtime does, for Perfetto, chrome://tracing and the HTML report
(docs/trace.md says how to read them).

    with mt.trace.Recording():
        c = mt.matmul(a, b)
    mt.trace.save("trace.json")            # Chrome Trace Event JSON
    mt.trace.write_report("report.html")   # one self-contained page

One recording at a time per process. Errors are the exceptions of ``mt.errors``:
FailedPreconditionError for a second start() or a stop() with nothing recording,
NotFoundError for a file that cannot be written.
"""

import os as _os

from . import _minitensor as _mt


def start():
    """Starts recording, dropping the previous recording; initialises the runtime."""
    _mt.trace_start()


def stop():
    """Stops recording; waits for every device so that GPU timings resolve."""
    _mt.trace_stop()


def is_recording():
    """Returns whether a recording is running."""
    return _mt.trace_is_recording()


def to_json():
    """Returns the last recording (the running one, up to now) as Chrome Trace Event JSON."""
    return _mt.trace_to_json()


def save(path):
    """Writes to_json() to ``path`` (a str or os.PathLike)."""
    _mt.trace_save(_os.fspath(path))


def report_html():
    """Returns the HTML report of the last recording: its data and script inline."""
    return _mt.trace_report_html()


def write_report(path):
    """Writes report_html() to ``path`` (a str or os.PathLike)."""
    _mt.trace_write_report(_os.fspath(path))


class Recording:
    """Records while the ``with`` block runs: start() on entry, stop() on exit (unless
    stopped inside)."""

    def __enter__(self):
        start()
        return self

    def __exit__(self, *exc):
        if is_recording():
            stop()
        return False
