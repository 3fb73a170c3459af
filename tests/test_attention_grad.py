"""Derivatives and vmap of fast.scaled_dot_product_attention: vjp and jvp (q, k, v, an additive
mask, sinks) against float64 central differences of the NumPy reference and against MLX's; vmap
against stacking the examples."""

import importlib

import numpy as np
import pytest

from _impl import mx
from attention_reference import operands, sdpa_reference

fast = mx.fast if hasattr(mx, "fast") else importlib.import_module("nuvec.fast")
sdpa = fast.scaled_dot_product_attention

SHAPE = (2, 4, 2, 3, 5, 4, 3)  # B, Hq, Hkv, Lq, Lk, D, Dv: grouped heads, Dv != D
CASES = [(m, s) for m in (None, "causal", "additive", "boolean") for s in (False, True)]
IDS = [f"{m}-{'sinks' if s else 'nosinks'}" for m, s in CASES]


def inputs(mask, with_sinks, lq=3, seed=0):
    b, hq, hkv, _, lk, d, dv = SHAPE
    q, k, v = operands(b, hq, hkv, lq, lk, d, dv, seed=seed)
    rng = np.random.default_rng(seed + 1)
    m = {
        "additive": rng.standard_normal((lq, lk)).astype(np.float32),
        "boolean": rng.random((lq, lk)) > 0.3,
    }.get(mask, mask)
    sinks = rng.standard_normal(hq).astype(np.float32) if with_sinks else None
    return q, k, v, m, sinks


def diff_args(q, k, v, m, sinks):
    """The differentiable operands, in the order vjp reports them."""
    xs = [q, k, v]
    if isinstance(m, np.ndarray) and m.dtype != bool:
        xs.append(m)
    if sinks is not None:
        xs.append(sinks)
    return xs


def make_fn(lib_sdpa, lib, m, sinks):
    def f(*xs):
        xs = list(xs)
        q, k, v = xs[:3]
        rest = xs[3:]
        mm = m
        if isinstance(m, np.ndarray):
            mm = rest.pop(0) if m.dtype != bool else lib.array(m)
        ss = rest.pop(0) if sinks is not None else None
        return lib_sdpa(q, k, v, scale=0.7, mask=mm, sinks=ss)

    return f


def ref_fn(m, sinks):
    def f(*xs):
        xs = list(xs)
        rest = xs[3:]
        mm = rest.pop(0) if isinstance(m, np.ndarray) and m.dtype != bool else m
        ss = rest.pop(0) if sinks is not None else None
        return sdpa_reference(*xs[:3], np.float32(0.7), mm, ss)

    return f


def central(f, xs, i, h=1e-6):
    """d f / d xs[i] as an array of the output's shape per element of xs[i] (float64)."""
    xs = [x.astype(np.float64) for x in xs]
    out = []
    for j in range(xs[i].size):
        up, dn = [x.copy() for x in xs], [x.copy() for x in xs]
        up[i].flat[j] += h
        dn[i].flat[j] -= h
        out.append((f(*up) - f(*dn)) / (2 * h))
    return np.stack(out)  # (n_i, *out)


@pytest.mark.parametrize("mask,with_sinks", CASES, ids=IDS)
@pytest.mark.parametrize("lq", [3, 12])  # the decode and the prefill kernels' forward
def test_vjp_and_jvp_match_finite_differences(mask, with_sinks, lq):
    q, k, v, m, sinks = inputs(mask, with_sinks, lq)
    xs = diff_args(q, k, v, m, sinks)
    rng = np.random.default_rng(7)
    ct = rng.standard_normal((SHAPE[0], SHAPE[1], lq, SHAPE[6])).astype(np.float32)
    f = make_fn(sdpa, mx, m, sinks)
    out, grads = mx.vjp(lambda *a: [f(*a)], [mx.array(x) for x in xs], [mx.array(ct)])
    fr = ref_fn(m, sinks)
    np.testing.assert_allclose(np.array(out[0]), fr(*xs), rtol=1e-5, atol=1e-5)
    tans = [rng.standard_normal(x.shape).astype(np.float32) for x in xs]
    _, jv = mx.jvp(lambda *a: [f(*a)], [mx.array(x) for x in xs], [mx.array(t) for t in tans])
    want_jvp = np.zeros(ct.shape)
    for i, x in enumerate(xs):
        d = central(fr, xs, i)
        want = np.tensordot(d, ct.astype(np.float64), axes=ct.ndim).reshape(x.shape)
        np.testing.assert_allclose(
            np.array(grads[i]), want, rtol=1e-4, atol=1e-5, err_msg=f"vjp of input {i}"
        )
        want_jvp += np.tensordot(tans[i].astype(np.float64).ravel(), d, axes=1)
    np.testing.assert_allclose(np.array(jv[0]), want_jvp, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mask,with_sinks", CASES, ids=IDS)
def test_grads_match_mlx(mask, with_sinks):
    mlx = pytest.importorskip("mlx.core")
    q, k, v, m, sinks = inputs(mask, with_sinks, lq=6, seed=3)
    xs = diff_args(q, k, v, m, sinks)
    got = mx.grad(
        lambda *a: (make_fn(sdpa, mx, m, sinks)(*a) ** 2).sum(), argnums=tuple(range(len(xs)))
    )(*[mx.array(x) for x in xs])
    want = mlx.grad(
        lambda *a: (make_fn(mlx.fast.scaled_dot_product_attention, mlx, m, sinks)(*a) ** 2).sum(),
        argnums=tuple(range(len(xs))),
    )(*[mlx.array(x) for x in xs])
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.array(g), np.array(w), rtol=2e-4, atol=2e-5)


