"""One optimizer step of ``Model.fit``: the one place of the Keras subset that knows about
distribution strategies.

The hook (for ``mt.distribute``; docs/keras.md, "The distribution hook"):

* A model captures ``mt.distribute.get_strategy()`` when it is constructed inside a
  strategy's scope (``mt.distribute.has_strategy()`` is True) into
  ``model._distribute_strategy``; outside a scope, or while ``mt.distribute`` has no
  ``get_strategy``, it captures None. A model that builds its variables later (a
  Sequential without an Input) builds them inside that strategy's scope.
* ``train_step(model, x, y)`` takes a global batch as NumPy arrays. With no strategy it
  runs ``replica_step`` once on tensors made with ``mt.constant``. With a strategy of N
  replicas (N >= 1) it splits the batch along axis 0 into N slices (``numpy.array_split``:
  sizes differ by at most one; a batch smaller than N leaves some slices empty), makes
  slice i a tensor on ``strategy.extended.worker_devices[i]``, and calls
  ``strategy.run(replica_step_fn, args=(mt.distribute.PerReplica(xs),
  mt.distribute.PerReplica(ys)))``; replica i gets xs[i] and ys[i].
* ``replica_step`` computes the loss as the sum of its per-example losses over the GLOBAL
  batch size, plus 1/N of the regularization penalties (``model.losses``), so that the SUM
  of the replicas' gradients is the one-device mean gradient,
  and calls ``model.optimizer.apply_gradients(zip(grads, model.trainable_variables))``
  inside the replica: the strategy makes that call all-reduce (SUM) the gradients across
  replicas before one update of the mirrored variables. It returns (loss, predictions).
* ``strategy.run`` returns that pair with each part a PerReplica (its ``values``, or what
  ``strategy.experimental_local_results`` gives). The step's loss is
  ``strategy.reduce(mt.distribute.ReduceOp.SUM, loss, axis=None)``; the predictions are
  concatenated on the host for the metrics.
* Under a MultiWorkerMirroredStrategy N counts every worker's replicas: each worker makes
  only its own replicas' slices (worker w of local replicas L takes slices w*L to
  w*L+L-1), the loss reduce sums over every worker, and the predictions of every worker
  are gathered (summed into zeros) so that every worker's metrics see the whole batch.
  Every worker must see the same batches: the same arrays, and ``numpy.random.seed`` set
  alike when fit shuffles.

``evaluate`` and ``predict`` do not distribute: they call the model on the default device.
"""

import numpy as _np
from .._constant_op import constant
from .._converted_ops import add_n
from .._device_scope import device
from .._tape import GradientTape
from .. import distribute

__all__ = ["captured_strategy", "replica_step", "train_step"]


def captured_strategy():
    """Returns the strategy whose scope is open, or None (no scope, or mt.distribute has
    no strategies yet)."""
    has_strategy = getattr(distribute, "has_strategy", None)
    get_strategy = getattr(distribute, "get_strategy", None)
    if has_strategy is None or get_strategy is None or not has_strategy():
        return None
    return get_strategy()


def replica_step(model, x, y, global_batch_size, num_replicas=1):
    """Runs the forward pass, the scaled loss, its gradients and the optimizer update for
    one replica's slice (tensors); returns (loss tensor, predictions). The penalties of
    ``model.losses`` (regularizers) count once per step: each replica adds 1/num_replicas
    of them."""
    with GradientTape() as tape:
        y_pred = model(x, training=True)
        loss = model._compiled_loss.replica_loss(y, y_pred, global_batch_size)
        penalties = model.losses
        if penalties:
            loss = loss + add_n(penalties) * (1.0 / num_replicas)
    variables = model.trainable_variables
    grads = tape.gradient(loss, variables)
    model.optimizer.apply_gradients(zip(grads, variables))
    return loss, y_pred


def train_step(model, x, y):
    """Trains ``model`` on the global batch (x, y) of NumPy arrays; returns the batch's
    loss as a float and the predictions as a NumPy array."""
    strategy = model._distribute_strategy
    batch = len(x)
    if strategy is None:
        loss, y_pred = replica_step(model, constant(x), constant(y), batch)
        return float(loss), _np.asarray(y_pred)
    return _distributed_step(strategy, model, x, y, batch)


def _distributed_step(strategy, model, x, y, batch):
    """One step of every replica, of every worker (MultiWorkerMirroredStrategy): the global
    batch is cut into one part per replica and this process takes its replicas' parts; the
    loss and the predictions come back whole, the same on every worker."""
    if not model._variables_made:  # build under the scope, not inside a replica
        model(constant(x[:1]))
    devices = list(strategy.extended.worker_devices)
    replicas = strategy.num_replicas_in_sync
    first = getattr(strategy, "_worker_index", 0) * len(devices)
    x_parts, y_parts = _np.array_split(x, replicas), _np.array_split(y, replicas)
    xs, ys = [], []
    for i, name in enumerate(devices):
        with device(name):
            xs.append(constant(x_parts[first + i]))
            ys.append(constant(y_parts[first + i]))

    def step_fn(x_replica, y_replica):
        return replica_step(model, x_replica, y_replica, batch, replicas)

    loss, y_pred = strategy.run(step_fn, args=(distribute.PerReplica(xs),
                                               distribute.PerReplica(ys)))
    total = strategy.reduce(distribute.ReduceOp.SUM, loss, axis=None)
    predictions = [_np.asarray(p) for p in _local_values(strategy, y_pred)]
    if replicas > len(devices):
        rows = [0] + list(_np.cumsum([len(p) for p in x_parts]))
        return float(total), _gathered(strategy, predictions, devices, rows[first:], batch)
    return float(total), _np.concatenate(predictions, axis=0)


def _gathered(strategy, predictions, devices, starts, batch):
    """Returns every worker's predictions of the global batch: each replica's rows at
    their place in zeros, summed over the replicas (adding zeros changes no value)."""
    padded = []
    for part, name, start in zip(predictions, devices, starts):
        whole = _np.zeros((batch,) + part.shape[1:], part.dtype)
        whole[start:start + len(part)] = part
        with device(name):
            padded.append(constant(whole))
    summed = strategy.reduce(distribute.ReduceOp.SUM, distribute.PerReplica(padded), axis=None)
    return _np.asarray(summed)


def _local_values(strategy, value):
    """Returns the per-replica parts of ``value`` as a tuple."""
    local_results = getattr(strategy, "experimental_local_results", None)
    if local_results is not None:
        return tuple(local_results(value))
    return tuple(getattr(value, "values", (value,)))
