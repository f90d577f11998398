"""The GPU guide's "Using a single GPU on a multi-GPU system": with soft placement off,
asking for /device:GPU:2 on a machine without it is an error; with soft placement on (the
default, as in TensorFlow 2), the same ops run on the best existing device instead."""
import minitensor as mt

mt.debugging.set_log_device_placement(True)
mt.debugging.set_log_sink(print)

mt.config.set_soft_device_placement(False)  # the guide's first run has it off
try:
    # Specify an invalid GPU device
    with mt.device("/device:GPU:2"):
        a = mt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = mt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        c = mt.matmul(a, b)
except mt.errors.NotFoundError as e:
    print(e)

mt.config.set_soft_device_placement(True)
with mt.device("/device:GPU:2"):
    # Creates some tensors
    a = mt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = mt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = mt.matmul(a, b)
    print(c)
