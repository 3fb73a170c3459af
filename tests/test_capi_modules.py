"""nuvec.random, nuvec.linalg, nuvec.fft and nuvec.fast from C (include/nuvec/<module>.h,
docs/c-api.md "Modules"), and the vector forms of quantize, minmax and nonzero: the samplers give
nuvec.random's bits for the same key (and, with an empty key, the global state's sequence after
nuvec_random_seed, as nuvec.random.seed's), the linear algebra and the transforms match NumPy, the
fused kernels give nuvec.fast's bits, and a bad argument in each module reaches the error handler
with the C function's name while the program goes on."""

import numpy as np
import pytest

import nuvec as nv
from capi_build import C_PRELUDE, build_and_run, c_array, needs_cc

pytestmark = [needs_cc, pytest.mark.nuvec_only]

rng = np.random.default_rng(181)
P = rng.uniform(0, 1, 6).astype(np.float32)
LOGITS = rng.standard_normal((2, 5)).astype(np.float32)
MEAN = np.array([1.0, -2.0], np.float32)
COV = np.array([[2.0, 0.5], [0.5, 1.0]], np.float32)
M = rng.standard_normal((3, 3))
SPD = M @ M.T + 3 * np.eye(3)
B = rng.standard_normal((3, 2))
WIDE = rng.standard_normal((3, 2))
U3 = rng.standard_normal((2, 3))
V3 = rng.standard_normal(3)
SIG = rng.standard_normal(8).astype(np.float32)
GRID = rng.standard_normal((3, 4)).astype(np.float32)
X = rng.standard_normal((2, 3, 8)).astype(np.float32)
W8 = rng.standard_normal(8).astype(np.float32)
B8 = rng.standard_normal(8).astype(np.float32)
Q = rng.standard_normal((1, 2, 5, 8)).astype(np.float32)
K = rng.standard_normal((1, 2, 5, 8)).astype(np.float32)
V = rng.standard_normal((1, 2, 5, 8)).astype(np.float32)
MASK = rng.standard_normal((5, 5)).astype(np.float32)
QW = rng.standard_normal((4, 64)).astype(np.float32)
NZ = np.array([[0, 1, 0], [2, 0, 3]], np.float32)

