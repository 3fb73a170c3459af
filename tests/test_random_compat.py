"""nuvec.random against mlx.core 0.32 bit for bit, the same key and call on both: complex normal,
dtype=None, randint's bounds and dtypes, categorical's inverse-CDF draw (one distribution with a
sample shape) and edge cases, truncated_normal through MLX's own erf, bernoulli, gumbel, laplace,
permutation, split, key and uniform with array bounds; and the errors MLX raises."""

import numpy as np
import pytest

from _impl import mx
from helpers import to_np

try:
    import mlx.core as mlx_core
except ImportError:  # pragma: no cover - depends on the environment
    mlx_core = None

pytestmark = pytest.mark.skipif(mlx_core is None, reason="MLX is not installed")

SEEDS = [0, 1, 7, 12345, 2**33 + 17]


def _np(a, lib):
    """Values, dtype name and shape of a result (bfloat16 widened to float32 for comparison)."""
    name = str(a.dtype).split(".")[-1]
    if name == "bfloat16":
        a = a.astype(lib.float32)
    return (to_np(a) if lib is mx else np.array(a)), name, tuple(a.shape)


def same(call, seeds=SEEDS):
    """call(lib, key) on nuvec and on MLX: equal bits, dtype and shape for every seed."""
    for seed in seeds:
        a, da, sa = _np(call(mx, mx.random.key(seed)), mx)
        b, db, sb = _np(call(mlx_core, mlx_core.random.key(seed)), mlx_core)
        assert (da, sa) == (db, sb), f"seed {seed}"
        if a.dtype.kind in "fc":
            # Bits, -0.0 included; a NaN matches any NaN (its sign and payload are not promised).
            a, b = a.reshape(-1).view(a.real.dtype), b.reshape(-1).view(b.real.dtype)
            both_nan = np.isnan(a) & np.isnan(b)
            np.testing.assert_array_equal(
                np.where(both_nan, 0, a).view(f"u{a.itemsize}"),
                np.where(both_nan, 0, b).view(f"u{b.itemsize}"),
                err_msg=f"seed {seed}",
            )
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"seed {seed}")


def raises_as_mlx(call):
    """call(lib) raises on both; nuvec's exception is an instance of MLX's exception type."""
    with pytest.raises(Exception) as theirs:
        call(mlx_core)
    with pytest.raises(type(theirs.value)):
        call(mx)


# --- complex normal ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (1,), (3,), (4, 5), (2, 3, 7), (1001,)])
def test_complex_normal(shape):
    same(lambda lib, k: lib.random.normal(shape, dtype=lib.complex64, key=k))


@pytest.mark.parametrize(
    "loc,scale",
    [(1.0, 2.0), (None, 0.5), (-3, None), ("complex", 2.0), ("array", "array")],
)
def test_complex_normal_loc_scale(loc, scale):
    def arg(lib, v):
        if v == "complex":
            return lib.array(1.5 - 2j)
        if v == "array":
            return lib.array([1.0, 2.0, 3.0])
        return v

    same(
        lambda lib, k: lib.random.normal(
            (2, 3), dtype=lib.complex64, loc=arg(lib, loc), scale=arg(lib, scale), key=k
        )
    )


def test_complex_normal_parts_have_variance_one_half():
    z = to_np(mx.random.normal((200_000,), dtype=mx.complex64, key=mx.random.key(5)))
    assert abs(z.real.var() - 0.5) < 0.01 and abs(z.imag.var() - 0.5) < 0.01
    assert abs(np.mean(z.real * z.imag)) < 0.01


# --- dtype=None --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, k: lib.random.uniform(shape=(5,), dtype=None, key=k),
        lambda lib, k: lib.random.uniform(-2, 3, (5,), None, key=k),
        lambda lib, k: lib.random.normal((5,), dtype=None, key=k),
        lambda lib, k: lib.random.randint(0, 9, (5,), dtype=None, key=k),
        lambda lib, k: lib.random.truncated_normal(-1, 2, (5,), dtype=None, key=k),
        lambda lib, k: lib.random.gumbel((5,), dtype=None, key=k),
        lambda lib, k: lib.random.laplace((5,), dtype=None, key=k),
    ],
)
def test_dtype_none_is_the_default(call):
    same(call)


