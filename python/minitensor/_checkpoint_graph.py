"""The object graph of a checkpoint: which object owns which tensor (docs/checkpoints.md).

Trackable objects and their children, each named by a path segment:
  - a Variable is a leaf, its tensor named by its path ("model/layer-1/kernel");
  - a Keras layer has its weights by their short names ("kernel", "bias"), and a model
    its layers as "layer-<i>" and its compiled optimizer as "optimizer";
  - an optimizer has "iterations" and, for each variable of the graph at path V, its
    slot variables as "slots/V/<i>";
  - a Checkpoint, or any object with such attributes (a tf.Module-like object), has its
    trackable attributes by name; an object with ``_checkpoint_children`` (a random
    Generator: its "state" variable) names its own;
  - an object with ``_serialize_to_tensors`` (a dataset Iterator) is a leaf whose tensors
    are "<path>/<name>" for each name it returns, given back to its
    ``_restore_from_tensors`` (after ``_check_tensors``) by a restore.
"""

from . import _minitensor as _mt
from .keras.layers.layer import Layer
from .keras.model import Model
from .keras.optimizers import Optimizer

__all__ = ["walk"]


def _is_layer(obj):
    return isinstance(obj, Layer)


def _is_optimizer(obj):
    return isinstance(obj, Optimizer)


def is_saveable(obj):
    return hasattr(obj, "_serialize_to_tensors")


def is_trackable(obj):
    return isinstance(obj, _mt._Variable) or _is_layer(obj) or _is_optimizer(obj) or \
        hasattr(obj, "_checkpoint_children") or is_saveable(obj)


def children(obj):
    """Returns the (name, child) pairs of ``obj``: variables, layers, optimizers and
    objects with trackable attributes."""
    if hasattr(obj, "_checkpoint_children"):
        return list(obj._checkpoint_children())
    if _is_layer(obj):
        out = [(w._name.rsplit("/", 1)[-1], w) for w in obj._weights]
        out += obj._sublayers()
        if isinstance(obj, Model):
            out += [(f"layer-{i}", layer) for i, layer in enumerate(obj.layers)]
            if getattr(obj, "optimizer", None) is not None:
                out.append(("optimizer", obj.optimizer))
        return out
    if _is_optimizer(obj) or isinstance(obj, _mt._Variable) or is_saveable(obj):
        return []
    return [(k, v) for k, v in vars(obj).items() if not k.startswith("_") and is_trackable(v)]


def walk(root):
    """Returns (variables, optimizers, layers, saveables): each a list of (path, object),
    every object once (by its first path), in a stable order."""
    variables, optimizers, layers, saveables, seen = [], [], [], [], set()
    stack = [("", root)]
    while stack:
        path, obj = stack.pop(0)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, _mt._Variable):
            variables.append((path, obj))
            continue
        if is_saveable(obj):
            saveables.append((path, obj))
        elif _is_optimizer(obj):
            optimizers.append((path, obj))
        elif _is_layer(obj):
            layers.append((path, obj))
        stack.extend((f"{path}/{name}" if path else name, child)
                     for name, child in children(obj))
    return variables, optimizers, layers, saveables
