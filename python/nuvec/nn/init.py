"""Parameter initializers, as ``mlx.nn.init``: each builder returns a function that takes an
array and gives a new one of its shape. Draws go through ``nuvec.random`` in MLX's order, so
under the same seed they give MLX's bits (``orthogonal`` agrees to rounding: its QR differs)."""

import math
from collections.abc import Callable
from typing import Literal

import nuvec as mx
from nuvec._errors import op_error

FanMode = Literal["fan_in", "fan_out"]


def constant(value: float, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """Fills with ``value``."""

    def initializer(a: mx.array) -> mx.array:
        return mx.full(a.shape, value, dtype=dtype)

    return initializer


def normal(
    mean: float = 0.0, std: float = 1.0, dtype: mx.Dtype = mx.float32
) -> Callable[[mx.array], mx.array]:
    """Draws from the normal distribution with ``mean`` and ``std``."""

    def initializer(a: mx.array) -> mx.array:
        return mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)

    return initializer


def uniform(
    low: float = 0.0, high: float = 1.0, dtype: mx.Dtype = mx.float32
) -> Callable[[mx.array], mx.array]:
    """Draws uniformly from [``low``, ``high``)."""

    def initializer(a: mx.array) -> mx.array:
        return mx.random.uniform(low, high, a.shape, dtype=dtype)

    return initializer


def identity(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """The identity matrix (the array must be square)."""

    def initializer(arr: mx.array) -> mx.array:
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise op_error("identity", f"the array must be a square matrix, got shape {arr.shape}")
        return mx.eye(arr.shape[0], dtype=dtype)

    return initializer


def _fans(a: mx.array, op: str) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight laid out as MLX's: outputs first, inputs last, and the
    receptive field (a convolution's kernel axes) in between multiplying both."""
    if a.ndim < 2:
        raise op_error(op, f"needs an array of at least 2 dimensions, got {a.ndim}")
    receptive = math.prod(a.shape[1:-1])
    return a.shape[-1] * receptive, a.shape[0] * receptive


def _fan(a: mx.array, mode: FanMode, op: str) -> int:
    fan_in, fan_out = _fans(a, op)
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    raise op_error(op, f"invalid mode {mode!r}; valid modes are fan_in, fan_out")


def glorot_normal(dtype: mx.Dtype = mx.float32) -> Callable[..., mx.array]:
    r"""Glorot (Xavier) normal: :math:`\sigma = \text{gain} \sqrt{2 / (\text{fan\_in} +
    \text{fan\_out})}`."""

    def initializer(a: mx.array, gain: float = 1.0) -> mx.array:
        fan_in, fan_out = _fans(a, "glorot_normal")
        std = gain * math.sqrt(2.0 / (fan_in + fan_out))
        return mx.random.normal(shape=a.shape, scale=std, dtype=dtype)

    return initializer


def glorot_uniform(dtype: mx.Dtype = mx.float32) -> Callable[..., mx.array]:
    r"""Glorot (Xavier) uniform on :math:`[-l, l)`, :math:`l = \text{gain} \sqrt{6 /
    (\text{fan\_in} + \text{fan\_out})}`."""

    def initializer(a: mx.array, gain: float = 1.0) -> mx.array:
        fan_in, fan_out = _fans(a, "glorot_uniform")
        limit = gain * math.sqrt(6.0 / (fan_in + fan_out))
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def he_normal(dtype: mx.Dtype = mx.float32) -> Callable[..., mx.array]:
    r"""He (Kaiming) normal: :math:`\sigma = \text{gain} / \sqrt{\text{fan}}`, the fan of
    ``mode``."""

    def initializer(a: mx.array, mode: FanMode = "fan_in", gain: float = 1.0) -> mx.array:
        std = gain / math.sqrt(_fan(a, mode, "he_normal"))
        return mx.random.normal(shape=a.shape, scale=std, dtype=dtype)

    return initializer


def he_uniform(dtype: mx.Dtype = mx.float32) -> Callable[..., mx.array]:
    r"""He (Kaiming) uniform on :math:`[-l, l)`, :math:`l = \text{gain} \sqrt{3 /
    \text{fan}}`, the fan of ``mode``."""

    def initializer(a: mx.array, mode: FanMode = "fan_in", gain: float = 1.0) -> mx.array:
        limit = gain * math.sqrt(3.0 / _fan(a, mode, "he_uniform"))
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def sparse(
    sparsity: float, mean: float = 0.0, std: float = 1.0, dtype: mx.Dtype = mx.float32
) -> Callable[[mx.array], mx.array]:
    """Normal draws with ``ceil(sparsity * columns)`` entries of every row set to zero, the
    columns picked independently per row (Martens 2010)."""

    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise op_error("sparse", f"only 2-dimensional arrays are supported, got {a.ndim}")
        rows, cols = a.shape
        zeros = int(math.ceil(sparsity * cols))
        # MLX's draw order: the uniform keys that pick the columns, then the values.
        order = mx.argsort(mx.random.uniform(shape=a.shape), axis=1)
        out = mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)
        out[mx.arange(rows).reshape(rows, 1), order[:, :zeros]] = 0
        return out

    return initializer


def orthogonal(gain: float = 1.0, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """A (semi-)orthogonal matrix times ``gain``: Q of the QR of a square normal draw, its
    signs fixed by R's diagonal so the result is uniform over orthogonal matrices."""

    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise op_error("orthogonal", f"needs a 2-dimensional array, got {a.ndim}")
        rows, cols = a.shape
        n = max(rows, cols)
        q, r = mx.linalg.qr(mx.random.normal(shape=(n, n)))
        q = (q * mx.sign(mx.diag(r)))[:rows, :cols]
        return (q * gain).astype(dtype)

    return initializer
