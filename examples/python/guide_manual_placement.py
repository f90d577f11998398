"""The GPU guide's "Manual device placement": a and b are created under /CPU:0 and the
matmul is left unscoped, so it runs on the best device (GPU:0 when there is one, else
CPU:0) and its inputs are copied there."""
import minitensor as mt

mt.debugging.set_log_device_placement(True)
mt.debugging.set_log_sink(print)

# Place tensors on the CPU
with mt.device("/CPU:0"):
    a = mt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = mt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

# Run on the GPU
c = mt.matmul(a, b)
print(c)

print("a is on", a.device)
print("b is on", b.device)
print("c is on", c.device)
