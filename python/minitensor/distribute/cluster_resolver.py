"""tf.distribute.cluster_resolver: where the tasks of a cluster are, as a ClusterSpec.

    resolver = mt.distribute.cluster_resolver.SimpleClusterResolver(
        mt.train.ClusterSpec({"worker": ["127.0.0.1:2222"]}), task_type="worker", task_id=0)
    resolver.cluster_spec()   # the ClusterSpec
    resolver.master()         # "127.0.0.1:2222"
    mt.config.experimental_connect_to_cluster(resolver)

    # TF_CONFIG='{"cluster": {"worker": ["host1:2222", "host2:2222"]},
    #             "task": {"type": "worker", "index": 1}}'
    resolver = mt.distribute.cluster_resolver.TFConfigClusterResolver()
    resolver.task_type, resolver.task_id, resolver.master()   # "worker", 1, "host2:2222"
"""

import abc
import json
import os

from ..train import ClusterSpec

__all__ = ["ClusterResolver", "SimpleClusterResolver", "TFConfigClusterResolver"]


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


def _tf_config():
    """TF_CONFIG's JSON as a dict ({} when unset or empty); json.JSONDecodeError (a
    ValueError) when it is not JSON, as in TensorFlow."""
    text = os.environ.get("TF_CONFIG", "")
    return json.loads(text) if text else {}


def _overridable(attribute, read, convert=lambda value: value):
    """A property that is ``attribute`` when set (given or assigned), else what ``read``
    finds in TF_CONFIG now, converted (None when it finds nothing)."""
    def get(self):
        value = getattr(self, attribute)
        if value is not None:
            return value
        found = read(_tf_config())
        return None if found is None else convert(found)

    def set_(self, value):
        setattr(self, attribute, value)
    return property(get, set_)


class TFConfigClusterResolver(ClusterResolver):
    """The cluster that the TF_CONFIG environment variable describes
    (tf.distribute.cluster_resolver.TFConfigClusterResolver): ``{"cluster": {job: [address,
    ...] or {index: address}}, "task": {"type": job, "index": i}, "rpc_layer": "grpc"}``.
    TF_CONFIG is read when a property or method asks, so a change shows; ``task_type``,
    ``task_id`` and ``rpc_layer`` given here or assigned later override it. Without
    TF_CONFIG the cluster is empty. ``master()`` is this task's address (a task passed to it
    replaces this one's type or index), "" without a task or in a cluster of one task, as
    in TensorFlow."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        super().__init__()
        self._task_type, self._task_id = task_type, task_id
        self._rpc_layer, self._environment = rpc_layer, environment

    task_type = _overridable("_task_type", lambda c: c.get("task", {}).get("type"), str)
    task_id = _overridable("_task_id", lambda c: c.get("task", {}).get("index"), int)
    rpc_layer = _overridable("_rpc_layer", lambda c: c.get("rpc_layer"))

    @property
    def environment(self):
        return self._environment

    def cluster_spec(self):
        return ClusterSpec(_tf_config().get("cluster", {}))

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        if task_type is None or task_id is None:
            return ""
        spec = self.cluster_spec()
        jobs = spec.jobs
        if not jobs or (len(jobs) == 1 and spec.num_tasks(jobs[0]) == 1):
            return ""  # a cluster of one task is this process: no master to reach, as in TF
        return format_master_url(spec.task_address(task_type, task_id),
                                 rpc_layer or self.rpc_layer)
