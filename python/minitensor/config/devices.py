"""The devices the runtime sees and how it uses it: what ``mt.config`` re-exports."""


import functools
import numbers

from .. import _minitensor as _mt
from .. import distribute as _distribute
from .. import errors
from ..train import ClusterSpec as _ClusterSpec
from .._minitensor import LogicalDevice, LogicalDeviceConfiguration, PhysicalDevice

__all__ = [
    "LogicalDevice", "LogicalDeviceConfiguration", "PhysicalDevice",
    "list_physical_devices", "list_logical_devices", "set_visible_devices",
    "get_visible_devices", "set_logical_device_configuration",
    "get_logical_device_configuration", "set_soft_device_placement",
    "get_soft_device_placement", "enable_tensor_float_32_execution",
    "tensor_float_32_execution_enabled", "experimental_connect_to_cluster",
    "experimental_connect_to_host", "run_functions_eagerly", "functions_run_eagerly",
]

_MiB = 1 << 20
_LOCAL_MASTERS = ("", "local")
_MAX_BULK_CONNECTIONS = 64  # kMaxParts, distributed/bulk_service.h


def _runtime_error_after_init(fn):
    """Raises FailedPreconditionError (configuration after initialisation) as RuntimeError."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except errors.FailedPreconditionError as e:
            raise RuntimeError(e.message) from None

    return wrapper


def list_physical_devices(device_type=None):
    """Lists the physical devices of ``device_type`` ("CPU", "GPU"; None for all)."""
    return _mt.list_physical_devices(device_type or "")


def list_logical_devices(device_type=None):
    """Lists the logical devices of ``device_type``; initialises the runtime."""
    return _mt.list_logical_devices(device_type or "")


@_runtime_error_after_init
def set_visible_devices(devices, device_type=None):
    """Makes only ``devices`` (one PhysicalDevice or a list) of ``device_type`` visible."""
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    _mt.set_visible_devices(list(devices), device_type or "")


def get_visible_devices(device_type=None):
    return _mt.get_visible_devices(device_type or "")


@_runtime_error_after_init
def set_logical_device_configuration(device, logical_devices):
    """Splits ``device`` into one logical device per LogicalDeviceConfiguration."""
    _mt.set_logical_device_configuration(device, list(logical_devices))


def get_logical_device_configuration(device):
    return _mt.get_logical_device_configuration(device)


def run_functions_eagerly(run_eagerly):
    """Makes every mt.function run its Python function eagerly at each call, tracing
    nothing: for debugging (tf.config.run_functions_eagerly)."""
    _mt.run_functions_eagerly(bool(run_eagerly))


def functions_run_eagerly():
    return _mt.functions_run_eagerly()


def set_soft_device_placement(enabled):
    """Runs an op asked for on a missing device on the best existing one instead."""
    _mt.set_soft_device_placement(bool(enabled))


def get_soft_device_placement():
    return _mt.get_soft_device_placement()


def enable_tensor_float_32_execution(enabled):
    _mt.enable_tensor_float_32_execution(bool(enabled))


def tensor_float_32_execution_enabled():
    return _mt.tensor_float_32_execution_enabled()


def experimental_connect_to_cluster(cluster_spec_or_resolver, job_name="localhost", task_index=0,
                                    protocol=None, make_master_device_default=True,
                                    cluster_device_filters=None, *, rpc_timeout_ms=30_000,
                                    connect_timeout_ms=30_000, max_message_bytes=256 * _MiB,
                                    root_cert_pem=None, client_cert_pem=None,
                                    client_key_pem=None, auth_token=None,
                                    bulk_connections=None):
    """Connects to the tasks of a cluster (a ``mt.train.ClusterSpec`` or a
    ``mt.distribute.cluster_resolver.ClusterResolver``): their devices then appear in
    ``list_logical_devices`` under their full names, and ``mt.device("/job:worker/task:1")``
    places ops on them. This process is task ``task_index`` of ``job_name`` (a job absent
    from the spec, "localhost" by default, means it is none of the tasks); its own devices
    keep their local names, so ops without a scope stay here (``make_master_device_default``
    changes nothing). As TensorFlow, a resolver whose ``master()`` is "" or "local" means
    this process alone: nothing is connected.

    Must come before the runtime initialises (the first op or tensor): after it,
    FailedPreconditionError. Waits up to ``connect_timeout_ms`` for each task
    (UnavailableError after that); every later call to a task has ``rpc_timeout_ms``.

    TLS and authentication, as the C++ ``ConnectOptions`` (PEM text, str or bytes):
    ``root_cert_pem`` switches on TLS and is the authority the tasks' certificates must come
    from; ``client_cert_pem`` and ``client_key_pem`` are this client's, for tasks that require
    one (mutual TLS); ``auth_token`` is sent with every call (a wrong or missing one is
    UnauthenticatedError).

    ``bulk_connections`` is how many connections to each task a large tensor is split over
    (each encrypts its part on a core of its own), in [0, 64]; None or 0 is the C++ default:
    one per hardware thread of this process, at most 8.

    Raises InvalidArgumentError for a bad spec or option, ValueError for a
    ``cluster_spec_or_resolver`` of another kind, a protocol other than "grpc" or a
    ``bulk_connections`` outside [0, 64], TypeError for a ``bulk_connections`` that is not
    an int, UnimplementedError for ``cluster_device_filters``, and for every call when the
    package was built without the distributed layer.
    """
    if isinstance(cluster_spec_or_resolver, _ClusterSpec):
        cluster_spec = cluster_spec_or_resolver
    elif isinstance(cluster_spec_or_resolver, _distribute.cluster_resolver.ClusterResolver):
        if cluster_spec_or_resolver.master() in _LOCAL_MASTERS:
            return  # as TensorFlow: a local master needs no cluster
        cluster_spec = cluster_spec_or_resolver.cluster_spec()
    else:
        raise ValueError("`cluster_spec_or_resolver` must be a `ClusterSpec` or a "
                         "`ClusterResolver`.")
    if protocol not in (None, "grpc"):
        raise ValueError(f"[experimental_connect_to_cluster] protocol must be 'grpc', got "
                         f"{protocol!r}")
    if cluster_device_filters is not None:
        raise errors.UnimplementedError(
            None, None, "[experimental_connect_to_cluster] cluster_device_filters are not "
            "supported")
    bulk_connections = _bulk_connections(bulk_connections)
    cluster = _distribute._cluster_dict(cluster_spec, "experimental_connect_to_cluster")
    pem = _distribute._pem
    _mt.connect_to_cluster(
        cluster, job_name, int(task_index), int(rpc_timeout_ms), int(connect_timeout_ms),
        int(max_message_bytes), pem(root_cert_pem, "root_cert_pem"),
        pem(client_cert_pem, "client_cert_pem"), pem(client_key_pem, "client_key_pem"),
        pem(auth_token, "auth_token"), bulk_connections)


def _bulk_connections(value):
    """Returns ``bulk_connections`` as an int, or None (the C++ default); raises TypeError
    for a value that is not an int (a bool or float included), ValueError outside [0, 64]."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"[experimental_connect_to_cluster] bulk_connections must be an int or "
                        f"None, got {type(value).__name__}")
    if not 0 <= value <= _MAX_BULK_CONNECTIONS:
        raise ValueError(f"[experimental_connect_to_cluster] bulk_connections must be in [0, "
                         f"{_MAX_BULK_CONNECTIONS}] (0 or None: one per hardware thread, at "
                         f"most 8), got {value}")
    return int(value)


def experimental_connect_to_host(remote_host=None, job_name="worker", **options):
    """Connects to the tasks at ``remote_host`` (one "host:port" or a list; a "grpc://"
    prefix, as Server.target has, is dropped), as tasks 0 to n-1 of ``job_name``;
    ``options`` are experimental_connect_to_cluster's."""
    if not remote_host:
        raise ValueError("Must provide at least one remote_host")
    hosts = [remote_host] if isinstance(remote_host, str) else list(remote_host)
    hosts = [h[len("grpc://"):] if h.startswith("grpc://") else h for h in hosts]
    experimental_connect_to_cluster(_ClusterSpec({job_name: hosts}), **options)