@pytest.mark.nuvec_only
def test_nan_bound_converts_as_arrays_do():
    # high - 1 = NaN converts to uint32 as an array of NaNs does (2^31), on every instruction set.
    top = mx.array(float("nan")).astype(mx.uint32)
    assert top.item() == mx.array([float("nan")] * 9).astype(mx.uint32)[8].item() == 2**31
    assert (
        mx.random.randint(0, float("nan"), (4,), mx.uint32, mx.random.key(0)).tolist()
        == [2**31] * 4
    )


def test_multivariate_normal_takes_dtype_none():
    x = mx.random.multivariate_normal(mx.zeros((2,)), mx.eye(2), dtype=None, key=mx.random.key(0))
    assert x.dtype == mx.float32 and x.shape == (2,)


# --- randint -----------------------------------------------------------------------------------

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
BOUNDS = [
    (-5, 100),
    (0, 300),
    (-(2**40), 2**40),
    (2**31 - 10, 2**31 + 10),
    (2**24, 2**24 + 100),
    (5, 5),
    (9, 2),
    (0.5, 7.9),
    (-7.5, -0.2),
    (0, float("inf")),
    (0, float("nan")),
]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("low,high", BOUNDS)
def test_randint_bounds_and_dtypes(low, high, dtype):
    # MLX converts a NaN 0-d bound to uint32 with scalar code (0) and arrays with vector code
    # (2^31); nuvec converts every array as MLX's arrays (docs/random.md): the one case they part.
    if dtype == "uint32" and high != high:
        pytest.skip("MLX's scalar conversion of a NaN bound: test_nan_bound_converts_as_arrays_do")
    same(
        lambda lib, k: lib.random.randint(low, high, (40,), dtype=getattr(lib, dtype), key=k),
        seeds=SEEDS[:3],
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, k: lib.random.randint(
            lib.array([0, 10, 100]), lib.array([[5], [1000]]), (2, 3), key=k
        ),
        lambda lib, k: lib.random.randint(lib.array([0.5, 10.2]), 20, (4, 2), key=k),
        lambda lib, k: lib.random.randint(
            lib.array([0, 5], lib.uint8), lib.array([200, 250], lib.uint8), (3, 2), lib.uint8, k
        ),
        lambda lib, k: lib.random.randint(
            lib.array([0, 2**35], lib.int64), lib.array([10, 2**35 + 1000], lib.int64), (2,), key=k
        ),
        lambda lib, k: lib.random.randint(lib.array([0, 1], lib.float16), 9, (2,), key=k),
        lambda lib, k: lib.random.randint(0, 10, key=k),
        lambda lib, k: lib.random.randint(0, 10, (0,), key=k),
        lambda lib, k: lib.random.randint(-7, 20, (1001,), lib.int16, key=k),
        lambda lib, k: lib.random.randint(-3, 5, (20,), dtype=lib.bool_, key=k),
        lambda lib, k: lib.random.randint(False, True, (5,), key=k),
        lambda lib, k: lib.random.randint(
            0, lib.array([0, 7], lib.uint32), (2,), lib.uint32, key=k
        ),
        lambda lib, k: lib.random.randint(0, lib.array([3.7, 1e10]), (2,), key=k),
    ],
)
def test_randint_array_bounds_broadcast(call):
    same(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.random.randint(0, 5, (3,), dtype=lib.float32),
        lambda lib: lib.random.randint(0, 5, (3,), dtype=lib.complex64),
        lambda lib: lib.random.randint(lib.zeros((3,), lib.int32), 5, (2,)),
        lambda lib: lib.random.randint(lib.zeros((2, 3), lib.int32), 5, (3,)),
    ],
)
def test_randint_errors(call):
    raises_as_mlx(call)


# --- categorical -------------------------------------------------------------------------------

