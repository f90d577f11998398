"""The callbacks that save during fit (tf.keras.callbacks): ModelCheckpoint writes the
model or its weights at each epoch's end; BackupAndRestore keeps a crash-safe checkpoint
(mt.train's, docs/checkpoints.md) of the model, its optimizer and the epoch reached, so
that a fit started again after a crash resumes at that epoch.

Under a MultiWorkerMirroredStrategy every worker saves, but only the chief writes the
files asked for; the others write into temporary folders that they remove at once, and
every worker restores the chief's backup (distribute/worker_files.py)."""

import os as _os
import shutil as _shutil

import numpy as _np

from .callbacks import Callback
from .._dtypes import int64
from .._variables import Variable
from ..distribute import worker_files
from .. import train

__all__ = ["BackupAndRestore", "ModelCheckpoint"]


class ModelCheckpoint(Callback):
    """Saves the model (``.keras``) or its weights (``.weights.h5``) at each epoch's end
    to ``filepath``, formatted with ``epoch`` (from 1) and the logs; with
    ``save_best_only``, only when ``monitor`` improved. Each file is replaced atomically.
    Under a MultiWorkerMirroredStrategy only the chief writes ``filepath``; another worker
    writes the same file into "workertemp_<task id>" beside it and removes that folder."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        super().__init__()
        filepath = _os.fspath(filepath)
        if save_weights_only and not filepath.endswith(".weights.h5"):
            raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, the "
                             "filepath provided must end in `.weights.h5` (Keras weights "
                             f"format). Received: filepath={filepath}")
        if not save_weights_only and not filepath.endswith(".keras"):
            raise ValueError("The filepath provided must end in `.keras` (Keras model "
                             f"format). Received: filepath={filepath}")
        if save_freq != "epoch":
            raise ValueError("minitensor's ModelCheckpoint saves at epoch ends only "
                             f"(save_freq='epoch'). Received: save_freq={save_freq}")
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"ModelCheckpoint mode '{mode}' is unknown, expected one of "
                             "('auto', 'min', 'max')")
        self.filepath, self.monitor, self.verbose = filepath, monitor, verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        maximize = mode == "max" or (mode == "auto" and ("acc" in monitor or
                                                        monitor.startswith("fmeasure")))
        self._better = _np.greater if maximize else _np.less
        self.best = initial_value_threshold if initial_value_threshold is not None else \
            (-_np.inf if maximize else _np.inf)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None or not self._better(current, self.best):
                return
            self.best = current
        path = self.filepath.format(epoch=epoch + 1, **logs)
        strategy = self.model._distribute_strategy
        write_path = worker_files.write_filepath(path, strategy)
        directory = _os.path.dirname(write_path)
        if directory:
            _os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(write_path)
        else:
            self.model.save(write_path)
        worker_files.remove_temp_dir_with_filepath(path, strategy)
        if self.verbose:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")


class BackupAndRestore(Callback):
    """Backs up the model, its optimizer and the epoch reached in ``backup_dir`` at each
    epoch's end; a fit that starts while a backup exists restores it and continues from
    the next epoch. The backup is deleted when fit ends normally (``delete_checkpoint``).

    Under a MultiWorkerMirroredStrategy every worker backs up at each epoch's end; the
    chief writes ``backup_dir``, another worker writes "backup_dir/workertemp_<task id>"
    and removes it at once. Every worker restores the chief's backup (``backup_dir`` must
    be on a file system they share); at a normal end the chief deletes ``backup_dir`` once
    every worker has finished its last backup."""

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch":
            raise ValueError("minitensor's BackupAndRestore backs up at epoch ends only "
                             f"(save_freq='epoch'). Received: save_freq={save_freq}")
        self.backup_dir = _os.fspath(backup_dir)
        self.delete_checkpoint = delete_checkpoint
        self._checkpoint = None
        self._manager = None  # the chief's, on backup_dir

    def on_train_begin(self, logs=None):
        if self._checkpoint is None:
            self._epoch = Variable(0, trainable=False, name="epoch", dtype=int64)
            self._checkpoint = train.Checkpoint(model=self.model, epoch=self._epoch)
        strategy = self.model._distribute_strategy
        if strategy is None or strategy.extended.should_checkpoint:  # the chief
            self._manager = train.CheckpointManager(self._checkpoint, self.backup_dir,
                                                    max_to_keep=1)
            latest = self._manager.latest_checkpoint
        else:  # reads the chief's backup; its manager alone cleans the folder
            latest = train.latest_checkpoint(self.backup_dir)
        if latest is not None:
            self._checkpoint.restore(latest)
            self.model._initial_epoch = int(self._epoch.numpy())

    def on_epoch_end(self, epoch, logs=None):
        self._epoch.assign(epoch + 1)
        if self._manager is not None:
            self._manager.save()
            return
        strategy = self.model._distribute_strategy
        temp = worker_files.write_dirpath(self.backup_dir, strategy)
        train.CheckpointManager(self._checkpoint, temp, max_to_keep=1).save()
        worker_files.remove_temp_dirpath(self.backup_dir, strategy)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint:
            # No worker may be writing its last backup into backup_dir while it goes.
            worker_files.barrier(self.model._distribute_strategy)
            if self._manager is not None and _os.path.isdir(self.backup_dir):
                _shutil.rmtree(self.backup_dir)
        self._checkpoint, self._manager = None, None
