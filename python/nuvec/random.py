"""Random numbers, bit for bit MLX's: the same key, shape and dtype give the same values.

Every sampler takes an explicit ``key`` (from :func:`key` or :func:`split`); without one it draws
from this thread's global state, which it advances (``state`` is a one-element list holding the
key, the object ``compile`` can capture as MLX's ``mx.random.state``). The samplers are the
compositions MLX uses, on a Threefry-2x32 bit stream whose uniform and normal float32 forms
are fused into one kernel (see docs/random.md).
"""
import math
import threading
import time

import numpy as _np

from . import _core
from ._errors import op_error
from ._dtypes import floating, inexact, issubdtype

__all__ = [
    "key", "split", "seed", "bits", "uniform", "normal", "randint", "bernoulli", "truncated_normal",
    "gumbel", "categorical", "laplace", "permutation", "multivariate_normal",
]

_local = threading.local()


def _thread_state():
    st = getattr(_local, "state", None)
    if st is None:
        st = _local.state = [key(time.time_ns() & 0xFFFFFFFFFFFFFFFF)]
    return st


def __getattr__(name):
    # `state` is per thread, so it is looked up on access rather than stored on the module.
    if name == "state":
        return _thread_state()
    raise AttributeError(f"module 'nuvec.random' has no attribute {name!r}")


def key(seed):
    """A PRNG key from an integer seed in [0, 2**64): uint32 ``[seed >> 32, seed & 0xffffffff]``."""
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise op_error("key", "the seed must be an integer in [0, 2**64)")
    return _core.array(_np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=_np.uint32))


def seed(seed):
    """Seeds this thread's global PRNG state with ``key(seed)``."""
    _thread_state()[0] = key(seed)


def split(key, num=2, stream=None):
    """``num`` new keys from ``key``: a uint32 array of shape ``(num, 2)``."""
    if int(num) < 0:
        raise op_error("split", "num must be non-negative")
    return _core._random_bits(_core.array(key), [int(num), 2], 4, stream=stream)


def _next_key(stream=None):
    # MLX's KeySequence: split the state in two, keep the first, use the second.
    st = _thread_state()
    pair = split(st[0], 2, stream)
    st[0], out = pair[0], pair[1]
    return out


def _key(key, stream):
    return _next_key(stream) if key is None else _core.array(key)


def _shape(shape, op):
    if shape is None:
        return None
    if isinstance(shape, int):
        return [shape]
    try:
        return [int(d) for d in shape]
    except TypeError:
        raise op_error(op, "shape must be an int or a sequence of ints") from None


def _broadcasts_to(a, shape):
    """Whether shape ``a`` broadcasts to exactly ``shape``."""
    try:
        return list(_np.broadcast_shapes(tuple(a), tuple(shape))) == list(shape)
    except ValueError:
        return False


def _check_float(dtype, op, what):
    if not issubdtype(dtype, floating):
        raise op_error(op, f"can only generate {what} with a real floating point dtype, not {dtype}")


def bits(shape=(), width=4, key=None, stream=None):
    """Random bits: ``width`` (1, 2 or 4) bytes per element as uint8, uint16 or uint32."""
    return _core._random_bits(_key(key, stream), _shape(shape, "bits"), int(width), stream=stream)


def _is_default(value, expect):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == expect


# nextafter(1, 0) per float dtype: the top of uniform's [0, 1).
_BELOW_ONE = {_core.float16: 1 - 2.0**-11, _core.bfloat16: 1 - 2.0**-8, _core.float32: 1 - 2.0**-24,
              _core.float64: 1 - 2.0**-53}


def _unit(shape, dtype, key, stream):
    """Uniform on [0, 1) in ``dtype``: MLX's bits / (2^32 - 1), cast, clamped below 1."""
    u = _core._random_float(key, shape, _core._RandomKind.uniform, stream=stream)
    if dtype == _core.float32:
        return u
    return _core.minimum(_core.astype(u, dtype, stream=stream), _core.array(_BELOW_ONE[dtype], dtype=dtype),
                         stream=stream)


