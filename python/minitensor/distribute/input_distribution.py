"""A MirroredStrategy's input (tf.distribute's distributed datasets): each global batch of
a dataset split across the replicas (of every worker), each part made on its replica's
device."""

import numpy as _np

from ..data import structure as _structure
from .._constant_op import constant
from .._device_scope import device as _device_scope
from .values import PerReplica

__all__ = ["DatasetsFromFunction", "DistributedDataset", "InputContext", "ValueContext"]


class ValueContext:
    """What ``experimental_distribute_values_from_function`` tells its function."""

    def __init__(self, replica_id_in_sync_group, num_replicas_in_sync):
        self.replica_id_in_sync_group = replica_id_in_sync_group
        self.num_replicas_in_sync = num_replicas_in_sync


class InputContext:
    """What ``distribute_datasets_from_function`` tells its function
    (tf.distribute.InputContext): one input pipeline per worker process, this one's id,
    and the replicas of every worker. A function shards its dataset with
    ``dataset.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)``."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size):
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError(f"The `global_batch_size` {global_batch_size} is not divisible by "
                             f"`num_replicas_in_sync` {self.num_replicas_in_sync} ")
        return global_batch_size // self.num_replicas_in_sync


def _host_elements(dataset):
    """Iterates over the dataset's elements as NumPy arrays where it can give them so."""
    numpy_iterator = getattr(dataset, "as_numpy_iterator", None)
    return numpy_iterator() if numpy_iterator is not None else iter(dataset)


def _on_device(value, device):
    with _device_scope(device):
        return constant(_np.asarray(value))


class DistributedDataset:
    """Iterates over a dataset's global batches, each split along axis 0 into one part per
    replica (sizes differing by at most one), as PerReplica values."""

    def __init__(self, strategy, dataset):
        self._strategy = strategy
        self._dataset = dataset

    def __iter__(self):
        strategy = self._strategy
        devices = strategy.extended.worker_devices
        first = strategy._worker_index * len(devices)  # this process's first replica
        for element in _host_elements(self._dataset):
            def split(value):
                parts = _np.array_split(_np.asarray(value), strategy.num_replicas_in_sync)
                mine = parts[first:first + len(devices)]
                return PerReplica(_on_device(p, d) for p, d in zip(mine, devices))
            yield _structure.map_structure(split, element)


class DatasetsFromFunction:
    """Iterates over ``dataset_fn(InputContext)``'s batches (this worker's input
    pipeline), local replica i of each step taking the i-th of as many consecutive batches
    as this process has replicas (a last incomplete group ends the iteration)."""

    def __init__(self, strategy, dataset_fn):
        self._strategy = strategy
        self._dataset = dataset_fn(InputContext(strategy._num_workers, strategy._worker_index,
                                                strategy.num_replicas_in_sync))

    def __iter__(self):
        devices = self._strategy.extended.worker_devices
        group = []
        for element in _host_elements(self._dataset):
            group.append(element)
            if len(group) < len(devices):
                continue
            placed = [[_on_device(v, d) for v in _structure.flatten(e)]
                      for e, d in zip(group, devices)]
            yield _structure.pack_like(group[0], [PerReplica(parts) for parts in zip(*placed)])
            group = []
