"""nuvec.fast.cross_entropy and gated_delta_update: values against NumPy float64 references
and MLX, dtypes and errors, gradients (finite differences, MLX) and vmap against a loop."""

import numpy as np
import pytest

from _impl import mx

RNG = np.random.default_rng(17)


def ref_ce(logits, targets):
    x = logits.astype(np.float64)
    m = x.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(-1, keepdims=True)))[..., 0]
    return lse - np.take_along_axis(x, targets[..., None], -1)[..., 0]


# MLX's CPU reduces half logits in their dtype; nuvec accumulates in float32 (as MLX's GPUs).
HALF_F32 = pytest.mark.nuvec_only


@pytest.mark.parametrize(
    "dtype",
    ["float32", pytest.param("float16", marks=HALF_F32), pytest.param("bfloat16", marks=HALF_F32)],
)
@pytest.mark.parametrize("shape", [(7,), (3, 11), (2, 3, 1000)])
def test_cross_entropy_matches_numpy(dtype, shape):
    logits = (RNG.standard_normal(shape) * 4).astype(np.float32)
    targets = RNG.integers(0, shape[-1], shape[:-1])
    x = mx.array(logits).astype(getattr(mx, dtype))
    y = mx.fast.cross_entropy(x, mx.array(targets))
    assert y.dtype == mx.float32 and y.shape == shape[:-1]
    ref = ref_ce(np.asarray(x.astype(mx.float32)), targets)
    np.testing.assert_allclose(np.asarray(y), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.fast.cross_entropy(mx.ones((2, 5)), mx.zeros((2,), dtype=mx.float32)),
        lambda: mx.fast.cross_entropy(mx.ones((2, 5)), mx.zeros((3,), dtype=mx.int32)),
        lambda: mx.fast.cross_entropy(
            mx.ones((2, 5), dtype=mx.int32), mx.zeros((2,), dtype=mx.int32)
        ),
    ],
)
def test_cross_entropy_bad_arguments(call):
    with pytest.raises(ValueError):
        call()


def test_cross_entropy_gradient_and_vmap():
    logits = RNG.standard_normal((4, 9)).astype(np.float32)
    targets = RNG.integers(0, 9, 4)
    g = mx.grad(lambda x: mx.fast.cross_entropy(x, mx.array(targets)).sum())(mx.array(logits))
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    p[np.arange(4), targets] -= 1  # softmax minus the one-hot target
    np.testing.assert_allclose(np.asarray(g), p, rtol=1e-5, atol=1e-6)
    y = mx.vmap(mx.fast.cross_entropy, in_axes=(1, 0))(mx.array(logits.T.copy()), mx.array(targets))
    np.testing.assert_allclose(np.asarray(y), ref_ce(logits, targets), rtol=1e-5, atol=1e-6)


@pytest.mark.nuvec_only
def test_cross_entropy_matches_mlx():
    mlx = pytest.importorskip("mlx.core")
    logits = (RNG.standard_normal((3, 5, 40)) * 3).astype(np.float32)
    targets = RNG.integers(0, 40, (3, 5))
    for m_dtype in ("float32", "float16"):
        ours, theirs = (
            np.asarray(
                m.fast.cross_entropy(m.array(logits).astype(getattr(m, m_dtype)), m.array(targets))
            )
            for m in (mx, mlx)
        )
        np.testing.assert_allclose(
            ours, theirs, rtol=1e-3 if m_dtype == "float16" else 1e-5, atol=1e-3
        )
    gs = [
        np.asarray(
            m.grad(lambda x, m=m: m.fast.cross_entropy(x, m.array(targets)).sum())(m.array(logits))
        )
        for m in (mx, mlx)
    ]
    np.testing.assert_allclose(gs[0], gs[1], rtol=1e-5, atol=1e-6)


# ---- gated_delta_update -------------------------------------------------------------------


def ref_gdu(q, k, v, g, b, s, mask=None):
    """The recurrence in float64."""
    r = v.shape[2] // q.shape[2]
    q, k = (np.repeat(a.astype(np.float64), r, axis=2) for a in (q, k))
    s = s.astype(np.float64)
    ys = []
    for t in range(q.shape[1]):
        old = s
        s = s * g[:, t, :, None, None]
        delta = (v[:, t] - (s * k[:, t, :, None, :]).sum(-1)) * b[:, t, :, None]
        s = s + k[:, t, :, None, :] * delta[..., None]
        y = (s * q[:, t, :, None, :]).sum(-1)
        if mask is not None:
            keep = mask[:, t]
            s = np.where(keep[:, None, None, None], s, old)
            y = np.where(keep[:, None, None], y, 0.0)
        ys.append(y)
    return np.stack(ys, 1), s


