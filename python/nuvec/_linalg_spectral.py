"""nuvec.linalg's decompositions and norms, as MLX 0.32's mx.linalg: qr, svd, eigh, eigvalsh, eig,
eigvals (one LAPACK-backed primitive, ``_core._linalg_decompose``), and pinv, norm and cross,
composed of ops in MLX's order so that they give MLX's bits where the decompositions do.
docs/linalg.md ("Decompositions: QR, SVD, eigenvalues, norms") says what runs where."""

import math
import typing

from . import _core
from . import _typing as _t
from ._dtype_info import finfo, result_type
from ._dtypes import complexfloating, inexact, issubdtype
from ._errors import op_error

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

_inf = math.inf


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
    a = _arr(a)
    if a.dtype not in (_core.float32, _core.float64):
        raise op_error(
            "linalg.pinv", f"arrays must have type float32 or float64; received {a.dtype}"
        )
    if a.ndim < 2:
        raise op_error(
            "linalg.pinv", f"arrays must have >= 2 dimensions; received {a.ndim} dimensions"
        )
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    if k == 0:  # nothing to invert (nuvec's max refuses an empty axis; MLX's gives zeros here)
        return _core.zeros((*a.shape[:-2], n, m), a.dtype, stream=stream)
    u, s, v = svd(a, stream=stream)
    u = _core.swapaxes(u[..., :m, :k], -1, -2, stream=stream)
    v = _core.swapaxes(v[..., :k, :n], -1, -2, stream=stream)
    s = _core.expand_dims(s, -2, stream=stream)
    rcond = 10.0 * max(m, n) * float(finfo(a.dtype).eps)
    cutoff = _core.multiply(
        _core.array(rcond, a.dtype), _core.max(s, -1, True, stream=stream), stream=stream
    )
    rs = _core.where(
        _core.greater(s, cutoff, stream=stream),
        _core.reciprocal(s, stream=stream),
        _core.array(0.0, a.dtype),
        stream=stream,
    )
    return _core.matmul(_core.multiply(v, rs, stream=stream), u, stream=stream)


def _at_least_float(dt):
    if issubdtype(dt, inexact):
        return dt
    return result_type(dt, _core.float32)


def _l2(a, axis, keepdims, stream):
    if issubdtype(a.dtype, complexfloating):
        m = _core.abs(a, stream=stream)
        sq = _core.multiply(m, m, stream=stream)
    else:
        sq = _core.square(a, stream=stream)
    return _core.sqrt(_core.sum(sq, axis, keepdims, stream=stream), stream=stream)


def _vector_norm(a, ord, axis, keepdims, s):
    dt = _at_least_float(a.dtype)
    if ord == 0:
        nz = _core.not_equal(a, _core.array(0), stream=s)
        return _core.astype(_core.sum(nz, axis, keepdims, stream=s), dt, stream=s)
    if ord == 1:
        return _core.astype(
            _core.sum(_core.abs(a, stream=s), axis, keepdims, stream=s), dt, stream=s
        )
    if ord == 2:
        return _l2(a, axis, keepdims, s)
    if ord in (_inf, -_inf):
        red = _core.max if ord > 0 else _core.min
        return _core.astype(red(_core.abs(a, stream=s), axis, keepdims, stream=s), dt, stream=s)
    p = _core.power(_core.abs(a, stream=s), _core.array(ord, dt), stream=s)
    return _core.power(_core.sum(p, axis, keepdims, stream=s), _core.array(1.0 / ord, dt), stream=s)


def _matrix_last(a, axis):
    # The matrix axes moved last (rows, then columns), as MLX's singular-value norms take them.
    row, col = (ax + a.ndim if ax < 0 else ax for ax in axis)
    if row > col:
        return _core.moveaxis(_core.moveaxis(a, row, -1), col, -1), sorted((row, col))
    return _core.moveaxis(_core.moveaxis(a, col, -1), row, -2), sorted((row, col))


