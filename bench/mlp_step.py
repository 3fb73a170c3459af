"""The yardstick's MLP training step (784-1024-1024-10 ReLU, cross-entropy, batch 256, SGD with
plain arrays) in nuvec and in PyTorch (CPU, 2 threads), timed in one run, interleaved.

    python bench/mlp_step.py
"""

import statistics
import time

import numpy as np

import nuvec as mx

SIZES, BATCH, LR = (784, 1024, 1024, 10), 256, 0.1


def nuvec_step():
    rng = np.random.default_rng(0)
    params = [
        (
            mx.array((rng.standard_normal((i, o)) * np.sqrt(2 / i)).astype(np.float32)),
            mx.zeros((o,)),
        )
        for i, o in zip(SIZES[:-1], SIZES[1:])
    ]
    x = mx.array(rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32))
    y = mx.array(rng.integers(0, SIZES[-1], BATCH).astype(np.int32))

    def loss(params):
        h = x
        for w, b in params[:-1]:
            h = mx.maximum(h @ w + b, 0.0)
        logits = h @ params[-1][0] + params[-1][1]
        picked = mx.take_along_axis(logits, y[:, None], axis=1)[:, 0]
        return mx.mean(mx.logsumexp(logits, axis=1) - picked)

    vg = mx.value_and_grad(loss)
    state = {"p": params}

    def step():
        l, g = vg(state["p"])
        state["p"] = [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(state["p"], g)]
        mx.eval(state["p"], l)

    return step


def torch_step():
    import torch

    torch.set_num_threads(2)
    rng = np.random.default_rng(0)
    params = []
    for i, o in zip(SIZES[:-1], SIZES[1:]):
        w = torch.tensor(
            (rng.standard_normal((i, o)) * np.sqrt(2 / i)).astype(np.float32), requires_grad=True
        )
        params.append((w, torch.zeros(o, requires_grad=True)))
    x = torch.tensor(rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32))
    y = torch.tensor(rng.integers(0, SIZES[-1], BATCH))

    def step():
        h = x
        for w, b in params[:-1]:
            h = torch.relu(h @ w + b)
        logits = h @ params[-1][0] + params[-1][1]
        loss = torch.nn.functional.cross_entropy(logits, y)
        grads = torch.autograd.grad(loss, [t for p in params for t in p])
        with torch.no_grad():
            for t, g in zip([t for p in params for t in p], grads):
                t -= LR * g

    return step


def main():
    steps = {"nuvec": nuvec_step(), "torch": torch_step()}
    times = {k: [] for k in steps}
    for f in steps.values():
        f(), f()
    for _ in range(15):
        for k, f in steps.items():
            t = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:6s} {v * 1e3:7.2f} ms/step  {1 / v:6.1f} steps/s")
    print(f"nuvec / torch time ratio: {med['nuvec'] / med['torch']:.2f}")


if __name__ == "__main__":
    main()
