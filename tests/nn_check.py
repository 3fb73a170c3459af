"""Checks shared by the nn tests: gradients against float64 central finite differences of an
independent NumPy reference."""

import numpy as np

from _impl import mx
from helpers import seeded_rng


def fd_grad(f, args, i, h=1e-6):
    """d f(*args) / d args[i] by central differences (f returns a float64 scalar)."""
    args = [np.array(a, dtype=np.float64) if j == i else a for j, a in enumerate(args)]
    x = args[i]
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        saved = x[k]
        x[k] = saved + h
        up = f(*args)
        x[k] = saved - h
        down = f(*args)
        x[k] = saved
        out[k] = (up - down) / (2 * h)
    return out


def check_grad(fn, ref, args, argnums, rtol=1e-5, atol=1e-7, seed=()):
    """The framework's gradient of ``sum(fn(*args) * v)`` (v a random cotangent; float arrays
    in float64) against finite differences of ``sum(ref(*args) * v)`` in NumPy."""
    v = seeded_rng("cotangent", *seed).uniform(0.5, 1.5, np.shape(ref(*args)))
    mx_args = [
        mx.array(a, dtype=mx.float64) if np.asarray(a).dtype.kind == "f" else mx.array(a)
        for a in args
    ]

    def scalar(*a):
        return mx.sum(fn(*a) * mx.array(v, dtype=mx.float64))

    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    grads = mx.grad(scalar, argnums=argnums)(*mx_args)
    if len(argnums) == 1:  # MLX's grad gives a bare array for one argument
        grads = (grads,)
    for i, g in zip(argnums, grads):
        expected = fd_grad(lambda *a: float(np.sum(ref(*a) * v)), args, i)
        np.testing.assert_allclose(np.array(g), expected, rtol=rtol, atol=atol, err_msg=f"arg {i}")
