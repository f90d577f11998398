"""tf.distribute.MirroredStrategy over the C++ runtime's (runtime/strategy/): synchronous
data parallelism on the GPUs of this machine (docs/distribute.md).

    strategy = mt.distribute.MirroredStrategy()        # every GPU, else the CPU
    with strategy.scope():
        model = mt.keras.Sequential([mt.keras.layers.Dense(10)])   # mirrored variables
    def step(x, y): ...                                 # one replica's forward and update
    strategy.run(step, args=(per_replica_x, per_replica_y))

``run`` calls the function once per replica, each on its own thread under its device; an
optimizer's ``apply_gradients`` inside it sums the replicas' gradients (NCCL between
physical GPUs, else AddN on one device) and updates every copy of each variable.
"""

import contextlib as _contextlib
import enum as _enum
import threading as _threading

from .. import _function
from .. import _minitensor as _mt
from .._constant_op import convert_to_tensor
from .._minitensor import reduce_mean, reduce_sum
from .input_distribution import DatasetsFromFunction, DistributedDataset, InputContext, ValueContext
from .values import PerReplica

__all__ = ["MirroredStrategy", "NcclAllReduce", "PerReplica", "ReduceOp", "ReplicaContext",
           "ReductionToOneDevice", "get_replica_context", "get_strategy", "has_strategy",
           "in_cross_replica_context"]

_MiB = 1 << 20
_local = _threading.local()  # .scopes: the strategies whose scope this thread is in


class ReduceOp(_enum.Enum):
    """How values of several replicas combine (tf.distribute.ReduceOp)."""
    SUM = "SUM"
    MEAN = "MEAN"


def _reduce_name(reduce_op):
    if isinstance(reduce_op, str):
        reduce_op = ReduceOp[reduce_op.upper()]
    if not isinstance(reduce_op, ReduceOp):
        raise ValueError(f"reduce_op must be a mt.distribute.ReduceOp, got {reduce_op!r}")
    return reduce_op.value


class NcclAllReduce:
    """Cross-device ops that all-reduce with NCCL (tf.distribute.NcclAllReduce); gradients
    are packed into buckets of at most ``bucket_bytes`` (``num_packs`` is accepted for
    TensorFlow's signature; the bucket size decides the packing)."""

    def __init__(self, num_packs=1, bucket_bytes=25 * _MiB):
        if num_packs < 0:
            raise ValueError(f"NCCL all-reduce requires num_packs >= 0, but {num_packs} is "
                             "specified.")
        self._kind, self._bucket_bytes, self._reduce_to = "nccl", int(bucket_bytes), ""


class ReductionToOneDevice:
    """Cross-device ops that add every replica's value on one device, then copy the sum to
    each replica (tf.distribute.ReductionToOneDevice); by default the first replica's."""

    def __init__(self, reduce_to_device=None):
        self._kind, self._bucket_bytes = "one_device", 25 * _MiB
        self._reduce_to = "" if reduce_to_device is None else _device_name(reduce_to_device)


def _device_name(device):
    return device if isinstance(device, str) else device.name


class ReplicaContext:
    """What a replica sees inside ``run`` (tf.distribute.ReplicaContext)."""

    def __init__(self, strategy, impl):
        self.strategy = strategy
        self._impl = impl

    @property
    def replica_id_in_sync_group(self):
        return self._impl.replica_id_in_sync_group

    @property
    def num_replicas_in_sync(self):
        return self._impl.num_replicas_in_sync

    @property
    def devices(self):
        return (self._impl.device,)

    def all_reduce(self, reduce_op, value):
        """Returns ``reduce_op`` of ``value`` (a tensor, or a list or tuple of them) over
        every replica, on this replica's device; every replica must call it alike."""
        single = not isinstance(value, (list, tuple))
        values = [convert_to_tensor(v) for v in ([value] if single else value)]
        out = self._impl._all_reduce(_reduce_name(reduce_op), values)
        return out[0] if single else type(value)(out)


