"""tf.train's cluster description: ``ClusterSpec``, the jobs of a cluster and their tasks.

    cluster = mt.train.ClusterSpec({"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]})
    cluster.num_tasks("worker")          # 2
    cluster.task_address("worker", 1)    # "127.0.0.1:2223"
    mt.config.experimental_connect_to_cluster(cluster)

As TensorFlow's, a job's tasks are a list (task i at index i) or a dict from task index to
address, which may leave indices out; minitensor connects only to jobs whose tasks are
0 to n-1 (docs/distributed.md).
"""

from ._checkpoint import Checkpoint, CheckpointLoadStatus, CheckpointOptions
from ._checkpoint_manager import CheckpointManager, latest_checkpoint

__all__ = ["Checkpoint", "CheckpointLoadStatus", "CheckpointManager", "CheckpointOptions",
           "ClusterSpec", "latest_checkpoint"]


def _no_job(job_name):
    return ValueError(f"No such job in cluster: {job_name!r}")


class ClusterSpec:
    """A cluster as a set of jobs, each a set of tasks with their network addresses
    (tf.train.ClusterSpec). Construct it from a dict ``{job: [address, ...]}``, a dict
    ``{job: {index: address}}``, or another ClusterSpec. Raises TypeError, as TensorFlow, for
    anything else, a job name that is not a str or an address that is not a str."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._cluster_spec = {job: dict(tasks) for job, tasks in cluster._cluster_spec.items()}
            return
        if not isinstance(cluster, dict):
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a ClusterSpec")
        self._cluster_spec = {}
        for job_name, tasks in cluster.items():
            if not isinstance(job_name, str):
                raise TypeError(f"Job name {job_name!r} must be a string")
            if isinstance(tasks, (list, tuple)):
                job_tasks = dict(enumerate(tasks))
            elif isinstance(tasks, dict):
                job_tasks = {int(i): task for i, task in tasks.items()}
            else:
                raise TypeError(f"The tasks for job {job_name!r} must be a list or a dictionary "
                                "from integers to strings.")
            for address in job_tasks.values():
                if not isinstance(address, (str, bytes)):
                    raise TypeError(f"Task address {address!r} must be bytes or unicode")
            self._cluster_spec[job_name] = {
                i: a.decode() if isinstance(a, bytes) else a for i, a in job_tasks.items()}

    def __bool__(self):
        return bool(self._cluster_spec)

    def __eq__(self, other):
        """Compares jobs and addresses with another ClusterSpec or a dict ClusterSpec takes
        (TensorFlow compares a dict with its inner form, so that only {job: {i: address}}
        could be equal)."""
        if isinstance(other, dict):
            try:
                other = ClusterSpec(other)
            except TypeError:
                return False
        if not isinstance(other, ClusterSpec):
            return NotImplemented
        return self._cluster_spec == other._cluster_spec

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # mutable-looking and compared by value, as TensorFlow's

    def __repr__(self):
        items = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {items[k]!r}" for k in sorted(items)) + "})"

    def as_dict(self):
        """Returns ``{job: [address, ...]}``, or ``{job: {index: address}}`` for a job whose
        task indices are not 0 to n-1."""
        out = {}
        for job in self.jobs:
            indices = self.task_indices(job)
            if not indices:
                out[job] = {}
            elif max(indices) + 1 == len(indices):
                out[job] = self.job_tasks(job)
            else:
                out[job] = {i: self.task_address(job, i) for i in indices}
        return out

    @property
    def jobs(self):
        """The job names, in the order the spec gave them."""
        return list(self._cluster_spec)

    def num_tasks(self, job_name):
        """Returns the number of tasks of ``job_name``; ValueError for an unknown job."""
        return len(self._job(job_name))

    def task_indices(self, job_name):
        """Returns the task indices of ``job_name``, sorted."""
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        """Returns the address of task ``task_index`` of ``job_name``; ValueError when
        there is no such job or task."""
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name):
        """Returns the addresses of ``job_name`` by index, None where an index is absent."""
        job = self._job(job_name)
        out = [None] * (max(job) + 1 if job else 0)
        for i, address in job.items():
            out[i] = address
        return out

    def _job(self, job_name):
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise _no_job(job_name) from None