def uniform(low=0, high=1, shape=(), dtype=_core.float32, key=None, stream=None):
    """Uniform samples on ``[low, high)``; ``low`` and ``high`` broadcast to ``shape``."""
    _check_float(dtype, "uniform", "uniform numbers")
    shape = _shape(shape, "uniform")
    k = _key(key, stream)
    if _is_default(low, 0) and _is_default(high, 1):
        return _unit(shape, dtype, k, stream)  # (1 - 0) * u + 0 == u: skip two passes
    lo = _core.astype(_core.array(low), dtype, stream=stream)
    hi = _core.astype(_core.array(high), dtype, stream=stream)
    span = _core.subtract(hi, lo, stream=stream)
    if not _broadcasts_to(span.shape, shape):
        raise op_error("uniform", f"cannot generate values of shape {tuple(shape)}: low and high "
                      f"broadcast to {span.shape}")
    return _core.add(_core.multiply(span, _unit(shape, dtype, k, stream), stream=stream), lo, stream=stream)


def _erfinv_unit(shape, dtype, key, stream):
    """erfinv of a uniform on (-1, 1), in float32 and then cast (MLX's order)."""
    e = _core._random_float(key, shape, _core._RandomKind.erfinv, stream=stream)
    return e if dtype == _core.float32 else _core.astype(e, dtype, stream=stream)


def normal(shape=(), dtype=_core.float32, loc=None, scale=None, key=None, stream=None):
    """Normal samples: ``sqrt(2) * erfinv(u)`` with u uniform on (-1, 1), then ``* scale + loc``."""
    _check_float(dtype, "normal", "normal numbers")
    shape = _shape(shape, "normal")
    k = _key(key, stream)
    if dtype == _core.float32 and loc is None and scale is None:
        return _core._random_float(k, shape, _core._RandomKind.normal, stream=stream)
    factor = _core.array(math.sqrt(2.0), dtype=dtype)
    if scale is not None:
        factor = _core.multiply(factor, _core.astype(_core.array(scale), dtype), stream=stream)
    out = _core.multiply(factor, _erfinv_unit(shape, dtype, k, stream), stream=stream)
    if loc is not None:
        out = _core.add(_core.astype(_core.array(loc), dtype), out, stream=stream)
    return out


def randint(low, high, shape=(), dtype=_core.int32, key=None, stream=None):
    """Integers drawn uniformly from ``[low, high)``."""
    if issubdtype(dtype, inexact):
        raise op_error("randint", f"randint makes integers or bools, not {dtype}")
    lo = _core.array(low)
    u = uniform(lo, high, shape, _core.float32, key, stream)
    return _core.astype(_core.floor(_core.maximum(u, lo, stream=stream), stream=stream), dtype, stream=stream)


def bernoulli(p=0.5, shape=None, key=None, stream=None):
    """Booleans that are True with probability ``p`` (a float or a float array)."""
    p = _core.array(p)
    if not issubdtype(p.dtype, floating):
        raise op_error("bernoulli", f"the probability p must be a float, not {p.dtype}")
    shape = list(p.shape) if shape is None else _shape(shape, "bernoulli")
    out = _core.less(uniform(shape=shape, dtype=p.dtype, key=key, stream=stream), p, stream=stream)
    if list(out.shape) != shape:
        raise op_error("bernoulli", f"p of shape {p.shape} does not broadcast to shape {tuple(shape)}")
    return out


def truncated_normal(lower, upper, shape=None, dtype=_core.float32, key=None, stream=None):
    """Normal samples truncated to ``(lower, upper)`` (inverse-CDF, as JAX and MLX)."""
    _check_float(dtype, "truncated_normal", "truncated normal numbers")
    sqrt2 = _core.array(math.sqrt(2.0), dtype=dtype)
    lo = _core.astype(_core.array(lower), dtype)
    hi = _core.astype(_core.array(upper), dtype)
    a = _core.erf(_core.divide(lo, sqrt2, stream=stream), stream=stream)
    b = _core.erf(_core.divide(hi, sqrt2, stream=stream), stream=stream)
    if shape is None:
        shape = list(_np.broadcast_shapes(lo.shape, hi.shape))
    u = uniform(a, b, shape, dtype, key, stream)
    out = _core.multiply(sqrt2, _core.erfinv(u, stream=stream), stream=stream)
    return _core.maximum(_core.minimum(hi, out, stream=stream), lo, stream=stream)