LOGITS = np.log(np.arange(1, 9, dtype=np.float32))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, k: lib.random.categorical(lib.array(LOGITS), shape=(5,), key=k),
        lambda lib, k: lib.random.categorical(lib.array(LOGITS), shape=(2, 3), key=k),
        lambda lib, k: lib.random.categorical(lib.array(LOGITS), num_samples=5, key=k),
        lambda lib, k: lib.random.categorical(lib.array(LOGITS), key=k),
        lambda lib, k: lib.random.categorical(lib.array(LOGITS), shape=(), key=k),
        lambda lib, k: lib.random.categorical(lib.array(LOGITS[None]), key=k),
        lambda lib, k: lib.random.categorical(lib.array(LOGITS[:, None]), axis=0, key=k),
        lambda lib, k: lib.random.categorical(lib.array(LOGITS[None]), shape=(4, 1), key=k),
        lambda lib, k: lib.random.categorical(lib.array(LOGITS[None]), num_samples=6, key=k),
        lambda lib, k: lib.random.categorical(lib.zeros((1, 5, 1)), axis=1, shape=(3, 1, 1), key=k),
        lambda lib, k: lib.random.categorical(lib.zeros((2, 5, 3)), axis=1, num_samples=4, key=k),
        lambda lib, k: lib.random.categorical(lib.zeros((2, 5, 3)), axis=1, shape=(4, 2, 3), key=k),
        lambda lib, k: lib.random.categorical(
            lib.array(LOGITS).astype(lib.float16), shape=(50,), key=k
        ),
        lambda lib, k: lib.random.categorical(lib.array([1, 2, 3]), num_samples=50, key=k),
        lambda lib, k: lib.random.categorical(
            lib.array(np.random.default_rng(0).normal(size=1000).astype(np.float32)),
            num_samples=2000,
            key=k,
        ),
    ],
)
def test_categorical_draws(call):
    same(call)


@pytest.mark.parametrize(
    "logits",
    [
        [0.0, np.inf, 1.0, np.inf],
        [-np.inf, 0.0, -np.inf, 1.0],
        [-np.inf, -np.inf],
        [np.nan, 0.0],
        [-1e30, 0.0, 80.0, 88.5],
    ],
)
def test_categorical_infinite_and_nan_logits(logits):
    same(lambda lib, k: lib.random.categorical(lib.array(logits), num_samples=20, key=k))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, k: lib.random.categorical(lib.array(LOGITS), num_samples=0, key=k),
        lambda lib, k: lib.random.categorical(lib.array(LOGITS), shape=(0,), key=k),
    ],
)
def test_categorical_empty_samples(call):
    same(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.random.categorical(lib.zeros((0,))),
        lambda lib: lib.random.categorical(lib.zeros((0,)), num_samples=3),
        lambda lib: lib.random.categorical(lib.zeros((3, 0))),
        lambda lib: lib.random.categorical(lib.zeros((0, 4)), num_samples=2),
        lambda lib: lib.random.categorical(lib.zeros((3, 4)), shape=(0, 3)),  # Gumbel: empty argmax
        lambda lib: lib.random.categorical(lib.array(1.0)),
        lambda lib: lib.random.categorical(lib.array(LOGITS), axis=1),
        lambda lib: lib.random.categorical(lib.array(LOGITS), shape=(2,), num_samples=2),
        lambda lib: lib.random.categorical(lib.zeros((3, 4)), shape=(5,)),
    ],
)
def test_categorical_errors(call):
    raises_as_mlx(call)


# --- truncated_normal --------------------------------------------------------------------------


