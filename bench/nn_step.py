"""Training steps written with layers, in nuvec (nuvec.nn + nuvec.optimizers) and in PyTorch
(torch.nn + torch.optim, CPU, 2 threads), timed in one run, each framework in processes of its
own, alternating (medians of the rounds' medians):

- mlp: the yardstick's `mlp_train_step_nn` (784-1024-1024-10 ReLU MLP, batch 256, cross-entropy,
  SGD);
- cnn: the main job's network on 28x28 images (two 3x3 convolutions 1->32->64 with ReLU and 2x2
  max pooling, 3136->128->10, batch 64, cross-entropy, AdamW).

    PYTHONPATH=$PWD/python python bench/nn_step.py [--reps 15] [--rounds 3]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

import nuvec as mx
import nuvec.nn as nn
import nuvec.optimizers as optim

MLP, MLP_BATCH, CNN_BATCH = (784, 1024, 1024, 10), 256, 64


def _data(batch, shape, rng):
    return rng.standard_normal((batch, *shape)).astype(np.float32), rng.integers(0, 10, batch)


def nuvec_step(model, optimizer, x, y):
    step = nn.value_and_grad(
        model, lambda m, x, y: nn.losses.cross_entropy(m(x), y, reduction="mean")
    )
    X, Y = mx.array(x), mx.array(y)

    def run():
        loss, grads = step(model, X, Y)
        optimizer.update(model, grads)
        mx.eval(loss, model.parameters(), optimizer.state)

    return run


def torch_step(model, optimizer, x, y):
    import torch

    X, Y = torch.from_numpy(x), torch.from_numpy(y)

    def run():
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(X), Y).backward()
        optimizer.step()

    return run


def mlp_nuvec():
    """The MLP in nuvec (784-1024-1024-10, ReLU)."""
    return nn.Sequential(
        nn.Linear(MLP[0], MLP[1]),
        nn.ReLU(),
        nn.Linear(MLP[1], MLP[2]),
        nn.ReLU(),
        nn.Linear(MLP[2], MLP[3]),
    )


def mlp_torch():
    """The same MLP in PyTorch."""
    import torch

    return torch.nn.Sequential(
        torch.nn.Linear(MLP[0], MLP[1]),
        torch.nn.ReLU(),
        torch.nn.Linear(MLP[1], MLP[2]),
        torch.nn.ReLU(),
        torch.nn.Linear(MLP[2], MLP[3]),
    )


def mlp_pair(rng):
    import torch

    x, y = _data(MLP_BATCH, (MLP[0],), rng)
    tl = mlp_torch()
    return (
        nuvec_step(mlp_nuvec(), optim.SGD(learning_rate=0.01), x, y),
        torch_step(tl, torch.optim.SGD(tl.parameters(), lr=0.01), x, y),
    )


def cnn_pair(rng):
    import torch

    from nuvec.examples.train import ConvNet

    x, y = _data(CNN_BATCH, (28, 28, 1), rng)
    tm = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(3136, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 10),
    )
    tx = np.ascontiguousarray(x.transpose(0, 3, 1, 2))  # NCHW, PyTorch's native layout
    return (
        nuvec_step(ConvNet(side=28), optim.AdamW(learning_rate=1e-3), x, y),
        torch_step(tm, torch.optim.AdamW(tm.parameters(), lr=1e-3, foreach=True), tx, y),
    )


def _time_one(framework, reps):
    """Medians of each step for one framework, in this process."""
    import torch

    torch.set_num_threads(2)
    rng = np.random.default_rng(0)
    out = {}
    for name, make in STEPS:
        f = dict(zip(("nuvec", "torch"), make(rng)))[framework]
        for _ in range(3):
            f()
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        out[name] = statistics.median(times)
    return out


STEPS = (("mlp_train_step_nn", mlp_pair), ("cnn_train_step (28x28, batch 64)", cnn_pair))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15, help="steps timed per round")
    ap.add_argument("--rounds", type=int, default=3, help="alternating processes per framework")
    ap.add_argument("--one", choices=("nuvec", "torch"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_time_one(args.one, args.reps)))
        return
    # Each framework runs in processes of its own, alternating: in one process, PyTorch's OpenMP
    # workers keep spinning after its step and take the two cores from the next nuvec step.
    runs = {"nuvec": [], "torch": []}
    for _ in range(args.rounds):
        for fw in runs:
            cmd = [sys.executable, __file__, "--one", fw, "--reps", str(args.reps)]
            runs[fw].append(
                json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
            )
    print("| step | nuvec | torch | torch / nuvec time (>1: nuvec faster) |")
    print("|---|---|---|---|")
    for name, _ in STEPS:
        med = {fw: statistics.median(r[name] for r in rs) for fw, rs in runs.items()}
        print(
            f"| {name} | {med['nuvec'] * 1e3:.2f} ms | {med['torch'] * 1e3:.2f} ms | "
            f"{med['torch'] / med['nuvec']:.2f} |"
        )


if __name__ == "__main__":
    main()
