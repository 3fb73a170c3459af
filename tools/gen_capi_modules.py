"""The tables behind the C functions of nuvec.random, nuvec.linalg, nuvec.fft and nuvec.fast
(include/nuvec/<module>.h, one header per module as mlx-c's), read by tools/gen_capi.py.

Each module's table maps the C name's suffix (`nuvec_<module>_<suffix>`) to a row: the
parameters ("kind name, ...", kinds from gen_capi.KINDS), the C++ call (`s` is the stream) and,
when the suffix is not a Python name, the public Python function it gives a C form of (mlx-c's
variants: `normal_broadcast` is `normal` with array bounds). Functions with several results
write a vector of arrays (VECTOR_RESULTS). Each module's NOT_IN_C row says why a public name has
no C function; tests/test_capi_coverage.py checks that every name of the module's `__all__` has
one or the other.
"""

# "random" rows: every sampler takes `key` last before the stream (an empty handle: the next key
# of the calling thread's global state, as MLX's key=None).
RANDOM = {
    "key": ("uint64 seed", "random::key(seed)"),
    "seed": ("uint64 seed", "capi::seed_global(seed)"),
    "split": ("array key, int num", "random::split(key, num, s)"),
    "bits": ("shape shape, int width, key key", "random::bits(shape, width, key, s)"),
    "uniform": ("array low, array high, shape shape, dtype dtype, key key",
                "random::uniform(low, high, shape, dtype, key, s)"),
    # mlx-c's two forms of normal: float bounds (0 and 1 are the defaults, as loc=None, scale=None)
    # and array bounds (empty handles for None).
    "normal": ("shape shape, dtype dtype, float loc, float scale, key key",
               "random::normal(shape, dtype, UNLESS(loc, 0), UNLESS(scale, 1), key, s)"),
    "normal_broadcast": ("shape shape, dtype dtype, opt_array loc, opt_array scale, key key",
                         "random::normal(shape, dtype, loc, scale, key, s)", "normal"),
    "randint": ("array low, array high, shape shape, dtype dtype, key key",
                "random::randint(low, high, shape, dtype, key, s)"),
    "bernoulli": ("array p, opt_shape shape, key key", "random::bernoulli(p, shape, key, s)"),
    "truncated_normal": ("array lower, array upper, opt_shape shape, dtype dtype, key key",
                         "random::truncated_normal(lower, upper, shape, dtype, key, s)"),
    "gumbel": ("shape shape, dtype dtype, key key", "random::gumbel(shape, dtype, key, s)"),
    # mlx-c's three forms of categorical: one sample per distribution, a sample shape, a count.
    "categorical": ("array logits, axis axis, key key",
                    "random::categorical(logits, axis, std::nullopt, std::nullopt, key, s)"),
    "categorical_shape": ("array logits, axis axis, shape shape, key key",
                          "random::categorical(logits, axis, shape, std::nullopt, key, s)", "categorical"),
    "categorical_num_samples": ("array logits, axis axis, int num_samples, key key",
                                "random::categorical(logits, axis, std::nullopt, num_samples, key, s)",
                                "categorical"),
    "laplace": ("shape shape, dtype dtype, float loc, float scale, key key",
                "random::laplace(shape, dtype, loc, scale, key, s)"),
    "permutation": ("array x, axis axis, key key", "random::permutation(x, axis, key, s)"),
    "permutation_arange": ("int64 x, key key", "random::permutation(x, key, s)", "permutation"),
    "multivariate_normal": ("array mean, array cov, shape shape, dtype dtype, key key",
                            "random::multivariate_normal(mean, cov, shape, dtype, key, s)"),
}  # fmt: skip
RANDOM_NOT_IN_C = {}

_DEC = "decompose(a, Decomposition::{}, {}, s)"
LINALG = {
    **{n: ("array a", f"linalg::{n}(a, s)") for n in ("inv", "det")},
    **{n: ("array a, bool upper", f"linalg::{n}(a, upper, s)") for n in ("tri_inv", "cholesky", "cholesky_inv")},
    "solve": ("array a, array b", "linalg::solve(a, b, s)"),
    "solve_triangular": ("array a, array b, bool upper", "linalg::solve_triangular(a, b, upper, s)"),
    "lu": ("array a", "linalg::lu(a, s)"),
    "lu_factor": ("array a", "VEC(linalg::lu_factor(a, s))"),
    "slogdet": ("array a", "VEC(linalg::slogdet(a, s))"),
    "qr": ("array a", _DEC.format("qr", "false")),
    # (U, S, Vt), or S alone when compute_uv is false.
    "svd": ("array a, bool compute_uv",
            "decompose(a, compute_uv ? Decomposition::svd : Decomposition::svd_values, false, s)"),
    "eigh": ("array a, string UPLO", _DEC.format("eigh", "UPPER(UPLO)")),
    "eigvalsh": ("array a, string UPLO", _DEC.format("eigvalsh", "UPPER(UPLO)") + "[0]"),
    "eig": ("array a", _DEC.format("eig", "false")),
    "eigvals": ("array a", _DEC.format("eigvals", "false") + "[0]"),
    "pinv": ("array a", "linalg::pinv(a, s)"),
    # mlx-c's three forms of norm: a numeric order, a named matrix order, the 2-norm (ord None).
    "norm": ("array a, double ord, axes axis, bool keepdims",
             "linalg::norm(a, linalg::NormOrder{ord}, axis, keepdims, s)"),
    "norm_matrix": ("array a, string ord, axes axis, bool keepdims",
                    "linalg::norm(a, linalg::NormOrder{ord}, axis, keepdims, s)", "norm"),
    "norm_l2": ("array a, axes axis, bool keepdims", "linalg::norm(a, std::nullopt, axis, keepdims, s)", "norm"),
    "cross": ("array a, array b, axis axis", "linalg::cross(a, b, axis, s)"),
}  # fmt: skip
LINALG_NOT_IN_C = {}

