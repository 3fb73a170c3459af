"""Shared pieces of the nn layer tests: the layer modules of the framework under test, the
MLX oracle (skipped where mlx.nn is absent), weight copying, finite-difference gradients and
the layers' errors."""

import contextlib
import importlib
import os

import numpy as np
import pytest

from _impl import IS_MLX, mx

PKG = "mlx" if IS_MLX else "nuvec"


def layers(file: str):
    """The framework's ``nn.layers.<file>`` module."""
    return importlib.import_module(f"{PKG}.nn.layers.{file}")


def mlx_layers(file: str):
    """mlx.nn.layers.<file> (the oracle); skips the test where MLX is not installed."""
    pytest.importorskip("mlx.nn")
    return importlib.import_module(f"mlx.nn.layers.{file}")


def mlx_array(a):
    import mlx.core

    return mlx.core.array(np.asarray(a))


def copy_params(src, dst) -> None:
    """Gives ``dst`` (a layer of another framework) ``src``'s parameters, by name."""
    dst.update({k: mlx_array(v) for k, v in src.parameters().items()})


def rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def assert_close(got, want, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol, atol=atol)


def check_grad(fn, ref, x: np.ndarray, rtol=2e-3, atol=2e-4, h=1e-6) -> None:
    """mx.grad of sum(fn(x) * r) against central differences of the float64 NumPy ``ref``."""
    r = rand(ref(x.astype(np.float64)).shape, seed=7).astype(np.float64)
    rm = mx.array(r.astype(np.float32))
    got = np.asarray(mx.grad(lambda a: mx.sum(fn(a) * rm))(mx.array(x)))
    x64 = x.astype(np.float64)
    want = np.zeros_like(x64)
    for i in np.ndindex(x.shape):
        up, down = x64.copy(), x64.copy()
        up[i] += h
        down[i] -= h
        want[i] = (np.sum(ref(up) * r) - np.sum(ref(down) * r)) / (2 * h)
    assert_close(got, want, rtol=rtol, atol=atol)


def assert_repr_as_mlx(file: str, name: str, args: tuple, kwargs: dict) -> None:
    """The layer prints as mlx.nn's does."""
    mine = getattr(layers(file), name)(*args, **kwargs)
    assert repr(mine) == repr(getattr(mlx_layers(file), name)(*args, **kwargs))


@contextlib.contextmanager
def raises_layer_error(layer: str):
    """A ValueError (MLX's type); in nuvec an OpError naming ``layer`` and the test's line."""
    with pytest.raises(ValueError) as info:
        yield
    if not IS_MLX:
        assert isinstance(info.value, mx.OpError), repr(info.value)
        assert str(info.value).startswith(f"{layer}: "), str(info.value)
        assert os.path.basename(info.value.filename).startswith("test_nn_"), info.value.filename
