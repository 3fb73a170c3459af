"""The optimizers of ``mlx.optimizers``: the ``Optimizer`` base, its subclasses and
``clip_grad_norm``.

An optimizer keeps its state in a tree that mirrors the parameters: each parameter's leaf is a
dict (``{"m": ..., "v": ...}`` for Adam), and the top level also holds ``"step"`` (a uint64
array counting the updates) and every hyperparameter given as a value or a schedule
(``"learning_rate"``). Each update rule is MLX's, operation for operation in float32, so a step
gives MLX's bits (or differs by an ulp where a reduction or a matrix product sums in another
order).
"""

from collections.abc import Callable, Sequence
from typing import Any

from .. import _core as mx
from .. import _typing as _t
from .._dtypes import floating, issubdtype
from .._errors import op_error
from ..utils import tree_flatten, tree_map, tree_merge, tree_reduce, tree_unflatten

__all__ = [
    "Optimizer",
    "MultiOptimizer",
    "SGD",
    "RMSprop",
    "Adagrad",
    "AdaDelta",
    "Adam",
    "AdamW",
    "Adamax",
    "Lion",
    "Adafactor",
    "Muon",
    "clip_grad_norm",
]

_Schedule = Callable[[mx.array], mx.array]
_Hyper = float | mx.array | _Schedule


def _mirror(params, state, init_single):
    """``state`` grown to mirror ``params``: a node per node, and for each leaf a dict that
    ``init_single`` fills when it is new (an existing, restored dict is kept)."""
    if params is None:
        return state
    if isinstance(params, dict):
        state = {} if state is None else state
        for k, p in params.items():
            state[k] = _mirror(p, state.get(k), init_single)
        return state
    if isinstance(params, (list, tuple)):
        old = list(state or [])
        new = [
            _mirror(p, old[i] if i < len(old) else None, init_single) for i, p in enumerate(params)
        ]
        return type(params)(*new) if hasattr(params, "_fields") else type(params)(new)
    if not state:
        state = {}
        init_single(params, state)
    return state


class Optimizer:
    """The base class: an update rule for one parameter (``init_single``, ``apply_single``)
    applied over a tree of parameters."""

    def __init__(self, schedulers: dict[str, _Schedule] | None = None) -> None:
        self._initialized = False
        self._state: dict[str, Any] = {"step": mx.array(0, mx.uint64)}
        self._schedulers = dict(schedulers or {})

    def update(self, model: Any, gradients: _t.Tree) -> None:
        """Applies ``gradients`` to ``model``'s parameters and updates the model with them."""
        model.update(self.apply_gradients(gradients, model))

    def init(self, parameters: _t.Tree) -> None:
        """Creates the state of every parameter that has none yet (optional: the first update
        does it), so that ``state`` can be read or restored before training starts."""
        if not isinstance(parameters, dict):
            raise op_error(type(self).__name__, "the parameters must be a dict (a tree)")
        _mirror(parameters, self._state, self.init_single)
        self._initialized = True

    def init_single(self, parameter: mx.array, state: dict[str, Any]) -> None:
        """Fills ``state`` (a dict) for one parameter; each subclass defines it."""
        raise NotImplementedError

    def apply_gradients(self, gradients: _t.Tree, parameters: _t.Tree) -> _t.Tree:
        """The updated parameters, a tree shaped as ``gradients`` (``parameters`` may hold
        more). Advances ``step`` and the scheduled hyperparameters."""
        if not self._initialized:
            self.init(gradients)
        for name, schedule in self._schedulers.items():
            self.state[name] = schedule(self.step)
        self.state["step"] = self.step + 1
        return tree_map(self.apply_single, gradients, parameters, self.state)

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        """One parameter's update (it may change ``state``); each subclass defines it."""
        raise NotImplementedError

    @property
    def state(self) -> dict[str, Any]:
        """The state tree. Setting it (e.g. to a checkpoint's) keeps the given arrays: the
        next update only adds what is missing."""
        return self._state

    @state.setter
    def state(self, state: dict[str, Any]) -> None:
        self._initialized = False
        self._state = state

    @property
    def step(self) -> mx.array:
        return self.state["step"]

    @property
    def learning_rate(self) -> mx.array:
        return self.state["learning_rate"]

    @learning_rate.setter
    def learning_rate(self, learning_rate: float | mx.array) -> None:
        self.state["learning_rate"] = mx.array(learning_rate)

    def _maybe_schedule(self, name: str, value: _Hyper) -> None:
        """Stores hyperparameter ``name``; a callable is a schedule, called with the step
        before each update."""
        if callable(value):
            self._schedulers[name] = value
            self.state[name] = value(self.step)
        else:
            self.state[name] = mx.array(value)


