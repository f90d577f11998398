"""The graph of a functional Model: the layer calls recorded on KerasTensors from its
inputs to its outputs, put in an order that runs each call after those it reads."""

from .keras_tensor import KerasTensor

__all__ = ["check_keras_tensors", "ordered_nodes", "run_nodes"]


def check_keras_tensors(values, argument):
    """Returns ``values`` (a KerasTensor or a list or tuple of them) as a list; ValueError,
    with Keras's message, for anything else."""
    flat = list(values) if isinstance(values, (list, tuple)) else [values]
    for value in flat:
        if not isinstance(value, KerasTensor):
            raise ValueError(
                f"All `{argument}` values must be KerasTensors. Received: {argument}={values} "
                f"including invalid value {value} of type {type(value)}")
    return flat


def ordered_nodes(inputs, outputs):
    """Returns the nodes between ``inputs`` and ``outputs`` (lists of KerasTensors), each
    after the nodes it reads. Raises ValueError when an output depends on an Input that is
    not among ``inputs`` (a disconnected graph)."""
    known = {id(t) for t in inputs}
    order, visited = [], set()

    def visit(tensor):
        if id(tensor) in known or id(tensor) in visited:
            return
        node = tensor.node
        if node is None or node.inputs is None:
            raise ValueError(
                f"Graph disconnected: cannot obtain value for {tensor!r} (made by layer "
                f"'{node.layer.name if node else '?'}'): it is not among the model's inputs")
        visited.add(id(tensor))
        for parent in node.parents:
            visit(parent)
        order.append(node)

    for output in outputs:
        visit(output)
    return order


def run_nodes(nodes, inputs, values):
    """Returns the value of each node's output, given ``values`` for ``inputs``, as a dict
    keyed by the KerasTensor's id."""
    computed = {id(t): v for t, v in zip(inputs, values)}
    for node in nodes:
        if isinstance(node.inputs, (list, tuple)):
            args = [computed[id(t)] for t in node.inputs]
        else:
            args = computed[id(node.inputs)]
        computed[id(node.output)] = node.layer(args, **node.kwargs)
    return computed
