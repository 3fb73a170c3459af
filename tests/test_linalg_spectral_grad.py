"""Derivatives of svd, eigh / eigvalsh and qr (MLX 0.32 has none: nuvec goes further,
docs/linalg.md "Derivatives"). vjp (through grad) and jvp against central finite differences in
float64, on losses that do not depend on the signs of the singular and eigenvectors."""

import numpy as np
import pytest

import nuvec as mx

pytestmark = pytest.mark.nuvec_only  # MLX 0.32 raises for these derivatives

LA = mx.linalg
RNG = np.random.default_rng(17)


def f64(x):
    return mx.array(np.asarray(x, dtype=np.float64), dtype=mx.float64)


def check(loss, x, eps=1e-6, tol=1e-6):
    """grad(loss) against finite differences, and jvp along a random direction against it."""
    g = np.array(mx.grad(loss)(f64(x)))
    num = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = eps
        num[idx] = (float(loss(f64(x + step))) - float(loss(f64(x - step)))) / (2 * eps)
    np.testing.assert_allclose(g, num, atol=tol * max(1.0, np.abs(num).max()))
    t = RNG.standard_normal(x.shape)
    _, (jt,) = mx.jvp(loss, [f64(x)], [f64(t)])
    np.testing.assert_allclose(float(jt), (g * t).sum(), rtol=1e-9, atol=1e-9)


SHAPES = [(4, 4), (5, 3), (3, 5), (2, 3, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_svd_vectors_and_values(shape):
    m, n = shape[-2:]
    k = min(m, n)
    c = f64(RNG.standard_normal(shape))
    w = f64(np.arange(1, k + 1))

    def loss(a):
        u, s, vt = LA.svd(a)
        # sum_i w_i s_i u_i v_i^T and sum w s^2: each term is sign-free
        return mx.sum(c * ((u[..., :k] * (s * w)[..., None, :]) @ vt[..., :k, :])) + mx.sum(
            s**2 * w
        )

    check(loss, RNG.standard_normal(shape))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_singular_values(shape):
    check(lambda a: mx.sum(LA.svd(a, compute_uv=False) ** 3), RNG.standard_normal(shape))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)], ids=str)
def test_svd_extra_basis_projector(shape):
    # The columns of U (rows of Vt) past K span a space the matrix fixes, but not their basis:
    # the projector onto that space has a true derivative, which the rules must give.
    m, n = shape
    k = min(m, n)
    c = f64(RNG.standard_normal((max(m, n),) * 2))

    def loss(a):
        u, _, vt = LA.svd(a)
        basis = u[:, k:] if m > n else mx.transpose(vt[k:])
        return mx.sum(c * (basis @ mx.transpose(basis)))

    check(loss, RNG.standard_normal(shape))


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle(uplo):
    n = 4
    c = f64(RNG.standard_normal((n, n)))
    w = f64(np.arange(1, n + 1))

    def loss(a):
        e, v = LA.eigh(a, UPLO=uplo)
        return mx.sum(c * ((v * w) @ mx.transpose(v))) + mx.sum(e**3)

    a = RNG.standard_normal((n, n))
    check(loss, a)
    g = np.array(mx.grad(loss)(f64(a)))
    off = np.triu(g, 1) if uplo == "L" else np.tril(g, -1)
    assert not off.any(), "eigh's gradient lies on the triangle it reads"
    check(lambda a: mx.sum(LA.eigvalsh(a, UPLO=uplo) ** 3), a)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (2, 5, 2)], ids=str)
def test_qr(shape):
    c, d = f64(RNG.standard_normal(shape)), f64(RNG.standard_normal(shape[:-2] + (shape[-1],) * 2))
    check(lambda a: mx.sum(c * LA.qr(a)[0]) + mx.sum(d * LA.qr(a)[1]), RNG.standard_normal(shape))


def test_composed_functions_differentiate():
    a = RNG.standard_normal((4, 3))
    check(lambda x: mx.sum(LA.pinv(x) ** 2), a)
    check(lambda x: LA.norm(x, ord=2), a)
    check(lambda x: LA.norm(x, ord="nuc"), a)


def test_float32_gradient_matches_float64():
    a = RNG.standard_normal((5, 5))
    g64 = np.array(mx.grad(lambda x: mx.sum(LA.svd(x, compute_uv=False) ** 2))(f64(a)))
    g32 = mx.grad(lambda x: mx.sum(LA.svd(x, compute_uv=False) ** 2))(
        mx.array(a.astype(np.float32))
    )
    assert g32.dtype == mx.float32
    np.testing.assert_allclose(np.array(g32), g64, rtol=1e-4, atol=1e-4)


def test_vmap_of_grad_equals_the_loop():
    a = RNG.standard_normal((3, 4, 4))
    grad = mx.grad(lambda x: mx.sum(LA.eigvalsh(x) ** 3))
    batched = np.array(mx.vmap(grad)(f64(a)))
    for i in range(3):
        np.testing.assert_allclose(batched[i], np.array(grad(f64(a[i]))), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "loss, a",
    [
        (lambda x: mx.sum(LA.qr(x)[1]), np.ones((2, 3))),  # wide QR
        (lambda x: mx.sum(mx.abs(LA.svd(x, compute_uv=False))), np.eye(3, dtype=np.complex64)),
    ],
    ids=["qr_wide", "svd_complex"],
)
def test_undefined_derivatives_raise(loss, a):
    with pytest.raises(ValueError):
        mx.grad(loss)(mx.array(a))
