"""The saving methods of Model with Keras 3's names and files: save_weights / load_weights
(.weights.h5, weights_h5.py) and save (.keras, keras_archive.py)."""

import io as _io
import os as _os
import zipfile as _zipfile

__all__ = ["ModelSaving", "register_format"]

# The writers and readers of the files, by name ("save_weights", "load_weights",
# "save_model"), registered by weights_h5.py and keras_archive.py when keras/__init__.py
# imports them: they import the model classes, which import this module.
_FORMATS = {}


def register_format(name, fn):
    _FORMATS[name] = fn


def _replace_atomically(write, filepath):
    """Writes through ``write(temp_path)`` beside ``filepath``, then renames it into place,
    so that a crash leaves the old file or the new one, never half of one."""
    filepath = _os.fspath(filepath)
    temp = f"{filepath}.tmp.{_os.getpid()}"
    try:
        write(temp)
        with open(temp, "rb+") as f:
            _os.fsync(f.fileno())
        _os.replace(temp, filepath)
    finally:
        if _os.path.exists(temp):
            _os.remove(temp)


class ModelSaving:
    """save_weights, load_weights and save for Model."""

    def save_weights(self, filepath, overwrite=True):
        """Writes the weights (and the optimizer's state, once it has slots) to a Keras 3
        ``.weights.h5`` file. Raises ValueError for another extension."""
        save_weights = _FORMATS["save_weights"]
        if not str(filepath).endswith(".weights.h5"):
            raise ValueError("The filename must end in `.weights.h5`. "
                             f"Received: filepath={filepath}")
        _replace_atomically(lambda path: save_weights(self, path), filepath)

    def load_weights(self, filepath, skip_mismatch=False):
        """Loads a Keras 3 ``.weights.h5`` file (or the weights of a ``.keras`` archive);
        ValueError when its layers do not match the model's."""
        if str(filepath).endswith(".keras"):
            with _zipfile.ZipFile(filepath) as z:
                filepath = _io.BytesIO(z.read("model.weights.h5"))
        elif not str(filepath).endswith(".weights.h5"):
            raise ValueError("File format not supported: filepath="
                             f"{filepath}. Keras 3 only supports V3 `.keras` and "
                             "`.weights.h5` files.")
        _FORMATS["load_weights"](self, filepath, skip_mismatch=skip_mismatch)

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Writes the model as a Keras 3 ``.keras`` archive. Raises ValueError for another
        extension."""
        save_model = _FORMATS["save_model"]
        if not str(filepath).endswith(".keras"):
            raise ValueError("Invalid filepath extension for saving. Please add a `.keras` "
                             f"extension for the native Keras format. Received: "
                             f"filepath={filepath}.")
        _replace_atomically(lambda path: save_model(self, path), filepath)