def _matrix_norm(a, ord, axis, keepdims, s):
    dt = _at_least_float(a.dtype)
    row, col = (x + a.ndim if x < 0 else x for x in axis)
    if isinstance(ord, str):
        if ord in ("f", "fro"):
            return _l2(a, list(axis), keepdims, s)
        if ord == "nuc":
            m, both = _matrix_last(a, axis)
            r = _core.sum(svd(m, False, stream=s), -1, False, stream=s)
            return _core.expand_dims(r, both, stream=s) if keepdims else r
        raise op_error("linalg.norm", f"invalid ord value '{ord}' for matrix norm")
    if ord in (1, -1):
        col -= not keepdims and col > row and col > 0
        red = _core.max if ord > 0 else _core.min
        r = red(_core.sum(_core.abs(a, stream=s), row, keepdims, stream=s), col, keepdims, stream=s)
        return _core.astype(r, dt, stream=s)
    if ord in (_inf, -_inf):
        row -= not keepdims and row > col and row > 0
        red = _core.max if ord > 0 else _core.min
        r = red(_core.sum(_core.abs(a, stream=s), col, keepdims, stream=s), row, keepdims, stream=s)
        return _core.astype(r, dt, stream=s)
    if ord in (2, -2):
        m, both = _matrix_last(a, axis)
        red = _core.max if ord > 0 else _core.min
        r = red(svd(m, False, stream=s), -1, False, stream=s)
        if keepdims:
            r = _core.expand_dims(r, both, stream=s)
        return _core.astype(r, dt, stream=s)
    raise op_error("linalg.norm", f"invalid ord {ord:g} for matrix norm")


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
    a = _arr(a)
    ax = None if axis is None else [int(axis)] if isinstance(axis, int) else [int(x) for x in axis]
    if ord is None:
        if ax is None:
            ax = list(range(a.ndim))
        elif len(ax) > 2:
            raise op_error("linalg.norm", "received too many axes for norm")
        return _l2(a, ax, keepdims, stream)
    if ax is None:
        ax = list(range(a.ndim))
    if isinstance(ord, str):
        if len(ax) != 2:
            raise op_error(
                "linalg.norm",
                f"norm '{ord}' only supported for matrices, but received {len(ax)} axis/axes",
            )
        return _matrix_norm(a, ord, ax, keepdims, stream)
    ord = float(ord)
    if len(ax) == 1:
        return _vector_norm(a, ord, ax, keepdims, stream)
    if len(ax) == 2:
        return _matrix_norm(a, ord, ax, keepdims, stream)
    raise op_error("linalg.norm", "received too many axes for norm")


matrix_norm = norm  # mlx.core.matrix_norm is mx.linalg.norm


def cross(
    a: _t.ArrayLike, b: _t.ArrayLike, axis: int = -1, *, stream: _t.StreamLike | None = None
) -> _core.array:
    """The cross product along ``axis`` (size 2 or 3; a size-2 vector has a zero third
    component), broadcast over the other axes, in MLX's order of operations."""
    a, b, s = _arr(a), _arr(b), stream
    for x in (a, b):
        if axis >= x.ndim or axis + x.ndim < 0:
            raise op_error(
                "linalg.cross",
                f"axis {axis} is out of bounds for array with {x.ndim} dimensions",
                True,
            )
        if x.shape[axis] not in (2, 3):
            raise op_error("linalg.cross", "the specified axis must have size 2 or 3")
    a2, b2 = a.shape[axis] == 2, b.shape[axis] == 2
    dt = result_type(a.dtype, b.dtype)
    ash, bsh = list(a.shape), list(b.shape)
    ash[axis], bsh[axis] = 3, 3
    out = list(_core.broadcast_shapes(tuple(ash), tuple(bsh)))
    ax = axis + len(out) if axis < 0 else axis
    out[ax] = 2 if a2 else 3
    a_ = _core.broadcast_to(_core.astype(a, dt, stream=s), tuple(out), stream=s)
    out[ax] = 2 if b2 else 3
    b_ = _core.broadcast_to(_core.astype(b, dt, stream=s), tuple(out), stream=s)
    x = _core.split(a_, 2 if a2 else 3, ax, stream=s)
    y = _core.split(b_, 2 if b2 else 3, ax, stream=s)
    mul, sub, neg = _core.multiply, _core.subtract, _core.negative
    if a2 and b2:
        z = _core.zeros_like(x[0], stream=s)
        parts = [z, z]
    elif b2:
        parts = [neg(mul(x[2], y[1], stream=s), stream=s), mul(x[2], y[0], stream=s)]
    elif a2:
        parts = [mul(x[1], y[2], stream=s), neg(mul(x[0], y[2], stream=s), stream=s)]
    else:
        parts = [
            sub(mul(x[1], y[2], stream=s), mul(x[2], y[1], stream=s), stream=s),
            sub(mul(x[2], y[0], stream=s), mul(x[0], y[2], stream=s), stream=s),
        ]
    parts.append(sub(mul(x[0], y[1], stream=s), mul(x[1], y[0], stream=s), stream=s))
    return _core.concatenate(parts, ax, stream=s)
