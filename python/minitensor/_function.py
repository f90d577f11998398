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

import collections
import contextlib
import functools
import inspect
import operator
import threading
import weakref

from . import _host_reads, _input_signature, _minitensor as _mt, _retracing
from ._constant_op import convert_to_tensor

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


@functools.lru_cache(maxsize=None)
def _tensor_args_key(count):
    """The flattened structure and key of a call with `count` tensors as its positional
    arguments and no keywords: what _flatten and _key give for it, computed once."""
    structure = ((_HOLE,) * count, {})
    return structure, _key(structure)


# Note [Traces kept per function]: a function keeps one C++ cache (_FunctionCache) per
# Python key and tuple of argument shapes, at most MAX_TRACED_SIGNATURES of them, least
# recently called first out; dropping a cache frees its recordings and returns their arenas
# to the pool. Each cache holds the traces of its shapes (one per dtype, device, scope).
# Reading the shapes costs about 0.4 us a call, so a function groups by its Python key alone
# until one of its caches traces a second time (its shapes vary, or dtypes or devices do).
MAX_TRACED_SIGNATURES = 16
_SHAPE = operator.attrgetter("shape")


def _detector(python_function):
    """The retracing detector of ``python_function``, shared by every Function made of it
    (so that one made again and again in a loop warns)."""
    try:
        detector = _detectors.get(python_function)
        if detector is None:
            detector = _detectors[python_function] = _retracing.RetracingDetector(
                python_function)
        return detector
    except TypeError:  # not weakly referable
        return _retracing.RetracingDetector(python_function)


_detectors = weakref.WeakKeyDictionary()


