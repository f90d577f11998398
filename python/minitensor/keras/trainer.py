"""compile, fit, evaluate and predict: the training API every Model has (tf.keras.Model's).

``fit`` loops over epochs and batches (input_batches.py) and trains each batch through
``training_step.train_step``, where distribution is handled. Loss and metrics are
averaged over the examples of the epoch so far, as Keras shows them; logs are sorted by
name ('accuracy', 'loss', 'val_accuracy', 'val_loss').
"""

import numpy as _np

from . import callbacks as _callbacks, input_batches, metrics as _metrics, optimizers
from . import training_step
from .compiled_loss import CompiledLoss

__all__ = ["Trainer"]

_OPTIMIZERS = {"sgd": optimizers.SGD, "adam": optimizers.Adam, "adamw": optimizers.AdamW,
               "rmsprop": optimizers.RMSprop}


def _optimizer(identifier):
    if isinstance(identifier, optimizers.Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _OPTIMIZERS:
        return _OPTIMIZERS[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")


def _verbosity(verbose):
    return 1 if verbose == "auto" else verbose


def _has_mixed_float16(layer):
    """Whether ``layer`` or a layer inside it (a model's) has the "mixed_float16" policy."""
    policy = getattr(layer, "dtype_policy", None)
    if policy is not None and policy.name == "mixed_float16":
        return True
    inner = getattr(layer, "layers", None)
    return any(_has_mixed_float16(child) for child in inner if child is not layer) \
        if isinstance(inner, list) else False


class Trainer:
    """Mixed into Model: needs ``__call__`` and ``trainable_variables``."""

    compiled = False

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, **kwargs):
        """Sets the optimizer (a name: 'sgd', 'adam', 'adamw', 'rmsprop', or an optimizer),
        the loss (a name, a Loss or a function of (y_true, y_pred)) and the metrics (names
        such as 'accuracy', Metric objects or functions). Raises ValueError, with Keras's
        messages, for identifiers it cannot interpret. Other Keras arguments (run_eagerly,
        jit_compile, ...) are accepted and ignored. A model with a "mixed_float16" layer
        is refused: it needs loss scaling (Keras's LossScaleOptimizer), which minitensor
        lacks, and its float16 gradients could underflow unseen."""
        if _has_mixed_float16(self):
            raise NotImplementedError(
                "compile(): a model with a 'mixed_float16' layer needs loss scaling "
                "(Keras's LossScaleOptimizer), which minitensor does not have; use "
                "'mixed_bfloat16', whose range needs none")
        self.optimizer = _optimizer(optimizer)
        self.loss = loss
        self._compiled_loss = None if loss is None else CompiledLoss(loss)
        self._metric_ids = list(metrics or [])
        for identifier in self._metric_ids:
            _metrics.check(identifier)
        self._metric_objects = None
        self._loss_tracker = _LossAverage()
        self.compiled = True

    def _assert_compiled(self):
        if not self.compiled:
            raise ValueError("You must call `compile()` before using the model.")
        if self._compiled_loss is None:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")

    @property
    def metrics_names(self):
        names = ["loss"] if self.compiled else []
        return names + [m.name for m in (self._metric_objects or [])]

    def _reset_metrics(self):
        self._loss_tracker.reset_state()
        for metric in self._metric_objects or []:
            metric.reset_state()

    def _update_metrics(self, y, y_pred, loss, batch_size):
        """Adds a batch to the running loss and metrics; returns the logs so far."""
        if self._metric_objects is None:
            self._metric_objects = [_metrics.for_shapes(i, y, y_pred) for i in self._metric_ids]
        self._loss_tracker.update_state(loss, sample_weight=batch_size)
        for metric in self._metric_objects:
            metric.update_state(y, y_pred)
        logs = {"loss": float(self._loss_tracker.result())}
        logs.update({m.name: float(m.result()) for m in self._metric_objects})
        return dict(sorted(logs.items()))

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, initial_epoch=0,
            **kwargs):
        """Trains for ``epochs`` over (x, y) (arrays, or a Dataset of (x, y) batches) in
        batches of ``batch_size`` (32), shuffled each epoch when ``shuffle``; the last
        ``validation_split`` of the arrays (or ``validation_data``) is evaluated after each
        epoch. verbose: 'auto' or 1 (a progress line), 2 (a line per epoch), 0 (silent).
        Returns a History. Raises ValueError before compile, and for inconsistent data."""
        self._assert_compiled()
        train, validation = input_batches.for_fit(x, y, batch_size, shuffle, validation_split,
                                                  validation_data)
        history = _callbacks.History()
        events = _Events(callbacks, history, self, _verbosity(verbose),
                         {"epochs": epochs, "steps": train.steps})
        events.call("on_train_begin")
        if getattr(self, "_initial_epoch", None) is not None:  # set by BackupAndRestore
            initial_epoch, self._initial_epoch = self._initial_epoch, None
        for epoch in range(initial_epoch, epochs):
            self._reset_metrics()
            events.call("on_epoch_begin", epoch)
            logs = {}
            for step, (xb, yb) in enumerate(train):
                loss, y_pred = training_step.train_step(self, xb, yb)
                logs = self._update_metrics(yb, y_pred, loss, len(xb))
                events.call("on_train_batch_end", step, logs)
            if not logs:
                raise ValueError("Unexpected result of `train_function` (Empty logs). This "
                                 "could be due to issues in input pipeline that resulted in "
                                 "an empty dataset.")
            if validation is not None:
                val_logs = self._test_loop(validation)
                logs.update({"val_" + name: value for name, value in val_logs.items()})
            events.call("on_epoch_end", epoch, logs)
        events.call("on_train_end")
        return history

    def _test_loop(self, batches, events=None):
        """Computes loss and metrics over ``batches``; returns the logs."""
        self._reset_metrics()
        logs = {}
        for step, (xb, yb) in enumerate(batches):
            y_pred = _np.asarray(self(xb, training=False))
            loss = self._compiled_loss.batch_loss(yb, y_pred)
            loss += sum(float(penalty) for penalty in self.losses)
            logs = self._update_metrics(yb, y_pred, loss, len(xb))
            if events is not None:
                events.call("on_test_batch_end", step, logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", return_dict=False,
                 **kwargs):
        """Returns the loss over (x, y), or [loss, metric, ...] (a dict with
        ``return_dict``); ValueError before compile."""
        self._assert_compiled()
        batches = input_batches.for_inference(x, y, batch_size)
        events = _Events(None, None, self, _verbosity(verbose), {"steps": batches.steps})
        events.call("on_test_begin")
        logs = self._test_loop(batches, events)
        events.call("on_test_end", logs)
        if return_dict:
            return logs
        values = [logs["loss"]] + [logs[m.name] for m in self._metric_objects or []]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose="auto", **kwargs):
        """Returns the model's outputs for ``x`` (arrays or a Dataset), batch by batch, as
        one NumPy array (a list of them for several outputs)."""
        batches = input_batches.for_inference(x, None, batch_size)
        events = _Events(None, None, self, _verbosity(verbose), {"steps": batches.steps})
        events.call("on_predict_begin")
        outputs = []
        for step, (xb, _) in enumerate(batches):
            result = self(xb, training=False)
            outputs.append([_np.asarray(r) for r in result] if isinstance(result, list)
                           else _np.asarray(result))
            events.call("on_predict_batch_end", step, {})
        events.call("on_predict_end", {})
        if outputs and isinstance(outputs[0], list):
            return [_np.concatenate(parts) for parts in zip(*outputs)]
        return _np.concatenate(outputs) if outputs else _np.zeros((0,), _np.float32)


class _LossAverage:
    """The epoch's running loss, weighted by batch size. Fit and evaluate hold each batch's
    loss as a float already and run outside functions, so it stays on the host: a Mean's
    variables would add a dozen ops to every batch."""

    def __init__(self):
        self.reset_state()

    def reset_state(self):
        self._total, self._count = 0.0, 0

    def update_state(self, loss, sample_weight):
        self._total += float(loss) * sample_weight
        self._count += sample_weight

    def result(self):
        return float(_np.float32(self._total / self._count)) if self._count else 0.0


class _Events:
    """The callbacks of one fit, evaluate or predict: a progress logger when verbose,
    the user's, then the History."""

    def __init__(self, user_callbacks, history, model, verbose, params):
        params = dict(params, verbose=verbose)
        self._callbacks = [_callbacks.ProgbarLogger()] if verbose in (1, 2) else []
        self._callbacks += list(user_callbacks or [])
        if history is not None:
            self._callbacks.append(history)
        for callback in self._callbacks:
            callback.set_model(model)
            callback.set_params(params)

    def call(self, event, *args):
        for callback in self._callbacks:
            getattr(callback, event)(*args)
