"""Trains a two-hidden-layer network on scikit-learn's bundled handwritten digits (8x8 images,
1797 samples) with plain arrays and `value_and_grad`, printing progress each epoch and the
held-out accuracy at the end.

    python -m nuvec.examples.digits
"""

import time

import numpy as np
from sklearn.datasets import load_digits

import nuvec as mx

HIDDEN, EPOCHS, BATCH, LR, MOMENTUM = 128, 20, 32, 0.05, 0.9


def init_params(rng, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.normal(0.0, np.sqrt(2.0 / fan_in), (fan_in, fan_out)).astype(np.float32)
        params.append({"w": mx.array(w), "b": mx.zeros((fan_out,))})
    return params


def forward(params, x):
    for layer in params[:-1]:
        x = mx.maximum(x @ layer["w"] + layer["b"], 0.0)
    last = params[-1]
    return x @ last["w"] + last["b"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    # Cross-entropy: logsumexp minus the logit of the right class.
    picked = mx.take_along_axis(logits, mx.reshape(y, (-1, 1)), axis=1)
    return mx.mean(mx.logsumexp(logits, axis=1) - mx.reshape(picked, (-1,)))


def accuracy(params, x, y):
    return float(mx.mean(mx.argmax(forward(params, x), axis=1) == y).item())


def main():
    digits = load_digits()
    data = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(data))
    split = int(0.8 * len(data))
    train, test = order[:split], order[split:]
    x_train, y_train = mx.array(data[train]), mx.array(labels[train])
    x_test, y_test = mx.array(data[test]), mx.array(labels[test])

    params = init_params(rng, [64, HIDDEN, HIDDEN, 10])
    velocity = mx.utils.tree_map(mx.zeros_like, params)
    step = mx.value_and_grad(loss_fn)
    start = time.perf_counter()
    for epoch in range(1, EPOCHS + 1):
        perm = rng.permutation(len(train))
        total = 0.0
        for i in range(0, len(train), BATCH):
            idx = mx.array(perm[i : i + BATCH])
            loss, grads = step(params, x_train[idx], y_train[idx])
            # SGD with momentum, written with tree_map.
            velocity = mx.utils.tree_map(lambda v, g: MOMENTUM * v + g, velocity, grads)
            params = mx.utils.tree_map(lambda p, v: p - LR * v, params, velocity)
            mx.eval(params, velocity, loss)
            total += loss.item() * len(idx)
        print(
            f"epoch {epoch:2d}  loss {total / len(train):.4f}  "
            f"train acc {accuracy(params, x_train, y_train):.3f}  "
            f"test acc {accuracy(params, x_test, y_test):.3f}"
        )
    elapsed = time.perf_counter() - start
    final = accuracy(params, x_test, y_test)
    print(
        f"held-out accuracy {final:.4f} on {len(test)} digits after {EPOCHS} epochs ({elapsed:.1f} s)"
    )
    if final < 0.95:
        raise SystemExit("accuracy below 95%")


if __name__ == "__main__":
    main()
