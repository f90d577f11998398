"""The table ``Model.summary()`` prints, in Keras 3's layout: each layer's name and type,
output shape (known from a symbolic call, else "?") and parameter count (18,496), then
the totals with their size as float32. A cell wider than its column wraps at spaces, as
Keras's table does ("average_pooling2d" above "(AveragePooling2D)")."""

import textwrap as _textwrap

__all__ = ["summary_lines"]

_WIDTHS = (33, 24, 15)


def _rule(left, fill, middle, right):
    return left + middle.join(fill * w for w in _WIDTHS) + right


def _row(edge, name, shape, params):
    return (f"{edge} {name:<{_WIDTHS[0] - 2}} {edge} {shape:<{_WIDTHS[1] - 2}} {edge} "
            f"{params:>{_WIDTHS[2] - 2}} {edge}")


def _rows(name, shape, params):
    """Returns the lines of one layer's row, its cells wrapped to their columns."""
    cells = [_textwrap.wrap(text, width - 2) or [""]
             for text, width in zip((name, shape, params), _WIDTHS)]
    height = max(len(c) for c in cells)
    cells = [c + [""] * (height - len(c)) for c in cells]
    return [_row("│", *line) for line in zip(*cells)]


def _size(params):
    size, units = params * 4.0, ["B", "KB", "MB", "GB"]
    while size >= 1024 and len(units) > 1:
        size, units = size / 1024, units[1:]
    return f"{size:.2f} {units[0]}"


def summary_lines(model):
    """Returns the lines of ``model``'s summary."""
    lines = [f'Model: "{model.name}"', _rule("┏", "━", "┳", "┓"),
             _row("┃", "Layer (type)", "Output Shape", "Param #"), _rule("┡", "━", "╇", "┩")]
    layers = model.layers
    for i, layer in enumerate(layers):
        shape = getattr(layer, "_output_shape", None)
        params = f"{layer.count_params():,}" if layer.built else "0 (unbuilt)"
        lines += _rows(f"{layer.name} ({type(layer).__name__})",
                       "?" if shape is None else str(shape), params)
        if i + 1 < len(layers):
            lines.append(_rule("├", "─", "┼", "┤"))
    lines.append(_rule("└", "─", "┴", "┘"))
    total = sum(w.numpy().size for w in model.weights)
    trainable = sum(w.numpy().size for w in model.trainable_weights)
    for label, count in [("Total", total), ("Trainable", trainable),
                         ("Non-trainable", total - trainable)]:
        lines.append(f" {label} params: {count:,} ({_size(count)})")
    return lines
