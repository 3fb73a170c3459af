"""The rows of the op registry (python/nuvec/_registry.py) that live in nuvec's submodules rather
than its namespace: nuvec.random, nuvec.linalg and nuvec.fft. Stdlib-only data, loaded by
_registry.py from beside it. A row is (name, arity, reference) or (name, arity, reference,
{field overrides}); each family's common fields are in MODULES."""

# family -> (docs group, result dtype rule, common fields)
MODULES = {
    "random": ("random", "given", {}),
    "linalg": ("linalg", "float", {}),
    "fft": ("fft", "float", {}),
}

# MLX 0.32 has no vjp or jvp for QRF, SVD, Eigh or Eig; nuvec has them but for Eig's.
_NO_GRAD = {"differentiable": "no derivative of the general eigendecomposition (nor in MLX 0.32)"}
_NO_ARRAY = "no array input: a function of the length n and the spacing d"

ROWS = {
    # Their bits are MLX's: MLX is the reference.
    "random": [
        (n, 0, f"mlx.core.random.{n}")
        for n in (
            "key",
            "split",
            "seed",
            "uniform",
            "normal",
            "randint",
            "bernoulli",
            "truncated_normal",
            "gumbel",
            "categorical",
            "laplace",
            "permutation",
            "multivariate_normal",
        )
    ]
    + [("bits", 0, "numpy.random.Generator.bytes")],
    "linalg": [
        ("norm", 1, "numpy.linalg.norm"),
        ("qr", 1, "numpy.linalg.qr"),
        ("svd", 1, "numpy.linalg.svd"),
        ("inv", 1, "numpy.linalg.inv"),
        ("pinv", 1, "numpy.linalg.pinv"),
        ("tri_inv", 1, "scipy.linalg.solve_triangular"),
        ("cholesky", 1, "numpy.linalg.cholesky"),
        ("cholesky_inv", 1, "scipy.linalg.cho_solve"),
        ("eigh", 1, "numpy.linalg.eigh"),
        ("eigvalsh", 1, "numpy.linalg.eigvalsh"),
        ("eig", 1, "numpy.linalg.eig", _NO_GRAD),
        ("eigvals", 1, "numpy.linalg.eigvals", _NO_GRAD),
        ("lu", 1, "scipy.linalg.lu"),
        ("lu_factor", 1, "scipy.linalg.lu_factor"),
        ("solve", 2, "numpy.linalg.solve"),
        ("solve_triangular", 2, "scipy.linalg.solve_triangular"),
        ("det", 1, "numpy.linalg.det"),
        ("slogdet", 1, "numpy.linalg.slogdet"),
        ("cross", 2, "numpy.cross"),
    ],
    "fft": [
        *((n, 1, f"numpy.fft.{n}") for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn")),
        *((n, 1, f"numpy.fft.{n}", {"dtype": "same"}) for n in ("fftshift", "ifftshift")),
        *(
            (n, 1, f"numpy.fft.{n}")
            for n in ("rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn")
        ),
        *(
            (n, 0, f"numpy.fft.{n}", {"differentiable": _NO_ARRAY, "batchable": _NO_ARRAY})
            for n in ("fftfreq", "rfftfreq")
        ),
        ("stft", 1, "scipy.signal.stft"),
        ("istft", 1, "scipy.signal.istft"),
    ],
}