def _check(name, ok, what, value):
    if not ok:
        raise op_error(name, f"{what}, {value} was provided instead")


def _check_betas(name, betas):
    for i, beta in enumerate(betas):
        _check(name, 0.0 <= beta < 1.0, f"beta{i + 1} should be in [0, 1)", beta)


def _lr(opt, gradient):
    return opt.learning_rate.astype(gradient.dtype)


class MultiOptimizer(Optimizer):
    """Several optimizers over one tree: a parameter goes to the first optimizer whose filter
    ``filter(path, gradient)`` accepts it, and to the last optimizer (which has no filter) when
    none does."""

    def __init__(
        self,
        optimizers: Sequence[Optimizer],
        filters: Sequence[Callable[[str, mx.array], bool]] = (),
    ) -> None:
        super().__init__()
        self._state = {}
        if len(filters) != len(optimizers) - 1:
            raise op_error(
                "MultiOptimizer", f"Given {len(filters)} filters but {len(optimizers) - 1} needed."
            )
        self.optimizers = list(optimizers)
        self.filters = [*filters, lambda *args, **kwargs: True]

    def _split_dictionary(self, gradients: _t.Tree) -> list[_t.Tree]:
        if len(self.optimizers) == 1:
            return [gradients]
        parts: list[list[tuple[str, Any]]] = [[] for _ in self.optimizers]
        for path, g in tree_flatten(gradients):
            i = next(i for i, accepts in enumerate(self.filters) if accepts(path, g))
            parts[i].append((path, g))
        return [tree_unflatten(p) if p else {} for p in parts]

    def init(self, parameters: _t.Tree) -> None:
        for opt, part in zip(self.optimizers, self._split_dictionary(parameters)):
            opt.init(part)

    def apply_gradients(self, gradients: _t.Tree, parameters: _t.Tree) -> _t.Tree:
        tree: _t.Tree = {}
        for opt, part in zip(self.optimizers, self._split_dictionary(gradients)):
            tree = tree_merge(tree, opt.apply_gradients(part, parameters))
        return tree

    @property
    def state(self) -> dict[str, Any]:
        return {"states": [opt.state for opt in self.optimizers]}

    @state.setter
    def state(self, state: dict[str, Any]) -> None:
        if "states" not in state or len(state["states"]) != len(self.optimizers):
            raise op_error("MultiOptimizer", "Invalid state provided")
        for opt, s in zip(self.optimizers, state["states"]):
            opt.state = s

    @property
    def learning_rate(self) -> mx.array:
        return self.optimizers[0].learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate: float | mx.array) -> None:
        for opt in self.optimizers:
            opt.learning_rate = learning_rate