def test_mlx_erf_bounds_give_mlx_bits():
    # The samples' bits hang on MLX's erf of the bounds: many bounds, each drawn from.
    rng = np.random.default_rng(3)
    lo = rng.uniform(-4, 1, 300).astype(np.float32)
    hi = (lo + rng.uniform(0.01, 4, 300)).astype(np.float32)
    same(lambda lib, k: lib.random.truncated_normal(lib.array(lo), lib.array(hi), key=k))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize(
    "lower,upper,shape",
    [
        (-1.5, 2.0, (50,)),
        (0.0, 1.0, (7, 3)),
        (-0.25, 0.25, (101,)),
        (-10.0, 10.0, (33,)),
        (2.5, 6.0, (20,)),
        (-np.inf, np.inf, (9,)),
        (-np.inf, 0.0, (9,)),
        ("array", 1.5, None),
        ("array", "column", None),
        ("array", "column", (3, 2, 4)),
        (-1.0, 1.0, ()),
    ],
)
def test_truncated_normal(lower, upper, shape, dtype):
    def bound(lib, v):
        if v == "array":
            return lib.array([-2.0, -1.0, 0.0, 0.5])
        if v == "column":
            return lib.array([[1.0], [2.5]])
        return v

    same(
        lambda lib, k: lib.random.truncated_normal(
            bound(lib, lower), bound(lib, upper), shape, dtype=getattr(lib, dtype), key=k
        )
    )


@pytest.mark.parametrize(
    "lower,upper,dtype",
    [
        (2.0, -2.0, "float32"),
        (float("nan"), 1.0, "float32"),
        (-1e30, 1e30, "float32"),
        (-1e-30, 1e-30, "float32"),
        (-1e-5, 1e-5, "float16"),
        (-np.inf, np.inf, "bfloat16"),
    ],
)
def test_truncated_normal_edge_bounds(lower, upper, dtype):
    same(
        lambda lib, k: lib.random.truncated_normal(
            lower, upper, (9,), dtype=getattr(lib, dtype), key=k
        )
    )


def test_truncated_normal_over_many_keys():
    same(
        lambda lib, k: lib.random.truncated_normal(
            lib.array([-3.0, -0.5, 0.1]), lib.array([[-1.0], [0.4], [3.0]]), (2, 3, 3), key=k
        ),
        seeds=range(0, 2**40, 2**34 + 12345),
    )


def test_categorical_over_many_keys():
    logits = np.random.default_rng(1).normal(size=50).astype(np.float32)
    same(
        lambda lib, k: lib.random.categorical(lib.array(logits), shape=(7, 11), key=k),
        seeds=range(0, 2**40, 2**34 + 12345),
    )


def test_truncated_normal_errors():
    raises_as_mlx(lambda lib: lib.random.truncated_normal(0, 1, (2,), dtype=lib.int32))
    raises_as_mlx(lambda lib: lib.random.truncated_normal(lib.zeros((3,)), 1, (2,)))


# --- the other samplers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, k: lib.random.bernoulli(
            lib.array([0.2, 0.5, 0.9], lib.float16), (64, 3), key=k
        ),
        lambda lib, k: lib.random.bernoulli(
            lib.array([0.2, 0.5, 0.9], lib.bfloat16), (64, 3), key=k
        ),
        lambda lib, k: lib.random.bernoulli(
            lib.array(np.linspace(0, 1, 1001, dtype=np.float32)), key=k
        ),
        lambda lib, k: lib.random.bernoulli(lib.array([-0.5, 1.5, 1.0, 0.0]), (100, 4), key=k),
        lambda lib, k: lib.random.bernoulli(key=k),
        lambda lib, k: lib.random.bernoulli(0.3, (), key=k),
        lambda lib, k: lib.random.gumbel((1001,), key=k),
        lambda lib, k: lib.random.gumbel((64,), dtype=lib.float16, key=k),
        lambda lib, k: lib.random.laplace((64,), dtype=lib.float64, loc=0.1, scale=0.3, key=k),
        lambda lib, k: lib.random.laplace((64,), dtype=lib.bfloat16, loc=0.1, scale=0.3, key=k),
        lambda lib, k: lib.random.permutation(5000, key=k),
        lambda lib, k: lib.random.permutation(0, key=k),
        lambda lib, k: lib.random.permutation(lib.arange(12).reshape(3, 4), axis=-1, key=k),
        lambda lib, k: lib.random.split(k, 0),
        lambda lib, k: lib.random.split(k, 1),
        lambda lib, k: lib.random.split(k, 33),
        lambda lib, k: lib.random.uniform(
            lib.array([0.0, 1.0, 2.0]), lib.array([[1.0], [5.0]]), (2, 3), key=k
        ),
        lambda lib, k: lib.random.uniform(
            lib.array([0.0, 1.0, 2.0]), 3, (4, 3), lib.float16, key=k
        ),
        lambda lib, k: lib.random.uniform(5, 1, (7,), key=k),
        lambda lib, k: lib.random.uniform(shape=(0, 3), key=k),
        lambda lib, k: lib.random.normal(
            (2, 3), loc=lib.array([1.0, 2.0, 3.0]), scale=lib.array([[1.0], [2.0]]), key=k
        ),
    ],
)
def test_other_samplers(call):
    same(call)


