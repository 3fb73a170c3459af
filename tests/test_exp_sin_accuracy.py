"""float32 exp and sin are nuvec's own vector code (backend/cpu/simd/expsin.h): their error bound
against float64 over each range, the edges (overflow, underflow, large arguments, specials), and
lane independence (a value's bits do not depend on its neighbours or position)."""

import numpy as np
import pytest

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


@pytest.mark.parametrize("name", ["exp", "sin", "sigmoid"])
def test_lanes_independent(name):
    x = np.random.default_rng(3).uniform(-20, 20, 1001).astype(np.float32)
    f = getattr(mx, name)
    whole = np.array(f(mx.array(x)))
    one_by_one = np.array([np.array(f(mx.array(v))) for v in x[:37]])
    np.testing.assert_array_equal(whole[:37], one_by_one)
    np.testing.assert_array_equal(whole[5:], np.array(f(mx.array(x[5:]))))
