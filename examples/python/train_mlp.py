"""Trains a two-layer MLP classifier with mt.GradientTape and mt.keras.optimizers.Adam on a
synthetic dataset made here (four Gaussian blobs in 2-D), as examples/train_mlp.cc does.
Prints the loss per epoch and the accuracy; exits 1 below 95%. An argument (CPU or GPU)
picks the device."""

import sys

import numpy as np

import minitensor as mt

POINTS, CLASSES, HIDDEN, BATCH, EPOCHS = 4096, 4, 64, 128, 8


def make_blobs():
    rng = np.random.default_rng(7)
    y = np.arange(POINTS, dtype=np.int32) % CLASSES
    centres = np.stack([np.where(y & 1, 2.0, -2.0), np.where(y & 2, 2.0, -2.0)], axis=1)
    return (centres + rng.normal(0, 0.7, (POINTS, 2))).astype(np.float32), y


def glorot(fan_in, fan_out, seed):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return mt.Variable(mt.random.stateless_uniform([fan_in, fan_out], [seed, 1], -limit, limit))


def main(device):
    xs, ys = make_blobs()
    with mt.device(f"/{device}:0") if device else mt.device("/"):
        x, y = mt.constant(xs), mt.constant(ys)
        w1, b1 = glorot(2, HIDDEN, 1), mt.Variable(mt.zeros([HIDDEN]))
        w2, b2 = glorot(HIDDEN, CLASSES, 2), mt.Variable(mt.zeros([CLASSES]))
        params = [w1, b1, w2, b2]
        adam = mt.keras.optimizers.Adam(learning_rate=0.01)

        def forward(inputs):
            h = mt.nn.relu(mt.nn.bias_add(inputs @ w1, b1))
            return mt.nn.bias_add(h @ w2, b2)

        for epoch in range(1, EPOCHS + 1):
            total = 0.0
            for start in range(0, POINTS, BATCH):
                xb, yb = x[start:start + BATCH], y[start:start + BATCH]
                with mt.GradientTape() as tape:
                    loss = mt.reduce_mean(mt.nn.sparse_softmax_cross_entropy_with_logits(
                        labels=yb, logits=forward(xb)))
                grads = tape.gradient(loss, params)
                adam.apply_gradients(zip(grads, params))
                total += float(loss)
            print(f"epoch {epoch}: loss {total / (POINTS // BATCH):.4f}")
        hits = mt.equal(mt.argmax(forward(x), axis=1, output_type=mt.int32), y)
        accuracy = float(mt.reduce_mean(mt.cast(hits, mt.float32)))
    print(f"accuracy {accuracy:.4f} on {w1.device}")
    return 0 if accuracy >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
