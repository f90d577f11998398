"""mt.function: trace a Python function once per signature, then replay it (tf.function).

    @mt.function
    def step(x, y):
        with mt.GradientTape() as tape:
            loss = mt.reduce_mean(mt.square(model(x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.weights), model.weights))
        return loss

The first call with a new signature runs the function eagerly while the runtime records
every kernel it runs; later calls with that signature replay the recording, on a GPU as one
CUDA graph launch (docs/function.md). A signature is the structure of the arguments, each
tensor's dtype, shape and device, the value of every other argument (Python numbers,
strings, ...; other objects by identity), and the active ``mt.device`` scope. As in
TensorFlow, Python side effects (print, appending to a list, a counter) happen only when
the function traces; variables are read and written at every call.
"""

import contextlib
import functools
import inspect
import threading
import weakref

from . import _host_reads, _minitensor as _mt

__all__ = ["function", "Function"]

_local = threading.local()


def inside_function_body():
    """Whether this thread runs the Python body of an mt.function (tracing it, or running it
    eagerly because its signature cannot replay)."""
    return getattr(_local, "depth", 0) > 0


class _Hole:
    """Where a tensor goes in a flattened structure."""
    __slots__ = ()

    def __repr__(self):
        return "T"


_HOLE = _Hole()


def _flatten(value, tensors):
    """Returns ``value`` with each tensor replaced by _HOLE (appended to ``tensors``): the
    structure, which is also what enters the signature for everything else (a variable by
    identity: the function reads it like any variable)."""
    if isinstance(value, _mt.Tensor):
        tensors.append(value)
        return _HOLE
    if isinstance(value, (list, tuple)):
        items = [_flatten(v, tensors) for v in value]
        if hasattr(value, "_fields"):
            return type(value)(*items)
        return type(value)(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {k: _flatten(v, tensors) for k, v in value.items()}
    if type(value).__module__ == "numpy" and hasattr(value, "dtype") and value.shape != ():
        from . import convert_to_tensor
        tensors.append(convert_to_tensor(value))  # as TensorFlow: an array is a tensor
        return _HOLE
    return value


def _pack(structure, tensors):
    """The inverse of _flatten: fills each _HOLE of ``structure`` from the iterator."""
    if structure is _HOLE:
        return next(tensors)
    if isinstance(structure, (list, tuple)):
        items = [_pack(v, tensors) for v in structure]
        if hasattr(structure, "_fields"):
            return type(structure)(*items)
        return type(structure)(items) if isinstance(structure, tuple) else items
    if isinstance(structure, dict):
        return {k: _pack(v, tensors) for k, v in structure.items()}
    return structure


def _key(structure):
    """A hashable, printable form of a flattened structure: constants by value, other
    objects (a Keras layer, a variable) by identity."""
    if structure is _HOLE:
        return "T"
    if isinstance(structure, (list, tuple)):
        return f"{type(structure).__name__}({','.join(_key(v) for v in structure)})"
    if isinstance(structure, dict):
        return "{" + ",".join(f"{k!r}:{_key(v)}" for k, v in structure.items()) + "}"
    if structure is None or isinstance(structure, (bool, int, float, str, bytes)):
        return f"{type(structure).__name__}:{structure!r}"
    return f"id:{id(structure)}"


class Function:
    """A function that traces once per signature and replays after (tf.function's object);
    ``mt.function`` makes one."""

    def __init__(self, python_function, name=None, reduce_retracing=False):
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self._cache = _mt._FunctionCache(self._name)
        self._outputs = {}  # signature key -> the outputs' structure
        self._descriptor_cache = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, python_function)

    def __call__(self, *args, **kwargs):
        if _mt.functions_run_eagerly():
            return self._python_function(*args, **kwargs)
        tensors = []
        structure = _flatten((args, kwargs), tensors)
        key = _key(structure) + _mt._replica_key()

        traces_before = self._cache.tracing_count

        def body(flat):
            a, kw = _pack(structure, iter(flat))
            # The cache counts a trace before it runs the body: a changed count means this
            # call records a new signature, where host reads are errors (_host_reads.py).
            traces = self._cache.tracing_count != traces_before
            _local.depth = getattr(_local, "depth", 0) + 1
            try:
                with _host_reads.tracing(self._name) if traces else contextlib.nullcontext():
                    result = self._python_function(*a, **kw)
            finally:
                _local.depth -= 1
            out_tensors = []
            self._outputs[key] = _flatten(result, out_tensors)  # variables stay as they are
            return out_tensors

        # A new signature traces: its _Arg nodes take the parameters' names in the log.
        names = [] if key in self._outputs else self._arg_names(args, kwargs, len(tensors))
        flat_out = self._cache.call(tensors, body, key, names)
        return _pack(self._outputs[key], iter(flat_out))

    def _arg_names(self, args, kwargs, count):
        """The name of each flattened tensor argument, in _flatten's order: its parameter's,
        with _0, _1, ... when the parameter holds several (TensorFlow's _Arg names); [] when
        the function's signature cannot be read."""
        try:
            params = list(inspect.signature(self._python_function).parameters.values())
        except (TypeError, ValueError):
            return []
        positional = [p.name for p in params if p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in params if p.kind == inspect.Parameter.VAR_POSITIONAL),
                    "args")
        named = [(positional[i] if i < len(positional) else f"{star}_{i - len(positional)}", v)
                 for i, v in enumerate(args)] + list(kwargs.items())
        names = []
        for base, value in named:
            found = []
            _flatten(value, found)
            names += [base] if len(found) == 1 else [f"{base}_{k}" for k in range(len(found))]
        return names if len(names) == count else []

    def __get__(self, instance, owner):
        """A decorated method: one Function per instance, as TensorFlow binds them."""
        if instance is None:
            return self
        bound = self._descriptor_cache.get(instance)
        if bound is None:
            bound = Function(functools.partial(self._python_function, instance), self._name)
            self._descriptor_cache[instance] = bound
        return bound

    @property
    def python_function(self):
        return self._python_function

    def experimental_get_tracing_count(self):
        """How many times the function traced (one per new signature)."""
        return self._cache.tracing_count

    @property
    def replay_kind(self):
        """How the last signature called replays: "graph" (one CUDA graph launch), "steps"
        (a flat list of kernel calls), "eager" (it cannot replay: a random op, say)."""
        return self._cache.replay_kind

    @property
    def arena_bytes(self):
        """The bytes the replays hold for their intermediate values, all signatures."""
        return self._cache.arena_bytes


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_implements=None,
             experimental_autograph_options=None, experimental_attributes=None,
             experimental_relax_shapes=None, experimental_compile=None,
             experimental_follow_type_hints=None, name=None):
    """Makes ``func`` trace once per signature and replay after (tf.function). Usable as
    ``@mt.function`` or ``@mt.function(...)``. ``input_signature`` and the other options
    are accepted for TensorFlow's sake; the signature always comes from the call."""
    if func is None:
        return lambda f: Function(f, name=name, reduce_retracing=reduce_retracing)
    return Function(func, name=name, reduce_retracing=reduce_retracing)
