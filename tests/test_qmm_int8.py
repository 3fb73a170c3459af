"""Integer activations (backend/cpu/quantized.h states the arithmetic): quantized_matmul(...,
activation_bits=8), nuvec's own (MLX has no such argument), rounds x to int8 per group; float x on
4-bit weights, and on 8-bit weights in groups of 32 or 64 where the AVX-512 build runs with VNNI,
is rounded to three int8 digits (17-22 bits) by default. Both against a NumPy
float64 evaluation of the formula (to 1e-6), the float product (int8: to about 1e-2; three digits:
within float32 rounding), every kernel build (bit for bit), any thread count and row count (bit
for bit); the option off changes no bit; nuvec.lm's decode with it."""

import numpy as np
import pytest

from _impl import mx
from helpers import run_script, seeded_rng, to_np
from lm_reference import smollm2_path
from test_quantize import ref_codes

pytestmark = pytest.mark.nuvec_only


def weight(rng, n, k, group, bits, sdtype="float32"):
    """(w, scales, biases) of a random (n, k) weight, scales and biases in `sdtype`."""
    wq, s, b = mx.quantize(mx.array(rng.standard_normal((n, k)).astype(np.float32)), group, bits)
    return wq, s.astype(getattr(mx, sdtype)), b.astype(getattr(mx, sdtype))


def limit_of(group, digits, bits=4):
    """The largest |integer| x is rounded to: 127 for int8, else what keeps int32 sums exact."""
    return 127 if digits == 1 else (2**31 - 1) // ((2**bits - 1) * group) - 128


def formula(x, wq, s, b, group, bits, digits=1):
    """The integer path's arithmetic in float64 (x's integers and scales exactly as the kernel's
    float32 steps make them), and each output's sum of |terms| (the tolerance's scale)."""
    x = np.asarray(x, np.float32).reshape(-1, np.asarray(x).shape[-1])
    m, k = x.shape
    groups = k // group
    xg = x.reshape(m, groups, group)
    amax = np.abs(xg).max(-1)
    lim = np.float32(limit_of(group, digits, bits))
    d = amax / lim
    with np.errstate(divide="ignore"):
        inv = np.where(amax > 0, lim / amax, np.float32(0)).astype(np.float32)
    q = np.rint(np.clip(xg * inv[..., None], -lim, lim)).astype(np.int64)
    codes = ref_codes(np.array(wq), bits, k).astype(np.int64).reshape(-1, groups, group)
    isum = np.einsum("mgi,ngi->mng", q, codes).astype(np.float64)
    sc, bi = to_np(s.astype(mx.float32)).astype(np.float64), to_np(b.astype(mx.float32))
    t1 = sc[None] * d[:, None].astype(np.float64) * isum
    t2 = bi.astype(np.float64)[None] * (d * q.sum(-1))[:, None]
    return (t1 + t2).sum(-1), (np.abs(t1) + np.abs(t2)).sum(-1)


def int8(x, wq, s, b, group, bits):
    return mx.quantized_matmul(x, wq, s, b, True, group, bits, activation_bits=8)


SHAPES = [  # (n, k, group, bits): one group, n past a block of 4, groups past a vector of 8
    (13, 576, 32, 4),
    (7, 32, 32, 4),
    (5, 64, 64, 4),
    (9, 640, 64, 4),
    (6, 1152, 128, 4),
    (11, 96, 32, 8),
    (3, 128, 128, 8),
    (17, 576, 64, 8),
    # the VNNI kernels' 128-code blocks and 16-group steps: a last block of 96 codes, 17 groups,
    # runs of 2, 4 and 8 lane quarters per group
    (5, 224, 32, 4),
    (4, 544, 32, 4),
    (3, 2176, 128, 4),
    (3, 2080, 32, 8),
    (4, 1280, 128, 8),
]


def _vnni_build():
    """Whether the AVX-512 build runs here on a processor with VPDPBUSD."""
    try:
        flags = open("/proc/cpuinfo").read()
        isa = mx._core._cpu_isa()
    except (OSError, AttributeError):  # (AttributeError: the suite run against MLX)
        return False
    return isa == "avx512" and " avx512_vnni" in flags


