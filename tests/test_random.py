"""nuvec.random: MLX's golden values, bit-exactness against MLX for many keys, shapes and dtypes,
the statistics of every sampler, the global state, and argument errors."""

import threading

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import run_script, to_np

try:
    import mlx.core as mlx_core
except ImportError:  # pragma: no cover - depends on the environment
    mlx_core = None

needs_mlx = pytest.mark.skipif(mlx_core is None, reason="MLX is not installed")


# --- golden values (COMPAT.md) -----------------------------------------------------------------


def test_key_layout():
    assert mx.random.key(0).dtype == mx.uint32
    assert to_np(mx.random.key(0)).tolist() == [0, 0]
    assert to_np(mx.random.key(2**40 + 5)).tolist() == [256, 5]


def test_golden_split():
    assert to_np(mx.random.split(mx.random.key(0))).tolist() == [
        [4146024105, 967050713],
        [2718843009, 1272950319],
    ]


def test_golden_uniform_and_normal():
    u = to_np(mx.random.uniform(key=mx.random.key(0), shape=(3,)))
    n = to_np(mx.random.normal(key=mx.random.key(0), shape=(3,)))
    np.testing.assert_array_equal(u, np.float32([0.96532148, 0.31468171, 0.63303000]))
    np.testing.assert_array_equal(n, np.float32([1.81608713, -0.48262301, 0.33988926]))


