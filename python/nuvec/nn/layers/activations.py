"""Activation functions, each as a function and as a Module class, as ``mlx.nn``'s.

The formulas follow MLX operation for operation (same constants, same order), so float16 and
bfloat16 inputs round as they do in MLX and outputs keep the input's dtype.
"""

import math
from collections.abc import Callable

import nuvec as mx
from nuvec._errors import op_error
from nuvec.nn.layers.base import Module

_SQRT_2 = math.sqrt(2)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_SELU_ALPHA = 1.67326
_SELU_SCALE = 1.0507


def sigmoid(x: mx.array) -> mx.array:
    r"""The logistic sigmoid, :math:`1 / (1 + e^{-x})`."""
    return mx.sigmoid(x)


def relu(x: mx.array) -> mx.array:
    r"""The rectified linear unit, :math:`\max(x, 0)`."""
    return mx.maximum(x, 0)


def relu2(x: mx.array) -> mx.array:
    r"""The squared ReLU, :math:`\max(x, 0)^2`."""
    return mx.square(mx.maximum(x, 0))


def relu6(x: mx.array) -> mx.array:
    r"""ReLU capped at six, :math:`\min(\max(x, 0), 6)`."""
    return mx.minimum(mx.maximum(x, 0), 6.0)


def leaky_relu(x: mx.array, negative_slope: float = 0.01) -> mx.array:
    r"""The leaky ReLU, :math:`\max(\text{negative\_slope} \cdot x, x)`."""
    return mx.maximum(negative_slope * x, x)


def log_softmax(x: mx.array, axis: int = -1) -> mx.array:
    r"""The log of the softmax along ``axis``, :math:`x - \log \sum_j e^{x_j}`."""
    # Shift by the maximum first: the logsumexp of the raw input would round its small part
    # away against a large maximum before the subtraction.
    x = x - mx.stop_gradient(mx.max(x, axis=axis, keepdims=True))
    return x - mx.logsumexp(x, axis=axis, keepdims=True)


def elu(x: mx.array, alpha: float = 1.0) -> mx.array:
    r"""The exponential linear unit: :math:`x` where positive, else :math:`\alpha (e^x - 1)`."""
    return mx.where(x > 0, x, alpha * (mx.exp(x) - 1))


def softmax(x: mx.array, axis: int = -1) -> mx.array:
    r"""The softmax along ``axis``, :math:`e^{x_i} / \sum_j e^{x_j}`."""
    return mx.softmax(x, axis=axis)


def softplus(x: mx.array) -> mx.array:
    r"""The softplus, :math:`\log(1 + e^x)`."""
    return mx.logaddexp(x, 0)


def softsign(x: mx.array) -> mx.array:
    r"""The softsign, :math:`x / (1 + |x|)`."""
    return mx.divide(x, 1 + mx.abs(x))


def softshrink(x: mx.array, lambd: float = 0.5) -> mx.array:
    r"""Soft shrinkage: :math:`x \mp \lambda` where :math:`|x| > \lambda`, else 0."""
    return mx.where(mx.abs(x) > lambd, x - mx.sign(x) * lambd, 0)


def celu(x: mx.array, alpha: float = 1.0) -> mx.array:
    r"""The continuously differentiable ELU,
    :math:`\max(0, x) + \min(0, \alpha (e^{x / \alpha} - 1))`."""
    return mx.maximum(x, 0.0) + alpha * (mx.exp(mx.minimum(x, 0.0) / alpha) - 1)


def silu(x: mx.array) -> mx.array:
    r"""The sigmoid linear unit (swish), :math:`x \sigma(x)`."""
    return x * mx.sigmoid(x)


def log_sigmoid(x: mx.array) -> mx.array:
    r"""The log of the sigmoid, :math:`-\log(1 + e^{-x})`."""
    return -softplus(-x)


def gelu(x: mx.array) -> mx.array:
    r"""The Gaussian error linear unit, :math:`x \Phi(x)` with :math:`\Phi` the normal CDF
    (through ``erf``). :func:`gelu_approx` and :func:`gelu_fast_approx` approximate it."""
    return x * (1 + mx.erf(x / _SQRT_2)) / 2