VNNI_BUILD = _vnni_build()


def three_digits(group, bits):
    """Whether float x takes three digits by default: on 4-bit weights; on 8-bit ones in groups of
    32 or 64 (17-18 bits kept; 16 in groups of 128) where VPDPBUSD multiplies them (elsewhere the
    float kernels are faster)."""
    return bits == 4 or (VNNI_BUILD and limit_of(group, 3, bits) >= 2**17)


@pytest.mark.parametrize("n,k,group,bits", [s for s in SHAPES if three_digits(s[2], s[3])])
@pytest.mark.parametrize("sdtype", ["float32", "float16", "bfloat16"])
def test_float_x_through_three_digits(n, k, group, bits, sdtype):
    """The default product on 4-bit weights and 8-bit ones in groups of 32 or 64: the three-digit
    formula, within float32 rounding of float64, and a 1000x outlier costs its group's small
    elements no more than the rounding bound."""
    rng = seeded_rng("q24", n, k, group, bits, sdtype)
    wq, s, b = weight(rng, n, k, group, bits, sdtype)
    x = rng.standard_normal((3, k)).astype(np.float32)
    x[1, :group] = 0.0  # a group of zeros: d = 0
    x[2, 3] *= 1000.0  # an outlier: its group's step is 1000x coarser
    got = to_np(mx.quantized_matmul(mx.array(x), wq, s, b, True, group, bits)).astype(np.float64)
    want, scale = formula(x, wq, s, b, group, bits, digits=3)
    assert np.abs(got - want).max() <= 1e-6 * scale.max()
    codes = ref_codes(np.array(wq), bits, k).astype(np.float64).reshape(n, -1, group)
    sc, bi = (to_np(t.astype(mx.float32)).astype(np.float64)[..., None] for t in (s, b))
    wd = (codes * sc + bi).reshape(n, k)  # the weight exactly (the product computes in float32)
    exact = x.astype(np.float64) @ wd.T
    # |x - d * D| <= d / 2 per element: the rounding's whole effect on each output
    step = np.abs(x).reshape(3, -1, group).max(-1) / limit_of(group, 3, bits)
    bound = 0.5 * np.einsum("mg,ngi->mn", step, np.abs(wd).reshape(n, -1, group))
    assert (np.abs(want - exact) <= bound + 1e-12 + 1e-6 * scale).all()
    assert (
        np.abs(got[:2] - exact[:2]).max() <= (2e-6 if bits == 4 else 1e-5) * np.abs(exact[:2]).max()
    )


@pytest.mark.parametrize("n,k,group", [s[:3] for s in SHAPES if not three_digits(s[2], s[3])])
def test_other_8_bit_products_keep_float_x(n, k, group):
    """In groups of 128 (three digits would keep 16 bits of x), and without VNNI: the float kernels
    run, within float32 rounding of the exact product (the digits' rounding alone would be ~1e-5
    of it in groups of 128, ~1e-6 in groups of 64)."""
    rng = seeded_rng("q24-128", n, k, group)
    wq, s, b = weight(rng, n, k, group, 8)
    x = rng.standard_normal((3, k)).astype(np.float32)
    got = to_np(mx.quantized_matmul(mx.array(x), wq, s, b, True, group, 8)).astype(np.float64)
    codes = ref_codes(np.array(wq), 8, k).astype(np.float64).reshape(n, -1, group)
    sc, bi = (to_np(t).astype(np.float64)[..., None] for t in (s, b))
    exact = x.astype(np.float64) @ (codes * sc + bi).reshape(n, k).T
    assert np.abs(got - exact).max() <= 1e-6 * np.abs(exact).max()


