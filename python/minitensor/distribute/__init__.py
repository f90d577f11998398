"""tf.distribute: ``MirroredStrategy``, data parallelism on this machine's GPUs
(mirrored_strategy.py, docs/distribute.md), and ``MultiWorkerMirroredStrategy``, over the
worker processes of a cluster (multi_worker_mirrored_strategy.py); and remote tasks:
``Server`` runs one task of a cluster in this process, and ``cluster_resolver`` says where
the tasks are (docs/distributed.md, "From Python").

    # a worker process
    cluster = mt.train.ClusterSpec({"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]})
    mt.distribute.Server(cluster, job_name="worker", task_index=1).join()

    # the client
    mt.config.experimental_connect_to_cluster(cluster)
    with mt.device("/job:worker/task:1"):
        c = mt.matmul(a, b)   # runs on task 1; c stays there until read

A package built without the distributed layer (CMake found no gRPC) has these names too;
they raise UnimplementedError saying so, and ``is_available()`` is False.
"""

import threading as _threading

from .. import _minitensor as _mt
from .. import errors as _errors
from ..train import ClusterSpec
from . import cluster_resolver
from .mirrored_strategy import (
    MirroredStrategy, NcclAllReduce, PerReplica, ReduceOp, ReductionToOneDevice, ReplicaContext,
    get_replica_context, get_strategy, has_strategy, in_cross_replica_context)
from .input_distribution import InputContext
from .cluster_options import _cluster_dict, _pem, pick_unused_loopback_port
from .multi_worker_mirrored_strategy import MultiWorkerMirroredStrategy
from . import experimental

__all__ = ["InputContext", "MirroredStrategy", "MultiWorkerMirroredStrategy", "NcclAllReduce",
           "PerReplica", "ReduceOp", "ReductionToOneDevice", "ReplicaContext", "Server",
           "cluster_resolver", "experimental",
           "get_replica_context", "get_strategy", "has_strategy", "in_cross_replica_context",
           "is_available", "pick_unused_loopback_port"]

_MiB = 1 << 20


def is_available():
    """Returns whether this package was built with the distributed layer (gRPC)."""
    return _mt.distributed_enabled


class Server:
    """One task of a cluster, serving this process's devices to clients
    (tf.distribute.Server): it listens on the address the spec gives task ``task_index`` of
    ``job_name``, and nowhere else.

    ``server_or_cluster_def`` is a ClusterSpec or a dict of jobs. ``job_name`` may be left
    out when the spec has one job, ``task_index`` when that job has one task. With
    ``start=False`` the server starts at ``start()``. ``protocol`` must be "grpc" or None
    (ValueError); a ``config`` is UnimplementedError. As TensorFlow, a missing ``job_name``
    or ``task_index`` that the spec does not settle is ValueError.

    Security (docs/distributed.md, "Security"), as the C++ ``ServerOptions``:
    ``server_cert_pem`` and ``server_key_pem`` (PEM text, str or bytes) switch on TLS,
    ``client_ca_pem`` requires client certificates signed by that authority (mutual TLS),
    ``auth_token`` requires every call to carry that token. An address other than loopback
    needs a client CA or a token, or ``insecure=True``. ``max_message_bytes`` caps one
    request, ``max_client_bytes`` the tensors one client may hold (0: no limit).

    Raises InvalidArgumentError for a bad spec, job, index or options, UnavailableError
    when the address cannot be bound.
    """

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True, *, server_cert_pem=None, server_key_pem=None,
                 client_ca_pem=None, auth_token=None, max_message_bytes=256 * _MiB,
                 max_client_bytes=0, insecure=False):
        if protocol not in (None, "grpc"):
            raise ValueError(f"[Server] protocol must be 'grpc', got {protocol!r}")
        if config is not None:
            raise _errors.UnimplementedError(
                None, None, "[Server] config (a ConfigProto) is not supported")
        cluster = _cluster_dict(server_or_cluster_def, "Server")
        if job_name is None:  # as TensorFlow: the only job, else ValueError
            if len(cluster) != 1:
                raise ValueError(f"Must specify an explicit `job_name`: the spec has jobs "
                                 f"{sorted(cluster)}")
            job_name = next(iter(cluster))
        if task_index is None:
            num_tasks = len(cluster.get(job_name, []))
            if num_tasks != 1:
                raise ValueError(f"Must specify an explicit `task_index`: job {job_name!r} has "
                                 f"{num_tasks} tasks")
            task_index = 0
        self._args = (cluster, job_name, int(task_index), int(max_message_bytes),
                      _pem(server_cert_pem, "server_cert_pem"),
                      _pem(server_key_pem, "server_key_pem"),
                      _pem(client_ca_pem, "client_ca_pem"), _pem(auth_token, "auth_token"),
                      int(max_client_bytes), bool(insecure))
        self._server = None
        self._lock = _threading.Lock()
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True):
        """Returns a server of a one-task cluster ("localhost" job) on an unused loopback
        port."""
        port = pick_unused_loopback_port()
        return Server({"localhost": [f"127.0.0.1:{port}"]}, "localhost", 0, config=config,
                      start=start)

    def start(self):
        """Starts serving (a second call does nothing)."""
        with self._lock:
            if self._server is None:
                self._server = _mt.Server(*self._args)

    @property
    def target(self):
        """The server's address as "grpc://host:port" (tf.distribute.Server.target)."""
        if self._server is None:
            return "grpc://" + self._args[0][self._args[1]][self._args[2]]
        return self._server.target

    @property
    def server_def(self):
        """The cluster, job and task this server was made for, as a dict."""
        cluster, job_name, task_index = self._args[:3]
        return {"cluster": ClusterSpec(cluster), "job_name": job_name, "task_index": task_index,
                "protocol": "grpc"}

    def join(self):
        """Blocks until stop() is called from another thread, or Ctrl-C (which stops the
        server). Starts the server if it was made with start=False."""
        self.start()
        waiter = _threading.Thread(target=self._server.join, name="mt-server-join", daemon=True)
        waiter.start()
        try:
            while waiter.is_alive():
                waiter.join(0.5)  # in steps, so that signals reach Python
        except BaseException:
            self.stop()
            raise

    def stop(self):
        """Stops accepting calls and waits briefly for those in flight; the tensors the
        server holds are freed when it is deleted."""
        if self._server is not None:
            self._server.stop()

    def update_credentials(self, server_cert_pem=None, server_key_pem=None, client_ca_pem=None,
                           auth_token=None):
        """Serves new TLS certificates and a new token without a restart; what the server
        started with (TLS or not, a client CA or not, a token or not) must stay."""
        self.start()
        self._server.update_credentials(
            _pem(server_cert_pem, "server_cert_pem"), _pem(server_key_pem, "server_key_pem"),
            _pem(client_ca_pem, "client_ca_pem"), _pem(auth_token, "auth_token"))
