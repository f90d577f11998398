"""keras.utils under Keras's name: it only re-exports set_random_seed (random_seed.py) and
Progbar (progress_bar.py), which live in files named for what they hold."""

from .progress_bar import Progbar
from .random_seed import set_random_seed

__all__ = ["Progbar", "set_random_seed"]
