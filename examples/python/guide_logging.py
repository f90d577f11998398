"""The GPU guide's first example: log where each op runs, multiply two constants and print
the product. With a GPU every op runs on GPU:0; without one, on CPU:0."""
import minitensor as mt

print(f"Num GPUs Available: {len(mt.config.list_physical_devices('GPU'))}")
mt.debugging.set_log_device_placement(True)
mt.debugging.set_log_sink(print)

# Create some tensors
a = mt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = mt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
c = mt.matmul(a, b)

print(c)
