"""Helpers of the compile tests: a call counter (one count per trace), seeded inputs, and the
compiled-equals-uncompiled assertion (bit for bit on nuvec, within a tolerance on MLX, whose CPU
compile goes through a C compiler and makes no bitwise promise)."""

import numpy as np
import pytest

from _impl import IS_MLX, mx


def counted(fn):
    """`fn` with a count of how many times its Python body ran (each run is one trace)."""

    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)

    wrapper.calls = 0
    return wrapper


def rand(shape, dtype=np.float32, seed=0, scale=1.0):
    a = np.random.default_rng(seed).standard_normal(shape) * scale
    return mx.array(a.astype(dtype))


def to_np(x):
    return np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16 else x)


def assert_same(got, want):
    """Compiled equals uncompiled: same dtype and shape, and the same bits on nuvec."""
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    g, w = to_np(got), to_np(want)
    if IS_MLX:
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)
    else:
        assert np.array_equal(g, w, equal_nan=True), f"{np.sum(g != w)} elements differ"
        assert np.array_equal(signs(g), signs(w)), "signed zeros differ"


def signs(a):
    """The sign bits of a float array's numbers (NaNs left out), of both parts if complex."""
    if a.dtype.kind == "c":
        return np.concatenate([signs(a.real), signs(a.imag)])
    return np.signbit(a[~np.isnan(a)]) if a.dtype.kind == "f" else np.zeros(0, bool)


def assert_same_tree(got, want):
    """assert_same on each array of two trees of the same structure; other leaves equal."""
    if isinstance(want, mx.array):
        assert isinstance(got, mx.array), type(got)
        assert_same(got, want)
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same_tree(g, w)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want)
        for k in want:
            assert_same_tree(got[k], want[k])
    else:
        assert got == want


def check_compiled(fn, *args, **kwargs):
    """`compile(fn)` twice (a trace, then a replay) equals `fn`, and traces once."""
    f = counted(fn)
    cf = mx.compile(f)
    want = fn(*args, **kwargs)
    for _ in range(2):
        assert_same_tree(cf(*args, **kwargs), want)
    assert f.calls == 1


def nuvec_bug(reason):
    """A known nuvec bug: a strict xfail on nuvec (it fails until fixed), none on MLX."""
    return pytest.mark.xfail(not IS_MLX, strict=True, reason=reason)


def table_params(table, mlx_fails=(), nuvec_bugs=None):
    """pytest params of a table whose rows start with their id: rows MLX 0.32 fails are
    nuvec_only, rows of a known nuvec bug (id -> reason) strict xfails on nuvec."""
    params = []
    for row in table:
        marks = [pytest.mark.nuvec_only] if row[0] in mlx_fails else []
        if row[0] in (nuvec_bugs or {}):
            marks.append(nuvec_bug(nuvec_bugs[row[0]]))
        params.append(pytest.param(*row, id=row[0], marks=marks))
    return params
