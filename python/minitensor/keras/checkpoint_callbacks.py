"""The callbacks that save during fit (tf.keras.callbacks): ModelCheckpoint writes the
model or its weights at each epoch's end; BackupAndRestore keeps a crash-safe checkpoint
(mt.train's, docs/checkpoints.md) of the model, its optimizer and the epoch reached, so
that a fit started again after a crash resumes at that epoch."""

import os as _os
import shutil as _shutil

import numpy as _np

from .callbacks import Callback
from .._dtypes import int64
from .._variables import Variable
from .. import train

__all__ = ["BackupAndRestore", "ModelCheckpoint"]


class ModelCheckpoint(Callback):
    """Saves the model (``.keras``) or its weights (``.weights.h5``) at each epoch's end
    to ``filepath``, formatted with ``epoch`` (from 1) and the logs; with
    ``save_best_only``, only when ``monitor`` improved. Each file is replaced atomically."""

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
        directory = _os.path.dirname(path)
        if directory:
            _os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)
        if self.verbose:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")


class BackupAndRestore(Callback):
    """Backs up the model, its optimizer and the epoch reached in ``backup_dir`` at each
    epoch's end; a fit that starts while a backup exists restores it and continues from
    the next epoch. The backup is deleted when fit ends normally (``delete_checkpoint``)."""

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch":
            raise ValueError("minitensor's BackupAndRestore backs up at epoch ends only "
                             f"(save_freq='epoch'). Received: save_freq={save_freq}")
        self.backup_dir = _os.fspath(backup_dir)
        self.delete_checkpoint = delete_checkpoint
        self._manager = None

    def _checkpoint(self):
        if self._manager is None:
            self._epoch = Variable(0, trainable=False, name="epoch", dtype=int64)
            ckpt = train.Checkpoint(model=self.model, epoch=self._epoch)
            self._manager = train.CheckpointManager(ckpt, self.backup_dir, max_to_keep=1)
        return self._manager

    def on_train_begin(self, logs=None):
        manager = self._checkpoint()
        if manager.latest_checkpoint is not None:
            manager.checkpoint.restore(manager.latest_checkpoint)
            self.model._initial_epoch = int(self._epoch.numpy())

    def on_epoch_end(self, epoch, logs=None):
        self._epoch.assign(epoch + 1)
        self._checkpoint().save()

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and _os.path.isdir(self.backup_dir):
            _shutil.rmtree(self.backup_dir)
        self._manager = None