SOURCE = r"""
@DATA@

int main(void) {
  nuvec_set_error_handler(on_error, NULL, NULL);
  nuvec_stream s = nuvec_default_cpu_stream_new();
  nuvec_array r = nuvec_array_new(), none = nuvec_array_new(), k = nuvec_array_new();
  nuvec_vector_array vec = nuvec_vector_array_new();
  const int n2[1] = {2}, n3[1] = {3}, n5[1] = {5}, n6[1] = {6}, n8[1] = {8}, s22[2] = {2, 2}, s23[2] = {2, 3},
            s25[2] = {2, 5}, s32[2] = {3, 2}, s33[2] = {3, 3}, s34[2] = {3, 4}, s238[3] = {2, 3, 8},
            s55[2] = {5, 5}, s1258[4] = {1, 2, 5, 8}, s464[2] = {4, 64};

  /* nuvec.random, with the key of seed 42. */
  nuvec_random_key(&k, 42);
  nuvec_array lo = nuvec_array_new_float(-2.0f), hi = nuvec_array_new_float(3.0f);
  nuvec_array ilo = nuvec_array_new_int(0), ihi = nuvec_array_new_int(10);
  nuvec_array zero = nuvec_array_new_float(0.0f), one = nuvec_array_new_float(1.0f);
  nuvec_array tlo = nuvec_array_new_float(-1.0f), thi = nuvec_array_new_float(1.5f);
  nuvec_array p = nuvec_array_new_data(p_data, n6, 1, NUVEC_FLOAT32);
  nuvec_array logits = nuvec_array_new_data(logits_data, s25, 2, NUVEC_FLOAT32);
  nuvec_array mean = nuvec_array_new_data(mean_data, n2, 1, NUVEC_FLOAT32);
  nuvec_array cov = nuvec_array_new_data(cov_data, s22, 2, NUVEC_FLOAT32);
  if (!nuvec_random_uniform(&r, lo, hi, s23, 2, NUVEC_FLOAT32, k, s)) print("uniform", r);
  if (!nuvec_random_normal(&r, s23, 2, NUVEC_FLOAT32, 0.0f, 1.0f, k, s)) print("normal", r);
  if (!nuvec_random_normal(&r, s23, 2, NUVEC_FLOAT32, 0.5f, 2.0f, k, s)) print("normal_loc", r);
  if (!nuvec_random_normal_broadcast(&r, s23, 2, NUVEC_FLOAT32, lo, none, k, s)) print("normal_array", r);
  if (!nuvec_random_randint(&r, ilo, ihi, s23, 2, NUVEC_INT32, k, s)) print("randint", r);
  if (!nuvec_random_bernoulli(&r, p, NULL, 0, k, s)) print("bernoulli", r);
  if (!nuvec_random_split(&r, k, 3, s)) print("split", r);
  if (!nuvec_random_bits(&r, n5, 1, 4, k, s)) print("bits", r);
  if (!nuvec_random_categorical(&r, logits, -1, k, s)) print("categorical", r);
  if (!nuvec_random_categorical_shape(&r, logits, -1, s32, 2, k, s)) print("categorical_shape", r);
  if (!nuvec_random_categorical_num_samples(&r, logits, -1, 4, k, s)) print("categorical_n", r);
  if (!nuvec_random_gumbel(&r, n5, 1, NUVEC_FLOAT32, k, s)) print("gumbel", r);
  if (!nuvec_random_laplace(&r, n5, 1, NUVEC_FLOAT32, 0.5f, 2.0f, k, s)) print("laplace", r);
  if (!nuvec_random_truncated_normal(&r, tlo, thi, n5, 1, NUVEC_FLOAT32, k, s)) print("truncated_normal", r);
  if (!nuvec_random_permutation_arange(&r, 7, k, s)) print("permutation", r);
  if (!nuvec_random_multivariate_normal(&r, mean, cov, n3, 1, NUVEC_FLOAT32, k, s)) print("mvn", r);
  /* The global state (an empty key): seeded, then advanced by each draw. */
  nuvec_random_seed(7);
  if (!nuvec_random_uniform(&r, zero, one, n5, 1, NUVEC_FLOAT32, none, s)) print("global0", r);
  if (!nuvec_random_uniform(&r, zero, one, n5, 1, NUVEC_FLOAT32, none, s)) print("global1", r);
  if (nuvec_random_uniform(&r, lo, hi, n5, 1, NUVEC_INT32, k, s)) printf("failed_random: 1\n");

  /* nuvec.linalg, float64. */
  nuvec_array spd = nuvec_array_new_data(spd_data, s33, 2, NUVEC_FLOAT64);
  nuvec_array b = nuvec_array_new_data(b_data, s32, 2, NUVEC_FLOAT64);
  nuvec_array wide = nuvec_array_new_data(wide_data, s32, 2, NUVEC_FLOAT64);
  nuvec_array u3 = nuvec_array_new_data(u3_data, s23, 2, NUVEC_FLOAT64);
  nuvec_array v3 = nuvec_array_new_data(v3_data, n3, 1, NUVEC_FLOAT64);
  const int ax1[1] = {1};
  if (!nuvec_linalg_inv(&r, spd, s)) print("inv", r);
  if (!nuvec_linalg_solve(&r, spd, b, s)) print("solve", r);
  if (!nuvec_linalg_qr(&vec, spd, s)) print_vec("qr", vec);
  if (!nuvec_linalg_svd(&vec, spd, true, s)) print_vec("svd", vec);
  if (!nuvec_linalg_svd(&vec, spd, false, s)) print_vec("svdvals", vec);
  if (!nuvec_linalg_eigh(&vec, spd, "L", s)) print_vec("eigh", vec);
  if (!nuvec_linalg_eigvalsh(&r, spd, "U", s)) print("eigvalsh", r);
  if (!nuvec_linalg_cholesky(&r, spd, false, s)) print("cholesky", r);
  if (!nuvec_linalg_det(&r, spd, s)) print("det", r);
  if (!nuvec_linalg_slogdet(&vec, spd, s)) print_vec("slogdet", vec);
  if (!nuvec_linalg_norm_l2(&r, spd, NULL, 0, false, s)) print("norm_l2", r);
  if (!nuvec_linalg_norm(&r, spd, 2.0, NULL, 0, false, s)) print("norm_2", r);
  if (!nuvec_linalg_norm(&r, spd, 3.0, ax1, 1, true, s)) print("norm_3", r);
  if (!nuvec_linalg_norm_matrix(&r, spd, "nuc", NULL, 0, false, s)) print("norm_nuc", r);
  if (!nuvec_linalg_pinv(&r, wide, s)) print("pinv", r);
  if (!nuvec_linalg_cross(&r, u3, v3, -1, s)) print("cross", r);
  if (nuvec_linalg_inv(&r, u3, s)) printf("failed_linalg: 1\n");

  /* nuvec.fft. */
  nuvec_array sig = nuvec_array_new_data(sig_data, n8, 1, NUVEC_FLOAT32);
  nuvec_array grid = nuvec_array_new_data(grid_data, s34, 2, NUVEC_FLOAT32);
  const int rn[2] = {4, 6}, raxes[2] = {0, 1};
  if (!nuvec_fft_fft(&r, sig, 8, -1, NUVEC_FFT_NORM_BACKWARD, s)) print("fft", r);
  if (!nuvec_fft_rfft(&r, sig, 8, 0, NUVEC_FFT_NORM_ORTHO, s)) print("rfft", r);
  nuvec_fft_norm back = NUVEC_FFT_NORM_BACKWARD;
  if (!nuvec_fft_rfft(&r, sig, 8, 0, back, s) && !nuvec_fft_irfft(&r, r, 8, 0, back, s)) print("irfft", r);
  if (!nuvec_fft_fftn(&r, grid, NULL, 0, NULL, 0, NUVEC_FFT_NORM_FORWARD, s)) print("fftn", r);
  if (!nuvec_fft_rfftn(&r, grid, rn, 2, raxes, 2, NUVEC_FFT_NORM_BACKWARD, s)) print("rfftn", r);
  if (!nuvec_fft_fftshift(&r, grid, NULL, 0, s)) print("fftshift", r);
  if (!nuvec_fft_fftfreq(&r, 8, 0.5, s)) print("fftfreq", r);
  if (!nuvec_fft_rfftfreq(&r, 7, 1.0, s)) print("rfftfreq", r);
  if (nuvec_fft_fft(&r, sig, 8, 3, NUVEC_FFT_NORM_BACKWARD, s)) printf("failed_fft: 1\n");

  /* nuvec.fast. */
  nuvec_array x = nuvec_array_new_data(x_data, s238, 3, NUVEC_FLOAT32);
  nuvec_array w8 = nuvec_array_new_data(w8_data, n8, 1, NUVEC_FLOAT32);
  nuvec_array b8 = nuvec_array_new_data(b8_data, n8, 1, NUVEC_FLOAT32);
  nuvec_array q = nuvec_array_new_data(q_data, s1258, 4, NUVEC_FLOAT32);
  nuvec_array kk = nuvec_array_new_data(k_data, s1258, 4, NUVEC_FLOAT32);
  nuvec_array v = nuvec_array_new_data(v_data, s1258, 4, NUVEC_FLOAT32);
  nuvec_array q64 = nuvec_array_new_data(q64_data, s1258, 4, NUVEC_FLOAT64);
  nuvec_array mask = nuvec_array_new_data(mask_data, s55, 2, NUVEC_FLOAT32);
  nuvec_array off = nuvec_array_new_int(3);
  nuvec_optional_float base = {10000.0f, true};
  if (!nuvec_fast_rms_norm(&r, x, w8, 1e-5f, s)) print("rms_norm", r);
  if (!nuvec_fast_layer_norm(&r, x, w8, b8, 1e-5f, s)) print("layer_norm", r);
  if (!nuvec_fast_layer_norm(&r, x, none, none, 1e-5f, s)) print("layer_norm_plain", r);
  if (!nuvec_fast_add_rms_norm(&vec, x, x, w8, 1e-5f, s)) print_vec("add_rms_norm", vec);
  if (!nuvec_fast_rope(&r, q, 8, false, base, 1.0f, 3, none, s)) print("rope", r);
  if (!nuvec_fast_rope_dynamic(&r, q, 8, true, base, 0.5f, off, none, s)) print("rope_dynamic", r);
  if (!nuvec_fast_rope(&r, q64, 6, true, base, 1.0f, 2, none, s)) print("rope64", r);
  if (!nuvec_fast_scaled_dot_product_attention(&r, q, kk, v, 0.35f, "", none, none, s)) print("sdpa", r);
  if (!nuvec_fast_scaled_dot_product_attention(&r, q, kk, v, 0.35f, "causal", none, none, s)) print("sdpa_causal", r);
  if (!nuvec_fast_scaled_dot_product_attention(&r, q, kk, v, 0.35f, "", mask, none, s)) print("sdpa_mask", r);
  if (nuvec_fast_rms_norm(&r, x, lo, 1e-5f, s)) printf("failed_fast: 1\n");

  /* The ops with several results, written to vectors. */
  nuvec_array qw = nuvec_array_new_data(qw_data, s464, 2, NUVEC_FLOAT32);
  nuvec_array nz = nuvec_array_new_data(nz_data, s23, 2, NUVEC_FLOAT32);
  nuvec_optional_int group = {32, true}, bits = {4, true};
  if (!nuvec_quantize(&vec, qw, group, bits, "affine", none, s)) print_vec("quantize", vec);
  if (!nuvec_minmax(&vec, grid, ax1, 1, false, s)) print_vec("minmax", vec);
  if (!nuvec_nonzero(&vec, nz, s)) print_vec("nonzero", vec);
  printf("survived: 1\n");

  nuvec_array arrays[] = {r, k, lo, hi, ilo, ihi, zero, one, tlo, thi, p, logits, mean, cov, spd, b, wide, u3, v3,
                          sig, grid, x, w8, b8, q, kk, v, q64, mask, off, qw, nz};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) nuvec_array_free(arrays[i]);
  nuvec_vector_array_free(vec);
  nuvec_stream_free(s);
  return 0;
}
"""

