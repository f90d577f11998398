"""The package's ops come from the op table: every row's Python name resolves, and the
modules re-export their rows without a hand-kept list."""

import minitensor as mt
from minitensor import _minitensor, _op_table


def _resolve(py_name):
    obj = mt
    for part in py_name.split("."):
        obj = getattr(obj, part)
    return obj


def test_every_rows_python_name_resolves():
    rows = _minitensor._op_rows
    assert ("math.erf", "unary") in rows and ("nn.relu", "unary") in rows
    for py_name, family in rows:
        assert callable(_resolve(py_name)), (py_name, family)


def test_math_has_the_math_rows_and_the_elementwise_families():
    for py_name, family in _minitensor._op_rows:
        prefix, _, name = py_name.rpartition(".")
        if prefix == "math" or (prefix == "" and family in _op_table.ELEMENTWISE):
            assert name in mt.math.__all__, py_name
            assert callable(getattr(mt.math, name))
    assert "erf" in mt.math.__all__ and "relu" not in mt.math.__all__
    assert mt.math.add is mt.add  # the same binding
    assert mt.math.divide is mt.divide  # the Python wrapper replaces the binding


def test_nn_has_its_rows():
    names = {py.rpartition(".")[2] for py, _ in _minitensor._op_rows if py.startswith("nn.")}
    assert names and names <= set(mt.nn.__all__)
    assert mt.nn.relu(mt.constant([-1.0, 2.0])).numpy().tolist() == [0.0, 2.0]


def test_exports_take_only_the_module_asked_for():
    top = _op_table.exports("")
    assert "add" in top and "reshape" in top
    assert "erf" not in top and "relu" not in top  # math.erf and nn.relu