@pytest.mark.parametrize("n,k,group,bits", SHAPES)
@pytest.mark.parametrize("sdtype", ["float32", "float16", "bfloat16"])
def test_equals_the_formula_and_is_near_the_float_product(n, k, group, bits, sdtype):
    rng = seeded_rng("q8", n, k, group, bits, sdtype)
    wq, s, b = weight(rng, n, k, group, bits, sdtype)
    x = rng.standard_normal((3, k)).astype(np.float32)
    x[1, :group] = 0.0  # a group of zeros: d = 0
    got = to_np(int8(mx.array(x), wq, s, b, group, bits)).astype(np.float64)
    want, scale = formula(x, wq, s, b, group, bits)
    assert np.abs(got - want).max() <= 1e-6 * scale.max()
    ref = to_np(mx.quantized_matmul(mx.array(x), wq, s, b, True, group, bits)).astype(np.float64)
    assert 1e-4 < np.abs(got - ref).max() / np.abs(ref).max() < 5e-2  # int8's rounding, no more


def test_zero_rows_and_no_rows():
    rng = seeded_rng("q8-zero")
    wq, s, b = weight(rng, 10, 128, 32, 4)
    y = to_np(int8(mx.zeros((2, 128)), wq, s, b, 32, 4))
    assert (y == 0).all()
    assert int8(mx.zeros((0, 128)), wq, s, b, 32, 4).shape == (0, 10)


def test_the_option_off_keeps_the_float_bits():
    rng = seeded_rng("q8-off")
    wq, s, b = weight(rng, 40, 256, 64, 4, "float16")
    x = mx.array(rng.standard_normal((2, 256)).astype(np.float32))
    plain = to_np(mx.quantized_matmul(x, wq, s, b, True, 64, 4))
    none = to_np(mx.quantized_matmul(x, wq, s, b, True, 64, 4, activation_bits=None))
    np.testing.assert_array_equal(plain, none)
    assert not np.array_equal(plain, to_np(int8(x, wq, s, b, 64, 4)))


@pytest.mark.parametrize("digits", [1, 3])
@pytest.mark.parametrize("sdtype", ["float16", "bfloat16", "float32"])
def test_rows_batches_and_threads_do_not_change_bits(digits, sdtype):
    """203 weight rows (the kernels convert half-type scales sixteen rows at a time: the windows
    start anywhere a thread's piece does) of 576 codes (a last run of two groups), int8 or float
    x: equal for 1, 2 and 3 threads, row by row to the one-row products, and to the formula."""
    rng = seeded_rng("q8-rows", digits, sdtype)
    wq, s, b = weight(rng, 203, 576, 32, 4, sdtype)
    x = mx.array(rng.standard_normal((2, 5, 576)).astype(np.float32))

    def product(x):
        if digits == 1:
            return int8(x, wq, s, b, 32, 4)
        return mx.quantized_matmul(x, wq, s, b, True, 32, 4)

    before = mx.get_num_threads()
    try:
        runs = []
        for threads in (1, 2, 3):
            mx.set_num_threads(threads)
            runs.append(to_np(product(x)))
    finally:
        mx.set_num_threads(before)
    for r in runs[1:]:
        np.testing.assert_array_equal(r, runs[0])
    one = np.stack([[to_np(product(x[i, j])) for j in range(5)] for i in range(2)])
    np.testing.assert_array_equal(runs[0], one)
    want, scale = formula(to_np(x), wq, s, b, 32, 4, digits=digits)
    assert np.abs(runs[0].reshape(10, -1) - want).max() <= 1e-6 * scale.max()


@pytest.mark.parametrize("k,group", [(576, 32), (640, 64), (1152, 128), (96, 32)])
@pytest.mark.parametrize("m", [8, 20, 40])
def test_prompt_rows_have_their_one_row_bits(k, group, m):
    # A prompt's chunk of rows (the AMX tiles where the processor has them: 8 rows or more) gives
    # each row its one-row bits, with float x (three digits) and int8 x, for 1 and 2 threads.
    rng = seeded_rng("q8-prompt", k, group, m)
    wq, s, b = weight(rng, 37, k, group, 4, "float16")
    x = mx.array((rng.standard_normal((m, k)) * rng.uniform(0.01, 100, (m, 1))).astype(np.float32))
    for bits in (None, 8) if m <= 16 else (None,):
        f = lambda a: to_np(mx.quantized_matmul(a, wq, s, b, True, group, 4, activation_bits=bits))
        one = np.stack([f(x[i : i + 1])[0] for i in range(m)])
        before = mx.get_num_threads()
        try:
            for threads in (1, 2):
                mx.set_num_threads(threads)
                np.testing.assert_array_equal(f(x), one)
        finally:
            mx.set_num_threads(before)