def gdu_inputs(b=2, t=5, hk=2, hv=4, dk=3, dv=6):
    q, k = (RNG.standard_normal((b, t, hk, dk)).astype(np.float32) for _ in range(2))
    v = RNG.standard_normal((b, t, hv, dv)).astype(np.float32)
    g = RNG.uniform(0.5, 1.0, (b, t, hv)).astype(np.float32)
    beta = RNG.uniform(0.0, 1.0, (b, t, hv)).astype(np.float32)
    s0 = RNG.standard_normal((b, hv, dv, dk)).astype(np.float32)
    mask = RNG.uniform(size=(b, t)) > 0.3
    return q, k, v, g, beta, s0, mask


@pytest.mark.parametrize("hk", [1, 2, 4])
@pytest.mark.parametrize("state, masked", [(False, False), (True, False), (True, True)])
def test_gated_delta_update_matches_numpy(hk, state, masked):
    q, k, v, g, b, s0, mask = gdu_inputs(hk=hk)
    kw = {}
    if state:
        kw["initial_state"] = mx.array(s0)
    if masked:
        kw["mask"] = mx.array(mask)
    y, s = mx.fast.gated_delta_update(*(mx.array(a) for a in (q, k, v, g, b)), **kw)
    ry, rs = ref_gdu(q, k, v, g, b, s0 if state else np.zeros_like(s0), mask if masked else None)
    assert y.shape == v.shape and s.shape == s0.shape and s.dtype == mx.float32
    np.testing.assert_allclose(np.asarray(y), ry, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(s), rs, rtol=1e-4, atol=1e-5)


def test_gated_delta_update_dtypes_and_errors():
    q, k, v, g, b, _, _ = gdu_inputs()
    h = [mx.array(a).astype(mx.float16) for a in (q, k, v, g, b)]
    y, s = mx.fast.gated_delta_update(*h)
    assert y.dtype == mx.float16 and s.dtype == mx.float32
    with pytest.raises(ValueError):
        mx.fast.gated_delta_update(*h[:3], h[3][:, :2], h[4])


@pytest.mark.nuvec_only
def test_gated_delta_update_matches_mlx_with_gradients():
    mlx = pytest.importorskip("mlx.core")
    q, k, v, g, b, s0, mask = gdu_inputs(t=4)
    c = RNG.standard_normal(v.shape).astype(np.float32)

    def run(m):
        args = [m.array(a) for a in (q, k, v, g, b)]
        kw = dict(initial_state=m.array(s0), mask=m.array(mask))
        out = m.fast.gated_delta_update(*args, **kw)

        def loss(*a):
            y, s = m.fast.gated_delta_update(*a, **kw)
            return (y * m.array(c)).sum() + s.sum()

        return [np.asarray(o) for o in out] + [
            np.asarray(d) for d in m.grad(loss, argnums=(0, 1, 2, 3, 4))(*args)
        ]

    for ours, theirs in zip(run(mx), run(mlx)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)


def test_gated_delta_update_vmap_matches_a_loop():
    q, k, v, g, b, s0, _ = gdu_inputs()
    qs = mx.array(np.stack([q, q * 0.5, -q]))
    f = mx.fast.gated_delta_update
    ys, ss = mx.vmap(
        lambda a: f(a, *(mx.array(x) for x in (k, v, g, b)), initial_state=mx.array(s0))
    )(qs)
    for i in range(3):
        y, s = f(qs[i], *(mx.array(x) for x in (k, v, g, b)), initial_state=mx.array(s0))
        np.testing.assert_allclose(np.asarray(ys[i]), np.asarray(y), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(ss[i]), np.asarray(s), rtol=1e-5, atol=1e-6)


@pytest.mark.nuvec_only
def test_cross_entropy_kernel_edges_jvp_and_compile():
    x = mx.array(np.array([[0.0, -np.inf, 1.0], [-np.inf] * 3, [1e30, 2.0, -1e30]], np.float32))
    y = np.asarray(mx.fast.cross_entropy(x, mx.array([2, 1, 0])))
    np.testing.assert_allclose(y[[0, 2]], [np.log1p(np.exp(-1.0)), 0.0], rtol=1e-6)
    assert np.isnan(y[1])  # every logit -inf: log(0) - (-inf)
    bad = np.asarray(mx.fast.cross_entropy(mx.ones((2, 3)), mx.array([3, -1])))
    assert np.isnan(bad).all()  # targets outside [0, V)
    logits = mx.array(RNG.standard_normal((5, 13)).astype(np.float32))
    targets = mx.array(RNG.integers(0, 13, 5).astype(np.int32))
    t, c = (mx.array(RNG.standard_normal(s).astype(np.float32)) for s in ((5, 13), (5,)))
    _, (jt,) = mx.jvp(lambda a: mx.fast.cross_entropy(a, targets), [logits], [t])
    _, (g,) = mx.vjp(lambda a: mx.fast.cross_entropy(a, targets), [logits], [c])
    np.testing.assert_allclose(float((jt * c).sum()), float((g * t).sum()), rtol=1e-5)
    f = mx.compile(mx.fast.cross_entropy, shapeless=True)
    for n in (5, 3):
        np.testing.assert_allclose(
            np.asarray(f(logits[:n], targets[:n])),
            np.asarray(mx.fast.cross_entropy(logits[:n], targets[:n])),
            rtol=1e-6,
        )
