"""The nested structures a dataset element may be (tf.nest's rules, as far as datasets
need them): a tuple (or namedtuple) or a dict of components, nested at will; anything else,
a list included, is one component. Dict keys are visited in sorted order.

    flat = flatten(({"a": 1, "b": 2}, 3))        # [1, 2, 3]
    pack_like(({"a": 0, "b": 0}, 0), [4, 5, 6])  # ({"a": 4, "b": 5}, 6)
"""

__all__ = ["flatten", "flatten_up_to", "is_structure", "map_structure", "pack_like"]


def is_structure(value):
    """Returns whether ``value`` is a tuple or a dict, which hold components."""
    return isinstance(value, (tuple, dict))


def flatten(structure):
    """Returns the components of ``structure`` in order, as a list."""
    if isinstance(structure, dict):
        return [c for key in sorted(structure) for c in flatten(structure[key])]
    if isinstance(structure, tuple):
        return [c for item in structure for c in flatten(item)]
    return [structure]


def flatten_up_to(structure, value):
    """Returns the parts of ``value`` where ``structure`` has its components (a part may
    itself be a list or tuple: a shape); ValueError when ``value`` lacks a part."""
    if isinstance(structure, dict):
        if not isinstance(value, dict) or sorted(value) != sorted(structure):
            raise ValueError(f"{value!r} does not match the structure {structure!r}")
        return [c for key in sorted(structure) for c in flatten_up_to(structure[key],
                                                                      value[key])]
    if isinstance(structure, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(structure):
            raise ValueError(f"{value!r} does not match the structure {structure!r}")
        return [c for s, v in zip(structure, value) for c in flatten_up_to(s, v)]
    return [value]


def pack_like(structure, flat):
    """Returns ``flat`` (a list) arranged as ``structure``; raises ValueError when the
    numbers of components differ."""
    items = iter(flat)
    packed = _pack(structure, items)
    if next(items, items) is not items:
        raise ValueError(f"pack_like: more components than the structure {structure!r} holds")
    return packed


def _pack(structure, items):
    if isinstance(structure, dict):
        values = {key: _pack(structure[key], items) for key in sorted(structure)}
        return {key: values[key] for key in structure}
    if isinstance(structure, tuple):
        packed = [_pack(item, items) for item in structure]
        return type(structure)(*packed) if hasattr(structure, "_fields") else tuple(packed)
    try:
        return next(items)
    except StopIteration:
        raise ValueError("pack_like: fewer components than the structure holds") from None


def map_structure(fn, structure):
    """Returns ``structure`` with ``fn`` applied to each component."""
    return pack_like(structure, [fn(c) for c in flatten(structure)])