@pytest.mark.parametrize("seed", [0, 1, 2**32 - 1, 2**32, 2**64 - 1])
def test_key(seed):
    np.testing.assert_array_equal(to_np(mx.random.key(seed)), np.array(mlx_core.random.key(seed)))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.random.key(-1),
        lambda lib: lib.random.key(2**64),
        lambda lib: lib.random.key(1.5),
        lambda lib: lib.random.split(lib.random.key(0), -1),
        lambda lib: lib.random.split(lib.array([1, 2]), 2),
        lambda lib: lib.random.split(lib.random.split(lib.random.key(0), 3), 2),
        lambda lib: lib.random.permutation(-3),
        lambda lib: lib.random.permutation(lib.array(5)),
        lambda lib: lib.random.permutation(lib.arange(5), axis=1),
        lambda lib: lib.random.bernoulli(1, (3,)),
        lambda lib: lib.random.bernoulli(lib.array([0.1, 0.2]), (3,)),
        lambda lib: lib.random.uniform(shape=(2,), dtype=lib.int32),
        lambda lib: lib.random.uniform(lib.zeros((2, 3)), 1, (3,)),
        lambda lib: lib.random.normal((3,), dtype=lib.int32),
        lambda lib: lib.random.gumbel((3,), dtype=lib.int32),
        lambda lib: lib.random.laplace((3,), dtype=lib.complex64),
    ],
)
def test_errors_as_mlx(call):
    raises_as_mlx(call)


@pytest.mark.nuvec_only  # MLX's binding takes only a Python int for x (TypeError for NumPy's)
def test_permutation_of_a_numpy_integer_is_of_arange():
    k = mx.random.key(4)
    np.testing.assert_array_equal(
        to_np(mx.random.permutation(np.int64(7), key=k)), to_np(mx.random.permutation(7, key=k))
    )


@pytest.mark.nuvec_only  # nuvec goes further: MLX 0.32's uniform raises for float64
@pytest.mark.parametrize("name", ["uniform", "gumbel", "truncated_normal"])
def test_float64_samplers_follow_the_float32_draw(name):
    k = mx.random.key(2)
    args = (-1.0, 1.0, (64,)) if name == "truncated_normal" else ((64,),)
    if name == "uniform":
        a = mx.random.uniform(shape=(64,), dtype=mx.float64, key=k)
        b = mx.random.uniform(shape=(64,), key=k)
    else:
        a = getattr(mx.random, name)(*args, dtype=mx.float64, key=k)
        b = getattr(mx.random, name)(*args, key=k)
    assert a.dtype == mx.float64
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_erfinv_is_mlx_bit_for_bit(dtype):
    # normal and truncated_normal use erfinv; nuvec's public erfinv is MLX's in these dtypes.
    rng = np.random.default_rng(2)
    x = np.concatenate(
        [
            np.linspace(-1, 1, 20001, dtype=np.float32),
            rng.uniform(-1, 1, 100_000).astype(np.float32),
            1 - 10.0 ** rng.uniform(-8, 0, 10_000).astype(np.float32),
        ]
    )
    a = mx.erfinv(mx.array(x).astype(getattr(mx, dtype))).astype(mx.float32)
    b = mlx_core.erfinv(mlx_core.array(x).astype(getattr(mlx_core, dtype))).astype(mlx_core.float32)
    np.testing.assert_array_equal(to_np(a), np.array(b))