def gelu_approx(x: mx.array) -> mx.array:
    r"""GELU by the tanh formula (absolute error under 0.0005 on [-6, 6]):
    :math:`0.5 x (1 + \tanh(\sqrt{2/\pi} (x + 0.044715 x^3)))`."""
    return 0.5 * x * (1 + mx.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def gelu_fast_approx(x: mx.array) -> mx.array:
    r"""GELU by a sigmoid (absolute error under 0.015 on [-6, 6]): :math:`x \sigma(1.702 x)`."""
    return x * mx.sigmoid(1.702 * x)


def glu(x: mx.array, axis: int = -1) -> mx.array:
    r"""The gated linear unit: splits ``axis`` into halves :math:`a, b` and gives
    :math:`a \sigma(b)`."""
    a, b = mx.split(x, indices_or_sections=2, axis=axis)
    return a * mx.sigmoid(b)


def step(x: mx.array, threshold: float = 0.0) -> mx.array:
    r"""The binary step: 1 where :math:`x \geq \text{threshold}`, else 0 (int32)."""
    return mx.where(x >= threshold, 1, 0)


def selu(x: mx.array) -> mx.array:
    r"""The scaled ELU, :math:`1.0507 \cdot \text{elu}(x, 1.67326)`."""
    return elu(x, _SELU_ALPHA) * _SELU_SCALE


def prelu(x: mx.array, alpha: mx.array) -> mx.array:
    r"""The parametric ReLU, :math:`\max(0, x) + a \min(0, x)` with ``alpha`` an array."""
    return mx.maximum(0, x) + alpha * mx.minimum(0, x)


def mish(x: mx.array) -> mx.array:
    r"""Mish, :math:`x \tanh(\text{softplus}(x))` (https://arxiv.org/abs/1908.08681)."""
    return x * mx.tanh(softplus(x))


def hardswish(x: mx.array) -> mx.array:
    r"""The hard swish, :math:`x \min(\max(x + 3, 0), 6) / 6`."""
    return x * mx.minimum(mx.maximum(x + 3, 0), 6) / 6


def hard_tanh(x: mx.array, min_val: float = -1.0, max_val: float = 1.0) -> mx.array:
    r"""The hard tanh, :math:`\min(\max(x, \text{min\_val}), \text{max\_val})`."""
    return mx.minimum(mx.maximum(x, min_val), max_val)


def hard_shrink(x: mx.array, lambd: float = 0.5) -> mx.array:
    r"""Hard shrinkage: :math:`x` where :math:`|x| > \lambda`, else 0."""
    return mx.where(mx.abs(x) > lambd, x, 0)


def softmin(x: mx.array, axis: int = -1) -> mx.array:
    r"""The softmin along ``axis``, :math:`e^{-x_i} / \sum_j e^{-x_j}`."""
    return mx.softmax(-x, axis=axis)


def tanh(x: mx.array) -> mx.array:
    """The hyperbolic tangent."""
    return mx.tanh(x)


def _applies(fn: Callable[[mx.array], mx.array]) -> Callable[[type], type]:
    """Class decorator: a Module without parameters whose call is ``fn``."""

    def decorate(cls: type) -> type:
        def __call__(self: Module, x: mx.array) -> mx.array:
            return fn(x)

        cls.__call__ = __call__
        return cls

    return decorate


@_applies(sigmoid)
class Sigmoid(Module):
    """:func:`sigmoid` as a module."""


@_applies(mish)
class Mish(Module):
    """:func:`mish` as a module."""


@_applies(relu)
class ReLU(Module):
    """:func:`relu` as a module."""


@_applies(relu2)
class ReLU2(Module):
    """:func:`relu2` as a module."""


@_applies(relu6)
class ReLU6(Module):
    """:func:`relu6` as a module."""


@_applies(softmax)
class Softmax(Module):
    """:func:`softmax` over the last axis as a module."""


@_applies(softplus)
class Softplus(Module):
    """:func:`softplus` as a module."""


@_applies(softsign)
class Softsign(Module):
    """:func:`softsign` as a module."""


@_applies(silu)
class SiLU(Module):
    """:func:`silu` as a module."""


@_applies(log_softmax)
class LogSoftmax(Module):
    """:func:`log_softmax` over the last axis as a module."""


@_applies(log_sigmoid)
class LogSigmoid(Module):
    """:func:`log_sigmoid` as a module."""


@_applies(tanh)
class Tanh(Module):
    """:func:`tanh` as a module."""


@_applies(hardswish)
class Hardswish(Module):
    """:func:`hardswish` as a module."""


@_applies(selu)
class SELU(Module):
    """:func:`selu` as a module."""


@_applies(hard_tanh)
class HardTanh(Module):
    """:func:`hard_tanh` with its default bounds as a module."""


@_applies(softmin)
class Softmin(Module):
    """:func:`softmin` over the last axis as a module."""


class GLU(Module):
    """:func:`glu` along ``axis`` as a module."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def __call__(self, x: mx.array) -> mx.array:
        return glu(x, self.axis)


class LeakyReLU(Module):
    """:func:`leaky_relu` with ``negative_slope`` as a module."""

    def __init__(self, negative_slope: float = 1e-2):
        super().__init__()
        self._negative_slope = negative_slope

    def __call__(self, x: mx.array) -> mx.array:
        return leaky_relu(x, self._negative_slope)


class ELU(Module):
    """:func:`elu` with ``alpha`` as a module."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x: mx.array) -> mx.array:
        return elu(x, self._alpha)


class CELU(Module):
    """:func:`celu` with ``alpha`` as a module."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x: mx.array) -> mx.array:
        return celu(x, self._alpha)


class Softshrink(Module):
    """:func:`softshrink` with ``lambd`` as a module."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x: mx.array) -> mx.array:
        return softshrink(x, self.lambd)


class HardShrink(Module):
    """:func:`hard_shrink` with ``lambd`` as a module."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x: mx.array) -> mx.array:
        return hard_shrink(x, self.lambd)


class Step(Module):
    """:func:`step` at ``threshold`` as a module."""

    def __init__(self, threshold: float = 0.0):
        super().__init__()
        self.threshold = threshold

    def __call__(self, x: mx.array) -> mx.array:
        return step(x, self.threshold)


class PReLU(Module):
    """:func:`prelu` with a learned ``weight`` of ``num_parameters`` slopes (broadcast over
    the last axis), each starting at ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25):
        super().__init__()
        self.weight = mx.full([num_parameters], init)

    def __call__(self, x: mx.array) -> mx.array:
        return prelu(x, self.weight)


_GELU_FORMS = {
    "none": gelu,
    "precise": gelu_approx,
    "tanh": gelu_approx,  # PyTorch's name for the tanh formula
    "fast": gelu_fast_approx,
}


class GELU(Module):
    """GELU as a module: ``approx`` picks :func:`gelu` ('none'), :func:`gelu_approx`
    ('precise' or 'tanh') or :func:`gelu_fast_approx` ('fast')."""

    def __init__(self, approx: str = "none"):
        super().__init__()
        if approx not in _GELU_FORMS:
            raise op_error("GELU", f"approx must be one of {list(_GELU_FORMS)}, got {approx!r}")
        self._approx = approx

    def __call__(self, x: mx.array) -> mx.array:
        return _GELU_FORMS[self._approx](x)
