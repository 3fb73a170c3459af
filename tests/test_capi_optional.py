"""The C functions of the ops with optional parameters (docs/c-api.md, "Ops"): dequantize,
quantized_matmul and gather_qmm from C against a NumPy float64 reference built from the packed
words, an absent optional (has_value false, an empty array handle) taking the op's default
(gather_mm and block_masked_mm without indices or masks are the plain product), and
searchsorted, convolve and median against NumPy."""

import numpy as np
import pytest

from capi_build import C_PRELUDE, build_and_run, c_array, needs_cc

pytestmark = [needs_cc, pytest.mark.nuvec_only]

N, K, GROUP, M = 4, 64, 32, 3
rng = np.random.default_rng(18)
WORDS = rng.integers(0, 2**32, (N, K * 4 // 32), dtype=np.uint64).astype(np.uint32)
SCALES = rng.uniform(0.01, 0.1, (N, K // GROUP)).astype(np.float32)
BIASES = rng.uniform(-0.5, 0.5, (N, K // GROUP)).astype(np.float32)
X = rng.standard_normal((M, K)).astype(np.float32)
XN = rng.standard_normal((M, N)).astype(np.float32)  # for x @ W (transpose false)
SORTED = np.array([1.0, 2.0, 2.0, 3.5, 7.0], np.float32)
VALUES = np.array([0.0, 2.0, 3.5, 9.0, 2.5], np.float32)
SIGNAL = rng.standard_normal(7).astype(np.float32)
KERNEL = rng.standard_normal(3).astype(np.float32)

SOURCE = r"""
@DATA@

int main(void) {
  nuvec_set_error_handler(on_error, NULL, NULL);
  nuvec_stream s = nuvec_default_cpu_stream_new();
  const int wshape[2] = {@N@, @WORDS_PER_ROW@}, sshape[2] = {@N@, @GROUPS@};
  const int xshape[2] = {@M@, @K@}, xnshape[2] = {@M@, @N@};
  nuvec_array w = nuvec_array_new_data(words, wshape, 2, NUVEC_UINT32);
  nuvec_array sc = nuvec_array_new_data(scales, sshape, 2, NUVEC_FLOAT32);
  nuvec_array bi = nuvec_array_new_data(biases, sshape, 2, NUVEC_FLOAT32);
  nuvec_array x = nuvec_array_new_data(x_data, xshape, 2, NUVEC_FLOAT32);
  nuvec_array xn = nuvec_array_new_data(xn_data, xnshape, 2, NUVEC_FLOAT32);
  nuvec_array none = nuvec_array_new(), r = nuvec_array_new();
  nuvec_optional_int group = {@GROUP@, true}, absent = {0, false};
  nuvec_optional_dtype no_dtype = {NUVEC_FLOAT32, false}, half = {NUVEC_FLOAT16, true};

  if (!nuvec_dequantize(&r, w, sc, bi, group, absent, "affine", none, no_dtype, s)) print("dequantize", r);
  if (!nuvec_dequantize(&r, w, sc, bi, group, absent, "affine", none, half, s)) print("dequantize_f16", r);
  if (!nuvec_quantized_matmul(&r, x, w, sc, bi, true, group, absent, "affine", s)) print("qmm", r);
  if (!nuvec_quantized_matmul(&r, xn, w, sc, bi, false, group, absent, "affine", s)) print("qmm_t", r);
  /* Absent indices and masks (empty handles): the plain products. */
  if (!nuvec_gather_qmm(&r, x, w, sc, bi, none, none, true, group, absent, "affine", s)) print("gather_qmm", r);
  if (!nuvec_gather_mm(&r, xn, sc, none, none, false, s)) print("gather_mm", r);
  if (!nuvec_block_masked_mm(&r, xn, sc, 32, none, none, none, s)) print("block_masked_mm", r);
  /* Bad arguments reach the handler and the program goes on. */
  if (nuvec_quantized_matmul(&r, x, w, sc, bi, true, group, absent, "nope", s)) printf("failed_mode: 1\n");
  if (nuvec_quantized_matmul(&r, x, w, sc, bi, true, group, absent, NULL, s)) printf("failed_null: 1\n");

  const int n5 = 5, n7 = 7, n3 = 3;
  nuvec_array a = nuvec_array_new_data(sorted_data, &n5, 1, NUVEC_FLOAT32);
  nuvec_array v = nuvec_array_new_data(values_data, &n5, 1, NUVEC_FLOAT32);
  if (!nuvec_searchsorted(&r, a, v, "left", s)) print("searchsorted_left", r);
  if (!nuvec_searchsorted(&r, a, v, "right", s)) print("searchsorted_right", r);
  nuvec_array sig = nuvec_array_new_data(signal, &n7, 1, NUVEC_FLOAT32);
  nuvec_array ker = nuvec_array_new_data(kernel, &n3, 1, NUVEC_FLOAT32);
  if (!nuvec_convolve(&r, sig, ker, "same", s)) print("convolve_same", r);
  if (!nuvec_convolve(&r, ker, sig, "valid", s)) print("convolve_valid", r);
  int axis = 1;
  if (!nuvec_median(&r, x, &axis, 1, false, s)) print("median1", r);
  if (!nuvec_median(&r, x, NULL, 0, false, s)) print("median_all", r);
  printf("survived: 1\n");

  nuvec_array arrays[] = {w, sc, bi, x, xn, r, a, v, sig, ker};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) nuvec_array_free(arrays[i]);
  nuvec_stream_free(s);
  return 0;
}
"""


def source():
    data = "\n".join([
        c_array("unsigned int", "words", WORDS),
        *(c_array("float", n, v) for n, v in [("scales", SCALES), ("biases", BIASES), ("x_data", X),
                                               ("xn_data", XN), ("sorted_data", SORTED),
                                               ("values_data", VALUES), ("signal", SIGNAL),
                                               ("kernel", KERNEL)]),
    ])  # fmt: skip
    subs = {"DATA": data, "N": N, "K": K, "M": M, "GROUP": GROUP, "WORDS_PER_ROW": WORDS.shape[1],
            "GROUPS": K // GROUP}  # fmt: skip
    text = C_PRELUDE + SOURCE
    for key, value in subs.items():
        text = text.replace(f"@{key}@", str(value))
    return text


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return build_and_run(tmp_path_factory.mktemp("capi_optional"), "optional", source())


def values(out, name, dtype):
    """The printed values of `name`, after checking its printed nuvec_dtype code."""
    code, *vals = out[name]
    assert int(code) == dtype, (name, code)
    return np.array([float(v) for v in vals])


FLOAT16, FLOAT32, UINT32 = 9, 10, 3


def reference_weight():
    """The dequantized weight in float64: code k of row r is bits 4k..4k+3 of the row's words."""
    k = np.arange(K)
    codes = (WORDS[:, k // 8].astype(np.uint64) >> (4 * (k % 8)).astype(np.uint64)) & 0xF
    group = k // GROUP
    return SCALES[:, group].astype(np.float64) * codes + BIASES[:, group]


def test_dequantize_with_absent_bits_matches_numpy(out):
    w = reference_weight()
    np.testing.assert_allclose(values(out, "dequantize", FLOAT32), w.ravel(), rtol=1e-6, atol=1e-7)
    got = values(out, "dequantize_f16", FLOAT16)
    np.testing.assert_allclose(
        got, w.astype(np.float16).astype(np.float64).ravel(), rtol=1e-3, atol=1e-3
    )


def test_quantized_matmul_matches_numpy(out):
    w = reference_weight()
    np.testing.assert_allclose(
        values(out, "qmm", FLOAT32), (X.astype(np.float64) @ w.T).ravel(), rtol=1e-5, atol=1e-5
    )


def test_quantized_matmul_untransposed_matches_numpy(out):
    w = reference_weight()
    np.testing.assert_allclose(
        values(out, "qmm_t", FLOAT32), (XN.astype(np.float64) @ w).ravel(), rtol=1e-5, atol=1e-5
    )


def test_absent_indices_and_masks_give_the_plain_products(out):
    w = reference_weight()
    np.testing.assert_allclose(
        values(out, "gather_qmm", FLOAT32),
        (X.astype(np.float64) @ w.T).ravel(),
        rtol=1e-5,
        atol=1e-5,
    )
    plain = (XN.astype(np.float64) @ SCALES).ravel()
    np.testing.assert_allclose(values(out, "gather_mm", FLOAT32), plain, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(values(out, "block_masked_mm", FLOAT32), plain, rtol=1e-6, atol=1e-7)


def test_bad_mode_and_null_string_reach_the_handler(out):
    assert out["failed_mode"] == out["failed_null"] == ["1"]
    assert len(out["errors"]) == 2, out["errors"]
    assert out["errors"][0].startswith("error: nuvec_quantized_matmul"), out["errors"]
    assert "nope" in out["errors"][0]
    assert out["errors"][1].startswith("error: nuvec_quantized_matmul"), out["errors"]
    assert out["survived"] == ["1"]


def test_searchsorted_convolve_median_match_numpy(out):
    for side in ("left", "right"):
        want = np.searchsorted(SORTED, VALUES, side=side)
        np.testing.assert_array_equal(values(out, f"searchsorted_{side}", UINT32), want)
    s64, k64 = SIGNAL.astype(np.float64), KERNEL.astype(np.float64)
    np.testing.assert_allclose(
        values(out, "convolve_same", FLOAT32), np.convolve(s64, k64, "same"), rtol=1e-5
    )
    np.testing.assert_allclose(
        values(out, "convolve_valid", FLOAT32), np.convolve(k64, s64, "valid"), rtol=1e-5
    )
    np.testing.assert_allclose(values(out, "median1", FLOAT32), np.median(X, axis=1), rtol=1e-6)
    np.testing.assert_allclose(values(out, "median_all", FLOAT32), [np.median(X)], rtol=1e-6)
