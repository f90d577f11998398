"""The loss a compiled model trains on, with the scaling a replica's share needs."""

from . import losses
from .._minitensor import reduce_sum

__all__ = ["CompiledLoss"]


class CompiledLoss:
    """Wraps the Loss ``compile`` resolved (losses.get)."""

    def __init__(self, identifier):
        self.loss = losses.get(identifier)

    def replica_loss(self, y_true, y_pred, global_batch_size):
        """Returns this slice's share of the batch loss: the sum of its values weighted so
        that the replicas' shares add up to the loss of the whole batch ("sum" reduction:
        the plain sum; otherwise the sum over the batch size, a function returning one
        value for its slice counting it once per example)."""
        values = self.loss.call(y_true, y_pred)
        total = reduce_sum(values)
        if getattr(self.loss, "reduction", None) == "sum":
            return total
        size = 1
        for d in values.shape:
            size *= d
        examples = y_pred.shape[0] if len(y_pred.shape) else 1
        if size == 0:
            return total
        return total * (examples / size) / float(global_batch_size)

    def batch_loss(self, y_true, y_pred):
        """Returns the loss of a whole batch, reduced as the Loss says, as a float."""
        return float(self.loss(y_true, y_pred))