DATA = {
    "p_data": P, "logits_data": LOGITS, "mean_data": MEAN, "cov_data": COV, "sig_data": SIG,
    "grid_data": GRID, "x_data": X, "w8_data": W8, "b8_data": B8, "q_data": Q, "k_data": K,
    "v_data": V, "mask_data": MASK, "qw_data": QW, "nz_data": NZ,
    "q64_data": Q.astype(np.float64), "spd_data": SPD, "b_data": B, "wide_data": WIDE, "u3_data": U3, "v3_data": V3,
}  # fmt: skip


def source():
    data = "\n".join(
        c_array("double" if v.dtype == np.float64 else "float", name, v) for name, v in DATA.items()
    )
    return C_PRELUDE + SOURCE.replace("@DATA@", data)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return build_and_run(tmp_path_factory.mktemp("capi_modules"), "modules", source())


def got(out, name):
    """The printed values of `name` (complex results as complex numbers) and its dtype code."""
    code, *vals = out[name]
    v = np.array([float(x) for x in vals])
    return (v[0::2] + 1j * v[1::2] if int(code) == COMPLEX64 else v), int(code)


def same_bits(out, name, want):
    """`name` has the values and the dtype of the nuvec array `want`, exactly."""
    v, code = got(out, name)
    want = np.array(want)
    assert code == DTYPE_CODES[want.dtype.name], (name, code, want.dtype)
    np.testing.assert_array_equal(v, want.ravel().astype(v.dtype), err_msg=name)


