"""tf.io.gfile on local paths: TensorFlow's names, results and error classes.

    mt.io.gfile.makedirs("/tmp/run/workertemp_1")   # parents too; nothing if it exists
    mt.io.gfile.rmtree("/tmp/run/workertemp_1")     # NotFoundError if it does not exist
"""

import glob as _glob
import os as _os
import shutil as _shutil

from .. import errors as _errors

__all__ = ["exists", "glob", "isdir", "listdir", "makedirs", "mkdir", "remove", "rmtree"]


def _not_found(message):
    return _errors.NotFoundError(None, None, message)


def _failed_precondition(message):
    return _errors.FailedPreconditionError(None, None, message)


def exists(path):
    """Returns whether ``path`` (a file or a folder) exists."""
    return _os.path.exists(_os.fspath(path))


def isdir(path):
    """Returns whether ``path`` is a folder."""
    return _os.path.isdir(_os.fspath(path))


def glob(pattern):
    """Returns the paths that match ``pattern`` (``*``, ``?``, ``[...]``), sorted."""
    return sorted(_glob.glob(_os.fspath(pattern)))


def listdir(path):
    """Returns the names in folder ``path``. NotFoundError when it is not a folder."""
    path = _os.fspath(path)
    if not _os.path.isdir(path):
        raise _not_found(f"Could not find directory {path}")
    return _os.listdir(path)


def makedirs(path):
    """Creates folder ``path`` and its missing parents; nothing when it exists.
    FailedPreconditionError when a file stands in the way."""
    path = _os.fspath(path)
    try:
        _os.makedirs(path, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise _failed_precondition(f"{path} is not a directory") from None


def mkdir(path):
    """Creates folder ``path``; nothing when it exists. NotFoundError without its parent."""
    path = _os.fspath(path)
    try:
        _os.mkdir(path)
    except FileNotFoundError:
        raise _not_found(f"{path}; No such file or directory") from None
    except FileExistsError:
        if not _os.path.isdir(path):
            raise _failed_precondition(f"{path} is not a directory") from None


def remove(path):
    """Deletes file ``path``. NotFoundError when there is none, FailedPreconditionError for
    a folder."""
    path = _os.fspath(path)
    if _os.path.isdir(path):
        raise _failed_precondition(f"{path}; Is a directory")
    try:
        _os.remove(path)
    except FileNotFoundError:
        raise _not_found(f"{path}; No such file or directory") from None


def rmtree(path):
    """Deletes folder ``path`` and everything in it (a file: the file). NotFoundError when
    there is nothing at ``path``."""
    path = _os.fspath(path)
    if _os.path.isdir(path) and not _os.path.islink(path):
        _shutil.rmtree(path)
    elif _os.path.lexists(path):
        _os.remove(path)
    else:
        raise _not_found(f"{path} not found")
