"""The GPU guide's MirroredStrategy example, with tf replaced by mt: a Dense(1) model
built and compiled under strategy.scope() (its variables mirrored on every GPU, the CPU
without one), then trained data-parallel on y = 2x + 1. One card is split into two
virtual GPUs (ReductionToOneDevice); two cards all-reduce with NCCL."""

import numpy as np

import minitensor as mt

physical = mt.config.list_physical_devices("GPU")
if len(physical) == 1:
    mt.config.set_logical_device_configuration(
        physical[0], [mt.config.LogicalDeviceConfiguration(memory_limit=1024)] * 2)
mt.keras.utils.set_random_seed(1)
mt.debugging.set_log_sink(print)

# The guide's code
mt.debugging.set_log_device_placement(True)
gpus = mt.config.list_logical_devices('GPU')
strategy = mt.distribute.MirroredStrategy(gpus or None)
with strategy.scope():
  inputs = mt.keras.layers.Input(shape=(1,))
  predictions = mt.keras.layers.Dense(1)(inputs)
  model = mt.keras.models.Model(inputs=inputs, outputs=predictions)
  model.compile(loss='mse',
                optimizer=mt.keras.optimizers.SGD(learning_rate=0.2))

# Data-parallel training: each global batch of 16 is split across the replicas.
mt.debugging.set_log_device_placement(False)
print("Number of devices:", strategy.num_replicas_in_sync)
print("Cross-device ops:", strategy.cross_device_ops)
x = np.linspace(0, 1, 64, dtype=np.float32).reshape(-1, 1)
history = model.fit(x, 2 * x + 1, epochs=150, batch_size=16, shuffle=False, verbose=0)
kernel, bias = model.get_weights()
print(f"kernel {kernel[0, 0]:.2f}, bias {bias[0]:.2f}, loss below 1e-3: "
      f"{history.history['loss'][-1] < 1e-3}")
