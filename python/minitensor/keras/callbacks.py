"""tf.keras.callbacks: Callback, History (what ``fit`` returns) and ProgbarLogger (the
progress lines). ``fit`` calls, on each callback, on_train_begin, on_epoch_begin,
on_train_batch_end, on_epoch_end and on_train_end; ``evaluate`` and ``predict`` call
on_test_batch_end / on_predict_batch_end and on_test_end / on_predict_end."""

from .progress_bar import Progbar

__all__ = ["BackupAndRestore", "Callback", "History", "ModelCheckpoint", "ProgbarLogger"]


class Callback:
    """Does nothing at each event; subclasses override the events they want."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): pass
    def on_train_batch_end(self, batch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass


class History(Callback):
    """Records each epoch's logs: ``history`` maps each name ('loss', 'accuracy',
    'val_loss', ...) to its list of per-epoch values; ``epoch`` lists the epochs."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(value)


class ProgbarLogger(Callback):
    """Prints "Epoch i/n" (when n > 1) and a progress line per epoch, or per evaluate and
    predict, with ``params['verbose']`` (1 or 2) and ``params['steps']``."""

    def __init__(self):
        super().__init__()
        self._bar = None

    def _new_bar(self):
        self._bar = Progbar(self.params.get("steps"), verbose=self.params.get("verbose", 1))

    def on_epoch_begin(self, epoch, logs=None):
        if self.params.get("epochs", 1) > 1:
            print(f"Epoch {epoch + 1}/{self.params['epochs']}", flush=True)
        self._new_bar()

    def on_train_batch_end(self, batch, logs=None):
        self._bar.update(batch + 1, list((logs or {}).items()), finalize=False)

    def on_epoch_end(self, epoch, logs=None):
        self._finish(logs)

    def on_test_begin(self, logs=None):
        self._new_bar()

    on_predict_begin = on_test_begin

    def on_test_batch_end(self, batch, logs=None):
        self._bar.update(batch + 1, list((logs or {}).items()), finalize=False)

    on_predict_batch_end = on_test_batch_end

    def on_test_end(self, logs=None):
        self._finish(logs)

    on_predict_end = on_test_end

    def _finish(self, logs):
        target = self._bar.target if self._bar.target is not None else self.params.get("seen")
        self._bar.target = self._bar.target or target
        self._bar.update(target or 0, list((logs or {}).items()), finalize=True)


from .checkpoint_callbacks import BackupAndRestore, ModelCheckpoint  # noqa: E402 (they subclass Callback)
