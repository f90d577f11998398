"""tf.train.Checkpoint: saves and restores trackable objects (variables, optimizers, Keras
layers and models) through minitensor's checkpoint files: a safetensors file of every
tensor and a manifest with a CRC32C of each, written last (docs/checkpoints.md).

    ckpt = mt.train.Checkpoint(model=model, optimizer=opt)
    path = ckpt.save("/tmp/run/ckpt")          # /tmp/run/ckpt-1
    ckpt.restore(path).assert_consumed()

A restore checks the files whole before it assigns anything. Values for objects that do
not exist yet (a model's layers before its first call) wait in the status and are
assigned when those layers are built (deferred restoration).
"""

import os as _os
import threading as _threading

import numpy as _np

from . import _checkpoint_graph as _graph, _minitensor as _mt
from ._checkpoint_manager import record_latest
from ._constant_op import constant
from ._dtypes import int64
from ._variables import Variable

__all__ = ["Checkpoint", "CheckpointLoadStatus", "CheckpointOptions"]


class CheckpointOptions:
    """Options of save, write, restore and read (tf.train.CheckpointOptions). With
    ``experimental_enable_async_checkpoint``, a save takes the values at once (no copy:
    an assignment afterwards moves the variable to a new buffer) and writes them on a
    background thread; ``Checkpoint.sync()`` waits for it."""

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False):
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = bool(
            experimental_enable_async_checkpoint or enable_async)
        self.experimental_write_callbacks = experimental_write_callbacks or []


def _slot_name(optimizer_path, variable_path, index):
    return f"{optimizer_path}/slots/{variable_path}/{index}"


