"""What the cluster's Python classes share: the spec as the C++ layer takes it, PEM text
and tokens, and unused loopback ports."""

from .. import _minitensor as _mt
from .. import errors as _errors
from ..train import ClusterSpec

__all__ = ["pick_unused_loopback_port"]


def pick_unused_loopback_port():
    """Returns a TCP port of 127.0.0.1 that nothing listens on now (for tests and examples,
    as portpicker); UnavailableError when none is found."""
    return _mt.pick_unused_loopback_port()


def _pem(value, name):
    """Returns PEM text (or a token) given as str or bytes; "" for None."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode()
    if not isinstance(value, str):
        raise TypeError(f"{name} must be str or bytes (the PEM text itself, not a file name), "
                        f"got {type(value).__name__}")
    return value


def _cluster_dict(cluster, caller):
    """Returns a ClusterSpec (or what ClusterSpec accepts) as {job: [address, ...]}. A job
    whose task indices are not 0 to n-1 is InvalidArgumentError, as the C++ layer's checks
    of the rest of the spec are (`caller` starts the message)."""
    spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
    out = {}
    for job in spec.jobs:
        tasks = spec.job_tasks(job)
        if None in tasks:
            raise _errors.InvalidArgumentError(
                None, None, f"[{caller}] invalid cluster spec: the tasks of job '{job}' must be "
                f"numbered 0 to n-1, got {spec.task_indices(job)} (sparse jobs are not "
                "supported)")
        out[job] = tasks
    return out
