"""Float64 NumPy references of the optimizers' documented update rules (MLX's docs), one
parameter at a time, and the nested trees the optimizer tests run them over."""

import math

import numpy as np


def sgd(kw, lr, t, g, p, s):
    mu, wd = kw.get("momentum", 0.0), kw.get("weight_decay", 0.0)
    damp, nesterov = kw.get("dampening", 0.0), kw.get("nesterov", False)
    g = g + wd * p
    if mu <= 0:
        return p - lr * g
    s["v"] = mu * s["v"] + (1 - damp) * g
    return p - lr * (g + mu * s["v"] if nesterov else s["v"])


def rmsprop(kw, lr, t, g, p, s):
    alpha, eps = kw.get("alpha", 0.99), kw.get("eps", 1e-8)
    s["v"] = alpha * s["v"] + (1 - alpha) * g * g
    return p - lr * g / (np.sqrt(s["v"]) + eps)


def adagrad(kw, lr, t, g, p, s):
    s["v"] = s["v"] + g * g
    return p - lr * g / (np.sqrt(s["v"]) + kw.get("eps", 1e-8))


def adadelta(kw, lr, t, g, p, s):
    rho, eps = kw.get("rho", 0.9), kw.get("eps", 1e-6)
    s["v"] = rho * s["v"] + (1 - rho) * g * g
    d = np.sqrt(s["u"] + eps) / np.sqrt(s["v"] + eps) * g
    s["u"] = rho * s["u"] + (1 - rho) * d * d
    return p - lr * d


def adam(kw, lr, t, g, p, s):
    b1, b2 = kw.get("betas", (0.9, 0.999))
    eps = kw.get("eps", 1e-8)
    p = p * (1 - lr * kw.get("weight_decay", 0.0))  # AdamW's decoupled decay (0 for Adam)
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    if kw.get("bias_correction", False):
        mhat = s["m"] / (1 - b1**t)
        return p - lr * mhat / (np.sqrt(s["v"]) / math.sqrt(1 - b2**t) + eps)
    return p - lr * s["m"] / (np.sqrt(s["v"]) + eps)


def adamw(kw, lr, t, g, p, s):
    return adam({"weight_decay": 0.01, **kw}, lr, t, g, p, s)


def adamax(kw, lr, t, g, p, s):
    b1, b2 = kw.get("betas", (0.9, 0.999))
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = np.maximum(b2 * s["v"], np.abs(g))
    return p - lr * s["m"] / (s["v"] + kw.get("eps", 1e-8))


def lion(kw, lr, t, g, p, s):
    b1, b2 = kw.get("betas", (0.9, 0.99))
    c = b1 * s["m"] + (1 - b1) * g
    s["m"] = b2 * s["m"] + (1 - b2) * g
    return p * (1 - lr * kw.get("weight_decay", 0.0)) - lr * np.sign(c)


def _rms(x):
    return np.sqrt(np.mean(x * x))


def adafactor(kw, lr, t, g, p, s):
    eps1, eps2 = kw.get("eps", (1e-30, 1e-3))
    beta1, wd = kw.get("beta_1"), kw.get("weight_decay", 0.0)
    if kw.get("relative_step", True):
        size = min(1e-6 * t if kw.get("warmup_init", False) else 1e-2, 1 / math.sqrt(t))
    else:
        size = lr
    alpha = size * (max(eps2, _rms(p)) if kw.get("scale_parameter", True) else 1.0)
    beta2 = 1 - t ** kw.get("decay_rate", -0.8)
    sq = g * g + eps1
    if g.ndim >= 2:
        s["row"] = beta2 * s["row"] + (1 - beta2) * sq.mean(axis=-1)
        s["col"] = beta2 * s["col"] + (1 - beta2) * sq.mean(axis=-2)
        # V ~ row col^T / mean(row): the factored second moment.
        vhat = s["row"][..., :, None] * s["col"][..., None, :]
        vhat = vhat / s["row"].mean(axis=-1)[..., None, None]
    else:
        s["sq"] = beta2 * s["sq"] + (1 - beta2) * sq
        vhat = s["sq"]
    u = g / np.sqrt(vhat)
    u = alpha * u / max(1.0, _rms(u) / kw.get("clip_threshold", 1.0))
    if beta1 is not None:
        s["avg"] = beta1 * s["avg"] + (1 - beta1) * u
        u = s["avg"]
    return p - wd * alpha * p - u


def _orthogonalize(x, steps):
    a, b, c = 3.4445, -4.7750, 2.0315
    tall = x.shape[0] > x.shape[1]
    x = x.T if tall else x
    x = x / (np.linalg.norm(x) + 1e-7)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


def muon(kw, lr, t, g, p, s):
    mu, wd = kw.get("momentum", 0.95), kw.get("weight_decay", 0.01)
    g = g + wd * p
    s["v"] = mu * s["v"] + (1 - mu) * g
    u = (1 - mu) * g + mu * s["v"] if kw.get("nesterov", True) else s["v"]
    if u.ndim >= 2:
        u = _orthogonalize(u.reshape(u.shape[0], -1), kw.get("ns_steps", 5)).reshape(u.shape)
        lr = lr * math.sqrt(max(1, u.shape[-2] / u.shape[-1]))
    return p - lr * u


REFERENCES = {
    "SGD": sgd,
    "RMSprop": rmsprop,
    "Adagrad": adagrad,
    "AdaDelta": adadelta,
    "Adam": adam,
    "AdamW": adamw,
    "Adamax": adamax,
    "Lion": lion,
    "Adafactor": adafactor,
    "Muon": muon,
}


def initial_state(name, kw, p):
    """The reference's per-parameter state (its own names) before the first step."""
    z = np.zeros_like(p)
    if name == "Adafactor":
        s = {"row": z.mean(axis=-1), "col": z.mean(axis=-2)} if p.ndim >= 2 else {"sq": z}
        return {**s, **({"avg": z} if kw.get("beta_1") is not None else {})}
    keys = {"AdaDelta": "vu", "Adam": "mv", "AdamW": "mv", "Adamax": "mv", "Lion": "m"}
    return {k: z.copy() for k in keys.get(name, "v")}


def flatten(tree, prefix=""):
    """(path, leaf) pairs of nested dicts, lists and tuples (the tests' own walk)."""
    if isinstance(tree, dict):
        return [kv for k, v in tree.items() for kv in flatten(v, f"{prefix}{k}.")]
    if isinstance(tree, (list, tuple)):
        return [kv for i, v in enumerate(tree) for kv in flatten(v, f"{prefix}{i}.")]
    return [(prefix[:-1], tree)]


def rebuild(tree, leaves):
    """``tree`` with its leaves replaced, in flatten's order, by ``leaves`` (an iterator)."""
    if isinstance(tree, dict):
        return {k: rebuild(v, leaves) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(rebuild(v, leaves) for v in tree)
    return next(leaves)


class S(tuple):
    """A leaf's shape in a tree of shapes."""


SHAPES = {
    "layer": {"weight": S((4, 5)), "bias": S((5,))},
    "blocks": [{"w": S((3, 2, 4))}, (S(()), S((6,)))],
    "scale": S((1, 7)),
    "head": S((6, 3)),
}


def random_tree(rng, shapes=SHAPES, dtype=np.float32):
    """A tree of random NumPy arrays shaped as ``shapes`` (nodes as in ``shapes``)."""
    if isinstance(shapes, S):
        return rng.standard_normal(shapes).astype(dtype)
    if isinstance(shapes, dict):
        return {k: random_tree(rng, v, dtype) for k, v in shapes.items()}
    return type(shapes)(random_tree(rng, v, dtype) for v in shapes)