# One-axis transforms take mlx-c's plain `n` and `axis` (give the axis' size for Python's n=None);
# the others take `n` and `axes` as lists, NULL for None.
_FFT1 = "array a, int n, axis axis, fft_norm norm"
_FFTN = "array a, opt_shape n, axes axes, fft_norm norm"
_TF = {"": "false", "i": "true", "r": "true"}
FFT = {
    **{f"{i}{r}fft": (_FFT1, f'fftn(a, Shape{{n}}, std::vector<int>{{axis}}, {_TF[r]}, {_TF[i]}, norm, s, "{i}{r}fft")')
       for i in ("", "i") for r in ("", "r")},
    **{f"{i}{r}fft{d}": (_FFTN, f'fftn(a, n, axes, {_TF[r]}, {_TF[i]}, norm, s, "{i}{r}fft{d}")')
       for i in ("", "i") for r in ("", "r") for d in ("2", "n")},
    "fftshift": ("array a, axes axes", "fftshift(a, axes, false, s)"),
    "ifftshift": ("array a, axes axes", "fftshift(a, axes, true, s)"),
    "fftfreq": ("int64 n, double d", "fftfreq(n, d, false, s)"),
    "rfftfreq": ("int64 n, double d", "fftfreq(n, d, true, s)"),
}  # fmt: skip
FFT_NOT_IN_C = {
    **{n: "composed in Python of framing ops and the transforms; MLX's C API has none"
       for n in ("stft", "istft")},
}  # fmt: skip

_ROTATION = "int64 dims, bool traditional, opt_float base, float scale"
_ROPE = f"array x, {_ROTATION}"
_NORM_ROPE = (
    "array x, opt_array weight, float eps, array cache, {} offset, "
    + _ROTATION
    + ", opt_array freqs"
)
_NORM_ROPE_CALL = "VEC(norm_rope(x, weight, eps, cache, RopeOffset{offset}, dims, traditional, base, scale, freqs, s))"
FAST = {
    "rms_norm": ("array x, opt_array weight, float eps", "rms_norm(x, weight, eps, s)"),
    "layer_norm": ("array x, opt_array weight, opt_array bias, float eps", "layer_norm(x, weight, bias, eps, s)"),
    "add_rms_norm": ("array x, array residual, opt_array weight, float eps",
                     "VEC(add_rms_norm(x, residual, weight, eps, s))"),
    # mlx-c's two forms of rope: an int offset, and an array one (shape () or (B,)).
    "rope": (f"{_ROPE}, int64 offset, opt_array freqs",
             "rope(x, dims, traditional, base, scale, RopeOffset{offset}, freqs, s)"),
    "rope_dynamic": (f"{_ROPE}, array offset, opt_array freqs",
                     "rope(x, dims, traditional, base, scale, RopeOffset{offset}, freqs, s)", "rope"),
    "norm_rope": (_NORM_ROPE.format("int64"), _NORM_ROPE_CALL),
    "norm_rope_dynamic": (_NORM_ROPE.format("array"), _NORM_ROPE_CALL, "norm_rope"),
    "cross_entropy": ("array logits, array targets", "cross_entropy(logits, targets, s)"),
    # mlx-c's form: mask_mode "" (none, or the array when mask_arr is given), "causal" or "array".
    "scaled_dot_product_attention": ("array queries, array keys, array values, float scale, string mask_mode, "
                                     "opt_array mask_arr, opt_array sinks",
                                     "scaled_dot_product_attention(queries, keys, values, scale, "
                                     "MASK_MODE(mask_mode, mask_arr), mask_arr, sinks, s)"),
    "paged_write": ("array k_pages, array v_pages, array keys, array values, array slot_mapping",
                    "VEC(paged_write(k_pages, v_pages, keys, values, slot_mapping, s))"),
    "paged_attention": ("array queries, array k_pages, array v_pages, array block_tables, array context_lens, "
                        "float scale",
                        "paged_attention(queries, k_pages, v_pages, block_tables, context_lens, scale, s)"),
}  # fmt: skip
FAST_NOT_IN_C = {
    "gated_delta_update": "composed in Python of ops (a loop over the time steps); MLX's C API has none",
    "plan_attention": "returns a Python dict describing the kernel a call routes to (for tests and tuning)",
    **{n: "a GPU kernel from source text: no GPU back-end runs it (its Python form raises, as MLX's CPU build)"
       for n in ("metal_kernel", "cuda_kernel", "precompiled_cuda_kernel")},
}  # fmt: skip

# module: (table, NOT_IN_C rows).
MODULES = {
    "random": (RANDOM, RANDOM_NOT_IN_C),
    "linalg": (LINALG, LINALG_NOT_IN_C),
    "fft": (FFT, FFT_NOT_IN_C),
    "fast": (FAST, FAST_NOT_IN_C),
}
# The functions (module_suffix) with several results, written to a vector of arrays.
VECTOR_RESULTS = {
    "linalg_lu", "linalg_lu_factor", "linalg_slogdet", "linalg_qr", "linalg_svd", "linalg_eigh", "linalg_eig",
    "fast_add_rms_norm", "fast_norm_rope", "fast_norm_rope_dynamic", "fast_paged_write",
}  # fmt: skip
# Functions without a stream (they record no op) and without a result.
NO_STREAM = {"random_key", "random_seed"}
NO_RESULT = {"random_seed"}


def covers(module, suffix):
    """The public Python name the C function nuvec_<module>_<suffix> gives a C form of."""
    row = MODULES[module][0][suffix]
    return row[2] if len(row) > 2 else suffix
