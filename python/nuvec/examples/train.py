"""Trains a small convolutional network the way an MLX notebook does: an ``nn.Module``,
``nn.value_and_grad``, ``optimizers.AdamW`` with a cosine schedule, a progress bar per epoch, the
held-out accuracy at the end, and a checkpoint of the weights and the optimizer state.

    python -m nuvec.examples.train                      # scikit-learn's digits (8x8, 1797 images)
    python -m nuvec.examples.train --data fashion-mnist # Debian's dataset-fashion-mnist (28x28)
    python -m nuvec.examples.train --plot curves.png    # loss and accuracy curves (matplotlib)
    python -m nuvec.launch -n 4 -m nuvec.examples.train --distributed  # data-parallel on 4 ranks
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import math
import os
import struct
import time
from functools import partial

import numpy as np
from tqdm import tqdm

import nuvec as mx
import nuvec.nn as nn
import nuvec.optimizers as optim
from nuvec.utils import tree_flatten

FASHION_DIR = "/usr/share/datasets/fashion-mnist"  # where Debian's package puts the IDX files


class ConvNet(nn.Module):
    """Two 3x3 convolutions with ReLU and max pooling, then two linear layers (channels last)."""

    def __init__(self, side: int, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        pooled = side // 2 if side <= 8 else side // 4  # digits pool once, 28x28 images twice
        self.twice = side > 8
        self.fc1 = nn.Linear(64 * pooled * pooled, 128)
        self.fc2 = nn.Linear(128, classes)
        self.dropout = nn.Dropout(0.25)

    def __call__(self, x):
        x = nn.relu(self.conv1(x))
        if self.twice:
            x = self.pool(x)
        x = self.pool(nn.relu(self.conv2(x)))
        x = self.dropout(nn.relu(self.fc1(x.reshape(x.shape[0], -1))))
        return self.fc2(x)


def load_digits_data(seed: int):
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(images))
    split = int(0.8 * len(images))
    train, test = order[:split], order[split:]
    return (images[train], labels[train]), (images[test], labels[test])


def _read_idx(path: str) -> np.ndarray:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = struct.unpack(f">{ndim}I", data[4 : 4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_fashion_data(directory: str):
    def pick(stem: str) -> str:
        for name in sorted(os.listdir(directory)):
            if name.startswith(stem):
                return os.path.join(directory, name)
        raise SystemExit(
            f"{stem}* not found in {directory}: install Debian's dataset-fashion-mnist"
        )

    def part(kind: str):
        images = _read_idx(pick(f"{kind}-images")).astype(np.float32) / 255.0
        return images, _read_idx(pick(f"{kind}-labels")).astype(np.int32)

    return part("train"), part("t10k")


def batches(x: np.ndarray, y: np.ndarray, size: int, rng: np.random.Generator | None):
    order = rng.permutation(len(x)) if rng is not None else np.arange(len(x))
    for i in range(0, len(x), size):
        idx = order[i : i + size]
        yield mx.array(x[idx][..., None]), mx.array(y[idx])


def accuracy(model: nn.Module, x: np.ndarray, y: np.ndarray) -> float:
    model.eval()
    right = sum(
        int(mx.sum(mx.argmax(model(xb), axis=1) == yb)) for xb, yb in batches(x, y, 512, None)
    )
    model.train()
    return right / len(x)


def save_checkpoint(directory: str, model: nn.Module, optimizer: optim.Optimizer) -> None:
    # Each file is written whole or not at all: nuvec's savers write a temporary file in the
    # same directory and rename it into place (csrc/io/output_file.cpp).
    os.makedirs(directory, exist_ok=True)
    model.save_weights(os.path.join(directory, "model.safetensors"))
    mx.save_safetensors(
        os.path.join(directory, "optimizer.safetensors"), dict(tree_flatten(optimizer.state))
    )


def weights_digest(model: nn.Module) -> str:
    """SHA-256 of the model's weights (names and bytes): equal on every rank of a data-parallel
    run."""
    h = hashlib.sha256()
    for name, w in tree_flatten(model.parameters()):
        h.update(name.encode() + np.array(w).tobytes())
    return h.hexdigest()


def plot(path: str, losses: list[float], accuracies: list[float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(range(1, len(losses) + 1), losses)
    left.set(xlabel="epoch", ylabel="training loss")
    right.plot(range(1, len(accuracies) + 1), accuracies)
    right.set(xlabel="epoch", ylabel="held-out accuracy")
    fig.tight_layout()
    fig.savefig(path)


def make_step(model: nn.Module, optimizer: optim.Optimizer, group=None, compiled: bool = True):
    """The training step ``step(x, y[, scale]) -> loss`` and the state it updates. With a
    ``group`` (data-parallel), each rank passes its share of the batch (``share``) and the step
    averages the gradients over the ranks: every rank applies the same update."""

    def loss_fn(model, x, y, scale=None):
        if scale is None:
            return nn.losses.cross_entropy(model(x), y, reduction="mean")
        # A rank's part of the batch's mean loss, times the group's size: averaged over the
        # ranks (nn.average_gradients), the gradients are those of the whole batch's mean.
        return nn.losses.cross_entropy(model(x), y, reduction="sum") * scale

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    # The step as MLX's examples write it: compiled, with the state it reads and updates (the
    # model's, the optimizer's and the random key) captured, so it is traced once and replayed.
    state = [model.state, optimizer.state, mx.random.state]

    def step(xb, yb, *scale):
        loss, grads = loss_and_grad(model, xb, yb, *scale)
        if group:
            grads = nn.average_gradients(grads, group)
            loss = mx.distributed.all_sum(loss, group=group) / group.size()
        optimizer.update(model, grads)
        return loss

    return (partial(mx.compile, inputs=state, outputs=state)(step) if compiled else step), state


def share(xb, yb, group=None):
    """The step's arguments: the whole batch, or with a group this rank's rows of it and the
    loss's scale (the group's size over the batch's)."""
    if group is None:
        return xb, yb
    n, rank, size = xb.shape[0], group.rank(), group.size()
    lo, hi = n * rank // size, n * (rank + 1) // size
    return xb[lo:hi], yb[lo:hi], mx.array(size / n, mx.float32)


