"""Recurrent layers (RNN, GRU, LSTM): MLX's parameters, initialisation and step semantics.

Each layer projects the whole input sequence at once, then runs the recurrence one step at a
time along axis -2, returning the state after every step. Inputs are ``(..., L, D)``: ``(L, D)``
unbatched or ``(N, L, D)`` batched (further leading axes broadcast as in MLX).
"""

import math
from collections.abc import Callable
from typing import Any

import nuvec as mx

from ..._errors import op_error
from ._checks import check_features
from .activations import tanh
from .base import Module


def _uniform_init(scale: float, *shape: int) -> mx.array:
    return mx.random.uniform(low=-scale, high=scale, shape=shape)


def _project_input(layer: str, x: mx.array, w: mx.array, b: mx.array | None) -> mx.array:
    """``x @ w.T + b`` for every step at once, after checking x's rank and feature size."""
    if x.ndim < 2:
        raise op_error(layer, f"expected input of shape (N, L, D) or (L, D), got shape {x.shape}")
    check_features(layer, x, w.shape[1])
    if x.shape[-2] == 0:
        raise op_error(layer, f"the input sequence is empty (shape {x.shape})")
    return x @ w.T if b is None else mx.addmm(b, x, w.T)


def _check_state(layer: str, name: str, state: mx.array | None, size: int) -> None:
    if state is not None and (state.ndim < 1 or state.shape[-1] != size):
        raise op_error(
            layer,
            f"expected a {name} state of shape (N, {size}) or ({size},), got shape {state.shape}",
        )


class RNN(Module):
    """Elman recurrence ``h_t = nonlinearity(W_xh x_t + W_hh h_{t-1} + bias)`` (tanh by default).

    Parameters ``Wxh (H, D)``, ``Whh (H, H)``, ``bias (H,)``, uniform on ``±1/sqrt(H)``.
    Returns the hidden state of every step, ``(..., L, H)``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__()
        self.nonlinearity = nonlinearity or tanh
        if not callable(self.nonlinearity):
            raise ValueError(f"Nonlinearity must be callable. Current value: {nonlinearity}.")
        scale = 1.0 / math.sqrt(hidden_size)
        self.hidden_size = hidden_size
        self.Wxh = _uniform_init(scale, hidden_size, input_size)
        self.Whh = _uniform_init(scale, hidden_size, hidden_size)
        self.bias = _uniform_init(scale, hidden_size) if bias else None

    def _extra_repr(self) -> str:
        return (
            f"input_dims={self.Wxh.shape[1]}, hidden_size={self.hidden_size}, "
            f"nonlinearity={self.nonlinearity}, bias={self.bias is not None}"
        )

    def __call__(self, x: mx.array, hidden: mx.array | None = None) -> mx.array:
        x = _project_input("RNN", x, self.Wxh, self.bias)
        _check_state("RNN", "hidden", hidden, self.hidden_size)
        whh_t = self.Whh.T
        states = []
        for t in range(x.shape[-2]):
            pre = x[..., t, :]
            # A missing initial state is zero: skip its product rather than multiply zeros.
            if hidden is not None:
                pre = mx.addmm(pre, hidden, whh_t)
            hidden = self.nonlinearity(pre)
            states.append(hidden)
        return mx.stack(states, axis=-2)


class GRU(Module):
    """Gated recurrent unit, gates in the order reset, update, new (MLX's and PyTorch's).

    ``r, z = sigmoid(W_x[r,z] x + b[r,z] + W_h[r,z] h)``, ``n = tanh(W_xn x + b_n + r * (W_hn h + bhn))``,
    ``h' = (1 - z) * n + z * h``. Parameters ``Wx (3H, D)``, ``Wh (3H, H)``, ``b (3H,)``,
    ``bhn (H,)``, uniform on ``±1/sqrt(H)``. Returns the hidden state of every step.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        scale = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform_init(scale, 3 * hidden_size, input_size)
        self.Wh = _uniform_init(scale, 3 * hidden_size, hidden_size)
        self.b = _uniform_init(scale, 3 * hidden_size) if bias else None
        self.bhn = _uniform_init(scale, hidden_size) if bias else None

    def _extra_repr(self) -> str:
        return f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, bias={self.b is not None}"

    def __call__(self, x: mx.array, hidden: mx.array | None = None) -> mx.array:
        x = _project_input("GRU", x, self.Wx, self.b)
        _check_state("GRU", "hidden", hidden, self.hidden_size)
        size = self.hidden_size
        x_rz, x_n = x[..., :-size], x[..., -size:]
        wh_t = self.Wh.T
        states = []
        for t in range(x.shape[-2]):
            rz, n = x_rz[..., t, :], x_n[..., t, :]
            if hidden is None:
                h_n = self.bhn  # a zero state projects to its bias alone
            else:
                h_proj = hidden @ wh_t
                rz = rz + h_proj[..., :-size]
                h_n = h_proj[..., -size:]
                if self.bhn is not None:
                    h_n = h_n + self.bhn
            r, z = mx.split(mx.sigmoid(rz), 2, axis=-1)
            if h_n is not None:
                n = n + r * h_n
            n = mx.tanh(n)
            hidden = (1 - z) * n if hidden is None else (1 - z) * n + z * hidden
            states.append(hidden)
        return mx.stack(states, axis=-2)


class LSTM(Module):
    """Long short-term memory, gates in the order input, forget, cell, output (as PyTorch).

    ``i, f, o = sigmoid(.)``, ``g = tanh(.)`` of ``W_x x + W_h h + bias``; ``c' = f * c + i * g``,
    ``h' = o * tanh(c')``. Parameters ``Wx (4H, D)``, ``Wh (4H, H)``, ``bias (4H,)``, uniform on
    ``±1/sqrt(H)``. Returns ``(hidden, cell)``, each the state of every step, ``(..., L, H)``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        scale = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform_init(scale, 4 * hidden_size, input_size)
        self.Wh = _uniform_init(scale, 4 * hidden_size, hidden_size)
        self.bias = _uniform_init(scale, 4 * hidden_size) if bias else None

    def _extra_repr(self) -> str:
        return f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, bias={self.bias is not None}"

    def __call__(
        self, x: mx.array, hidden: mx.array | None = None, cell: mx.array | None = None
    ) -> tuple[mx.array, mx.array]:
        x = _project_input("LSTM", x, self.Wx, self.bias)
        _check_state("LSTM", "hidden", hidden, self.hidden_size)
        _check_state("LSTM", "cell", cell, self.hidden_size)
        wh_t = self.Wh.T
        hiddens, cells = [], []
        for t in range(x.shape[-2]):
            gates = x[..., t, :]
            if hidden is not None:
                gates = mx.addmm(gates, hidden, wh_t)
            i, f, g, o = mx.split(gates, 4, axis=-1)
            i, f, g, o = mx.sigmoid(i), mx.sigmoid(f), mx.tanh(g), mx.sigmoid(o)
            cell = i * g if cell is None else f * cell + i * g
            hidden = o * mx.tanh(cell)
            hiddens.append(hidden)
            cells.append(cell)
        return mx.stack(hiddens, axis=-2), mx.stack(cells, axis=-2)
