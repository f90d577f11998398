"""mt.cond and mt.while_loop (tf.cond, tf.while_loop): control flow on a tensor's value.

    y = mt.cond(mt.reduce_sum(x) > 0, lambda: x, lambda: -x)
    i, total = mt.while_loop(lambda i, t: i < 10, lambda i, t: (i + 1, t + i), [0, 0.0])

Eagerly they decide on the host, as TensorFlow's eager versions do. While an mt.function
traces, a tensor predicate is a decision on the host that a replay of recorded kernels
cannot repeat: the recording is marked unreplayable (the function then runs its body
eagerly at every call, after one warning), the predicate is read and the branch runs. The
results are therefore those of the eager function at every call (docs/function.md,
"Reading values while tracing"). An element-wise choice that stays on the device and
replays is mt.where.
"""

from . import _host_reads, _minitensor as _mt
from ._constant_op import convert_to_tensor

__all__ = ["cond", "while_loop"]


def _is_tensor(value):
    return isinstance(value, (_mt.Tensor, _mt._Variable))


def _read(value, op, convert):
    """Reads a tensor ``value`` on the host for ``op`` (after marking a recording that
    is under way unreplayable: a replay could not decide again)."""
    if not _is_tensor(value):
        return convert(value)
    _mt._mark_unreplayable(
        f"[{op}] a Python decision on a tensor's value cannot replay; the function decides "
        "again at every call (use mt.where to choose on the device)")
    size = 1
    for d in value.shape:
        size *= d
    if size != 1:
        raise ValueError("The truth value of an empty array is ambiguous. Use `array.size > "
                         "0` to check that an array is not empty." if size == 0 else
                         "The truth value of an array with more than one element is "
                         "ambiguous. Use a.any() or a.all()")
    with _host_reads.reading():
        return convert(value)


def cond(pred, true_fn=None, false_fn=None, name=None):
    """Returns ``true_fn()`` when ``pred`` (a scalar tensor or a Python value) is true, else
    ``false_fn()``. Raises TypeError, as TensorFlow, for a missing or uncallable branch and
    ValueError for a predicate of other than one element."""
    del name
    if true_fn is None:
        raise TypeError("cond(): 'true_fn' argument required")
    if false_fn is None:
        raise TypeError("cond(): 'false_fn' argument required")
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")
    if pred is None:
        raise ValueError("Attempt to convert a value (None) with an unsupported type "
                         "(<class 'NoneType'>) to a Tensor.")
    return true_fn() if _read(pred, "cond", bool) else false_fn()


def _to_tensors(value):
    """``value`` with each leaf that is not a tensor or variable converted to a tensor."""
    if isinstance(value, (list, tuple)):
        items = [_to_tensors(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: _to_tensors(v) for k, v in value.items()}
    if _is_tensor(value):
        return value
    return convert_to_tensor(value)


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _leaves(v)]
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _leaves(value[k])]
    return [value]


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` is true and fewer
    than ``maximum_iterations`` (when given) have run; returns the last loop variables
    (non-tensor leaves converted to tensors). A single loop variable may be returned by
    ``body`` bare, and is then returned bare. Raises TypeError for an uncallable cond or
    body, ValueError for no loop variables or a body whose result has another structure."""
    del shape_invariants, parallel_iterations, back_prop, swap_memory, name
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if loop_vars is None or (isinstance(loop_vars, (list, tuple)) and not loop_vars):
        raise ValueError("'loop_vars' must be provided.")
    single = not isinstance(loop_vars, (list, tuple))
    loop_vars = _to_tensors([loop_vars] if single else loop_vars)
    limit = None if maximum_iterations is None else \
        _read(maximum_iterations, "while_loop", int)
    count, packed = 0, False
    while (limit is None or count < limit) and _read(cond(*loop_vars), "while_loop", bool):
        result = body(*loop_vars)
        if len(loop_vars) == 1 and not isinstance(result, (list, tuple)):
            result, packed = [result], True
        if len(_leaves(result)) != len(_leaves(loop_vars)):
            raise ValueError(
                "The two structures don't have the same nested structure: the loop has "
                f"{len(_leaves(loop_vars))} variables and body returned "
                f"{len(_leaves(result))} values.")
        loop_vars = _to_tensors(result)
        count += 1
    return loop_vars[0] if packed or single else loop_vars