def main(argv: list[str] | None = None) -> float:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", choices=("digits", "fashion-mnist"), default="digits")
    ap.add_argument(
        "--epochs", type=int, default=None, help="default: 12 (digits), 2 (fashion-mnist)"
    )
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="checkpoints", help="where the checkpoint is written")
    ap.add_argument(
        "--plot", metavar="PNG", help="write the loss and accuracy curves (needs matplotlib)"
    )
    ap.add_argument(
        "--min-accuracy", type=float, default=None, help="fail below this (digits: 0.98)"
    )
    ap.add_argument("--no-compile", action="store_true", help="run the step without mx.compile")
    ap.add_argument(
        "--distributed",
        action="store_true",
        help="data-parallel over the processes of mx.distributed.init() (start it with mpirun "
        "or python -m nuvec.launch): each rank takes its share of every batch",
    )
    args = ap.parse_args(argv)
    group = mx.distributed.init() if args.distributed else None
    rank, size = (group.rank(), group.size()) if group else (0, 1)

    if args.data == "digits":
        (x_train, y_train), (x_test, y_test) = load_digits_data(args.seed)
        epochs, floor = args.epochs or 12, 0.98
    else:
        (x_train, y_train), (x_test, y_test) = load_fashion_data(FASHION_DIR)
        epochs, floor = args.epochs or 2, 0.85
    floor = floor if args.min_accuracy is None else args.min_accuracy

    mx.random.seed(args.seed)
    model = ConvNet(side=x_train.shape[1])
    steps = epochs * math.ceil(len(x_train) / args.batch)
    optimizer = optim.AdamW(
        learning_rate=optim.cosine_decay(args.lr, steps, 1e-5), weight_decay=1e-4
    )

    step, state = make_step(model, optimizer, group, compiled=not args.no_compile)
    rng = np.random.default_rng(args.seed)
    losses, accuracies = [], []
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        total, seen, t0 = 0.0, 0, time.perf_counter()
        bar = tqdm(
            batches(x_train, y_train, args.batch, rng),
            total=math.ceil(len(x_train) / args.batch),
            desc=f"epoch {epoch}/{epochs}",
            unit="batch",
            leave=True,
            disable=rank > 0,
        )
        for xb, yb in bar:
            loss = step(*share(xb, yb, group))
            mx.eval(loss, state)
            total += loss.item() * xb.shape[0]
            seen += xb.shape[0]
            bar.set_postfix(
                loss=f"{total / seen:.4f}", img_per_s=f"{seen / (time.perf_counter() - t0):.0f}"
            )
        losses.append(total / seen)
        accuracies.append(accuracy(model, x_test, y_test))
        if rank == 0:
            bar.write(
                f"epoch {epoch}: loss {losses[-1]:.4f}, held-out accuracy {accuracies[-1]:.4f}"
            )
    elapsed = time.perf_counter() - start

    if group:
        print(f"rank {rank}/{size}: weights sha256 {weights_digest(model)}", flush=True)
    if rank > 0:  # rank 0 writes the checkpoint and reports
        return accuracies[-1]
    save_checkpoint(args.out, model, optimizer)
    if args.plot:
        plot(args.plot, losses, accuracies)
    final = accuracies[-1]
    print(
        f"held-out accuracy {final:.4f} on {len(x_test)} images after {epochs} epochs ({elapsed:.1f} s); "
        f"checkpoint in {args.out}/"
    )
    if final < floor:
        raise SystemExit(f"accuracy {final:.4f} below {floor}")
    return final


if __name__ == "__main__":
    main()
