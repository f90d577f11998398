"""tf.train.CheckpointManager and tf.train.latest_checkpoint: numbered checkpoints in a
folder, the newest kept, named by the folder's "checkpoint" file in TensorFlow's text form
(which the C++ CheckpointManager reads and writes too).

    manager = mt.train.CheckpointManager(ckpt, "/tmp/run", max_to_keep=3)
    ckpt.restore(manager.latest_checkpoint)      # None the first time: nothing restored
    manager.save()                               # /tmp/run/ckpt-1, ...

The "checkpoint" file is replaced atomically, only after a checkpoint is whole, and old
checkpoints are deleted only after that, so a crash at any moment leaves a latest
checkpoint that restores whole.
"""

import os as _os
import re as _re
import time as _time

from . import _minitensor as _mt

__all__ = ["CheckpointManager", "latest_checkpoint"]

_STATE = "checkpoint"


def _read_state(directory):
    """Returns (latest, [(path, timestamp)], last_preserved) from the folder's state file,
    paths relative to it; (None, [], None) when there is none."""
    try:
        with open(_os.path.join(directory, _STATE)) as f:
            text = f.read()
    except OSError:
        return None, [], None
    fields = _re.findall(r'^(\w+): ("(?:[^"\\]|\\.)*"|[-+.\deE]+)\s*$', text, _re.M)
    latest, paths, stamps, preserved = None, [], [], None
    for key, value in fields:
        if key == "model_checkpoint_path":
            latest = value.strip('"')
        elif key == "all_model_checkpoint_paths":
            paths.append(value.strip('"'))
        elif key == "all_model_checkpoint_timestamps":
            stamps.append(float(value))
        elif key == "last_preserved_timestamp":
            preserved = float(value)
    if len(stamps) != len(paths):
        stamps = [_time.time()] * len(paths)
    return latest, list(zip(paths, stamps)), preserved


def _write_state(directory, latest, kept, last_preserved):
    lines = [f'model_checkpoint_path: "{latest}"']
    lines += [f'all_model_checkpoint_paths: "{p}"' for p, _ in kept]
    lines += [f"all_model_checkpoint_timestamps: {t!r}" for _, t in kept]
    if last_preserved is not None:
        lines.append(f"last_preserved_timestamp: {last_preserved!r}")
    _mt._write_file_atomically(_os.path.join(directory, _STATE), "\n".join(lines) + "\n")


def _exists(prefix):
    return _os.path.exists(prefix + ".manifest")


def _relative(directory, prefix):
    return _os.path.relpath(prefix, directory) if _os.path.isabs(prefix) else \
        _os.path.basename(prefix)


def record_latest(prefix):
    """Makes ``prefix`` its folder's latest checkpoint in the state file (as
    tf.train.Checkpoint.save does), keeping the ones listed."""
    directory = _os.path.dirname(prefix) or "."
    _, kept, preserved = _read_state(directory)
    name = _os.path.basename(prefix)
    kept = [(p, t) for p, t in kept if p != name] + [(name, _time.time())]
    _write_state(directory, name, kept, preserved)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """Returns the prefix of the folder's latest checkpoint, or None when there is none
    (tf.train.latest_checkpoint)."""
    checkpoint_dir = _os.fspath(checkpoint_dir)
    latest, _, _ = _read_state(checkpoint_dir)
    if latest is None:
        return None
    prefix = latest if _os.path.isabs(latest) else _os.path.join(checkpoint_dir, latest)
    return prefix if _exists(prefix) else None


class CheckpointManager:
    """Saves a Checkpoint as "<directory>/<checkpoint_name>-<n>" and deletes all but the
    newest ``max_to_keep`` (None keeps every one), except one every
    ``keep_checkpoint_every_n_hours``, which is kept for good (tf.train.CheckpointManager).
    Takes up the checkpoints the folder's state file lists."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None,
                 init_fn=None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is "
                             "not None.")
        self._checkpoint = checkpoint
        self._directory = _os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_every = keep_checkpoint_every_n_hours
        self._name = checkpoint_name
        self._step_counter, self._interval = step_counter, checkpoint_interval
        self._last_step = None
        self._init_fn = init_fn
        _os.makedirs(self._directory, exist_ok=True)
        latest, kept, preserved = _read_state(self._directory)
        self._kept = [(p, t) for p, t in kept if _exists(_os.path.join(self._directory, p))]
        self._last_preserved = preserved if preserved is not None else _time.time()
        self._remove_temporaries()

    def _remove_temporaries(self):
        """Removes the temporary files of saves that were killed."""
        for name in _os.listdir(self._directory):
            if name.startswith(self._name + "-") and ".tmp." in name:
                _os.remove(_os.path.join(self._directory, name))

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def latest_checkpoint(self):
        """The newest checkpoint's prefix, or None."""
        return _os.path.join(self._directory, self._kept[-1][0]) if self._kept else None

    @property
    def checkpoints(self):
        """The kept checkpoints' prefixes, oldest first."""
        return [_os.path.join(self._directory, p) for p, _ in self._kept]

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes a checkpoint (numbered ``checkpoint_number``, else by the checkpoint's
        save counter), records it, deletes the oldest beyond max_to_keep; returns its
        prefix, or None when ``checkpoint_interval`` steps have not passed."""
        if self._interval is not None and check_interval:
            step = int(self._step_counter.numpy() if hasattr(self._step_counter, "numpy")
                       else self._step_counter)
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        number = int(counter.numpy()) if checkpoint_number is None else int(checkpoint_number)
        name = f"{self._name}-{number}"
        self._kept = [(p, t) for p, t in self._kept if p != name] + [(name, _time.time())]
        dropped = []
        while self._max_to_keep is not None and len(self._kept) > self._max_to_keep:
            dropped.append(self._kept.pop(0))
        deleted = []
        for path, stamp in dropped:
            if self._keep_every is not None and \
                    stamp - self._last_preserved >= self._keep_every * 3600:
                self._last_preserved = stamp  # kept for good, no longer listed
            else:
                deleted.append(path)
        kept, preserved = list(self._kept), self._last_preserved

        def record():  # once the checkpoint is whole (after the write, async or not)
            _write_state(self._directory, name, kept, preserved)
            for path in deleted:
                _mt._remove_checkpoint(_os.path.join(self._directory, path))

        self._checkpoint._write(_os.path.join(self._directory, name), options, then=record)
        return _os.path.join(self._directory, name)

    def restore_or_initialize(self):
        """Restores the latest checkpoint and returns its path, or runs init_fn and returns
        None when there is none."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None