def close(out, name, want, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(
        got(out, name)[0], np.ravel(want), rtol=rtol, atol=atol, err_msg=name
    )


COMPLEX64 = 13
DTYPE_CODES = {"bool": 0, "uint8": 1, "uint16": 2, "uint32": 3, "int32": 7, "int64": 8, "float32": 10,
               "float64": 11, "complex64": 13}  # fmt: skip


def test_samplers_give_nuvec_random_bits_for_the_same_key(out):
    r, k = nv.random, nv.random.key(42)
    lo, hi = nv.array(-2.0), nv.array(3.0)
    same_bits(out, "uniform", r.uniform(lo, hi, (2, 3), key=k))
    same_bits(out, "normal", r.normal((2, 3), key=k))
    same_bits(out, "normal_loc", r.normal((2, 3), loc=0.5, scale=2.0, key=k))
    same_bits(out, "normal_array", r.normal((2, 3), loc=lo, key=k))
    same_bits(out, "randint", r.randint(0, 10, (2, 3), key=k))
    same_bits(out, "bernoulli", r.bernoulli(nv.array(P), key=k))
    same_bits(out, "split", r.split(k, 3))
    same_bits(out, "bits", r.bits((5,), key=k))
    logits = nv.array(LOGITS)
    same_bits(out, "categorical", r.categorical(logits, key=k))
    same_bits(out, "categorical_shape", r.categorical(logits, shape=(3, 2), key=k))
    same_bits(out, "categorical_n", r.categorical(logits, num_samples=4, key=k))
    same_bits(out, "gumbel", r.gumbel((5,), key=k))
    same_bits(out, "laplace", r.laplace((5,), loc=0.5, scale=2.0, key=k))
    same_bits(out, "truncated_normal", r.truncated_normal(-1.0, 1.5, (5,), key=k))
    same_bits(out, "permutation", r.permutation(7, key=k))
    same_bits(out, "mvn", r.multivariate_normal(nv.array(MEAN), nv.array(COV), (3,), key=k))


def test_an_empty_key_draws_from_the_seeded_global_state(out):
    nv.random.seed(7)
    for i in range(2):
        same_bits(out, f"global{i}", nv.random.uniform(shape=(5,)))
    assert not np.array_equal(got(out, "global0")[0], got(out, "global1")[0])


def test_linalg_matches_numpy(out):
    close(out, "inv", np.linalg.inv(SPD))
    close(out, "solve", np.linalg.solve(SPD, B))
    q, r = got(out, "qr0")[0].reshape(3, 3), got(out, "qr1")[0].reshape(3, 3)
    np.testing.assert_allclose(q @ r, SPD, atol=1e-12)
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(np.triu(r), r)
    u, sv, vt = (got(out, f"svd{i}")[0] for i in range(3))
    close(out, "svd1", np.linalg.svd(SPD, compute_uv=False))
    close(out, "svdvals0", np.linalg.svd(SPD, compute_uv=False))
    np.testing.assert_allclose(u.reshape(3, 3) * sv @ vt.reshape(3, 3), SPD, atol=1e-12)
    w, vecs = np.linalg.eigh(SPD)
    close(out, "eigh0", w)
    np.testing.assert_allclose(np.abs(got(out, "eigh1")[0]), np.abs(vecs).ravel(), atol=1e-12)
    close(out, "eigvalsh", w)
    close(out, "cholesky", np.linalg.cholesky(SPD))
    close(out, "det", [np.linalg.det(SPD)])
    sign, logdet = np.linalg.slogdet(SPD)
    close(out, "slogdet0", [sign])
    close(out, "slogdet1", [logdet])
    close(out, "norm_l2", [np.linalg.norm(SPD)])
    close(out, "norm_2", [np.linalg.norm(SPD, 2)])
    close(out, "norm_3", np.linalg.norm(SPD, 3, axis=1, keepdims=True))
    close(out, "norm_nuc", [np.linalg.norm(SPD, "nuc")])
    close(out, "pinv", np.linalg.pinv(WIDE))
    close(out, "cross", np.cross(U3, V3))


def test_transforms_match_numpy(out):
    s64, g64 = SIG.astype(np.float64), GRID.astype(np.float64)
    close(out, "fft", np.fft.fft(s64), rtol=1e-5, atol=1e-5)
    close(out, "rfft", np.fft.rfft(s64, norm="ortho"), rtol=1e-5, atol=1e-5)
    close(out, "irfft", s64, rtol=1e-5, atol=1e-5)
    close(out, "fftn", np.fft.fftn(g64, norm="forward"), rtol=1e-5, atol=1e-6)
    close(out, "rfftn", np.fft.rfftn(g64, s=(4, 6), axes=(0, 1)), rtol=1e-5, atol=1e-5)
    close(out, "fftshift", np.fft.fftshift(g64))
    close(out, "fftfreq", np.fft.fftfreq(8, 0.5), rtol=1e-7)
    close(out, "rfftfreq", np.fft.rfftfreq(7, 1.0), rtol=1e-7)
    same_bits(out, "fftfreq", nv.fft.fftfreq(8, 0.5))


def test_fused_kernels_give_nuvec_fast_bits(out):
    f = nv.fast
    x, w, b = nv.array(X), nv.array(W8), nv.array(B8)
    q, k, v = nv.array(Q), nv.array(K), nv.array(V)
    same_bits(out, "rms_norm", f.rms_norm(x, w, 1e-5))
    same_bits(out, "layer_norm", f.layer_norm(x, w, b, 1e-5))
    same_bits(out, "layer_norm_plain", f.layer_norm(x, None, None, 1e-5))
    y, h = f.add_rms_norm(x, x, w, 1e-5)
    same_bits(out, "add_rms_norm0", y)
    same_bits(out, "add_rms_norm1", h)
    rope = f.rope(q, 8, traditional=False, base=10000.0, scale=1.0, offset=3)
    same_bits(out, "rope", rope)
    rope = f.rope(q, 8, traditional=True, base=10000.0, scale=0.5, offset=nv.array(3))
    same_bits(out, "rope_dynamic", rope)
    q64 = nv.array(Q).astype(nv.float64)
    same_bits(out, "rope64", f.rope(q64, 6, traditional=True, base=10000.0, scale=1.0, offset=2))
    sdpa = f.scaled_dot_product_attention
    same_bits(out, "sdpa", sdpa(q, k, v, scale=0.35))
    same_bits(out, "sdpa_causal", sdpa(q, k, v, scale=0.35, mask="causal"))
    same_bits(out, "sdpa_mask", sdpa(q, k, v, scale=0.35, mask=nv.array(MASK)))


def test_several_results_are_written_to_vectors(out):
    for i, want in enumerate(nv.quantize(nv.array(QW), 32, 4)):
        same_bits(out, f"quantize{i}", want)
    assert "quantize3" not in out
    same_bits(out, "minmax0", GRID.min(1))
    same_bits(out, "minmax1", GRID.max(1))
    for i, want in enumerate(np.nonzero(NZ)):
        same_bits(out, f"nonzero{i}", want)


def test_each_module_reports_a_bad_argument_with_the_function_name(out):
    assert [out[f"failed_{m}"] for m in ("random", "linalg", "fft", "fast")] == [["1"]] * 4
    names = ["nuvec_random_uniform", "nuvec_linalg_inv", "nuvec_fft_fft", "nuvec_fast_rms_norm"]
    assert len(out["errors"]) == 4, out["errors"]
    for line, name in zip(out["errors"], names):
        assert line.startswith(f"error: {name}: "), line
    assert out["survived"] == ["1"]
