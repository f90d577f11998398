"""The values a strategy gives each replica (tf.distribute's values)."""

__all__ = ["PerReplica"]


class PerReplica:
    """One value per replica (tf.distribute's PerReplica): ``run`` gives replica i
    ``values[i]`` for an argument of this type, and returns its results as one."""

    def __init__(self, values):
        self.values = tuple(values)

    def __repr__(self):
        parts = ",\n  ".join(f"{i}: {v!r}" for i, v in enumerate(self.values))
        return "PerReplica:{\n  " + parts + "\n}"