class Function:
    """A function that traces once per signature and replays after (tf.function's object);
    ``mt.function`` makes one."""

    def __init__(self, python_function, name=None, input_signature=None,
                 reduce_retracing=False):
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        if input_signature is not None:
            _input_signature.check(input_signature)
        self._input_signature = input_signature
        self._binding = None  # the InputSignature, made at the first call
        self._reduce_retracing = bool(reduce_retracing)
        self._by_shape = self._reduce_retracing  # group traces by shapes (see the Note)
        self._traced_shapes = []  # before that: (group, (key, dtypes), cache) of each trace
        self._traces = 0
        self._caches = collections.OrderedDict()  # (key, shapes) -> _FunctionCache
        self._dtypes = {}  # (key, shapes) -> (key, the tensors' dtypes)
        self._last_cache = None
        self._detector = _detector(python_function)
        self._outputs = {}  # signature key -> the outputs' structure
        self._descriptor_cache = weakref.WeakKeyDictionary()
        # The last call with tensors alone (Note [A call's fast path]): (count, its cache's
        # replay, key, outputs' structure, cache, cache.replay_count then).
        self._fast = None
        functools.update_wrapper(self, python_function)

    def _bind(self, args, kwargs):
        if self._binding is None:
            self._binding = _input_signature.InputSignature(self._python_function,
                                                            self._input_signature)
        return tuple(self._binding.bind(args, kwargs)), {}

    def _cache_for(self, key, tensors):
        """The C++ cache of this key and these tensors' shapes (Note [Traces kept per
        function]); None when ``reduce_retracing`` runs the call eagerly instead of tracing
        (a traced signature differs from it in shapes only)."""
        group = (key, tuple(map(_SHAPE, tensors)) if self._by_shape else None)
        cache = self._caches.get(group)
        if cache is not None:
            self._caches.move_to_end(group)
            return cache
        dtypes = tuple(t.dtype for t in tensors)
        if self._reduce_retracing and (key, dtypes) in self._dtypes.values():
            return None
        cache = self._caches[group] = _mt._FunctionCache(self._name)
        self._dtypes[group] = (key, dtypes)
        self._trim()
        return cache

    def _trim(self):
        """Drops the least recently called groups past MAX_TRACED_SIGNATURES, and what
        refers to their caches (a cache is freed with its last group)."""
        while len(self._caches) > MAX_TRACED_SIGNATURES:
            (old_key, old_shapes), old = self._caches.popitem(last=False)
            del self._dtypes[(old_key, old_shapes)]
            if not any(k == old_key for k, _ in self._caches):
                self._outputs.pop(old_key, None)
            if self._traced_shapes:
                self._traced_shapes = [t for t in self._traced_shapes if t[2] is not old]

    def _note_trace(self, key, tensors, cache):
        """Counts a trace; the second trace of a cache grouped by key alone moves every
        such cache under the shapes it traced (Note [Traces kept per function])."""
        self._traces += 1
        self._detector.traced()
        if self._by_shape:
            return
        group = (key, tuple(map(_SHAPE, tensors)))
        self._traced_shapes.append((group, (key, tuple(t.dtype for t in tensors)), cache))
        if cache.tracing_count < 2:
            return
        self._by_shape = True
        for group in [g for g in self._caches if g[1] is None]:
            del self._caches[group], self._dtypes[group]
        for group, dtypes, traced_cache in self._traced_shapes:
            self._caches[group], self._dtypes[group] = traced_cache, dtypes
        self._traced_shapes = None
        self._trim()

    def __call__(self, *args, **kwargs):
        # Note [A call's fast path]: a call with as many tensors alone as the last such call,
        # whose signature has traced, replays it straight from its C++ cache: the key, the
        # cache and the outputs' structure are the last call's. Anything else (a new
        # signature, another argument, a replica's call) goes the whole way, which sets or
        # clears the fast path again, and tells the retracing detector how many calls the
        # fast path made (its cache's replay count). The cache is the most recently called
        # one, so the least-recently-called order needs no update.
        fast = self._fast
        if fast is not None and not kwargs and len(args) == fast[0]:
            flat_out = fast[1](args, fast[2])
            if flat_out is not None:
                return flat_out[0] if fast[3] is _HOLE else _pack(fast[3], iter(flat_out))
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        if self._fast is not None:  # the fast path's calls, for the retracing detector
            self._detector.called(self._fast[4].replay_count - self._fast[5])
            self._fast = None
        if _mt.functions_run_eagerly():
            return self._python_function(*args, **kwargs)
        if self._input_signature is not None:
            args, kwargs = self._bind(args, kwargs)
        tensors_alone = not kwargs and all(type(a) is _mt.Tensor for a in args)
        if tensors_alone:
            # The common call, tensors alone: its structure and key depend on the count only.
            tensors = list(args)
            structure, key = _tensor_args_key(len(args))
            context_key = _mt._context_key()  # a replica's call, a mixed layer's autocast
            tensors_alone = not context_key
            key += context_key
        else:
            tensors = []
            structure = _flatten((args, kwargs), tensors)
            key = _key(structure) + _mt._context_key()
        cache = self._cache_for(key, tensors)
        if cache is None:  # reduce_retracing: another shape of a traced signature
            return self._python_function(*args, **kwargs)
        self._last_cache = cache
        self._detector.called()
        traces_before = cache.tracing_count
        traced = []

        def body(flat):
            a, kw = _pack(structure, iter(flat))
            # The cache counts a trace before it runs the body: a changed count means this
            # call records a new signature, where host reads are errors (_host_reads.py).
            traces = cache.tracing_count != traces_before
            if traces:
                traced.append(True)
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
        flat_out = cache.call(tensors, body, key, names)
        if traced:
            self._note_trace(key, tensors, cache)
        if tensors_alone and not self._by_shape and self._input_signature is None:
            self._fast = (len(args), cache.replay, key, self._outputs[key], cache,
                          cache.replay_count)
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
            bound = Function(functools.partial(self._python_function, instance), self._name,
                             self._input_signature, self._reduce_retracing)
            self._descriptor_cache[instance] = bound
        return bound

    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    def experimental_get_tracing_count(self):
        """How many times the function traced (one per new signature, and again for a
        signature whose trace was dropped)."""
        return self._traces

    @property
    def traced_signatures(self):
        """How many signatures' traces the function keeps (at most
        MAX_TRACED_SIGNATURES shape groups: Note [Traces kept per function])."""
        return len(self._caches)

    @property
    def replay_kind(self):
        """How the last signature called replays: "graph" (one CUDA graph launch), "steps"
        (a flat list of kernel calls), "eager" (it cannot replay: a random op, say)."""
        return "" if self._last_cache is None else self._last_cache.replay_kind

    @property
    def arena_bytes(self):
        """The bytes the replays hold for their intermediate values, all signatures."""
        caches = {id(c): c for c in self._caches.values()}  # a cache may hold several groups
        return sum(c.arena_bytes for c in caches.values())


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_implements=None,
             experimental_autograph_options=None, experimental_attributes=None,
             experimental_relax_shapes=None, experimental_compile=None,
             experimental_follow_type_hints=None, name=None):
    """Makes ``func`` trace once per signature and replay after (tf.function). Usable as
    ``@mt.function`` or ``@mt.function(...)``. ``input_signature`` (a list of TensorSpecs)
    checks and converts every call's arguments; ``reduce_retracing`` runs a call eagerly
    instead of tracing it when only its tensors' shapes are new (docs/function.md,
    "Retracing"). The other options are accepted for TensorFlow's sake and ignored."""
    if func is None:
        return lambda f: function(f, input_signature, name=name,
                                  reduce_retracing=reduce_retracing)
    return Function(func, name=name, input_signature=input_signature,
                    reduce_retracing=reduce_retracing)
