"""tf.distribute.MultiWorkerMirroredStrategy over the C++ runtime's
(distributed/multi_worker_strategy.h): synchronous data parallelism over the worker
processes of a cluster, on one host or several (docs/distribute.md, "Several workers").

    # the same script on every worker; TF_CONFIG names the cluster and this worker's task
    strategy = mt.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = mt.keras.Sequential([...])
        model.compile(loss="mse", optimizer="sgd")
    model.fit(x, y, batch_size=64)      # each worker trains on its share of each batch

A MultiWorkerMirroredStrategy is a MirroredStrategy over this process's devices whose
collectives (apply_gradients, all_reduce, reduce) also sum over every worker, through the
cluster's servers: the strategy starts its task's server unless this process runs it.
"""

import enum as _enum

from .. import _minitensor as _mt
from .cluster_options import _cluster_dict, _pem, pick_unused_loopback_port
from .cluster_resolver import TFConfigClusterResolver
from .mirrored_strategy import MirroredStrategy

__all__ = ["CommunicationImplementation", "CommunicationOptions", "MultiWorkerMirroredStrategy"]


class CommunicationImplementation(_enum.Enum):
    """How workers exchange values (tf.distribute.experimental.CommunicationImplementation).
    AUTO and RING: a ring all-reduce over the cluster's servers; NCCL between processes is
    not implemented yet (UnimplementedError)."""
    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


class CommunicationOptions:
    """Options of the collectives between workers
    (tf.distribute.experimental.CommunicationOptions). ``timeout_seconds`` bounds each
    collective and the wait for the other workers at start (None: 300 s); a lost worker
    fails every survivor's collective with UnavailableError naming it within it.
    ``bytes_per_pack`` is accepted for TensorFlow's signature (the strategy packs each
    dtype's values into one buffer)."""

    def __init__(self, bytes_per_pack=0, timeout_seconds=None,
                 implementation=CommunicationImplementation.AUTO):
        if bytes_per_pack < 0:
            raise ValueError(f"bytes_per_pack must be non-negative, got {bytes_per_pack}")
        if timeout_seconds is not None and not timeout_seconds > 0:
            raise ValueError(f"timeout_seconds must be positive or None, got {timeout_seconds}")
        if isinstance(implementation, str):
            implementation = CommunicationImplementation.__members__.get(
                implementation.upper(), implementation)
        if not isinstance(implementation, CommunicationImplementation):
            raise ValueError("implementation must be a CommunicationImplementation, got "
                             f"{implementation!r}")
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation


class MultiWorkerMirroredStrategy(MirroredStrategy):
    """Synchronous training on every worker of a cluster
    (tf.distribute.MultiWorkerMirroredStrategy). ``cluster_resolver`` says where the
    workers are and which this process is (by default a TFConfigClusterResolver, which
    reads TF_CONFIG); without a cluster the process is a cluster of one worker.
    ``num_replicas_in_sync`` counts every worker's replicas (one per local GPU, else the
    CPU); ``extended.worker_devices`` are this process's.

    The cluster's security, as ``Server`` and ``experimental_connect_to_cluster`` take it
    (docs/distributed.md, "Security"), keyword-only: ``auth_token`` (required by this
    worker's server and sent to the others), ``server_cert_pem``, ``server_key_pem``,
    ``client_ca_pem`` for the server it starts, ``root_cert_pem``, ``client_cert_pem``,
    ``client_key_pem`` to reach the others; ``insecure`` serves an address other than
    loopback without authentication.

    Raises ValueError without a task type and id, InvalidArgumentError for a bad cluster,
    UnavailableError naming a worker that does not answer within the timeout,
    UnimplementedError for NCCL.
    """

    def __init__(self, cluster_resolver=None, communication_options=None, *, auth_token=None,
                 server_cert_pem=None, server_key_pem=None, client_ca_pem=None,
                 root_cert_pem=None, client_cert_pem=None, client_key_pem=None, insecure=False):
        resolver = cluster_resolver if cluster_resolver is not None else TFConfigClusterResolver()
        options = communication_options or CommunicationOptions()
        if not isinstance(options, CommunicationOptions):
            raise ValueError("communication_options must be a CommunicationOptions, got "
                             f"{options!r}")
        cluster = _cluster_dict(resolver.cluster_spec(), "MultiWorkerMirroredStrategy")
        task_type, task_id = resolver.task_type, resolver.task_id
        if not cluster:  # no cluster: a cluster of one worker, this process
            cluster = {"worker": [f"127.0.0.1:{pick_unused_loopback_port()}"]}
            task_type, task_id = "worker", 0
        if task_type is None or task_id is None:
            raise ValueError("MultiWorkerMirroredStrategy needs this worker's task type and id "
                             "(TF_CONFIG's \"task\", or the resolver's task_type and task_id)")
        impl = _mt._MultiWorkerMirroredStrategy(
            cluster, str(task_type), int(task_id), options.implementation.value,
            float(options.timeout_seconds or 0), _pem(server_cert_pem, "server_cert_pem"),
            _pem(server_key_pem, "server_key_pem"), _pem(client_ca_pem, "client_ca_pem"),
            _pem(root_cert_pem, "root_cert_pem"), _pem(client_cert_pem, "client_cert_pem"),
            _pem(client_key_pem, "client_key_pem"), _pem(auth_token, "auth_token"),
            bool(insecure))
        self._adopt(impl, impl.num_workers, impl.worker_index)
        self.cluster_resolver = resolver
        self.communication_options = options

    @property
    def cross_device_ops(self):
        """TensorFlow's MultiWorkerMirroredStrategy has none to choose; the name of what
        combines the values here: "CollectiveAllReduce"."""
        return self._impl.cross_device_ops_name

    def __repr__(self):
        return (f"<MultiWorkerMirroredStrategy worker {self._worker_index} of "
                f"{self._num_workers}, devices={self.extended.worker_devices}>")