class SGD(Optimizer):
    """Stochastic gradient descent: ``v = momentum * v + (1 - dampening) * g``,
    ``w = w - lr * v`` (``g + momentum * v`` with Nesterov); ``weight_decay`` adds
    ``weight_decay * w`` to the gradient first."""

    def __init__(
        self,
        learning_rate: _Hyper,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        dampening: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        if nesterov and (momentum <= 0 or dampening != 0):
            raise op_error("SGD", "Nesterov momentum requires a momentum and zero dampening.")
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.dampening = dampening
        self.nesterov = nesterov

    def init_single(self, parameter: mx.array, state: dict[str, Any]) -> None:
        state["v"] = mx.zeros_like(parameter)

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        if self.momentum <= 0:
            return parameter - _lr(self, gradient) * gradient
        v = self.momentum * state["v"]
        v = v + ((1 - self.dampening) * gradient if self.dampening > 0 else gradient)
        state["v"] = v
        update = gradient + self.momentum * v if self.nesterov else v
        return parameter - _lr(self, gradient) * update


class RMSprop(Optimizer):
    """RMSprop: ``v = alpha * v + (1 - alpha) * g^2``, ``w = w - lr * g / (sqrt(v) + eps)``."""

    def __init__(self, learning_rate: _Hyper, alpha: float = 0.99, eps: float = 1e-8) -> None:
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.alpha = alpha
        self.eps = eps
        _check("RMSprop", alpha >= 0.0, "alpha should be >=0", alpha)
        _check("RMSprop", eps > 0.0, "epsilon should be >0", eps)

    def init_single(self, parameter: mx.array, state: dict[str, Any]) -> None:
        state["v"] = mx.zeros_like(parameter)

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        lr = _lr(self, gradient)
        v = self.alpha * state["v"] + (1 - self.alpha) * mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class Adagrad(Optimizer):
    """Adagrad: ``v = v + g^2``, ``w = w - lr * g / (sqrt(v) + eps)``."""

    def __init__(self, learning_rate: _Hyper, eps: float = 1e-8) -> None:
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        _check("Adagrad", eps > 0.0, "epsilon should be >0", eps)

    def init_single(self, parameter: mx.array, state: dict[str, Any]) -> None:
        state["v"] = mx.zeros_like(parameter)

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        lr = _lr(self, gradient)
        v = state["v"] + mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class AdaDelta(Optimizer):
    """AdaDelta with a learning rate: ``v = rho * v + (1 - rho) * g^2``,
    ``d = sqrt(u + eps) / sqrt(v + eps) * g``, ``u = rho * u + (1 - rho) * d^2``,
    ``w = w - lr * d``."""

    def __init__(self, learning_rate: _Hyper, rho: float = 0.9, eps: float = 1e-6) -> None:
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.rho = rho
        self.eps = eps
        _check("AdaDelta", rho >= 0.0, "rho should be >=0", rho)
        _check("AdaDelta", eps > 0.0, "epsilon should be >0", eps)

    def init_single(self, parameter: mx.array, state: dict[str, Any]) -> None:
        state["v"] = mx.zeros_like(parameter)
        state["u"] = mx.zeros_like(parameter)

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        lr = _lr(self, gradient)
        rho, eps = self.rho, self.eps
        v = rho * state["v"] + (1 - rho) * mx.square(gradient)
        d = mx.sqrt(state["u"] + eps) / mx.sqrt(v + eps) * gradient
        state["u"] = rho * state["u"] + (1 - rho) * mx.square(d)
        state["v"] = v
        return parameter - lr * d


# Tests turn it off to compare the one-pass kernel with the op path.
_ADAM_KERNEL = True


def _adam_kernel(opt, gradient, parameter, state, lr, decay):
    """Adam's step as one kernel (``_core._adam_update``) where every operand is float32 on the
    CPU, none traced, and the constants Python numbers; the same float32 operations as the op path in
    ``Adam.apply_single``, so the same bits. The new parameter, or None for the op path."""
    m, v = state["m"], state["v"]
    b1, b2 = opt.betas
    operands = (gradient, parameter, m, v)
    if not (
        _ADAM_KERNEL
        and all(isinstance(x, mx.array) and x.dtype == mx.float32 for x in operands)
        and gradient.shape == parameter.shape == m.shape == v.shape
        and all(isinstance(c, (int, float)) for c in (b1, b2, opt.eps))
        and lr.ndim == 0
        and mx.default_device() == mx.cpu
    ):
        return None
    correction = None
    if opt.bias_correction:
        lr = (lr / (1 - b1**opt.step)).astype(gradient.dtype)
        correction = mx.rsqrt(1 - b2**opt.step).astype(gradient.dtype)
    out = mx._adam_update(
        parameter, gradient, m, v, lr, correction, decay, b1, 1 - b1, b2, 1 - b2, opt.eps
    )
    if out is None:  # traced by a transform: its ops are differentiated or exported
        return None
    p, state["m"], state["v"] = out
    return p


class Adam(Optimizer):
    """Adam: ``m = b1 * m + (1 - b1) * g``, ``v = b2 * v + (1 - b2) * g^2``,
    ``w = w - lr * m / (sqrt(v) + eps)``; with ``bias_correction``,
    ``w = w - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)``."""

    def __init__(
        self,
        learning_rate: _Hyper,
        betas: Sequence[float] = (0.9, 0.999),
        eps: float = 1e-8,
        bias_correction: bool = False,
    ) -> None:
        super().__init__()
        _check_betas(type(self).__name__, betas)
        _check(type(self).__name__, eps >= 0.0, "epsilon should be >=0", eps)
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.eps = eps
        self.bias_correction = bias_correction

    def init_single(self, parameter: mx.array, state: dict[str, Any]) -> None:
        state["m"] = mx.zeros_like(parameter)
        state["v"] = mx.zeros_like(parameter)

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        lr = _lr(self, gradient)
        fused = _adam_kernel(self, gradient, parameter, state, lr, None)
        if fused is not None:
            return fused
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = b2 * state["v"] + (1 - b2) * mx.square(gradient)
        state["m"], state["v"] = m, v
        if not self.bias_correction:
            return parameter - lr * m / (mx.sqrt(v) + self.eps)
        step = self.step
        c1 = (lr / (1 - b1**step)).astype(gradient.dtype)
        c2 = mx.rsqrt(1 - b2**step).astype(gradient.dtype)
        return parameter - c1 * m / (mx.sqrt(v) * c2 + self.eps)


class AdamW(Adam):
    """Adam with decoupled weight decay: the parameter is first scaled by
    ``1 - lr * weight_decay``."""

    def __init__(
        self,
        learning_rate: _Hyper,
        betas: Sequence[float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        bias_correction: bool = False,
    ) -> None:
        super().__init__(learning_rate, betas, eps, bias_correction)
        self.weight_decay = weight_decay

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        lr = _lr(self, gradient)
        decay = 1 - lr * self.weight_decay
        fused = _adam_kernel(self, gradient, parameter, state, lr, decay)
        if fused is not None:
            return fused
        return super().apply_single(gradient, parameter * decay, state)


class Adamax(Adam):
    """Adamax (Adam in the infinity norm): ``m = b1 * m + (1 - b1) * g``,
    ``v = max(b2 * v, |g|)``, ``w = w - lr * m / (v + eps)``."""

    def __init__(
        self, learning_rate: _Hyper, betas: Sequence[float] = (0.9, 0.999), eps: float = 1e-8
    ) -> None:
        super().__init__(learning_rate, betas, eps)

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        lr = _lr(self, gradient)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = mx.maximum(b2 * state["v"], mx.abs(gradient))
        state["m"], state["v"] = m, v
        return parameter - lr * m / (v + self.eps)


class Lion(Optimizer):
    """Lion: ``c = b1 * m + (1 - b1) * g``, ``m = b2 * m + (1 - b2) * g``,
    ``w = (1 - lr * weight_decay) * w - lr * sign(c)``."""

    def __init__(
        self, learning_rate: _Hyper, betas: Sequence[float] = (0.9, 0.99), weight_decay: float = 0.0
    ) -> None:
        super().__init__()
        _check_betas("Lion", betas)
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.weight_decay = weight_decay

    def init_single(self, parameter: mx.array, state: dict[str, Any]) -> None:
        state["m"] = mx.zeros_like(parameter)

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        lr = _lr(self, gradient)
        b1, b2 = self.betas
        m = state["m"]
        c = b1 * m + (1 - b1) * gradient
        state["m"] = b2 * m + (1 - b2) * gradient
        if self.weight_decay > 0:
            parameter = (1 - lr * self.weight_decay) * parameter
        return parameter - lr * mx.sign(c)


def _rms(x):
    return mx.sqrt(mx.mean(mx.square(x)))


class Adafactor(Optimizer):
    """Adafactor: second moments kept as row and column means for matrices (and stacks of
    them), an update clipped to RMS ``clip_threshold``, a relative step size
    ``min(1e-2, 1/sqrt(t))`` unless ``relative_step`` is off, scaled by the parameter's RMS
    when ``scale_parameter``; ``beta_1`` adds a first moment."""

    def __init__(
        self,
        learning_rate: _Hyper | None = None,
        eps: tuple[float, float] = (1e-30, 1e-3),
        clip_threshold: float = 1.0,
        decay_rate: float = -0.8,
        beta_1: float | None = None,
        weight_decay: float = 0.0,
        scale_parameter: bool = True,
        relative_step: bool = True,
        warmup_init: bool = False,
    ) -> None:
        super().__init__()
        if learning_rate is not None:
            self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        self.clip_threshold = clip_threshold
        self.decay_rate = decay_rate
        self.beta_1 = beta_1
        self.weight_decay = weight_decay
        self.scale_parameter = scale_parameter
        self.relative_step = relative_step
        self.warmup_init = warmup_init

    def init_single(self, parameter: mx.array, state: dict[str, Any]) -> None:
        shape, dtype = tuple(parameter.shape), parameter.dtype
        if len(shape) >= 2:
            state["exp_avg_sq_row"] = mx.zeros(shape[:-1], dtype=dtype)
            state["exp_avg_sq_col"] = mx.zeros(shape[:-2] + shape[-1:], dtype=dtype)
        else:
            state["exp_avg_sq"] = mx.zeros_like(parameter)
        if self.beta_1 is not None:
            state["exp_avg"] = mx.zeros_like(parameter)

    def _step_size(self, step, parameter_rms):
        if self.relative_step:
            floor = 1e-6 * step if self.warmup_init else 1e-2
            size = mx.minimum(floor, mx.rsqrt(step))
        else:
            size = self.learning_rate
        size = size.astype(parameter_rms.dtype)
        scale = mx.maximum(self.eps[1], parameter_rms) if self.scale_parameter else 1.0
        return scale * size

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        step = self.step
        parameter_rms = _rms(parameter)
        lr = self._step_size(step, parameter_rms)
        beta_2 = 1.0 - (step**self.decay_rate).astype(parameter_rms.dtype)
        update = mx.square(gradient) + self.eps[0]
        if gradient.ndim >= 2:
            row = beta_2 * state["exp_avg_sq_row"] + (1 - beta_2) * mx.mean(update, axis=-1)
            col = beta_2 * state["exp_avg_sq_col"] + (1 - beta_2) * mx.mean(update, axis=-2)
            state["exp_avg_sq_row"], state["exp_avg_sq_col"] = row, col
            r = mx.rsqrt(row / mx.mean(row, axis=-1, keepdims=True))
            update = mx.expand_dims(r, axis=-1) * mx.expand_dims(mx.rsqrt(col), axis=-2)
            update = update * gradient
        else:
            avg = beta_2 * state["exp_avg_sq"] + (1 - beta_2) * update
            state["exp_avg_sq"] = avg
            update = mx.rsqrt(avg) * gradient
        update = update / mx.maximum(1.0, _rms(update) / self.clip_threshold)
        update = lr * update
        if self.beta_1 is not None:
            update = self.beta_1 * state["exp_avg"] + (1 - self.beta_1) * update
            state["exp_avg"] = update
        if self.weight_decay != 0:
            parameter = parameter + parameter * (-self.weight_decay * lr)
        return parameter - update


def _newton_schulz(x, steps):
    """Muon's quintic Newton-Schulz iteration towards the nearest semi-orthogonal matrix."""
    if x.ndim != 2:
        raise op_error("Muon", f"Newton-Schulz needs a 2-D array, got shape {tuple(x.shape)}")
    a, b, c = 3.4445, -4.7750, 2.0315
    wide = x.shape[0] <= x.shape[1]
    x = x if wide else x.T
    x = x / (mx.sqrt(mx.sum(mx.square(x), keepdims=True)) + 1e-7)
    for _ in range(steps):
        gram = x @ x.T
        poly = mx.addmm(b * gram, gram, gram, beta=1.0, alpha=c)
        x = mx.addmm(a * x, poly, x, beta=1.0, alpha=1.0)
    return x if wide else x.T


class Muon(Optimizer):
    """Muon: SGD momentum (Nesterov by default) whose update, for matrices (and higher-rank
    weights flattened past the first axis), is orthogonalized by ``ns_steps`` Newton-Schulz
    iterations and scaled by ``sqrt(max(1, rows / cols))``."""

    def __init__(
        self,
        learning_rate: _Hyper,
        momentum: float = 0.95,
        weight_decay: float = 0.01,
        nesterov: bool = True,
        ns_steps: int = 5,
    ) -> None:
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.ns_steps = ns_steps

    def init_single(self, parameter: mx.array, state: dict[str, Any]) -> None:
        state["v"] = mx.zeros_like(parameter)

    def apply_single(
        self, gradient: mx.array, parameter: mx.array, state: dict[str, Any]
    ) -> mx.array:
        mu = self.momentum
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        v = mu * state["v"]
        v = v + (1 - mu) * gradient
        state["v"] = v
        update = gradient * (1 - mu) + v * mu if self.nesterov else v
        lr = _lr(self, gradient)
        if update.ndim >= 2:
            shape = tuple(update.shape)
            update = _newton_schulz(mx.reshape(update, (shape[0], -1)), self.ns_steps)
            update = mx.reshape(update, shape)
            lr = lr * max(1, shape[-2] / shape[-1]) ** 0.5
        return parameter - lr * update


def clip_grad_norm(grads: _t.Tree, max_norm: float) -> tuple[_t.Tree, mx.array]:
    """Scales the gradients so their global L2 norm is at most ``max_norm``; returns them and
    the norm before scaling. float16 squares are summed in float32."""
    if max_norm < 0:
        raise op_error("clip_grad_norm", f"max_norm should be >=0, {max_norm} was provided instead")

    def squared_norm(g):
        return (g.astype(mx.float32) if g.dtype == mx.float16 else g).square().sum()

    total_norm = mx.sqrt(tree_reduce(lambda acc, g: acc + squared_norm(g), grads, 0.0))
    normalizer = mx.minimum(max_norm / (total_norm + 1e-6), 1.0)

    def scale(g):  # cast after scaling, so a small normalizer does not underflow in float16
        return (g * normalizer).astype(g.dtype) if issubdtype(g.dtype, floating) else g * normalizer

    return tree_map(scale, grads), total_norm
