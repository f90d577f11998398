"""Exceptions raised by minitensor, with TensorFlow's names and hierarchy (tf.errors).

Every failure of an op is an ``OpError`` subclass chosen by the error code:
``InvalidArgumentError`` for bad shapes, dtypes and names, ``NotFoundError`` for an unknown
device, ``ResourceExhaustedError`` for out of memory, ``FailedPreconditionError``.
``str(e)`` is the message::

    try:
        with mt.device("/GPU:7"):
            mt.matmul(a, b)
    except mt.errors.NotFoundError as e:
        print(e.message)
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """The base class of the errors an op raises (tf.errors.OpError)."""

    def __init__(self, node_def, op, message, error_code=UNKNOWN):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    def __str__(self):
        return self._message

    def __reduce__(self):
        return (type(self), (self._node_def, self._op, self._message))


def _subclass(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


CancelledError = _subclass("CancelledError", CANCELLED, "An operation was cancelled.")
UnknownError = _subclass("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _subclass(
    "InvalidArgumentError", INVALID_ARGUMENT, "An op received an invalid argument.")
DeadlineExceededError = _subclass(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _subclass("NotFoundError", NOT_FOUND, "A requested entity (a device) was not found.")
AlreadyExistsError = _subclass("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _subclass(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller may not run the operation.")
ResourceExhaustedError = _subclass(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource (a device's memory) ran out.")
FailedPreconditionError = _subclass(
    "FailedPreconditionError", FAILED_PRECONDITION, "The system is not in a state for the op.")
AbortedError = _subclass("AbortedError", ABORTED, "An operation was aborted.")
OutOfRangeError = _subclass("OutOfRangeError", OUT_OF_RANGE, "An index or value was out of range.")
UnimplementedError = _subclass("UnimplementedError", UNIMPLEMENTED, "The op is not implemented.")
InternalError = _subclass("InternalError", INTERNAL, "An internal invariant broke.")
UnavailableError = _subclass("UnavailableError", UNAVAILABLE, "The runtime is unavailable.")
DataLossError = _subclass("DataLossError", DATA_LOSS, "Data was lost or corrupted.")
UnauthenticatedError = _subclass(
    "UnauthenticatedError", UNAUTHENTICATED, "The request lacks credentials.")


class OperatorNotAllowedInGraphError(TypeError):
    """A tensor's value was read on the host (``bool``, ``float``, ``.numpy()``, ...) while
    an ``mt.function`` traced, where the read would be fixed at its trace-time value
    (tf.errors.OperatorNotAllowedInGraphError)."""