def test_past_the_row_promise_the_float_product_runs():
    rng = seeded_rng("q8-many")
    wq, s, b = weight(rng, 8, 64, 32, 4)
    x = mx.array(rng.standard_normal((300, 64)).astype(np.float32))
    np.testing.assert_array_equal(
        to_np(int8(x, wq, s, b, 32, 4)), to_np(mx.quantized_matmul(x, wq, s, b, True, 32, 4))
    )


def test_non_finite_x_gives_the_same_bits_in_every_build_and_nan_stays():
    rng = seeded_rng("q8-nan")
    wq, s, b = weight(rng, 4, 64, 32, 4)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    x[0, 3], x[1, 40] = np.nan, np.inf
    y = to_np(int8(mx.array(x), wq, s, b, 32, 4))
    assert np.isnan(y[0]).all() and not np.isfinite(y[1]).any()


def test_gather_qmm_and_vmap_take_the_option():
    rng = seeded_rng("q8-gather")
    wq, s, b = (mx.stack([t, t]) for t in weight(rng, 12, 128, 64, 4))
    x = mx.array(rng.standard_normal((3, 1, 128)).astype(np.float32))
    idx = mx.array([1, 0, 1])
    g = mx.gather_qmm(x, wq, s, b, rhs_indices=idx, group_size=64, activation_bits=8)
    each = [to_np(int8(x[i], wq[1], s[1], b[1], 64, 4)) for i in range(3)]
    np.testing.assert_array_equal(to_np(g), np.stack(each))
    v = mx.vmap(lambda xi, w: int8(xi, w, s[0], b[0], 64, 4), in_axes=(0, None))(x, wq[0])
    np.testing.assert_array_equal(to_np(v), np.stack(each))
    vw = mx.vmap(lambda w: int8(x[0], w, s[0], b[0], 64, 4))(wq)
    np.testing.assert_array_equal(to_np(vw), np.stack([each[0], each[0]]))


def test_gradients_are_the_float_products():
    rng = seeded_rng("q8-grad")
    wq, s, b = weight(rng, 12, 64, 32, 4)
    x = mx.array(rng.standard_normal((2, 64)).astype(np.float32))
    g8 = mx.grad(lambda x: int8(x, wq, s, b, 32, 4).sum())(x)
    gf = mx.grad(lambda x: mx.quantized_matmul(x, wq, s, b, True, 32, 4).sum())(x)
    np.testing.assert_array_equal(to_np(g8), to_np(gf))


def test_compile_keeps_the_two_products_apart_and_export_keeps_the_option(tmp_path):
    rng = seeded_rng("q8-compile")
    wq, s, b = weight(rng, 12, 64, 32, 4)
    x = mx.array(rng.standard_normal((1, 64)).astype(np.float32))

    def both(x):
        return mx.quantized_matmul(x, wq, s, b, True, 32, 4), int8(x, wq, s, b, 32, 4)

    eager = [to_np(t) for t in both(x)]
    for got, want in zip(mx.compile(both)(x), eager):
        np.testing.assert_array_equal(to_np(got), want)
    path = str(tmp_path / "q8.mlxfn")
    mx.export_function(path, lambda x: int8(x, wq, s, b, 32, 4), x)
    np.testing.assert_array_equal(to_np(mx.import_function(path)(x)[0]), eager[1])


