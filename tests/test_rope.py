"""nuvec.fast.rope and nuvec.fast.norm_rope: values against a NumPy float64 reference and MLX,
argument forms and errors as MLX's, gradients (the transpose rotation) and vmap; norm_rope bit
for bit against rms_norm + rope + a slice update."""

import numpy as np
import pytest

from _impl import IS_MLX, mx

RNG = np.random.default_rng(16)
TOL = {"float32": 2e-6, "float16": 2e-3, "bfloat16": 2e-2}


def ref_rope(x, dims, traditional, base, scale, offset, freqs=None):
    x = x.astype(np.float64)
    half = dims // 2
    inv = (
        base ** (-np.arange(half) / half) if freqs is None else 1.0 / np.asarray(freqs, np.float64)
    )
    off = np.asarray(offset, np.float64)
    if off.ndim == 1:
        off = off.reshape((-1,) + (1,) * (x.ndim - 2))
    theta = ((np.arange(x.shape[-2]) + off) * scale)[..., None] * inv
    c, s = np.cos(theta), np.sin(theta)
    y = x.copy()
    if traditional:
        a, b = x[..., 0:dims:2], x[..., 1:dims:2]
        y[..., 0:dims:2], y[..., 1:dims:2] = a * c - b * s, a * s + b * c
    else:
        a, b = x[..., :half], x[..., half:dims]
        y[..., :half], y[..., half:dims] = a * c - b * s, a * s + b * c
    return y


def f64(a):
    return np.asarray(a.astype(mx.float32)).astype(np.float64)


def cast(x, dtype):
    return mx.array(x).astype(getattr(mx, dtype))


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("traditional", [False, True])
@pytest.mark.parametrize(
    "shape, dims", [((1, 1, 1, 2), 2), ((2, 3, 5, 16), 16), ((2, 4, 7, 72), 40), ((3, 9, 130), 130)]
)
@pytest.mark.parametrize("offset", [0, 7, -3, "scalar", "rows"])
def test_rope_matches_numpy(dtype, traditional, shape, dims, offset):
    x = RNG.standard_normal(shape).astype(np.float32)
    if offset == "scalar":
        off, ref_off = mx.array(11), 11
    elif offset == "rows":
        ref_off = RNG.integers(0, 3000, shape[0])
        off = mx.array(ref_off.astype(np.int32))
    else:
        off = ref_off = offset
    xq = cast(x, dtype)
    y = mx.fast.rope(xq, dims, traditional=traditional, base=10000.0, scale=0.75, offset=off)
    assert y.dtype == xq.dtype and y.shape == shape
    ref = ref_rope(f64(xq), dims, traditional, 10000.0, 0.75, ref_off)
    # MLX's angles are float32 products: far positions lose digits there, not in nuvec.
    tol = max(TOL[dtype], 1e-3) if IS_MLX else TOL[dtype]
    np.testing.assert_allclose(f64(y), ref, rtol=tol, atol=tol)
    if dims < shape[-1]:  # the rest passes unchanged
        assert np.array_equal(f64(y)[..., dims:], f64(xq)[..., dims:])


@pytest.mark.parametrize("traditional", [False, True])
def test_rope_with_freqs(traditional):
    x = RNG.standard_normal((2, 2, 6, 20)).astype(np.float32)
    freqs = RNG.uniform(1, 500, 8).astype(np.float32)
    y = mx.fast.rope(
        mx.array(x),
        16,
        traditional=traditional,
        base=None,
        scale=2.0,
        offset=3,
        freqs=mx.array(freqs),
    )
    ref = ref_rope(x, 16, traditional, None, 2.0, 3, freqs)
    np.testing.assert_allclose(np.asarray(y), ref, rtol=2e-6, atol=2e-6)


