"""Loss functions, as ``mlx.nn.losses``: the same names, arguments, defaults, reductions and
errors (a ``ValueError``; nuvec's is an ``OpError``, which is one, naming the caller's line)."""

import math
from typing import Literal, get_args

import nuvec as mx
from nuvec._errors import op_error

Reduction = Literal["none", "mean", "sum"]


def _reduce(loss: mx.array, reduction: Reduction, op: str) -> mx.array:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return mx.mean(loss)
    if reduction == "sum":
        return mx.sum(loss)
    raise op_error(op, f"invalid reduction {reduction!r}; must be one of {get_args(Reduction)}")


def _check_shapes(op: str, **arrays: mx.array) -> None:
    """Raise unless all ``arrays`` have one shape (the message names each by its argument)."""
    shapes = {name: a.shape for name, a in arrays.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{name} shape {shape}" for name, shape in shapes.items())
        raise op_error(op, f"the shapes do not match: {listed}")


def _weigh(loss: mx.array, weights: mx.array | None, op: str) -> mx.array:
    if weights is None:
        return loss
    if weights.shape != loss.shape:
        raise op_error(
            op, f"weights shape {weights.shape} differs from the loss shape {loss.shape}"
        )
    return loss * weights


def cross_entropy(
    logits: mx.array,
    targets: mx.array,
    weights: mx.array | None = None,
    axis: int = -1,
    label_smoothing: float = 0.0,
    reduction: Reduction = "none",
) -> mx.array:
    """The cross entropy of ``logits`` (unnormalised, classes along ``axis``) against
    ``targets``: class indices (``logits``' shape without ``axis``) or probabilities
    (``logits``' shape). ``weights`` has the loss's shape; ``label_smoothing`` in [0, 1)
    mixes in the uniform distribution over classes."""
    op = "cross_entropy"
    if not 0 <= label_smoothing < 1:
        raise op_error(op, f"label smoothing must be in [0, 1), got {label_smoothing}")
    ndim = logits.ndim
    if not -ndim <= axis < ndim:
        raise op_error(op, f"axis {axis} is out of range for logits of rank {ndim}", index=True)
    probs = targets.ndim == ndim
    expected = (
        logits.shape if probs else logits.shape[: axis % ndim] + logits.shape[axis % ndim + 1 :]
    )
    if targets.shape != expected:
        raise op_error(
            op, f"targets shape {targets.shape} does not match logits shape {logits.shape}"
        )

    if probs:
        # Shift by the (constant) maximum, as MLX does: targets need not sum to one, so the
        # shift shows in the value and must be the same one.
        shifted = logits - mx.stop_gradient(mx.max(logits, axis=axis, keepdims=True))
        score = mx.sum(shifted * targets, axis=axis)
        if label_smoothing > 0:
            score = (1 - label_smoothing) * score
        loss = mx.logsumexp(shifted, axis=axis) - score
    else:
        # Shift by the target's logit: logsumexp(x - x_t) is the loss itself in four ops,
        # stable, and exact near zero (the training step's hot path).
        picked = mx.take_along_axis(logits, mx.expand_dims(targets, axis), axis=axis)
        shifted = logits - picked
        loss = mx.logsumexp(shifted, axis=axis)
    if label_smoothing > 0:
        loss = loss - label_smoothing * mx.mean(shifted, axis=axis)
    return _reduce(_weigh(loss, weights, op), reduction, op)


def binary_cross_entropy(
    inputs: mx.array,
    targets: mx.array,
    weights: mx.array | None = None,
    with_logits: bool = True,
    reduction: Reduction = "mean",
) -> mx.array:
    """The binary cross entropy of ``inputs`` (logits, or probabilities when ``with_logits``
    is False, their logs clipped below at -100) against 0/1 ``targets`` of the same shape."""
    op = "binary_cross_entropy"
    _check_shapes(op, inputs=inputs, targets=targets)
    if with_logits:
        loss = mx.logaddexp(0.0, inputs) - inputs * targets
    else:
        log_p = mx.clip(mx.log(inputs), -100, None)
        log_q = mx.clip(mx.log(1 - inputs), -100, None)
        loss = -(targets * log_p + (1 - targets) * log_q)
    return _reduce(_weigh(loss, weights, op), reduction, op)


def l1_loss(predictions: mx.array, targets: mx.array, reduction: Reduction = "mean") -> mx.array:
    """The absolute error, :math:`|p - t|`."""
    _check_shapes("l1_loss", predictions=predictions, targets=targets)
    return _reduce(mx.abs(predictions - targets), reduction, "l1_loss")


def mse_loss(predictions: mx.array, targets: mx.array, reduction: Reduction = "mean") -> mx.array:
    """The squared error, :math:`(p - t)^2`."""
    _check_shapes("mse_loss", predictions=predictions, targets=targets)
    return _reduce(mx.square(predictions - targets), reduction, "mse_loss")


def nll_loss(
    inputs: mx.array, targets: mx.array, axis: int = -1, reduction: Reduction = "none"
) -> mx.array:
    """The negative log likelihood of class indices ``targets`` under log-probabilities
    ``inputs`` (classes along ``axis``)."""
    picked = mx.take_along_axis(inputs, mx.expand_dims(targets, axis), axis=axis)
    return _reduce(-mx.squeeze(picked, axis), reduction, "nll_loss")


def gaussian_nll_loss(
    inputs: mx.array,
    targets: mx.array,
    vars: mx.array,
    full: bool = False,
    eps: float = 1e-6,
    reduction: Reduction = "mean",
) -> mx.array:
    r"""The Gaussian negative log likelihood of ``targets`` under means ``inputs`` and
    variances ``vars`` (floored at ``eps``): :math:`\frac12(\log v + (t - \mu)^2 / v)`,
    plus :math:`\frac12 \log 2\pi` when ``full``."""
    op = "gaussian_nll_loss"
    _check_shapes(op, inputs=inputs, targets=targets)
    _check_shapes(op, inputs=inputs, vars=vars)
    vars = mx.maximum(vars, eps)
    loss = 0.5 * (mx.log(vars) + mx.square(targets - inputs) / vars)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, op)


