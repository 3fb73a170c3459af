"""bench/compile.py's training step: bench/nn_step.py's MLP with Adam in nuvec (uncompiled, and
compiled with model and optimizer state as MLX's docs compile a step) and in PyTorch (eager, and
torch.compile of the model and of the optimizer's step), with a NumPy float64 reference."""

import functools
import math

import numpy as np

from nn_step import MLP, MLP_BATCH, _data, mlp_nuvec, mlp_torch

LR, BETAS, EPS = 1e-3, (0.9, 0.999), 1e-8


def problem():
    """Weights (uniform in +-1/sqrt(fan_in), as both frameworks initialise), a batch, labels."""
    rng = np.random.default_rng(0)
    params = []
    for fan_in, fan_out in zip(MLP, MLP[1:]):
        k = 1 / math.sqrt(fan_in)
        w = rng.uniform(-k, k, (fan_out, fan_in)).astype(np.float32)
        params.append((w, rng.uniform(-k, k, fan_out).astype(np.float32)))
    return (params, *_data(MLP_BATCH, (MLP[0],), rng))


def _loss_and_grads(ps, x, y):
    acts = [x]
    for i, (w, b) in enumerate(ps):
        h = acts[-1] @ w.T + b
        acts.append(np.maximum(h, 0) if i < len(ps) - 1 else h)
    z = acts[-1] - acts[-1].max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    rows = np.arange(len(y))
    d = np.exp(logp)
    d[rows, y] -= 1
    d /= len(y)
    grads = []
    for i in reversed(range(len(ps))):
        grads.append((d.T @ acts[i], d.sum(0)))
        if i:
            d = (d @ ps[i][0]) * (acts[i] > 0)
    return -logp[rows, y].mean(), grads[::-1]


def reference_losses(params, x, y, bias_correction):
    """The loss before and after one Adam step, in float64."""
    ps = [(w.astype(np.float64), b.astype(np.float64)) for w, b in params]
    x = x.astype(np.float64)
    loss0, grads = _loss_and_grads(ps, x, y)
    b1, b2 = BETAS
    c1, c2 = (1 - b1, 1 - b2) if bias_correction else (1, 1)

    def adam(p, g):
        m, v = (1 - b1) * g / c1, (1 - b2) * g * g / c2
        return p - LR * m / (np.sqrt(v) + EPS)

    stepped = [tuple(adam(p, g) for p, g in zip(pl, gl)) for pl, gl in zip(ps, grads)]
    return np.array([loss0, _loss_and_grads(stepped, x, y)[0]])


def nuvec_step(L, params, x, y, compiled):
    """A callable running one step and returning its loss."""
    import nuvec.nn as nn
    import nuvec.optimizers as optim

    mx = L.mx
    model = mlp_nuvec()
    model.load_weights(
        [
            (f"layers.{2 * i}.{name}", mx.array(v))
            for i, (w, b) in enumerate(params)
            for name, v in (("weight", w), ("bias", b))
        ]
    )
    optimizer = optim.Adam(learning_rate=LR, betas=list(BETAS), eps=EPS)
    loss_and_grad = nn.value_and_grad(
        model, lambda m, x, y: nn.losses.cross_entropy(m(x), y, reduction="mean")
    )
    state = [model.state, optimizer.state]

    def step(x, y):
        loss, grads = loss_and_grad(model, x, y)
        optimizer.update(model, grads)
        return loss

    if compiled:
        step = functools.partial(L.compile, inputs=state, outputs=state)(step)
    X, Y = mx.array(x), mx.array(y)

    def run():
        loss = step(X, Y)
        mx.eval(loss, state)
        return loss

    return run


def torch_step(L, params, x, y, compiled):
    """The same in PyTorch; compiled: the model and the optimizer's step (PyTorch's recipe)."""
    torch = L.torch
    model = mlp_torch()
    with torch.no_grad():
        for i, (w, b) in enumerate(params):
            model[2 * i].weight.copy_(torch.from_numpy(w))
            model[2 * i].bias.copy_(torch.from_numpy(b))
    optimizer = torch.optim.Adam(model.parameters(), lr=LR, betas=BETAS, eps=EPS)
    forward, update = (
        (L.compile(model), L.compile(optimizer.step)) if compiled else (model, optimizer.step)
    )
    X, Y = torch.from_numpy(x), torch.from_numpy(y)

    def run():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(forward(X), Y)
        loss.backward()
        update()
        return loss

    return run