def test_calls_that_differ_in_one_setting_get_their_own_angles():
    # nuvec keeps its last few angle tables (rope.cpp): each call below differs from the one
    # before in one thing the table depends on, and calls repeat, so a table handed to the wrong
    # call would show against the reference.
    x = RNG.standard_normal((1, 2, 5, 16)).astype(np.float32)
    freqs = RNG.uniform(1, 50, 8).astype(np.float32)
    calls = [
        dict(base=10000.0, scale=1.0, offset=0),
        dict(base=10000.0, scale=1.0, offset=1),
        dict(base=10000.0, scale=0.5, offset=1),
        dict(base=500.0, scale=0.5, offset=1),
        dict(base=None, scale=0.5, offset=1, freqs=freqs),
        dict(base=None, scale=0.5, offset=1, freqs=freqs * 2),
        dict(base=10000.0, scale=1.0, offset=np.array([2])),
        dict(base=10000.0, scale=1.0, offset=np.array([7])),
    ]
    for kw in calls + calls[::-1]:
        args = {k: mx.array(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        y = mx.fast.rope(mx.array(x), 16, traditional=False, **args)
        ref = ref_rope(x, 16, False, kw["base"], kw["scale"], kw["offset"], kw.get("freqs"))
        np.testing.assert_allclose(np.asarray(y), ref, rtol=2e-6, atol=2e-6)
    # the inverse rotation (the gradient) of the same positions is not the forward table
    g = mx.grad(
        lambda a: (mx.fast.rope(a, 16, traditional=False, base=1e4, scale=1.0, offset=3) * a).sum()
    )
    a = RNG.standard_normal(x.shape).astype(np.float32)
    fwd = ref_rope(a, 16, False, 1e4, 1.0, 3)
    got = np.asarray(g(mx.array(a)))
    # d/da sum(rope(a) * a) = rope(a) + rope^T(a); rope^T is the rotation by the negated angles
    np.testing.assert_allclose(got - fwd, _inverse_ref(a, 16, 1e4, 3), rtol=2e-5, atol=2e-5)


def _inverse_ref(x, dims, base, offset):
    """The transposed (inverse) rotation of rope, non-traditional."""
    half = dims // 2
    inv = base ** (-np.arange(half) / half)
    ang = (offset + np.arange(x.shape[-2]))[:, None] * inv[None]
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[..., :half].astype(np.float64), x[..., half:dims].astype(np.float64)
    out = x.astype(np.float64).copy()
    out[..., :half], out[..., half:dims] = a * c + b * s, -a * s + b * c
    return out


@pytest.mark.nuvec_only  # MLX's float64 RoPE takes float32 angles
def test_rope_float64():
    x = RNG.standard_normal((2, 3, 5, 10))
    off = np.array([4, 9])
    y = mx.fast.rope(
        mx.array(x, dtype=mx.float64),
        8,
        traditional=False,
        base=500.0,
        scale=1.0,
        offset=mx.array(off),
    )
    assert y.dtype == mx.float64
    np.testing.assert_allclose(np.asarray(y), ref_rope(x, 8, False, 500.0, 1.0, off), 1e-12, 1e-12)


def _rope(a, **kw):
    args = dict(traditional=False, base=10000.0, scale=1.0, offset=0)
    args.update(kw)
    return mx.fast.rope(a, args.pop("dims", 8), **args)


@pytest.mark.parametrize(
    "call",
    [
        lambda: _rope(mx.ones((2, 3, 4, 8)), offset=mx.array([1, 2, 3])),
        lambda: _rope(mx.ones((2, 3, 4, 8)), offset=mx.array([[1], [2]])),
        lambda: _rope(mx.ones((2, 3, 4, 8)), offset=mx.array([1.5, 2.0])),
        lambda: _rope(mx.ones((4, 8))),
        lambda: _rope(mx.ones((2, 4, 8)), dims=7),
        lambda: _rope(mx.ones((2, 4, 8)), dims=10),
        lambda: _rope(mx.ones((2, 4, 8)), dims=4, base=None),
        lambda: _rope(mx.ones((2, 4, 8)), dims=4, freqs=mx.ones(2)),
        lambda: _rope(mx.ones((2, 4, 8)), dims=4, base=None, freqs=mx.ones(3)),
        lambda: _rope(mx.ones((2, 4, 8), dtype=mx.int32), dims=4),
    ],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("traditional", [False, True])
def test_rope_matches_mlx(dtype, traditional):
    mlx = pytest.importorskip("mlx.core")
    x = RNG.standard_normal((2, 3, 9, 64)).astype(np.float32)
    offs = np.array([5, 40])
    for kw in (
        dict(base=10000.0, scale=1.0, offset=2),
        dict(base=500.0, scale=0.25, offset="rows"),
        dict(base=None, scale=1.0, offset=0, freqs=np.linspace(1, 50, 24).astype(np.float32)),
    ):

        def call(m, kw=kw):
            a = dict(kw)
            if a["offset"] == "rows":
                a["offset"] = m.array(offs)
            if "freqs" in a:
                a["freqs"] = m.array(a["freqs"])
            xa = m.array(x).astype(getattr(m, dtype))
            return m.fast.rope(xa, 48, traditional=traditional, **a).astype(m.float32)

        # MLX's angles are float32 products (nuvec's float64): an absolute error near 1e-5.
        tol = max(TOL[dtype], 2e-5)
        np.testing.assert_allclose(np.asarray(call(mx)), np.asarray(call(mlx)), rtol=tol, atol=tol)


def test_rope_gradients_are_the_transpose_rotation():
    x = mx.array(RNG.standard_normal((2, 2, 5, 12)).astype(np.float32))
    c = mx.array(RNG.standard_normal((2, 2, 5, 12)).astype(np.float32))
    off = mx.array([3, 17])
    for trad in (False, True):

        def f(a, trad=trad):
            return mx.fast.rope(a, 10, traditional=trad, base=100.0, scale=1.5, offset=off)

        _, (g,) = mx.vjp(f, [x], [c])
        # <rope(x), c> == <x, rope^T(c)>; rope^T rotates back, so rope(rope^T(c)) == c.
        np.testing.assert_allclose(float((f(x) * c).sum()), float((x * g).sum()), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(f(g)), np.asarray(c), rtol=1e-5, atol=1e-5)
        _, (t,) = mx.jvp(f, [x], [c])
        np.testing.assert_allclose(np.asarray(t), np.asarray(f(c)), rtol=1e-6, atol=1e-6)


@pytest.mark.nuvec_only
def test_rope_gradient_matches_mlx():
    mlx = pytest.importorskip("mlx.core")
    x = RNG.standard_normal((2, 3, 4, 16)).astype(np.float32)
    c = RNG.standard_normal((2, 3, 4, 16)).astype(np.float32)

    def grad(m):
        def f(a):
            return (
                m.fast.rope(a, 16, traditional=True, base=10.0, scale=1.0, offset=m.array([2, 5]))
                * m.array(c)
            ).sum()

        return np.asarray(m.grad(f)(m.array(x)))

    np.testing.assert_allclose(grad(mx), grad(mlx), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("offset_axis", [None, 0])
def test_rope_vmap_matches_a_loop(offset_axis):
    x = mx.array(RNG.standard_normal((2, 3, 4, 5, 8)).astype(np.float32))  # batch on axis 1
    offs = mx.array(RNG.integers(0, 50, (3, 2) if offset_axis == 0 else (2,)).astype(np.int32))

    def f(a, o):
        return mx.fast.rope(a, 8, traditional=False, base=10000.0, scale=1.0, offset=o)

    y = mx.vmap(f, in_axes=(1, offset_axis))(x, offs)
    for i in range(3):
        o = offs[i] if offset_axis == 0 else offs
        np.testing.assert_allclose(
            np.asarray(y[i]), np.asarray(f(x[:, i], o)), rtol=1e-6, atol=1e-6
        )


# ---- norm_rope ---------------------------------------------------------------------------


def bits(a):
    return np.asarray(a.view(mx.uint32 if a.dtype == mx.float32 else mx.uint16))


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("per_row", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.cpu_backend  # on a GPU, norm_rope runs the CPU kernel and the steps the GPU's
def test_norm_rope_is_bitwise_the_three_steps(dtype, per_row, weighted):
    b, h, t, d, s = 3, 2, 4, 48, 20
    x = cast(RNG.standard_normal((b, h, t, d)) * 2, dtype)
    w = cast(RNG.standard_normal(d), dtype) if weighted else None
    cache = cast(RNG.standard_normal((b, h, s, d)), dtype)
    offs = RNG.integers(0, s - t + 1, b)
    off = mx.array(offs.astype(np.int32)) if per_row else 5
    kw = dict(dims=32, traditional=False, base=10000.0, scale=1.0)
    y, new = mx.fast.norm_rope(x, w, 1e-5, cache, off, **kw)
    ref = mx.fast.rope(
        mx.fast.rms_norm(x, w, 1e-5), 32, traditional=False, base=10000.0, scale=1.0, offset=off
    )
    assert np.array_equal(bits(y), bits(ref))
    expect = np.array(bits(cache))
    for i in range(b):
        o = int(offs[i]) if per_row else 5
        expect[i, :, o : o + t] = bits(ref)[i]
    assert np.array_equal(bits(new), expect)
    assert np.array_equal(bits(cache), np.array(bits(cache)))  # the input cache is unchanged


@pytest.mark.nuvec_only
def test_norm_rope_slice_update_form_and_errors():
    x = mx.array(RNG.standard_normal((1, 2, 3, 8)).astype(np.float32))
    cache = mx.zeros((1, 2, 6, 8))
    y, new = mx.fast.norm_rope(
        x, None, 1e-5, cache, 2, dims=8, traditional=True, base=None, freqs=mx.ones(4)
    )
    ref = mx.fast.rope(
        mx.fast.rms_norm(x, None, 1e-5),
        8,
        traditional=True,
        base=None,
        scale=1.0,
        offset=2,
        freqs=mx.ones(4),
    )
    upd = cache.at[:, :, 2:5, :].add(ref)
    assert np.array_equal(np.asarray(new), np.asarray(upd)) and np.array_equal(
        np.asarray(y), np.asarray(ref)
    )
    with pytest.raises(mx.OpError):
        mx.fast.norm_rope(x, None, 1e-5, cache, 4, dims=8)  # rows 4..7 do not fit 6
    with pytest.raises(mx.OpError):
        mx.fast.norm_rope(x, None, 1e-5, cache.astype(mx.float16), 0, dims=8)
    with pytest.raises(mx.OpError):
        mx.fast.norm_rope(x, None, 1e-5, mx.zeros((1, 3, 6, 8)), 0, dims=8)
    with pytest.raises(Exception, match="do not fit"):
        mx.eval(mx.fast.norm_rope(x, None, 1e-5, cache, mx.array([5]), dims=8)[1])


def _norm_rope_steps(x, w, cache, offs):
    """norm_rope through rms_norm, rope and a concatenation per batch row."""
    y = mx.fast.rope(
        mx.fast.rms_norm(x, w, 1e-5),
        16,
        traditional=False,
        base=10000.0,
        scale=1.0,
        offset=mx.array(np.asarray(offs, np.int32)),
    )
    t = x.shape[-2]
    rows = [
        mx.concatenate([cache[i, :, :o], y[i], cache[i, :, o + t :]], axis=1)
        for i, o in enumerate(offs)
    ]
    return y, mx.stack(rows)


@pytest.mark.nuvec_only
def test_norm_rope_gradients_and_jvp_are_the_steps():
    x = mx.array(RNG.standard_normal((2, 3, 4, 16)).astype(np.float32))
    w = mx.array(RNG.standard_normal(16).astype(np.float32))
    cache = mx.array(RNG.standard_normal((2, 3, 10, 16)).astype(np.float32))
    offs = [1, 6]
    cy, cc = (
        mx.array(RNG.standard_normal(s).astype(np.float32)) for s in ((2, 3, 4, 16), (2, 3, 10, 16))
    )

    def fused(x, w, cache):
        return mx.fast.norm_rope(x, w, 1e-5, cache, mx.array(offs), dims=16)

    _, a = mx.vjp(fused, [x, w, cache], [cy, cc])
    _, b = mx.vjp(lambda x, w, c: _norm_rope_steps(x, w, c, offs), [x, w, cache], [cy, cc])
    for u, v in zip(a, b):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5, atol=1e-5)
    tangents = [x * 0.3, w * -0.2, cache * 0.1]
    _, ta = mx.jvp(fused, [x, w, cache], tangents)
    _, tb = mx.jvp(lambda x, w, c: _norm_rope_steps(x, w, c, offs), [x, w, cache], tangents)
    for u, v in zip(ta, tb):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5, atol=1e-5)


@pytest.mark.nuvec_only
def test_norm_rope_vmap_matches_a_loop():
    x = mx.array(RNG.standard_normal((2, 3, 2, 4, 16)).astype(np.float32))  # batch on axis 1
    cache = mx.array(RNG.standard_normal((3, 2, 2, 9, 16)).astype(np.float32))  # batch on axis 0
    offs = mx.array(RNG.integers(0, 6, (3, 2)).astype(np.int32))

    def f(x, c, o):
        return mx.fast.norm_rope(x, None, 1e-5, c, o, dims=16)

    y, c = mx.vmap(f, in_axes=(1, 0, 0))(x, cache, offs)
    for i in range(3):
        yi, ci = f(x[:, i], cache[i], offs[i])
        assert np.array_equal(np.asarray(y[i]), np.asarray(yi))
        assert np.array_equal(np.asarray(c[i]), np.asarray(ci))


@pytest.mark.nuvec_only
@pytest.mark.parametrize("traditional", [False, True])
def test_rope_freqs_gradient_matches_finite_differences_and_mlx(traditional):
    x = RNG.standard_normal((2, 3, 5, 12)).astype(np.float32)
    f = RNG.uniform(1, 20, 4).astype(np.float32)
    c = RNG.standard_normal((2, 3, 5, 12)).astype(np.float32)
    offs = np.array([2, 7])

    def grad(m):
        def loss(fr):
            y = m.fast.rope(
                m.array(x),
                8,
                traditional=traditional,
                base=None,
                scale=0.5,
                offset=m.array(offs),
                freqs=fr,
            )
            return (y * m.array(c)).sum()

        return np.asarray(m.grad(loss)(m.array(f)))

    ours = grad(mx)
    fd = np.zeros(4)
    for i in range(4):
        hi, lo = f.astype(np.float64), f.astype(np.float64)
        hi = hi.copy()
        lo = lo.copy()
        hi[i] += 1e-6
        lo[i] -= 1e-6
        fd[i] = (
            (
                ref_rope(x, 8, traditional, None, 0.5, offs, hi)
                - ref_rope(x, 8, traditional, None, 0.5, offs, lo)
            )
            * c
        ).sum() / 2e-6
    np.testing.assert_allclose(ours, fd, rtol=1e-4, atol=1e-4)
    mlx = pytest.importorskip("mlx.core")
    np.testing.assert_allclose(ours, grad(mlx), rtol=1e-5, atol=1e-5)
