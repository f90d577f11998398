"""The op table's rows as the package exports them (internal).

Each row of kernels/op_table.h has a Python name (``"add"``, ``"math.erf"``, ``"nn.relu"``)
and the extension binds the uniform rows under its last part. A module asks for its rows
here instead of listing them: ``mt.math`` takes the ``math.`` rows and the top-level rows of
the element-wise families, ``mt.nn`` its ``nn.`` rows, ``mt`` the top-level rows. A Python
wrapper of the same name, imported or defined after, replaces the binding.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable

from . import _minitensor as _mt

# (py_name, family) for each row, in table order; the family is its list in op_table.h.
ROWS = _mt._op_rows

# The families whose top-level rows tf.math also has (tf.math.add, tf.math.reduce_sum).
ELEMENTWISE = ("binary", "unary", "reduction")


def exports(module: str, families: Iterable[str] = ()) -> Dict[str, Callable[..., Any]]:
    """Returns {name: binding} for the rows whose Python name lies in ``module`` ("" for
    the package itself), and the top-level rows of ``families``; a row the extension does
    not bind under its name (a wrapper written in Python) is left to its module."""
    families = tuple(families)
    found = {}
    for py_name, family in ROWS:
        prefix, _, name = py_name.rpartition(".")
        if prefix != module and not (prefix == "" and family in families):
            continue
        binding = getattr(_mt, name, None)
        if callable(binding):
            found[name] = binding
    return found