@pytest.mark.nuvec_only
@pytest.mark.parametrize("width,dtype", [(1, "uint8"), (2, "uint16"), (4, "uint32")])
def test_bits_are_the_split_stream(width, dtype):
    # bits((n,), 4) of a key are the words split() takes as keys; narrower widths are their bytes.
    k = mx.random.key(3)
    words = to_np(mx.random.split(k, 5)).reshape(-1)
    b = mx.random.bits((10 * 4 // width,), width, key=k)
    assert b.dtype == getattr(mx, dtype)
    np.testing.assert_array_equal(to_np(b).view(np.uint32), words)


@pytest.mark.nuvec_only
@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
def test_bits_of_odd_byte_counts_are_whole_words_cut(n):
    # B bytes come from ceil(B/4) words: a uint8 draw is the start of the uint32 draw of as many words.
    k = mx.random.key(11)
    words = to_np(mx.random.bits(((n + 3) // 4,), 4, key=k))
    np.testing.assert_array_equal(to_np(mx.random.bits((n,), 1, key=k)), words.view(np.uint8)[:n])


# --- bit for bit against MLX -------------------------------------------------------------------

FLOAT_DTYPES = ["float32", "float16", "bfloat16"]
SHAPES = [(1,), (2,), (3,), (17,), (4, 5), (2, 3, 7), (1001,)]
SEEDS = [0, 1, 7, 12345, 2**33 + 17]


def _samplers(lib, d):
    dt = getattr(lib, d)
    return {
        "uniform": lambda s, k: lib.random.uniform(shape=s, dtype=dt, key=k),
        "uniform_range": lambda s, k: lib.random.uniform(-2.5, 4.0, s, dtype=dt, key=k),
        "normal": lambda s, k: lib.random.normal(s, dtype=dt, key=k),
        "normal_loc_scale": lambda s, k: lib.random.normal(s, dtype=dt, loc=1.5, scale=0.5, key=k),
        "gumbel": lambda s, k: lib.random.gumbel(s, dtype=dt, key=k),
        "laplace": lambda s, k: lib.random.laplace(s, dtype=dt, loc=0.25, scale=2.0, key=k),
    }


@needs_mlx
@pytest.mark.parametrize("d", FLOAT_DTYPES)
@pytest.mark.parametrize("name", list(_samplers(mx, "float32")))
def test_float_samplers_match_mlx(name, d):
    ours, theirs = _samplers(mx, d)[name], _samplers(mlx_core, d)[name]
    for seed in SEEDS:
        for shape in SHAPES:
            a = ours(shape, mx.random.key(seed))
            b = theirs(shape, mlx_core.random.key(seed))
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
            a, b = (
                to_np(a),
                np.array(b.astype(mlx_core.float32) if b.dtype == mlx_core.bfloat16 else b),
            )
            np.testing.assert_array_equal(a, b, err_msg=f"{name} {d} seed {seed} shape {shape}")


def _discrete(lib):
    logits = np.log(np.arange(1, 25, dtype=np.float32)).reshape(3, 8)
    return {
        "randint": lambda k: lib.random.randint(-7, 20, (501,), key=k),
        "randint_uint8": lambda k: lib.random.randint(0, 200, (33,), dtype=lib.uint8, key=k),
        "bernoulli": lambda k: lib.random.bernoulli(0.3, (501,), key=k),
        "bernoulli_array": lambda k: lib.random.bernoulli(lib.array([0.1, 0.5, 0.9]), key=k),
        "categorical_rows": lambda k: lib.random.categorical(lib.array(logits), key=k),
        "categorical_num_samples": lambda k: lib.random.categorical(
            lib.array(logits), num_samples=4, key=k
        ),
        "categorical_axis0": lambda k: lib.random.categorical(lib.array(logits), axis=0, key=k),
        "categorical_1d": lambda k: lib.random.categorical(lib.array(logits[1]), key=k),
        "categorical_batched_shape": lambda k: lib.random.categorical(
            lib.array(logits), shape=(2, 3), key=k
        ),
        "permutation": lambda k: lib.random.permutation(100, key=k),
        "permutation_axis": lambda k: lib.random.permutation(
            lib.array(np.arange(12).reshape(3, 4)), axis=1, key=k
        ),
        "split": lambda k: lib.random.split(k, 7),
        "normal_float64": lambda k: lib.random.normal((9,), dtype=lib.float64, key=k),
    }


@needs_mlx
@pytest.mark.parametrize("name", list(_discrete(mx)))
def test_discrete_samplers_match_mlx(name):
    for seed in SEEDS:
        a = _discrete(mx)[name](mx.random.key(seed))
        b = _discrete(mlx_core)[name](mlx_core.random.key(seed))
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_array_equal(to_np(a), np.array(b), err_msg=f"{name} seed {seed}")


@needs_mlx
def test_large_normal_matches_mlx():
    k = [5, 9]
    a = mx.random.normal((1 << 20,), key=mx.array(np.uint32(k)))
    b = mlx_core.random.normal((1 << 20,), key=mlx_core.array(np.uint32(k)))
    np.testing.assert_array_equal(to_np(a), np.array(b))


@needs_mlx
def test_log_matches_mlx_bit_for_bit():
    # normal, gumbel and laplace lean on float32 log being glibc's (MLX calls std::log).
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            rng.uniform(0, 1, 100_000),
            rng.uniform(1, 1e6, 100_000),
            10.0 ** rng.uniform(-44, 38, 100_000),
            [0.0, -1.0, np.inf, np.nan, 1.0, 1e-45],
        ]
    ).astype(np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(
            to_np(mx.log(mx.array(x))), np.array(mlx_core.log(mlx_core.array(x)))
        )
        np.testing.assert_array_equal(
            to_np(mx.log1p(mx.array(x - 1))), np.array(mlx_core.log1p(mlx_core.array(x - 1)))
        )


# --- statistics --------------------------------------------------------------------------------

N = 200_000


def _stats(x):
    x = to_np(x).astype(np.float64)
    return x, x.mean(), x.var()


@pytest.mark.parametrize("d", FLOAT_DTYPES)
def test_uniform_statistics(d):
    x, m, v = _stats(mx.random.uniform(-1, 3, (N,), dtype=getattr(mx, d), key=mx.random.key(1)))
    assert x.min() >= -1 and x.max() < 3
    assert abs(m - 1) < 0.02 and abs(v - 16 / 12) < 0.02


@pytest.mark.parametrize("d", FLOAT_DTYPES)
def test_normal_statistics(d):
    x, m, v = _stats(
        mx.random.normal((N,), dtype=getattr(mx, d), loc=2.0, scale=3.0, key=mx.random.key(2))
    )
    assert abs(m - 2) < 0.05 and abs(v - 9) < 0.15
    assert np.isfinite(x).all()


def test_truncated_normal_statistics():
    x, m, v = _stats(mx.random.truncated_normal(-1.0, 2.0, (N,), key=mx.random.key(3)))
    assert x.min() >= -1 and x.max() <= 2
    # Mean and variance of N(0, 1) truncated to [-1, 2].
    from scipy.stats import truncnorm

    assert abs(m - truncnorm.mean(-1, 2)) < 0.01 and abs(v - truncnorm.var(-1, 2)) < 0.01


def test_gumbel_statistics():
    x, m, v = _stats(mx.random.gumbel((N,), key=mx.random.key(4)))
    assert abs(m - 0.5772157) < 0.02 and abs(v - np.pi**2 / 6) < 0.05


def test_laplace_statistics():
    x, m, v = _stats(mx.random.laplace((N,), loc=1.0, scale=2.0, key=mx.random.key(5)))
    assert abs(m - 1) < 0.03 and abs(v - 8) < 0.2


def test_randint_range_and_uniformity():
    x = to_np(mx.random.randint(-3, 5, (N,), key=mx.random.key(6)))
    assert x.min() == -3 and x.max() == 4
    counts = np.bincount(x + 3)
    assert np.all(np.abs(counts / N - 1 / 8) < 0.005)


def test_bernoulli_frequency():
    x = to_np(mx.random.bernoulli(0.3, (N,), key=mx.random.key(7)))
    assert x.dtype == np.bool_ and abs(x.mean() - 0.3) < 0.005


@pytest.mark.parametrize("kwargs", [{"num_samples": 50_000}, {"shape": (50_000,)}])
def test_categorical_frequencies(kwargs):
    p = np.float32([0.1, 0.2, 0.3, 0.4])
    x = to_np(mx.random.categorical(mx.array(np.log(p)), key=mx.random.key(8), **kwargs))
    assert x.shape == (50_000,)
    assert np.all(np.abs(np.bincount(x, minlength=4) / x.size - p) < 0.01)


def test_permutation_is_a_permutation():
    p = to_np(mx.random.permutation(1000, key=mx.random.key(9)))
    assert sorted(p.tolist()) == list(range(1000)) and p.tolist() != list(range(1000))
    x = to_np(
        mx.random.permutation(mx.array(np.arange(20).reshape(4, 5)), axis=1, key=mx.random.key(9))
    )
    assert (np.sort(x, axis=1) == np.arange(20).reshape(4, 5)).all()


@pytest.mark.nuvec_only  # MLX's Python module has no bits()
def test_bits_statistics():
    b = to_np(mx.random.bits((N,), key=mx.random.key(10)))
    bits = np.unpackbits(b.view(np.uint8))
    assert abs(bits.mean() - 0.5) < 0.002


# --- global state ------------------------------------------------------------------------------


def test_seed_makes_draws_repeat_and_advance():
    mx.random.seed(42)
    a, b = to_np(mx.random.uniform(shape=(4,))), to_np(mx.random.uniform(shape=(4,)))
    mx.random.seed(42)
    np.testing.assert_array_equal(to_np(mx.random.uniform(shape=(4,))), a)
    assert not np.array_equal(a, b)


@needs_mlx
@pytest.mark.nuvec_only  # two global states: under MLX both draws would share one
def test_global_stream_matches_mlx():
    mx.random.seed(3)
    mlx_core.random.seed(3)
    for _ in range(3):
        np.testing.assert_array_equal(
            to_np(mx.random.normal((5,))), np.array(mlx_core.random.normal((5,)))
        )


@pytest.mark.nuvec_only
def test_state_is_a_list_holding_the_key_per_thread():
    mx.random.seed(1)
    state = mx.random.state
    assert isinstance(state, list) and len(state) == 1
    np.testing.assert_array_equal(to_np(state[0]), [0, 1])
    seen = {}

    def other():
        mx.random.seed(2)
        seen["key"] = to_np(mx.random.state[0]).tolist()

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen["key"] == [0, 2]
    np.testing.assert_array_equal(to_np(mx.random.state[0]), [0, 1])  # this thread's is untouched


@pytest.mark.nuvec_only
def test_results_do_not_depend_on_thread_count():
    before = mx.get_num_threads()
    try:
        mx.set_num_threads(1)
        a = to_np(mx.random.normal((300_001,), key=mx.random.key(4)))
        mx.set_num_threads(3)
        b = to_np(mx.random.normal((300_001,), key=mx.random.key(4)))
    finally:
        mx.set_num_threads(before)
    np.testing.assert_array_equal(a, b)


ISA_SCRIPT = r"""
import json, sys
import numpy as np
import nuvec as mx
k = mx.random.key(21)
out = {"isa": mx._core._cpu_isa()}
for name in ["uniform", "normal", "gumbel"]:
    out[name] = np.asarray(getattr(mx.random, name)(shape=(1037,), key=k)).view(np.uint32).tolist()
json.dump(out, sys.stdout)
"""


@pytest.mark.nuvec_only
@pytest.mark.skipif(IS_MLX, reason="nuvec's kernel builds")
def test_every_kernel_build_gives_the_same_bits():
    runs = {
        isa: run_script(ISA_SCRIPT, NUVEC_CPU_ISA=isa) for isa in ["portable", "avx2", "avx512"]
    }
    for out in runs.values():
        for name in ["uniform", "normal", "gumbel"]:
            assert out[name] == runs["portable"][name], f"{out['isa']} {name}"


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.nuvec_only
@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.random.uniform(shape=(2,), key=mx.array([1, 2])),  # int32 key
        lambda: mx.random.uniform(shape=(2,), key=mx.array(np.uint32([1, 2, 3]))),
        lambda: mx.random.bits((2,), 3, key=mx.random.key(0)),
        lambda: mx.random.uniform(shape=(2,), dtype=mx.int32),
        lambda: mx.random.normal((-1,)),
        lambda: mx.random.randint(0, 5, (2,), dtype=mx.float32),
        lambda: mx.random.bernoulli(mx.array([1, 0]), (2,)),
        lambda: mx.random.categorical(mx.zeros((3, 4)), shape=(2,), num_samples=3),
        lambda: mx.random.categorical(mx.zeros((3, 4)), shape=(5,)),
        lambda: mx.random.uniform(mx.zeros((3,)), 1, (2,)),
    ],
)
def test_bad_arguments_raise_op_error(call):
    with pytest.raises(mx.OpError):
        call()


@pytest.mark.nuvec_only
def test_axis_out_of_range_is_an_index_error():
    with pytest.raises(IndexError):
        mx.random.permutation(mx.zeros((3,)), axis=2)


def test_multivariate_normal_shape_and_bad_cov():
    # Its values: tests/test_linalg_spectral_mvn.py.
    assert mx.random.multivariate_normal(
        mx.zeros((2,)), mx.eye(2), (3,), key=mx.random.key(0)
    ).shape == (3, 2)
    with pytest.raises(ValueError):
        mx.random.multivariate_normal(mx.zeros((2,)), mx.eye(3))
