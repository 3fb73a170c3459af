"""float32 exp, sin and erf are nuvec's own vector code (backend/cpu/simd/expsin.h, erf.h): their
error bound against float64 over each range, the edges (overflow, underflow, large arguments,
specials, the pieces' seams), and lane independence (a value's bits do not depend on its
neighbours or position). Division by a power of two runs as a product: the same bits."""

import numpy as np
import pytest
import scipy.special

import nuvec as mx

# The CPU's own exp and sin (backend/cpu/simd/expsin.h); the GPU's are CUDA's.
pytestmark = pytest.mark.cpu_backend

# (op, reference, low, high, bound in ulps of the float32 result)
RANGES = [
    ("exp", np.exp, -87.0, 88.0, 1.5),
    ("exp", np.exp, -10.0, 10.0, 1.5),
    ("sin", np.sin, -4.0, 4.0, 2.0),
    ("sin", np.sin, -8192.0, 8192.0, 2.0),
    ("sin", np.sin, -1e6, 1e6, 2.0),
    ("erf", scipy.special.erf, -0.9, 0.9, 1.5),
    ("erf", scipy.special.erf, -4.0, 4.0, 1.5),
    ("erf", scipy.special.erf, 0.85, 1.2, 1.5),
    ("erf", scipy.special.erf, -1e-3, 1e-3, 1.5),
]


@pytest.mark.parametrize("name,ref,lo,hi,bound", RANGES)
def test_error_bound(name, ref, lo, hi, bound):
    x = np.random.default_rng(7).uniform(lo, hi, 1 << 20).astype(np.float32)
    got = np.array(getattr(mx, name)(mx.array(x))).astype(np.float64)
    want = ref(x.astype(np.float64))
    ulp = np.abs(np.spacing(want.astype(np.float32))).astype(np.float64)
    normal = np.abs(want) > np.finfo(np.float32).tiny
    assert np.max(np.abs(got - want)[normal] / ulp[normal]) <= bound


def test_exp_edges():
    x = np.array(
        [0, -0.0, 1, 88.72, 88.73, 100, -87.3, -103.9, -104, -200, np.inf, -np.inf, np.nan],
        np.float32,
    )
    got = np.array(mx.exp(mx.array(x)))
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=2e-45)
    assert (
        np.isinf(got[[4, 5, 10]]).all()
        and got[[9, 11]].tolist() == [0.0, 0.0]
        and np.isnan(got[12])
    )


def test_sin_edges():
    x = np.array(
        [0.0, -0.0, 1e-30, -1e-30, np.pi, 8191.9, 8192.0, 1e30, np.inf, -np.inf, np.nan], np.float32
    )
    got = np.array(mx.sin(mx.array(x)))
    with np.errstate(invalid="ignore"):
        want = np.sin(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(got[:8], want[:8], rtol=2.5e-7, atol=1e-12)
    assert np.signbit(got[1]) and np.isnan(got[8:]).all()


def test_erf_edges():
    tiny = np.finfo(np.float32).tiny
    x = np.array(
        [
            0,
            -0.0,
            1e-30,
            -1e-30,
            tiny,
            0.8999999,
            0.9,
            3.94,
            3.95,
            3.96,
            4,
            1e30,
            np.inf,
            -np.inf,
            np.nan,
        ],
        np.float32,
    )
    got = np.array(mx.erf(mx.array(x)))
    want = scipy.special.erf(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(got[:-1], want[:-1], rtol=1.5e-7, atol=0)
    assert np.signbit(got[1]) and not np.signbit(got[0]) and np.isnan(got[-1])
    assert got[9:14].tolist() == [1.0, 1.0, 1.0, 1.0, -1.0]
    odd = np.random.default_rng(5).uniform(-5, 5, 4096).astype(np.float32)
    np.testing.assert_array_equal(
        np.array(mx.erf(mx.array(-odd))), -np.array(mx.erf(mx.array(odd)))
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_division_by_a_power_of_two_is_the_product(dtype):
    mx_dtype = mx.float32 if dtype == np.float32 else mx.float64
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(1000) * 10.0 ** rng.integers(-40, 38, 1000)).astype(dtype)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(dtype).tiny, np.finfo(dtype).max]
    x = np.concatenate([x, np.array(specials + [np.finfo(dtype).smallest_subnormal] * 3, dtype)])
    for d in [2.0, 0.5, -4.0, 2.0**-100, 2.0**100, 3.0, 0.1]:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            want = x / dtype(d)
        got = np.array(mx.array(x, mx_dtype) / d)
        np.testing.assert_array_equal(got, want, err_msg=f"x / {d}")
        assert np.array_equal(np.signbit(got), np.signbit(want))
    with np.errstate(divide="ignore", over="ignore"):  # a scalar over an array: still a division
        want = dtype(2.0) / x[:1000]
    np.testing.assert_array_equal(np.array(2.0 / mx.array(x[:1000], mx_dtype)), want)


@pytest.mark.parametrize("name", ["exp", "sin", "sigmoid", "erf"])
def test_lanes_independent(name):
    spread = 3.0 if name == "erf" else 20.0  # erf: lanes of both pieces in most vectors
    x = np.random.default_rng(3).uniform(-spread, spread, 1001).astype(np.float32)
    f = getattr(mx, name)
    whole = np.array(f(mx.array(x)))
    one_by_one = np.array([np.array(f(mx.array(v))) for v in x[:37]])
    np.testing.assert_array_equal(whole[:37], one_by_one)
    np.testing.assert_array_equal(whole[5:], np.array(f(mx.array(x[5:]))))
