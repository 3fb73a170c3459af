"""nuvec.linalg's decompositions and norms, as MLX 0.32's mx.linalg: qr, svd, eigh, eigvalsh, eig,
eigvals (one LAPACK-backed primitive, ``_core._linalg_decompose``), and pinv, norm and cross,
composed of ops in MLX's order in C++ (csrc/core/ops/linalg_composed.cpp, which the C API calls
too) so that they give MLX's bits where the decompositions do.
docs/linalg.md ("Decompositions: QR, SVD, eigenvalues, norms") says what runs where."""

import typing

from . import _core
from . import _typing as _t

__all__ = [
    "qr",
    "svd",
    "eigh",
    "eigvalsh",
    "eig",
    "eigvals",
    "pinv",
    "norm",
    "cross",
]  # nuvec.linalg's names (nuvec also exports matrix_norm, MLX's other name of norm)


def _arr(a):
    return a if isinstance(a, _core.array) else _core.array(a)


def _decompose(a, kind, upper=False, stream=None):
    return _core._linalg_decompose(_arr(a), kind, upper, stream)


def qr(a: _t.ArrayLike, *, stream: _t.StreamLike | None = None) -> tuple[_core.array, _core.array]:
    """The QR factorisation of the matrices in the last two axes: ``Q (..., M, K)`` with
    orthonormal columns and upper-triangular ``R (..., K, N)``, ``K = min(M, N)``; float32 or
    float64 (LAPACK's Householder signs: R's diagonal may be negative, as in MLX)."""
    q, r = _decompose(a, "qr", stream=stream)
    return q, r


def svd(
    a: _t.ArrayLike, compute_uv: bool = True, *, stream: _t.StreamLike | None = None
) -> typing.Any:
    """The singular value decomposition ``A = U diag(S) Vt`` of the matrices in the last two axes:
    ``(U (..., M, M), S (..., K), Vt (..., N, N))`` with S descending, or S alone when
    ``compute_uv`` is false. float32, float64 or complex64 (S is then float32)."""
    if not compute_uv:
        return _decompose(a, "svd_values", stream=stream)[0]
    u, s, vt = _decompose(a, "svd", stream=stream)
    return u, s, vt


def _upper(UPLO):
    # MLX reads the upper triangle unless UPLO starts with "L".
    return not str(UPLO).startswith("L")


def eigh(
    a: _t.ArrayLike, UPLO: str = "L", *, stream: _t.StreamLike | None = None
) -> tuple[_core.array, _core.array]:
    """Eigenvalues (ascending) and unit eigenvectors (columns) of real symmetric or complex
    Hermitian matrices, reading the triangle UPLO names ("L" or "U"); no symmetry check."""
    w, v = _decompose(a, "eigh", _upper(UPLO), stream)
    return w, v


def eigvalsh(
    a: _t.ArrayLike, UPLO: str = "L", *, stream: _t.StreamLike | None = None
) -> _core.array:
    """The eigenvalues of :func:`eigh`, ascending."""
    return _decompose(a, "eigvalsh", _upper(UPLO), stream)[0]


def eig(a: _t.ArrayLike, *, stream: _t.StreamLike | None = None) -> tuple[_core.array, _core.array]:
    """Eigenvalues and unit right eigenvectors (columns) of general square matrices, both
    complex64, in LAPACK's order as MLX gives them (not sorted)."""
    w, v = _decompose(a, "eig", stream=stream)
    return w, v


def eigvals(a: _t.ArrayLike, *, stream: _t.StreamLike | None = None) -> _core.array:
    """The eigenvalues of :func:`eig` (complex64)."""
    return _decompose(a, "eigvals", stream=stream)[0]


def pinv(a: _t.ArrayLike, *, stream: _t.StreamLike | None = None) -> _core.array:
    """The Moore-Penrose pseudo-inverse from the SVD, as MLX: singular values at most
    ``10 * max(M, N) * eps * max(S)`` count as zero."""
    return _core._linalg.pinv(_arr(a), stream)


def norm(
    a: _t.ArrayLike,
    /,
    ord: int | float | str | None = None,
    axis: int | typing.Sequence[int] | None = None,
    keepdims: bool = False,
    *,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Vector or matrix norms, as MLX (its table of orders): one axis gives vector norms (any p,
    inf, -inf, 0), two axes matrix norms ('fro', 'nuc', 1, -1, 2, -2, inf, -inf); with no axis
    the array's own axes (1-D or 2-D unless ord is None, which takes the 2-norm of all)."""
    ax = None if axis is None else [int(axis)] if isinstance(axis, int) else [int(x) for x in axis]
    return _core._linalg.norm(_arr(a), ord, ax, keepdims, stream)


matrix_norm = norm  # mlx.core.matrix_norm is mx.linalg.norm


def cross(
    a: _t.ArrayLike, b: _t.ArrayLike, axis: int = -1, *, stream: _t.StreamLike | None = None
) -> _core.array:
    """The cross product along ``axis`` (size 2 or 3; a size-2 vector has a zero third
    component), broadcast over the other axes, in MLX's order of operations."""
    return _core._linalg.cross(_arr(a), _arr(b), axis, stream)