@pytest.mark.parametrize(
    "kw",
    [
        {"activation_bits": 4},
        {"activation_bits": 8, "transpose": False},
        {"activation_bits": 8, "bits": 3},
        {"activation_bits": 8, "bits": 4, "mode": "mxfp4", "group_size": 32},
    ],
)
def test_unsupported_combinations_raise(kw):
    bits, mode = kw.get("bits", 4), kw.get("mode", "affine")
    w = mx.array(seeded_rng("q8-err").standard_normal((8, 64)).astype(np.float32))
    wq, s, *b = mx.quantize(w, 32, bits, mode=mode)
    args = {"transpose": True, "group_size": 32, "bits": bits, "mode": mode, **kw}
    with pytest.raises(mx.OpError, match="activation_bits"):
        mx.quantized_matmul(mx.zeros((1, 64)), wq, s, b[0] if b else None, **args)


ISA_SCRIPT = r"""
import json, sys
import numpy as np
import nuvec as mx
rng = np.random.default_rng(5)
out = {"isa": mx._core._cpu_isa()}
for n, k, group, bits in SHAPES:
    wq, s, b = mx.quantize(mx.array(rng.standard_normal((n, k)).astype(np.float32)), group, bits)
    rows = 20 if k in (576, 1536) else 3  # 20: a prompt's rows (the AMX tiles where present)
    x = mx.array((rng.standard_normal((rows, k)) * rng.uniform(0.01, 100, (rows, 1))).astype(np.float32))
    for a in (8, None):
        for sd in (mx.float16, mx.float32):  # scales read in place, and through a buffer
            y = mx.quantized_matmul(x, wq, s.astype(sd), b.astype(sd), True, group, bits,
                                    activation_bits=a)
            if a or bits == 4:  # the integer paths in every build
                out[f"{n},{k},{group},{bits},{a},{sd}"] = np.asarray(y).view(np.uint32).tolist()
json.dump(out, sys.stdout)
""".replace("SHAPES", repr([*SHAPES, (37, 1536, 32, 4)])).replace(
    "(3, k)", "(20 if k in (576, 1536) else 3, k)"
)


def test_every_kernel_build_gives_the_same_bits():
    runs = {
        isa: run_script(ISA_SCRIPT, NUVEC_CPU_ISA=isa) for isa in ["portable", "avx2", "avx512"]
    }
    assert runs["portable"]["isa"] == "portable"
    for out in runs.values():
        assert out == dict(runs["portable"], isa=out["isa"]), out["isa"]


# --- nuvec.lm -----------------------------------------------------------------------------------

N = 20


def test_lm_decode_with_int8_activations():
    """SmolLM2's greedy answer to the fixed question (tests/test_lm_model.py): with int8
    activations in every decode step the first N tokens are the float path's, and switching the
    option off gives the float logits back bit for bit."""
    from nuvec.lm import load
    from nuvec.lm.generate import generate_step
    from nuvec.lm.utils import set_int8_activations

    model, tokenizer = load(smollm2_path())
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is gravity?"}], add_generation_prompt=True
    )
    float_run = [(t, np.array(lp)) for t, lp in generate_step(prompt, model, max_tokens=N)]
    assert set_int8_activations(model) == 30 * 7 + 1  # every linear layer and the tied head
    int8_run = [(t, np.array(lp)) for t, lp in generate_step(prompt, model, max_tokens=N)]
    assert [t for t, _ in int8_run] == [t for t, _ in float_run], tokenizer.decode(
        [t for t, _ in int8_run]
    )
    # The chosen tokens' log-probabilities move by about 0.13 (the float path's margins here are
    # 0.118 or more against float64, so near ties elsewhere may flip: docs/lm.md).
    deviation = max(abs(a[1][t] - b[1][t]) for (t, _), a, b in zip(float_run, int8_run, float_run))
    assert 0 < deviation < 0.3
    set_int8_activations(model, False)
    again = [np.array(lp) for _, lp in generate_step(prompt, model, max_tokens=3)]
    for a, (_, b) in zip(again, float_run):
        np.testing.assert_array_equal(a, b)
