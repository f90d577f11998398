"""tf.distribute.cluster_resolver: where the tasks of a cluster are, as a ClusterSpec.

    resolver = mt.distribute.cluster_resolver.SimpleClusterResolver(
        mt.train.ClusterSpec({"worker": ["127.0.0.1:2222"]}), task_type="worker", task_id=0)
    resolver.cluster_spec()   # the ClusterSpec
    resolver.master()         # "127.0.0.1:2222"
    mt.config.experimental_connect_to_cluster(resolver)
"""

import abc

from ..train import ClusterSpec

__all__ = ["ClusterResolver", "SimpleClusterResolver"]


def format_master_url(master, rpc_layer=None):
    """Returns ``rpc_layer://master``, or ``master`` when there is no RPC layer."""
    return f"{rpc_layer}://{master}" if rpc_layer else master


class ClusterResolver(metaclass=abc.ABCMeta):
    """The base of cluster resolvers (tf.distribute.cluster_resolver.ClusterResolver):
    ``cluster_spec()`` and ``master()``, and the task this process is."""

    def __init__(self):
        self.task_type = None
        self.task_id = None
        self.rpc_layer = None

    @abc.abstractmethod
    def cluster_spec(self):
        """Returns the ClusterSpec of the cluster."""

    @abc.abstractmethod
    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """Returns the address of the master, or of task ``task_id`` of ``task_type``."""

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        """Returns the number of accelerators of each type a task has: {} here."""
        return {}

    @property
    def environment(self):
        """The environment the cluster runs in: "" (none in particular)."""
        return ""


class SimpleClusterResolver(ClusterResolver):
    """A resolver that returns what it was given
    (tf.distribute.cluster_resolver.SimpleClusterResolver).

    ``master()`` is ``master`` unless both a task type and id are passed to it; with
    ``rpc_layer`` it is prefixed, as ``grpc://127.0.0.1:2222``. Raises TypeError for a
    ``cluster_spec`` that is not a ClusterSpec or a ``master`` that is not a str."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="",
                 num_accelerators=None, rpc_layer=None):
        super().__init__()
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("cluster_spec must be a `mt.train.ClusterSpec`.")
        if not isinstance(master, str):
            raise TypeError("master must be a string.")
        self._cluster_spec = cluster_spec
        self._master = master
        self.task_type = task_type
        self.task_id = task_id
        self._environment = environment
        self._num_accelerators = num_accelerators
        self.rpc_layer = rpc_layer

    def cluster_spec(self):
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        if task_type is not None and task_id is not None:
            master = self._cluster_spec.task_address(task_type, task_id)
        else:
            master = self._master
        return format_master_url(master, rpc_layer or self.rpc_layer)

    @property
    def environment(self):
        return self._environment

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return {} if self._num_accelerators is None else self._num_accelerators
