"""tf.scatter_nd, tf.tensor_scatter_nd_update and tf.tensor_scatter_nd_add over the op table's
ScatterNd, TensorScatterUpdate and TensorScatterAdd rows, converting their arguments as
TensorFlow does: indices to int32 (or as given), the updates to the tensor's dtype, the
shape to Python ints (read on the host from a tensor).

    mt.scatter_nd([[4], [3], [1], [7]], [9, 10, 11, 12], [8])   # [0, 11, 0, 10, 9, 0, 0, 12]
"""

from . import _minitensor as _mt
from ._constant_op import _dims, convert_to_tensor

__all__ = ["scatter_nd", "tensor_scatter_nd_add", "tensor_scatter_nd_update"]


def scatter_nd(indices, updates, shape, name=None):
    """Returns zeros of ``shape`` with ``updates`` added at ``indices`` (rows of indices into
    its first dimensions; duplicates add). InvalidArgumentError, with TensorFlow's message,
    for a row outside the shape."""
    del name
    return _mt.scatter_nd(convert_to_tensor(indices), convert_to_tensor(updates),
                          _dims(shape, "scatter_nd"))


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """Returns a copy of ``tensor`` with the slices ``indices`` name replaced by ``updates``
    (converted to its dtype); of duplicate rows the last wins, on a GPU too."""
    del name
    tensor = convert_to_tensor(tensor)
    return _mt.tensor_scatter_nd_update(tensor, convert_to_tensor(indices),
                                        convert_to_tensor(updates, tensor.dtype))


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """Returns a copy of ``tensor`` with ``updates`` (converted to its dtype) added into the
    slices ``indices`` name; duplicates add."""
    del name
    tensor = convert_to_tensor(tensor)
    return _mt.tensor_scatter_nd_add(tensor, convert_to_tensor(indices),
                                     convert_to_tensor(updates, tensor.dtype))