def gumbel(shape=(), dtype=_core.float32, key=None, stream=None):
    """Standard Gumbel samples: ``-log(-log(u))`` with u uniform on [float32 tiny, 1)."""
    _check_float(dtype, "gumbel", "Gumbel numbers")
    u = uniform(float(_np.finfo(_np.float32).tiny), 1.0, shape, dtype, key, stream)
    return _core.negative(_core.log(_core.negative(_core.log(u, stream=stream), stream=stream), stream=stream),
                          stream=stream)


def categorical(logits, axis=-1, shape=None, num_samples=None, key=None, stream=None):
    """Indices (uint32) sampled from the unnormalised log-probabilities along ``axis`` (Gumbel-max)."""
    logits = _core.array(logits)
    if shape is not None and num_samples is not None:
        raise op_error("categorical", "at most one of shape and num_samples can be given")
    if not -logits.ndim <= axis < logits.ndim:
        raise op_error("categorical", f"axis {axis} is out of bounds for {logits.ndim} dimensions", index=True)
    axis %= logits.ndim
    reduced = list(logits.shape[:axis] + logits.shape[axis + 1:])
    if num_samples is not None:
        logits = _core.expand_dims(logits, -1)
        shape = reduced + [int(num_samples)]
    elif shape is None:
        shape = reduced
    else:
        shape = _shape(shape, "categorical")
        if not _broadcasts_to(reduced, shape):
            raise op_error("categorical", f"shape {tuple(shape)} is not compatible with logits of shape "
                          f"{logits.shape} reduced on axis {axis}")
    offset = axis + len(shape) - logits.ndim + 1
    g_shape = shape[:offset] + [logits.shape[axis]] + shape[offset:]
    scores = _core.add(gumbel(g_shape, _core.float32, key, stream), logits, stream=stream)
    return _core.argmax(scores, offset, stream=stream)


def laplace(shape=(), dtype=_core.float32, loc=0.0, scale=1.0, key=None, stream=None):
    """Laplace samples by the inverse CDF: ``sign(u) * log1p(-|u|)`` with u uniform on (-1, 1)."""
    _check_float(dtype, "laplace", "Laplace numbers")
    u = uniform(float(_np.nextafter(_np.float32(-1), _np.float32(0))), 1.0, shape, _core.float32, key, stream)
    out = _core.multiply(_core.sign(u), _core.log1p(_core.negative(_core.abs(u))), stream=stream)
    out = _core.astype(out, dtype, stream=stream)
    if scale != 1.0:
        out = _core.multiply(_core.array(scale, dtype=dtype), out, stream=stream)
    if loc != 0.0:
        out = _core.add(_core.array(loc, dtype=dtype), out, stream=stream)
    return out


def permutation(x, axis=0, key=None, stream=None):
    """A random permutation of ``arange(x)`` (uint32) or of an array's entries along ``axis``."""
    if isinstance(x, int):
        return _core.argsort(bits((x,), 4, key, stream), stream=stream)
    x = _core.array(x)
    if not -x.ndim <= axis < x.ndim:
        raise op_error("permutation", f"axis {axis} is out of bounds for {x.ndim} dimensions", index=True)
    order = _core.argsort(bits((x.shape[axis],), 4, key, stream), stream=stream)
    return _core.take(x, order, axis, stream=stream)


def multivariate_normal(mean, cov, shape=(), dtype=_core.float32, key=None, stream=None):
    """Jointly normal samples given ``mean`` and ``cov``. Needs a matrix decomposition (MLX uses
    an SVD of ``cov``), which nuvec does not have yet: validated calls raise NotImplementedError."""
    mean, cov = _core.array(mean), _core.array(cov)
    if dtype != _core.float32:
        raise op_error("multivariate_normal", f"the only supported dtype is float32, not {dtype}")
    if mean.ndim < 1 or cov.ndim < 2 or cov.shape[-1] != cov.shape[-2] or cov.shape[-1] != mean.shape[-1]:
        raise op_error("multivariate_normal", f"mean of shape {mean.shape} and cov of shape {cov.shape} do not "
                      "describe one distribution (cov must be (..., n, n) with mean (..., n))")
    raise NotImplementedError("multivariate_normal: needs a singular value decomposition of cov, which "
                              "nuvec does not have yet (nuvec.linalg is not written)")
