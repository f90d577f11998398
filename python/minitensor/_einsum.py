"""tf.einsum through transpose, reshape, reduce_sum, multiply and (batched) matmul, so it
differentiates through a GradientTape and an mt.function records it.

    mt.einsum("ij,jk->ik", a, b)                # matmul
    mt.einsum("bhqd,bhkd->bhqk", q, k)          # attention scores: a batched matmul
    mt.einsum("...ij,...jk->...ik", a, b)       # "..." stands for leading dimensions

Operands are contracted left to right, two at a time: labels that no later operand and
not the output needs are summed first, then the labels both share become the batch
(kept) or the inner (summed) dimensions of one matmul. Without "->" the output is the
ellipsis, then the labels that appear once, in alphabetical order. Not supported: a label
repeated within one operand (a diagonal such as "ii->i"), which raises UnimplementedError.
"""

import math as _math
import re as _re

from . import _minitensor as _mt
from . import errors as _errors
from ._converted_ops import matmul
from ._constant_op import convert_to_tensor

__all__ = ["einsum"]

_TERM = _re.compile(r"^[a-zA-Z]*(\.\.\.)?[a-zA-Z]*$")


def _invalid(message):
    return _errors.InvalidArgumentError(None, None, f"[Einsum] {message}")


def _parse(equation, count):
    """Returns (the inputs' terms, the output's term or None) of ``equation``, spaces
    removed; ValueError, with TensorFlow's messages, for a malformed equation."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if any(not _TERM.match(t) for t in terms + ([output] if arrow else [])):
        raise ValueError(f"Subscripts have incorrect format: {equation}")
    if len(terms) != count:
        raise ValueError(f'Got {count} inputs for equation "{equation}", expecting '
                         f"{len(terms)}")
    if not arrow:
        return terms, None
    letters = output.replace("...", "")
    for label in letters:
        if letters.count(label) > 1:
            raise ValueError("Output subscripts contain a label appearing more than once: "
                             f"{equation}")
        if all(label not in t for t in terms):
            raise ValueError(f"Output subscripts contain the label {label} not present in "
                             "the input subscripts.")
    return terms, output


def _labels(term, shape, index):
    """Returns the labels of one operand's dimensions: letters, and "..k" for the k-th
    dimension (counted from the right) that its ellipsis covers."""
    letters = term.replace("...", "")
    if "..." not in term:
        if len(letters) != len(shape):
            raise _invalid(f"Expected input {index} to have rank {len(letters)} but got: "
                           f"{len(shape)}")
        return list(letters)
    covered = len(shape) - len(letters)
    if covered < 0:
        raise _invalid(f"Expected input {index} to have rank at least {len(letters)} but "
                       f"got: {len(shape)}")
    head, tail = term.split("...")
    return list(head) + [f"..{covered - i}" for i in range(covered)] + list(tail)


def _output_labels(output, all_labels):
    ellipsis = sorted({lab for labels in all_labels for lab in labels if lab.startswith("..")},
                      key=lambda lab: -int(lab[2:]))
    if output is None:
        flat = [lab for labels in all_labels for lab in labels if not lab.startswith("..")]
        return ellipsis + sorted(lab for lab in set(flat) if flat.count(lab) == 1)
    head, _, tail = output.partition("...")
    return list(head) + (ellipsis if "..." in output else []) + list(tail)


def _sizes(operands, all_labels):
    """Returns each label's size; InvalidArgumentError where operands disagree (an
    ellipsis dimension of size 1 broadcasts)."""
    sizes = {}
    for index, (x, labels) in enumerate(zip(operands, all_labels)):
        if len(set(labels)) != len(labels):
            raise _errors.UnimplementedError(
                None, None, f"[Einsum] input {index} repeats a label (a diagonal); "
                "minitensor's einsum does not support it")
        for axis, (label, size) in enumerate(zip(labels, x.shape)):
            known = sizes.setdefault(label, size)
            if known != size and not (label.startswith("..") and 1 in (known, size)):
                raise _invalid(f"Expected dimension {known} at axis {axis} of the input "
                               f"shaped {list(x.shape)} but got dimension {size}")
            sizes[label] = max(known, size)
    return sizes


def _summed(x, labels, keep):
    """Sums the dimensions of ``x`` whose labels are not in ``keep``."""
    axes = [i for i, lab in enumerate(labels) if lab not in keep]
    if not axes:
        return x, labels
    return _mt.reduce_sum(x, axes), [lab for lab in labels if lab in keep]


def _arranged(x, labels, order, sizes):
    """Returns ``x`` transposed to ``order`` (its labels), broadcast to ``sizes``."""
    if labels != order:
        x = _mt.transpose(x, [labels.index(lab) for lab in order])
    target = [sizes[lab] for lab in order]
    return x if list(x.shape) == target else _mt.broadcast_to(x, target)


def _contract(a, a_labels, b, b_labels, keep, sizes):
    """Returns (a and b contracted, its labels): the labels in ``keep`` stay."""
    a, a_labels = _summed(a, a_labels, keep | set(b_labels))
    b, b_labels = _summed(b, b_labels, keep | set(a_labels))
    batch = [lab for lab in a_labels if lab in b_labels and lab in keep]
    inner = [lab for lab in a_labels if lab in b_labels and lab not in keep]
    free_a = [lab for lab in a_labels if lab not in b_labels]
    free_b = [lab for lab in b_labels if lab not in a_labels]
    dims = [sizes[lab] for lab in batch + free_a + free_b]
    a = _arranged(a, a_labels, batch + free_a + inner, sizes)
    b = _arranged(b, b_labels, batch + inner + free_b, sizes)
    if not inner:  # an element-wise or outer product: broadcasting multiply
        kept_a = len(batch) + len(free_a)
        a = _mt.reshape(a, dims[:kept_a] + [1] * len(free_b))
        b = _mt.reshape(b, dims[:len(batch)] + [1] * len(free_a) + dims[kept_a:])
        return a * b, batch + free_a + free_b

    def product(labels):
        return _math.prod(sizes[lab] for lab in labels)

    rows, depth, cols = product(free_a), product(inner), product(free_b)
    if batch:
        a = _mt.reshape(a, [product(batch), rows, depth])
        b = _mt.reshape(b, [product(batch), depth, cols])
    else:
        a, b = _mt.reshape(a, [rows, depth]), _mt.reshape(b, [depth, cols])
    return _mt.reshape(matmul(a, b), dims), batch + free_a + free_b


def einsum(equation, *inputs, **kwargs):
    """Returns the sum of products that ``equation`` describes over ``inputs``
    (tf.einsum): "ij,jk->ik" is a matmul, "ij->ji" a transpose, "ij->" a sum. Raises
    ValueError, with TensorFlow's messages, for a malformed equation or the wrong number
    of inputs, and InvalidArgumentError for ranks or dimensions that do not fit it."""
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keyword argument(s): {kwargs}")
    operands = [convert_to_tensor(x) for x in inputs]
    terms, output = _parse(equation, len(operands))
    all_labels = [_labels(t, x.shape, i) for i, (t, x) in enumerate(zip(terms, operands))]
    out_labels = _output_labels(output, all_labels)
    sizes = _sizes(operands, all_labels)
    result, labels = operands[0], all_labels[0]
    for index in range(1, len(operands)):
        later = {lab for rest in all_labels[index + 1:] for lab in rest}
        result, labels = _contract(result, labels, operands[index], all_labels[index],
                                   set(out_labels) | later, sizes)
    result, labels = _summed(result, labels, set(out_labels))
    return _arranged(result, labels, out_labels, sizes)
