"""random.multivariate_normal: MLX's algorithm (an SVD of cov), its shapes, and its values
against MLX to float32 rounding (bits for 1 x 1 covariances, where the SVD and products are exact)."""

import numpy as np
import pytest

import nuvec as mx

RNG = np.random.default_rng(5)


def spd(n):
    a = RNG.standard_normal((n, n)).astype(np.float32)
    return (a @ a.T + np.eye(n, dtype=np.float32)).astype(np.float32)


def test_moments_match_the_distribution():
    cov, mean = spd(3), np.array([1.0, -2.0, 0.5], np.float32)
    x = np.array(
        mx.random.multivariate_normal(mx.array(mean), mx.array(cov), (40000,), key=mx.random.key(1))
    )
    assert x.shape == (40000, 3) and x.dtype == np.float32
    np.testing.assert_allclose(x.mean(0), mean, atol=0.06)
    np.testing.assert_allclose(np.cov(x.T), cov, rtol=0.05, atol=0.06)


def test_is_the_documented_formula():
    cov, mean = spd(4), RNG.standard_normal(4).astype(np.float32)
    key = mx.random.key(9)
    got = np.array(mx.random.multivariate_normal(mx.array(mean), mx.array(cov), (5,), key=key))
    u, s, vt = mx.linalg.svd(mx.array(cov))
    std = (u * mx.sqrt(s)[None, :]) @ vt
    z = mx.random.normal((5, 4), key=key)
    np.testing.assert_array_equal(got, np.array(mean + (z[:, None, :] @ std)[:, 0, :]))


def test_batch_shapes_broadcast():
    mean = mx.zeros((2, 1, 3))
    cov = mx.array(np.stack([spd(3) for _ in range(4)]))
    assert mx.random.multivariate_normal(mean, cov, key=mx.random.key(0)).shape == (2, 4, 3)
    assert mx.random.multivariate_normal(mean, cov, (5, 2, 4), key=mx.random.key(0)).shape == (
        5,
        2,
        4,
        3,
    )


def test_bad_arguments():
    with pytest.raises(ValueError):
        mx.random.multivariate_normal(mx.zeros((2,)), mx.eye(3))
    with pytest.raises(ValueError):
        mx.random.multivariate_normal(mx.zeros((2,)), mx.eye(2), dtype=mx.float16)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_against_mlx(n):
    mlx = pytest.importorskip("mlx.core")
    cov, mean = spd(n), RNG.standard_normal(n).astype(np.float32)
    got = np.array(
        mx.random.multivariate_normal(mx.array(mean), mx.array(cov), (500,), key=mx.random.key(3))
    )
    want = np.array(
        mlx.random.multivariate_normal(
            mlx.array(mean), mlx.array(cov), (500,), key=mlx.random.key(3), stream=mlx.cpu
        )
    )
    if n == 1:
        np.testing.assert_array_equal(got, want)
    scale = (
        np.sqrt(np.abs(cov).max())
        * np.abs(np.array(mx.random.normal((500, n), key=mx.random.key(3)))).max()
    )
    np.testing.assert_allclose(got, want, atol=8 * n * 2.0**-23 * scale, rtol=0)
