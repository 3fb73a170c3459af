"""Linear algebra, as MLX's ``mlx.core.linalg`` (docs/linalg.md): factorisations, solves, inverses
and determinants, batched over leading axes, in float32 and float64."""

# The LU / triangular / Cholesky family is C++ (csrc/core/ops/linalg.cpp, bound as
# _core._linalg); docs/linalg.md says which kernels run each function.
from . import _core
from . import _typing as _t
from ._linalg_spectral import __all__ as _spectral
from ._linalg_spectral import cross, eig, eigh, eigvals, eigvalsh, norm, pinv, qr, svd  # noqa: F401

_l = _core._linalg

__all__ = [
    "lu_factor",
    "lu",
    "solve",
    "solve_triangular",
    "inv",
    "tri_inv",
    "cholesky",
    "cholesky_inv",
    "det",
    "slogdet",
    *_spectral,
]

_Array = _core.array
_Stream = _t.StreamLike | None


def lu_factor(a: _Array, *, stream: _Stream = None) -> tuple[_Array, _Array]:
    """LU factorisation with partial pivoting: ``(LU, pivots)``, L (unit diagonal) below the
    diagonal of LU and U on and above it; ``pivots`` (uint32) are LAPACK's row swaps, 0-based."""
    return _l.lu_factor(a, stream)


def lu(a: _Array, *, stream: _Stream = None) -> tuple[_Array, _Array, _Array]:
    """``(P, L, U)`` with ``a == (L @ U)[P]`` row-wise: P uint32 row indices, L unit lower
    triangular (M x K), U upper triangular (K x N), K = min(M, N)."""
    return _l.lu(a, stream)


def solve(a: _Array, b: _Array, *, stream: _Stream = None) -> _Array:
    """``x`` with ``a @ x == b``: b a vector (N,) or matrices (..., N, K); batch axes broadcast."""
    return _l.solve(a, b, stream)


def solve_triangular(
    a: _Array, b: _Array, *, upper: bool = False, stream: _Stream = None
) -> _Array:
    """``x`` with ``T @ x == b``, T the lower (``upper``: upper) triangle of a."""
    return _l.solve_triangular(a, b, upper, stream)


def inv(a: _Array, *, stream: _Stream = None) -> _Array:
    """The inverse of square a (a singular a raises when evaluated, as MLX)."""
    return _l.inv(a, stream)


def tri_inv(a: _Array, upper: bool = False, *, stream: _Stream = None) -> _Array:
    """The inverse of a's lower (``upper``: upper) triangle, itself triangular."""
    return _l.tri_inv(a, upper, stream)


def cholesky(a: _Array, upper: bool = False, *, stream: _Stream = None) -> _Array:
    """The Cholesky factor L with ``L @ L.T == a`` (``upper``: U with ``U.T @ U == a``), read
    from a's lower (upper) triangle. As MLX, a matrix that is not positive definite raises
    nothing; the result is then meaningless."""
    return _l.cholesky(a, upper, stream)


def cholesky_inv(a: _Array, upper: bool = False, *, stream: _Stream = None) -> _Array:
    """The inverse of ``L @ L.T`` (``upper``: ``U.T @ U``) given its Cholesky factor a."""
    return _l.cholesky_inv(a, upper, stream)


def det(a: _Array, *, stream: _Stream = None) -> _Array:
    """The determinant, from the LU factorisation."""
    return _l.det(a, stream)


def slogdet(a: _Array, *, stream: _Stream = None) -> tuple[_Array, _Array]:
    """``(sign, log|det|)``: the determinant's sign (0 for a singular matrix) and the log of its
    absolute value."""
    return _l.slogdet(a, stream)