def test_second_derivative_matches_the_composition():
    # The rules are written with ops, so they differentiate again: d2/dq2 of a scalar, on the
    # kernel (float32) and on the float64 op composition.
    q, k, v, m, _ = inputs("causal", False, lq=4)

    def g(dtype):
        kk, vv = mx.array(k, dtype=dtype), mx.array(v, dtype=dtype)

        def loss(qq):
            return (sdpa(qq, kk, vv, scale=0.5, mask="causal") ** 3).sum()

        return np.array(
            mx.grad(lambda qq: (mx.grad(loss)(qq) ** 2).sum())(mx.array(q, dtype=dtype))
        )

    np.testing.assert_allclose(g(mx.float32), g(mx.float64), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize(
    "axes", [(0, 0, 0, None), (0, None, None, None), (None, 1, 1, None), (2, 0, None, 0)]
)
def test_vmap_equals_stacking_the_examples(axes):
    n = 3
    rng = np.random.default_rng(11)
    b, hq, hkv, lq, lk, d, dv = SHAPE
    base = {"q": (b, hq, lq, d), "k": (b, hkv, lk, d), "v": (b, hkv, lk, dv), "s": (hq,)}
    arrays = []
    for name, ax in zip("qkvs", axes):
        shape = list(base[name])
        if ax is not None:
            shape.insert(ax, n)
        arrays.append(rng.standard_normal(shape).astype(np.float32))
    mask = rng.standard_normal((lq, lk)).astype(np.float32)

    def f(q, k, v, s):
        return sdpa(q, k, v, scale=0.5, mask=mx.array(mask), sinks=s)

    got = mx.vmap(f, in_axes=axes)(*[mx.array(a) for a in arrays])
    for i in range(n):
        ex = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(arrays, axes)]
        want = sdpa_reference(*ex[:3], 0.5, mask, ex[3])
        np.testing.assert_allclose(np.array(got[i]), want, rtol=2e-5, atol=2e-5)


def test_vmap_with_a_batched_boolean_mask_and_grad_of_vmap():
    n = 2
    q, k, v = operands(n * 1, 2, 1, 5, 7, 4)  # n examples of (1, 2, 5, 4) along axis 0
    keep = np.random.default_rng(2).random((n, 5, 7)) > 0.4
    got = mx.vmap(
        lambda qq, mm: sdpa(qq[None], mx.array(k[:1]), mx.array(v[:1]), scale=0.5, mask=mm)
    )(mx.array(q), mx.array(keep))
    for i in range(n):
        want = sdpa_reference(q[i : i + 1], k[:1], v[:1], 0.5, keep[i])
        np.testing.assert_allclose(np.array(got[i]), want, rtol=2e-5, atol=2e-5)
    gv = mx.grad(
        lambda qq: mx.vmap(lambda x: sdpa(x[None], mx.array(k[:1]), mx.array(v[:1]), scale=0.5))(
            qq
        ).sum()
    )(mx.array(q))
    kk, vv = (
        mx.array(np.repeat(x[:1], n, axis=0)) for x in (k, v)
    )  # the examples as batch entries
    gl = mx.grad(lambda qq: sdpa(qq, kk, vv, scale=0.5).sum())(mx.array(q))
    np.testing.assert_allclose(np.array(gv), np.array(gl), rtol=1e-5, atol=1e-6)
