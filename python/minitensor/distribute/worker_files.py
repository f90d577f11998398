"""Where a worker of a MultiWorkerMirroredStrategy writes a file of which one copy should
exist (a checkpoint, a saved model): the Keras callbacks' rule, as tf.keras applies it
(docs/checkpoints.md, "Several workers"). Every worker saves, so that each makes the same
calls, but only the chief writes the path asked for; every other worker writes into a
folder of its own beside it, "workertemp_<task id>", removed once the file is written.
Every worker reads the chief's copy, which needs a file system that all of them share.

    path = write_filepath("/shared/run/model.keras", strategy)   # the chief: that path
    model.save(path)                      # worker 1: /shared/run/workertemp_1/model.keras
    remove_temp_dir_with_filepath("/shared/run/model.keras", strategy)

Without a strategy, under MirroredStrategy or with one worker, every path is the one asked
for and nothing is removed.
"""

import os as _os
import shutil as _shutil

from .._constant_op import constant

__all__ = ["barrier", "remove_temp_dir_with_filepath", "remove_temp_dirpath",
           "write_dirpath", "write_filepath"]


def _multi_worker(strategy):
    return strategy is not None and getattr(strategy, "_num_workers", 1) > 1


def _writes_elsewhere(strategy):
    """Returns whether this worker writes into a temporary folder: it is not the chief."""
    return _multi_worker(strategy) and not strategy.extended.should_checkpoint


def _temp_dirpath(dirpath, strategy):
    return _os.path.join(dirpath, f"workertemp_{strategy.cluster_resolver.task_id}")


def write_dirpath(dirpath, strategy):
    """Returns the folder this worker writes what belongs in ``dirpath``: ``dirpath`` on
    the chief, ``dirpath/workertemp_<task id>`` on another worker. Creates nothing."""
    return _temp_dirpath(dirpath, strategy) if _writes_elsewhere(strategy) else dirpath


def write_filepath(filepath, strategy):
    """Returns the path this worker writes ``filepath`` at: itself on the chief, the same
    name in its temporary folder beside it on another worker."""
    dirpath, base = _os.path.split(_os.fspath(filepath))
    return _os.path.join(write_dirpath(dirpath, strategy), base)


def remove_temp_dirpath(dirpath, strategy):
    """Removes this worker's temporary folder of ``dirpath`` and all in it (nothing on the
    chief)."""
    if _writes_elsewhere(strategy):
        _shutil.rmtree(_temp_dirpath(dirpath, strategy), ignore_errors=True)


def remove_temp_dir_with_filepath(filepath, strategy):
    """Removes the temporary folder that write_filepath(``filepath``) wrote in."""
    remove_temp_dirpath(_os.path.dirname(_os.fspath(filepath)), strategy)


def barrier(strategy):
    """Returns once every worker has called it (a collective of one number); at once with
    one worker."""
    if _multi_worker(strategy):
        strategy.reduce("SUM", constant(0.0), axis=None)
