"""keras.utils.set_random_seed: one call that makes a training run repeatable."""

import random as _random

import numpy as _np
from .. import random

__all__ = ["set_random_seed"]


def set_random_seed(seed):
    """Seeds Python's ``random``, NumPy's global generator (which ``fit``'s shuffling and
    ``Dataset.shuffle`` without a seed draw from) and ``mt.random`` (which initializers
    draw from). Raises ValueError when ``seed`` is not an int, as Keras."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(
            f"Expected `seed` argument to be an integer. Received: seed={seed} (of type "
            f"{type(seed)})")
    _random.seed(seed)
    _np.random.seed(seed % 2**32)
    random.set_seed(seed)