class _Extended:
    """strategy.extended: this process's devices, by TensorFlow's names, and whether this
    worker is the one that writes checkpoints and summaries (the chief)."""

    def __init__(self, devices, chief=True):
        self.worker_devices = devices
        self.parameter_devices = devices
        self.should_checkpoint = chief
        self.should_save_summary = chief


def _regroup(results):
    """Turns one result per replica into TensorFlow's structure: a tuple, list or dict of
    PerReplica when every replica returned one alike; the value itself for one replica."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    if isinstance(first, (tuple, list)) and all(
            isinstance(r, type(first)) and len(r) == len(first) for r in results):
        return type(first)(_regroup([r[i] for r in results]) for i in range(len(first)))
    if isinstance(first, dict) and all(isinstance(r, dict) and r.keys() == first.keys()
                                       for r in results):
        return {k: _regroup([r[k] for r in results]) for k in first}
    if first is None and all(r is None for r in results):
        return None
    return PerReplica(results)


def _pick(value, replica):
    """Returns replica ``replica``'s part of an argument of ``run``."""
    if isinstance(value, PerReplica):
        return value.values[replica]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_pick(v, replica) for v in value)
    if isinstance(value, list):
        return [_pick(v, replica) for v in value]
    if isinstance(value, dict):
        return {k: _pick(v, replica) for k, v in value.items()}
    return value


class MirroredStrategy:
    """Synchronous training on several devices of this machine
    (tf.distribute.MirroredStrategy): one replica per device, variables created under
    ``scope()`` mirrored on each."""

    def __init__(self, devices=None, cross_device_ops=None):
        names = [] if devices is None else [_device_name(d) for d in devices]
        if devices is not None and not names:
            raise ValueError("Must specify at least one device.")
        ops = cross_device_ops
        kind = "auto" if ops is None else ops._kind
        self._adopt(_mt._MirroredStrategy(
            names, kind, ops._bucket_bytes if ops is not None else 25 * _MiB,
            ops._reduce_to if ops is not None else ""))

    def _adopt(self, impl, num_workers=1, worker_index=0):
        """Takes the C++ strategy ``impl``; this process is worker ``worker_index`` of
        ``num_workers`` (MultiWorkerMirroredStrategy), each with the same local replicas."""
        self._impl = impl
        self._num_workers, self._worker_index = num_workers, worker_index
        self.extended = _Extended(tuple(impl.devices), worker_index == 0)
        self._replica_functions = {}  # fn -> its mt.function, for run() inside a function

    @property
    def num_replicas_in_sync(self):
        return self._impl.num_replicas_in_sync

    @property
    def cross_device_ops(self):
        """The name of the cross-device ops in use: "NcclAllReduce" or
        "ReductionToOneDevice"."""
        return self._impl.cross_device_ops_name

    @_contextlib.contextmanager
    def scope(self):
        """Variables created inside are mirrored on every replica's device."""
        scope = self._impl._enter_scope()
        stack = _scopes()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()
            scope._exit()

    def run(self, fn, args=(), kwargs=None):
        """Calls ``fn(*args, **kwargs)`` once per replica, on its own thread under its
        device; a PerReplica argument gives each replica its part. Returns the results
        regrouped (a PerReplica, or a structure of them; the value for one replica) and
        raises the first replica's exception. Called from the body of an ``mt.function``,
        ``fn`` becomes an ``mt.function`` too, kept by the strategy: each replica then traces
        it once and replays its own graph (the outer function, whose trace cannot see the
        replicas' threads, runs its body at every call). Pass the same ``fn`` at each call:
        a new lambda each time would be traced, and kept, each time."""
        kwargs = kwargs or {}
        if _function.inside_function_body() and not isinstance(fn, _function.Function):
            if fn not in self._replica_functions:
                self._replica_functions[fn] = _function.Function(fn)
            fn = self._replica_functions[fn]

        def replica_fn(impl):
            ctx = ReplicaContext(self, impl)
            _local.replica = ctx
            try:
                r = impl._local_replica_id  # a PerReplica holds this process's replicas
                return fn(*_pick(tuple(args), r), **_pick(dict(kwargs), r))
            finally:
                _local.replica = None

        return _regroup(self._impl._run(replica_fn))

    def reduce(self, reduce_op, value, axis=None):
        """Returns ``reduce_op`` of a PerReplica (or of the same tensor on every replica)
        across replicas (of every worker), first along ``axis`` of each value when given;
        on the first replica's device."""
        values = list(value.values) if isinstance(value, PerReplica) else \
            [convert_to_tensor(value)] * len(self.extended.worker_devices)
        return self._impl._reduce(_reduce_name(reduce_op), values, axis)

    def experimental_local_results(self, value):
        """Returns the per-replica values of ``value`` as a tuple."""
        return value.values if isinstance(value, PerReplica) else (value,)

    def experimental_distribute_values_from_function(self, value_fn):
        """Returns PerReplica(value_fn(ctx) for each replica of this process), ``ctx``
        having ``replica_id_in_sync_group`` and ``num_replicas_in_sync``."""
        n, local = self.num_replicas_in_sync, len(self.extended.worker_devices)
        first = self._worker_index * local
        return _regroup([value_fn(ValueContext(first + i, n)) for i in range(local)])

    def experimental_distribute_dataset(self, dataset, options=None):
        """Returns an iterable of the dataset's global batches, each split along its first
        axis into one part per replica (of every worker: this process keeps its own
        replicas' parts, as TensorFlow's AutoShardPolicy.DATA), on the replica's device."""
        return DistributedDataset(self, dataset)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """Returns an iterable over ``dataset_fn(input_context)``'s batches, replica i of
        each step getting the i-th of ``num_replicas_in_sync`` consecutive batches."""
        return DatasetsFromFunction(self, dataset_fn)

    def __repr__(self):
        return f"<MirroredStrategy devices={self.extended.worker_devices}>"