def kl_div_loss(
    inputs: mx.array, targets: mx.array, axis: int = -1, reduction: Reduction = "none"
) -> mx.array:
    r"""The Kullback-Leibler divergence of log-probabilities ``targets`` from ``inputs``:
    :math:`\sum e^t (t - x)` along ``axis``."""
    loss = mx.sum(mx.exp(targets) * (targets - inputs), axis=axis)
    return _reduce(loss, reduction, "kl_div_loss")


def smooth_l1_loss(
    predictions: mx.array, targets: mx.array, beta: float = 1.0, reduction: Reduction = "mean"
) -> mx.array:
    r"""The smooth L1 loss of :math:`d = |p - t|`: :math:`d^2 / (2\beta)` below ``beta``,
    else :math:`d - \beta / 2`."""
    op = "smooth_l1_loss"
    _check_shapes(op, predictions=predictions, targets=targets)
    diff = mx.abs(predictions - targets)
    loss = mx.where(diff < beta, 0.5 * mx.square(diff) / beta, diff - 0.5 * beta)
    return _reduce(loss, reduction, op)


def triplet_loss(
    anchors: mx.array,
    positives: mx.array,
    negatives: mx.array,
    axis: int = -1,
    p: int = 2,
    margin: float = 1.0,
    eps: float = 1e-6,
    reduction: Reduction = "none",
) -> mx.array:
    r"""The triplet margin loss :math:`\max(\|a - p\|_p - \|a - n\|_p + \text{margin}, 0)`,
    the norms along ``axis`` with ``eps`` added under the root."""

    def distance(other: mx.array) -> mx.array:
        return mx.power(mx.sum(mx.power(mx.abs(anchors - other), p), axis=axis) + eps, 1.0 / p)

    loss = mx.maximum(distance(positives) - distance(negatives) + margin, 0)
    return _reduce(loss, reduction, "triplet_loss")


def hinge_loss(inputs: mx.array, targets: mx.array, reduction: Reduction = "none") -> mx.array:
    r"""The hinge loss against -1/1 ``targets``, :math:`\max(1 - x t, 0)`."""
    return _reduce(mx.maximum(1 - inputs * targets, 0), reduction, "hinge_loss")


def huber_loss(
    inputs: mx.array, targets: mx.array, delta: float = 1.0, reduction: Reduction = "none"
) -> mx.array:
    r"""The Huber loss of :math:`a = x - t`: :math:`a^2 / 2` up to ``delta``, linear with
    slope ``delta`` beyond."""
    err = mx.abs(inputs - targets)
    quadratic = mx.minimum(err, delta)
    loss = 0.5 * quadratic**2 + delta * (err - quadratic)
    return _reduce(loss, reduction, "huber_loss")


def log_cosh_loss(inputs: mx.array, targets: mx.array, reduction: Reduction = "none") -> mx.array:
    r"""The log-cosh loss :math:`\log\cosh(x - t)`, computed as a stable logaddexp."""
    err = inputs - targets
    return _reduce(mx.logaddexp(err, -err) - math.log(2), reduction, "log_cosh_loss")


def cosine_similarity_loss(
    x1: mx.array, x2: mx.array, axis: int = 1, eps: float = 1e-8, reduction: Reduction = "none"
) -> mx.array:
    r"""The cosine similarity along ``axis``, :math:`x_1 \cdot x_2 / \max(\|x_1\| \|x_2\|,
    \epsilon)`."""
    norms = mx.sqrt(mx.sum(mx.square(x1), axis=axis)) * mx.sqrt(mx.sum(mx.square(x2), axis=axis))
    loss = mx.sum(x1 * x2, axis=axis) / mx.maximum(norms, eps)
    return _reduce(loss, reduction, "cosine_similarity_loss")


def margin_ranking_loss(
    inputs1: mx.array,
    inputs2: mx.array,
    targets: mx.array,
    margin: float = 0.0,
    reduction: Reduction = "none",
) -> mx.array:
    r"""The margin ranking loss :math:`\max(0, -y (x_1 - x_2) + \text{margin})` for labels
    :math:`y` in {1, -1}."""
    op = "margin_ranking_loss"
    _check_shapes(op, inputs1=inputs1, inputs2=inputs2, targets=targets)
    loss = mx.maximum(0, -targets * (inputs1 - inputs2) + margin)
    return _reduce(loss, reduction, op)
