"""Random numbers, bit for bit MLX's: the same key, shape and dtype give the same values.

Every sampler takes an explicit ``key`` (from :func:`key` or :func:`split`); without one it draws
from this thread's global state, which it advances (``state`` is a one-element list holding the
key, the object ``compile`` can capture as MLX's ``mx.random.state``). The samplers themselves
are C++ (csrc/core/ops/random.cpp, bound as ``_core._random``): this module holds the public
signatures, the shape parsing and the global state (see docs/random.md).
"""

import operator
import threading
import time
import typing

from . import _core
from . import _typing as _t
from ._errors import op_error

_r = _core._random

__all__ = [
    "key",
    "split",
    "seed",
    "bits",
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
]

_local = threading.local()


def _thread_state():
    st = getattr(_local, "state", None)
    if st is None:
        st = _local.state = [key(time.time_ns() & 0xFFFFFFFFFFFFFFFF)]
    return st


if typing.TYPE_CHECKING:
    state: list[_core.array]  # a type checker would take any name for one __getattr__ serves
else:

    def __getattr__(name):
        # `state` is per thread, so it is looked up on access rather than stored on the module.
        if name == "state":
            return _thread_state()
        raise AttributeError(f"module 'nuvec.random' has no attribute {name!r}")


def key(seed: int) -> _core.array:
    """A PRNG key from an integer seed in [0, 2**64): uint32 ``[seed >> 32, seed & 0xffffffff]``.
    Anything else raises TypeError, as MLX (its binding takes a uint64)."""
    try:
        seed = operator.index(seed)
    except TypeError:
        raise TypeError(f"key: the seed must be an integer, not {type(seed).__name__}") from None
    if not 0 <= seed < 2**64:
        raise TypeError(f"key: the seed must be in [0, 2**64), got {seed}")
    return _r.key(seed)


def seed(seed: int) -> None:
    """Seeds this thread's global PRNG state with ``key(seed)``."""
    _thread_state()[0] = key(seed)


def split(key: _core.array, num: int = 2, stream: _t.StreamLike | None = None) -> _core.array:
    """``num`` new keys from ``key``: a uint32 array of shape ``(num, 2)``."""
    return _r.split(key, int(num), stream)


def _next_key(stream=None):
    # MLX's KeySequence: split the state in two, keep the first, use the second.
    st = _thread_state()
    pair = split(st[0], 2, stream)
    st[0], out = pair[0], pair[1]
    return out


def _key(key, stream):
    return _next_key(stream) if key is None else key


def _dtype(dtype, default=_core.float32):
    # MLX takes dtype=None for the default everywhere a sampler has a dtype.
    return default if dtype is None else dtype


def _shape(shape, op):
    if shape is None:
        return None
    if isinstance(shape, int):
        return [shape]
    try:
        return [int(d) for d in shape]
    except TypeError:
        raise op_error(op, "shape must be an int or a sequence of ints") from None


def bits(
    shape: _t.Shape = (),
    width: int = 4,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Random bits: ``width`` (1, 2 or 4) bytes per element as uint8, uint16 or uint32."""
    return _r.bits(_shape(shape, "bits"), int(width), _key(key, stream), stream)


def uniform(
    low: _t.ArrayLike = 0,
    high: _t.ArrayLike = 1,
    shape: _t.Shape = (),
    dtype: _core.Dtype | None = _core.float32,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Uniform samples on ``[low, high)``; ``low`` and ``high`` broadcast to ``shape``."""
    return _r.uniform(low, high, _shape(shape, "uniform"), _dtype(dtype), _key(key, stream), stream)


def normal(
    shape: _t.Shape = (),
    dtype: _core.Dtype | None = _core.float32,
    loc: _t.ArrayLike | None = None,
    scale: _t.ArrayLike | None = None,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Normal samples: ``sqrt(2) * erfinv(u)`` with u uniform on (-1, 1), then ``* scale + loc``."""
    return _r.normal(_shape(shape, "normal"), _dtype(dtype), loc, scale, _key(key, stream), stream)


def randint(
    low: _t.ArrayLike,
    high: _t.ArrayLike,
    shape: _t.Shape = (),
    dtype: _core.Dtype | None = _core.int32,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Integers drawn uniformly from ``[low, high)``."""
    return _r.randint(
        low, high, _shape(shape, "randint"), _dtype(dtype, _core.int32), _key(key, stream), stream
    )


def bernoulli(
    p: _t.ArrayLike = 0.5,
    shape: _t.Shape | None = None,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Booleans that are True with probability ``p`` (a float or a float array)."""
    return _r.bernoulli(p, _shape(shape, "bernoulli"), _key(key, stream), stream)


def truncated_normal(
    lower: _t.ArrayLike,
    upper: _t.ArrayLike,
    shape: _t.Shape | None = None,
    dtype: _core.Dtype | None = _core.float32,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Normal samples truncated to ``(lower, upper)`` (inverse-CDF, as JAX and MLX)."""
    shape = _shape(shape, "truncated_normal")
    return _r.truncated_normal(lower, upper, shape, _dtype(dtype), _key(key, stream), stream)


def gumbel(
    shape: _t.Shape = (),
    dtype: _core.Dtype | None = _core.float32,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Standard Gumbel samples: ``-log(-log(u))`` with u uniform on [float32 tiny, 1)."""
    return _r.gumbel(_shape(shape, "gumbel"), _dtype(dtype), _key(key, stream), stream)


def categorical(
    logits: _t.ArrayLike,
    axis: int = -1,
    shape: _t.Shape | None = None,
    num_samples: int | None = None,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Indices (uint32) sampled from the unnormalised log-probabilities along ``axis``: Gumbel-max,
    or MLX's inverse CDF for one distribution with a sample shape (docs/random.md)."""
    shape = _shape(shape, "categorical")
    num_samples = None if num_samples is None else int(num_samples)
    return _r.categorical(logits, axis, shape, num_samples, _key(key, stream), stream)


def laplace(
    shape: _t.Shape = (),
    dtype: _core.Dtype | None = _core.float32,
    loc: float = 0.0,
    scale: float = 1.0,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Laplace samples by the inverse CDF: ``sign(u) * log1p(-|u|)`` with u uniform on (-1, 1)."""
    return _r.laplace(
        _shape(shape, "laplace"), _dtype(dtype), loc, scale, _key(key, stream), stream
    )


def permutation(
    x: int | _core.array,
    axis: int = 0,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """A random permutation of ``arange(x)`` (uint32) or of an array's entries along ``axis``."""
    if not isinstance(x, _core.array) and not isinstance(x, bool) and hasattr(type(x), "__index__"):
        x = operator.index(x)  # NumPy integers too (MLX's binding takes only a Python int)
    return _r.permutation(x, axis, _key(key, stream), stream)


def multivariate_normal(
    mean: _t.ArrayLike,
    cov: _t.ArrayLike,
    shape: _t.Shape = (),
    dtype: _core.Dtype | None = _core.float32,
    key: _core.array | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Jointly normal samples given ``mean`` (..., n) and ``cov`` (..., n, n), by MLX's algorithm:
    ``mean + z @ (U * sqrt(S)) @ Vt`` from the SVD of ``cov`` (as float32) and standard normal
    ``z`` of the broadcast batch shape (or ``shape``). The samples ``z`` are MLX's bits; the SVD
    is OpenBLAS's (MLX links reference LAPACK), so results agree with MLX to float32 rounding
    (docs/linalg.md)."""
    return _r.multivariate_normal(
        mean,
        cov,
        _shape(shape, "multivariate_normal"),
        _dtype(dtype),
        _key(key, stream),
        stream,
    )