def _scopes():
    if not hasattr(_local, "scopes"):
        _local.scopes = []
    return _local.scopes


class _DefaultStrategy:
    """The strategy in effect outside every scope: one replica, the default device."""
    num_replicas_in_sync = 1
    cross_device_ops = None
    extended = _Extended(())

    @_contextlib.contextmanager
    def scope(self):
        yield self

    def run(self, fn, args=(), kwargs=None):
        return fn(*args, **(kwargs or {}))

    def reduce(self, reduce_op, value, axis=None):
        value = convert_to_tensor(value)
        if axis is None:
            return value
        return (reduce_sum if _reduce_name(reduce_op) == "SUM" else reduce_mean)(value, axis)

    def experimental_local_results(self, value):
        return (value,)

    def experimental_distribute_dataset(self, dataset, options=None):
        """The dataset itself: one replica takes every batch whole (as TensorFlow's default
        strategy)."""
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """``dataset_fn(InputContext)`` for the one replica: its dataset itself."""
        return dataset_fn(InputContext())


_DEFAULT = _DefaultStrategy()


def get_strategy():
    """Returns the strategy of the innermost scope (or of the replica) on this thread, else
    the default strategy."""
    replica = getattr(_local, "replica", None)
    if replica is not None:
        return replica.strategy
    stack = _scopes()
    return stack[-1] if stack else _DEFAULT


def has_strategy():
    """Returns whether a strategy's scope is open on this thread (or it runs a replica)."""
    return get_strategy() is not _DEFAULT


def get_replica_context():
    """Returns the replica's context inside ``run``; None in a strategy's scope outside
    ``run`` (the cross-replica context)."""
    replica = getattr(_local, "replica", None)
    if replica is not None:
        return replica
    return None if _scopes() else _DefaultReplicaContext()


def in_cross_replica_context():
    """Returns whether this thread is in a strategy's scope and not inside ``run``."""
    return getattr(_local, "replica", None) is None and bool(_scopes())


class _DefaultReplicaContext:
    """The replica context outside every strategy: one replica, reductions are identity."""
    replica_id_in_sync_group = 0
    num_replicas_in_sync = 1
    strategy = _DEFAULT

    def all_reduce(self, reduce_op, value):
        _reduce_name(reduce_op)
        return value
