"""Differential tests: nuvec and MLX side by side on the same inputs, for every op of the table
(same result dtype, close values), the promotion table and weak scalars.

Skipped when either framework is missing, and entirely when NUVEC_TEST_IMPL=mlx (there is
nothing to compare then). Inputs never contain integer division by zero (MLX dies of SIGFPE).
"""

import numpy as np
import pytest

from _impl import IS_MLX

if IS_MLX:
    pytest.skip("differential tests need nuvec; NUVEC_TEST_IMPL=mlx", allow_module_level=True)

mlx = pytest.importorskip("mlx.core")
nv = pytest.importorskip("nuvec")

from helpers import ALL, DTYPE_NAMES, seeded_rng  # noqa: E402
from op_table import OPS, cases  # noqa: E402

_MLX_DT = {n: getattr(mlx, "bool_" if n == "bool" else n) for n in DTYPE_NAMES}
_NV_DT = {n: getattr(nv, "bool_" if n == "bool" else n) for n in DTYPE_NAMES}


def _name(d, table):
    for n, v in table.items():
        if d == v:
            return n
    raise AssertionError(f"unknown dtype {d!r}")


def _to_numpy(x, lib, table):
    if x.dtype == table["bfloat16"]:
        x = x.astype(table["float32"])
    return np.array(x)


def _run(lib, table, op, dt, xs):
    names = op.slot_dtypes(dt)
    ins = [lib.array(x, dtype=table[n]) for x, n in zip(xs, names)]
    out = op.call(lib, *ins)
    return list(out) if op.n_out > 1 else [out]


def _tolerance(op, dt):
    rtol, atol = op.tolerance(dt)
    res = op.result_dtype(dt)
    if op.mlx_f64_lowp and res == "float64":
        return 2e-5, 2e-6  # MLX computes these in single precision
    return 2 * rtol, 2 * atol


@pytest.mark.parametrize("op,dt", [p.values for p in cases(OPS)], ids=[p.id for p in cases(OPS)])
def test_op_matches_mlx(op, dt):
    if not hasattr(mlx, op.name):
        pytest.skip(f"MLX has no {op.name} (a registry op of nuvec's own)")
    rng = seeded_rng("mlx-diff", op.test_id, dt)
    for shapes in ([(4, 7)] * op.arity, [(33,)] * op.arity, [()] * op.arity):
        xs = op.sample(rng, shapes, dt)
        got = _run(nv, _NV_DT, op, dt, xs)
        ref = _run(mlx, _MLX_DT, op, dt, xs)
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            gname, rname = _name(g.dtype, _NV_DT), _name(r.dtype, _MLX_DT)
            assert gname == rname, f"{op.test_id}[{dt}]: nuvec {gname}, MLX {rname}"
            assert tuple(g.shape) == tuple(r.shape)
            gv, rv = _to_numpy(g, nv, _NV_DT), _to_numpy(r, mlx, _MLX_DT)
            if gv.dtype.kind in "biu":
                np.testing.assert_array_equal(gv, rv, err_msg=f"{op.test_id}[{dt}]")
            else:
                rtol, atol = _tolerance(op, dt)
                np.testing.assert_allclose(
                    gv, rv, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{op.test_id}[{dt}]"
                )


@pytest.mark.parametrize("a", ALL)
def test_promotion_matches_mlx(a):
    for b in ALL:
        g = nv.zeros((1,), _NV_DT[a]) + nv.zeros((1,), _NV_DT[b])
        r = mlx.zeros((1,), _MLX_DT[a]) + mlx.zeros((1,), _MLX_DT[b])
        assert _name(g.dtype, _NV_DT) == _name(r.dtype, _MLX_DT), (a, b)


@pytest.mark.parametrize("s", [True, 3, -2, 2.5, 1j, np.float64(1.5), np.int64(4)], ids=repr)
def test_weak_scalars_match_mlx(s):
    for dt in ALL:
        if (
            isinstance(s, (int, np.integer))
            and not isinstance(s, bool)
            and s < 0
            and dt.startswith("uint")
        ):
            continue  # out of range for unsigned dtypes: an error in both
        if isinstance(s, np.integer) and dt == "bool":
            continue  # MLX 0.32 casts the NumPy int to bool here (bool * np.int64(4) -> bool)
        g = nv.ones((2,), _NV_DT[dt]) * s
        r = mlx.ones((2,), _MLX_DT[dt]) * s
        assert _name(g.dtype, _NV_DT) == _name(r.dtype, _MLX_DT), (dt, s)
        np.testing.assert_allclose(
            _to_numpy(g, nv, _NV_DT).astype(np.complex128),
            _to_numpy(r, mlx, _MLX_DT).astype(np.complex128),
            rtol=1e-2,
        )


@pytest.mark.parametrize(
    "value",
    [
        1,
        2**40,
        1.5,
        True,
        1j,
        [1, 2.5],
        [[True, 3]],
        np.arange(3),
        np.ones(2),
        np.ones(2, np.float16),
    ],
    ids=repr,
)
def test_array_defaults_match_mlx(value):
    assert _name(nv.array(value).dtype, _NV_DT) == _name(mlx.array(value).dtype, _MLX_DT)


def test_creation_matches_mlx():
    pairs = [
        (lambda m: m.arange(10, 0, -3), None),
        (lambda m: m.arange(0, 1, 0.25), None),
        (lambda m: m.linspace(-1, 1, 9), None),
        (lambda m: m.eye(3, 4, 1), None),
        (lambda m: m.tri(4, 3, -1), None),
        (lambda m: m.full((2, 3), 7), None),
        (lambda m: m.array(np.arange(12, dtype=np.float32).reshape(3, 4)).T[::2], None),
    ]
    for make, _ in pairs:
        g, r = make(nv), make(mlx)
        assert _name(g.dtype, _NV_DT) == _name(r.dtype, _MLX_DT)
        np.testing.assert_allclose(np.array(g), np.array(r), rtol=1e-6)


def test_repr_matches_mlx():
    for make in (
        lambda m: m.array([1, 2, 3]),
        lambda m: m.array([[1.5, -2.0], [0.25, 3.0]]),
        lambda m: m.array(True),
        lambda m: m.zeros((0, 2), m.int8),
    ):
        assert repr(make(nv)) == repr(make(mlx))


def test_bf16_rounding_matches_mlx():
    v = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    g = nv.array(v).astype(nv.bfloat16).astype(nv.float32)
    r = mlx.array(v).astype(mlx.bfloat16).astype(mlx.float32)
    np.testing.assert_array_equal(np.array(g), np.array(r))
    g = nv.array(v).astype(nv.float16)
    r = mlx.array(v).astype(mlx.float16)
    np.testing.assert_array_equal(np.array(g), np.array(r))