class CheckpointLoadStatus:
    """What a restore matched (tf.train.Checkpoint.restore's status). Values of the
    checkpoint that no object took yet stay pending until the objects are built."""

    def __init__(self, root, tensors, path):
        self._root, self._pending, self._path = root, dict(tensors), path
        self._unmatched, self._matched, self._hooked = [], set(), set()
        self.match()

    def match(self):
        """Assigns every pending value whose object now exists; all checks first."""
        variables, optimizers, layers, saveables = _graph.walk(self._root)
        plan, unmatched = [], []
        for path, var in variables:
            if path in self._pending:
                plan.append((path, self._checked(path, var),
                             lambda v, var=var: _mt._assign_restored(var, v)))
            elif path not in self._matched:
                unmatched.append(path)
        for opt_path, opt in optimizers:
            key = f"{opt_path}/iterations"
            if key in self._pending:
                step = int(_np.asarray(self._pending[key]))
                plan.append((key, None, lambda _, o=opt, s=step:
                             _mt._optimizer_set_iterations(o._impl, s)))
            for var_path, var in variables:
                i = 0
                while _slot_name(opt_path, var_path, i) in self._pending:
                    key = _slot_name(opt_path, var_path, i)
                    value = self._checked(key, var)
                    plan.append((key, value, lambda v, o=opt, var=var, i=i: _mt._assign_restored(
                        _mt._optimizer_make_slot(o._impl, var, i), v)))
                    i += 1
        for path, obj in saveables:
            values = {k[len(path) + 1:]: v for k, v in self._pending.items()
                      if k.startswith(path + "/") and "/" not in k[len(path) + 1:]}
            if not values:
                if not any(k.startswith(path + "/") for k in self._matched):
                    unmatched.append(path)
                continue
            obj._check_tensors(values)
            for name in list(values)[:-1]:
                plan.append((f"{path}/{name}", None, lambda _: None))
            plan.append((f"{path}/{list(values)[-1]}", values, obj._restore_from_tensors))
        for key, value, assign in plan:
            assign(value)
            del self._pending[key]
            self._matched.add(key)
        self._unmatched = unmatched
        self._defer(layers)
        return self

    def _checked(self, key, var):
        value = self._pending[key]
        if tuple(value.shape) != tuple(var.shape) or value.dtype != var.dtype:
            raise ValueError(
                f"Received incompatible tensor with shape {tuple(value.shape)} and dtype "
                f"{value.dtype.name} when attempting to restore variable with shape "
                f"{tuple(var.shape)} and dtype {var.dtype.name} and name {key} "
                f"(checkpoint {self._path}).")
        return value

    def _defer(self, layers):
        """Makes each unbuilt layer that pending values may belong to match again once its
        build() has run."""
        if not self._pending:
            return
        for _, layer in layers:
            if layer.built or id(layer) in self._hooked:
                continue
            self._hooked.add(id(layer))
            build = layer.build

            def build_then_restore(input_shape, layer=layer, build=build):
                build(input_shape)
                del layer.build  # back to the class's build
                layer.built = True
                self.match()

            layer.build = build_then_restore

    def assert_consumed(self):
        """Raises AssertionError unless every value of the checkpoint was assigned and
        every variable of the objects got one."""
        if self._pending:
            raise AssertionError(
                f"Unresolved object in checkpoint {self._path}: values for "
                f"{sorted(self._pending)} were not assigned to any object.")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        """Raises AssertionError when a variable of the objects has no value in the
        checkpoint."""
        if self._unmatched:
            raise AssertionError(
                f"Some objects had no value in checkpoint {self._path}: {self._unmatched}")
        return self

    def assert_nontrivial_match(self):
        """Raises AssertionError when nothing of the checkpoint was assigned."""
        if not self._matched:
            raise AssertionError(f"Nothing was restored from checkpoint {self._path}.")
        return self

    def expect_partial(self):
        """Says that values left unassigned are expected (no error, no warning)."""
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run in eager execution."""


class _InitializationOnlyStatus(CheckpointLoadStatus):
    """The status of restore(None): nothing to restore."""

    def __init__(self, root):
        self._root, self._pending, self._path = root, {}, None
        self._unmatched, self._matched = [], set()

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")


class Checkpoint:
    """Groups trackable objects, given by keyword, for saving and restoring together
    (tf.train.Checkpoint). Raises ValueError for an object that is not trackable."""

    def __init__(self, root=None, **kwargs):
        if root is not None:
            kwargs["root"] = root
        for name, obj in kwargs.items():
            if not _graph.is_trackable(obj):
                raise ValueError(
                    f"`Checkpoint` was expecting {name} to be a trackable object (an object "
                    f"derived from `Trackable`), got {obj}.")
            setattr(self, name, obj)
        self._objects = dict(kwargs)
        self._save_counter = None
        self._writer, self._writer_error = None, None

    def _checkpoint_children(self):
        items = list(self._objects.items())
        if self._save_counter is not None:
            items.append(("save_counter", self._save_counter))
        return items

    @property
    def save_counter(self):
        """The number of save() calls, a variable saved with the checkpoint."""
        if self._save_counter is None:
            self._save_counter = Variable(0, trainable=False, name="save_counter", dtype=int64)
        return self._save_counter

    def _tensors(self):
        """Returns the (name, tensor) pairs of everything tracked, as they are now."""
        variables, optimizers, _, saveables = _graph.walk(self)
        tensors = [(path, var.read_value()) for path, var in variables]
        for path, obj in saveables:
            tensors += [(f"{path}/{name}", value)
                        for name, value in obj._serialize_to_tensors().items()]
        for opt_path, opt in optimizers:
            tensors.append((f"{opt_path}/iterations", constant(opt.iterations, dtype=int64)))
            for var_path, var in variables:
                for i, slot in enumerate(_mt._optimizer_slots(opt._impl, var)):
                    tensors.append((_slot_name(opt_path, var_path, i), slot.read_value()))
        return tensors

    def _write(self, file_prefix, options, then=None):
        """Writes the values of now as ``file_prefix``, then calls ``then``: here, or on a
        background thread when ``options`` ask for asynchronous checkpoints."""
        self.sync()
        file_prefix = _os.fspath(file_prefix)
        tensors = self._tensors()  # raises before anything is made for what cannot be saved
        directory = _os.path.dirname(file_prefix)
        if directory:
            _os.makedirs(directory, exist_ok=True)

        def write():
            _mt._write_checkpoint(file_prefix, tensors)
            for callback in (options.experimental_write_callbacks if options else []):
                callback(file_prefix)
            if then is not None:
                then()

        if options is None or not options.experimental_enable_async_checkpoint:
            write()
            return file_prefix

        def run():
            try:
                write()
            except BaseException as e:  # noqa: B036 (handed to sync())
                self._writer_error = e

        self._writer = _threading.Thread(target=run, name="mt-checkpoint-writer", daemon=False)
        self._writer.start()
        return file_prefix

    def sync(self):
        """Waits for an asynchronous write in flight, raising its error."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.join()
        error, self._writer_error = self._writer_error, None
        if error is not None:
            raise error

    def write(self, file_prefix, options=None):
        """Writes the checkpoint at ``file_prefix`` exactly (no counter, no "checkpoint"
        file); returns the prefix."""
        return self._write(file_prefix, options)

    def save(self, file_prefix, options=None):
        """Writes checkpoint "<file_prefix>-<n>", n the save counter after one more save,
        and records it in its folder's "checkpoint" file; returns its path."""
        self.save_counter.assign_add(1)
        path = f"{_os.fspath(file_prefix)}-{int(self.save_counter.numpy())}"
        return self._write(path, options, then=lambda: record_latest(path))

    def restore(self, save_path, options=None):
        """Restores the objects from ``save_path`` (None restores nothing) and returns the
        status. Raises NotFoundError when there is no checkpoint, DataLossError naming the
        file and tensor when it is damaged, ValueError for a value of another shape."""
        self.sync()
        if save_path is None:
            return _InitializationOnlyStatus(self)
        save_path = _os.fspath(save_path)
        # Each tensor is made on the device of the variable that will take it (an
        # optimizer's slots on their variable's): a GPU model is read straight into GPU
        # memory (Note [Restoring onto devices] in runtime/train/checkpoint_reader.cc).
        variables, optimizers, _, _ = _graph.walk(self)
        placement = variables + [(f"{o}/slots/{v}", var)
                                 for o, _ in optimizers for v, var in variables]
        tensors = dict(_mt._read_checkpoint(save_path, placement))
        if "save_counter" in tensors:
            self.save_counter  # made now, so that the checkpoint's value lands in it
        return CheckpointLoadStatus(self, tensors, save_path)

    def read(self, save_path, options=None):
        """Restores a checkpoint written by write(); as restore()."""
        return self.restore(save_path, options)
