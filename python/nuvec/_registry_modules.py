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

# MLX 0.32 has no vjp or jvp for QRF, SVD, Eigh or Eig (it raises ValueError), nor does nuvec.
_NO_GRAD = {"differentiable": "MLX 0.32 has no derivative of its QR, SVD or eigen-decompositions"}

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
        ("qr", 1, "numpy.linalg.qr", _NO_GRAD),
        ("svd", 1, "numpy.linalg.svd", _NO_GRAD),
        ("inv", 1, "numpy.linalg.inv"),
        ("pinv", 1, "numpy.linalg.pinv", _NO_GRAD),
        ("tri_inv", 1, "scipy.linalg.solve_triangular"),
        ("cholesky", 1, "numpy.linalg.cholesky"),
        ("cholesky_inv", 1, "scipy.linalg.cho_solve"),
        ("eigh", 1, "numpy.linalg.eigh", _NO_GRAD),
        ("eigvalsh", 1, "numpy.linalg.eigvalsh", _NO_GRAD),
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
        *((n, 0, f"numpy.fft.{n}") for n in ("fftfreq", "rfftfreq")),
        ("stft", 1, "scipy.signal.stft"),
        ("istft", 1, "scipy.signal.istft"),
    ],
}
