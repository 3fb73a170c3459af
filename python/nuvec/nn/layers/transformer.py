"""Multi-head attention and the Transformer encoder/decoder stacks, as mlx.nn defines them.

Attention runs through fast.scaled_dot_product_attention, as mlx.nn's does (docs/attention.md).
"""

import math
from collections.abc import Callable
from typing import Any

import nuvec as mx

from ..._errors import op_error
from ..._fast_attention import scaled_dot_product_attention
from ..utils import checkpoint as _checkpoint
from ._checks import check_features, check_ndim
from .activations import relu
from .base import Module
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm

# None, "causal", a boolean keep-mask or an additive mask.
_Mask = str | mx.array | None


class MultiHeadAttention(Module):
    """Scaled dot-product attention with ``num_heads`` heads over projected queries, keys and values.

    Inputs are ``(N, L, D)``. ``mask`` is ``None``, ``"causal"``, a boolean array (True = attend)
    or an additive array, broadcastable to ``(N, num_heads, L_queries, L_keys)``.
    """

    def __init__(
        self,
        dims: int,
        num_heads: int,
        query_input_dims: int | None = None,
        key_input_dims: int | None = None,
        value_input_dims: int | None = None,
        value_dims: int | None = None,
        value_output_dims: int | None = None,
        bias: bool = False,
    ) -> None:
        super().__init__()
        if dims % num_heads != 0:
            raise ValueError(
                f"The input feature dimensions should be divisible by the number of heads ({dims} % {num_heads}) != 0"
            )
        query_input_dims = query_input_dims or dims
        key_input_dims = key_input_dims or dims
        value_input_dims = value_input_dims or key_input_dims
        value_dims = value_dims or dims
        value_output_dims = value_output_dims or dims
        self.num_heads = num_heads
        self.query_proj = Linear(query_input_dims, dims, bias=bias)
        self.key_proj = Linear(key_input_dims, dims, bias=bias)
        self.value_proj = Linear(value_input_dims, value_dims, bias=bias)
        self.out_proj = Linear(value_dims, value_output_dims, bias=bias)

    @staticmethod
    def _check(name: str, x: mx.array, proj: Module) -> None:
        check_ndim("MultiHeadAttention", x, (3,), f"{name}: N, L, D")
        # A projection swapped for another kind (a quantized one) checks its own features.
        if isinstance(proj, Linear):
            check_features("MultiHeadAttention", x, proj.weight.shape[1], f"{name} features")

    def _split_heads(self, x: mx.array) -> mx.array:
        return mx.unflatten(x, -1, (self.num_heads, -1)).transpose(0, 2, 1, 3)

    def __call__(
        self,
        queries: mx.array,
        keys: mx.array,
        values: mx.array,
        mask: _Mask = None,
    ) -> mx.array:
        self._check("queries", queries, self.query_proj)
        self._check("keys", keys, self.key_proj)
        self._check("values", values, self.value_proj)
        if keys.shape[1] != values.shape[1]:
            raise op_error(
                "MultiHeadAttention",
                f"keys {keys.shape} and values {values.shape} differ in length",
            )
        q = self._split_heads(self.query_proj(queries))
        k = self._split_heads(self.key_proj(keys))
        v = self._split_heads(self.value_proj(values))
        try:
            out = scaled_dot_product_attention(q, k, v, scale=math.sqrt(1 / q.shape[-1]), mask=mask)
        except ValueError as e:  # the layer's name on its errors
            raise op_error("MultiHeadAttention", str(e)) from None
        return self.out_proj(out.transpose(0, 2, 1, 3).flatten(-2, -1))

    @staticmethod
    def create_additive_causal_mask(N: int, dtype: mx.Dtype = mx.float32) -> mx.array:
        """(N, N) mask: 0 where key <= query, the dtype's lowest finite value above the diagonal."""
        idx = mx.arange(N)
        return (idx[:, None] < idx[None]).astype(dtype) * mx.finfo(dtype).min


def _residual(
    norm: LayerNorm, norm_first: bool, x: mx.array, block: Callable[[mx.array], mx.array]
) -> mx.array:
    """x + block(norm(x)) before normalisation (pre-norm), or norm(x + block(x)) after it."""
    return x + block(norm(x)) if norm_first else norm(x + block(x))


def _add_parts(layer: Module, dims: int, mlp_dims: int | None, dropout: float, n: int) -> None:
    """ln1..ln{n}, the MLP's linear1/linear2 and dropout1..dropout{n} (MLX's attribute order)."""
    mlp_dims = mlp_dims or dims * 4
    for i in range(1, n + 1):
        setattr(layer, f"ln{i}", LayerNorm(dims))
    layer.linear1 = Linear(dims, mlp_dims)
    layer.linear2 = Linear(mlp_dims, dims)
    for i in range(1, n + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout))


def _mlp(layer: Module, dropout: Dropout, x: mx.array) -> mx.array:
    return layer.linear2(dropout(layer.activation(layer.linear1(x))))


class TransformerEncoderLayer(Module):
    """Self-attention then an MLP, each with a residual connection and a LayerNorm (pre-norm by default)."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        mlp_dims: int | None = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
    ) -> None:
        super().__init__()
        self.attention = MultiHeadAttention(dims, num_heads)
        _add_parts(self, dims, mlp_dims, dropout, 2)
        self.activation = activation
        self.norm_first = norm_first

    def __call__(self, x: mx.array, mask: _Mask) -> mx.array:
        x = _residual(
            self.ln1, self.norm_first, x, lambda y: self.dropout1(self.attention(y, y, y, mask))
        )
        return _residual(self.ln2, self.norm_first, x, lambda y: _mlp(self, self.dropout2, y))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's output (memory), then an MLP; residuals and LayerNorms."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        mlp_dims: int | None = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
    ) -> None:
        super().__init__()
        self.self_attention = MultiHeadAttention(dims, num_heads)
        self.cross_attention = MultiHeadAttention(dims, num_heads)
        _add_parts(self, dims, mlp_dims, dropout, 3)
        self.activation = activation
        self.norm_first = norm_first

    def __call__(
        self,
        x: mx.array,
        memory: mx.array,
        x_mask: _Mask,
        memory_mask: _Mask,
    ) -> mx.array:
        x = _residual(
            self.ln1,
            self.norm_first,
            x,
            lambda y: self.dropout1(self.self_attention(y, y, y, x_mask)),
        )
        x = _residual(
            self.ln2,
            self.norm_first,
            x,
            lambda y: self.dropout2(self.cross_attention(y, memory, memory, memory_mask)),
        )
        return _residual(self.ln3, self.norm_first, x, lambda y: _mlp(self, self.dropout3, y))


class _Stack(Module):
    """num_layers layers of one kind then a final LayerNorm; each layer checkpointed on request."""

    def __init__(
        self, layer_type: type, num_layers: int, dims: int, checkpoint: bool, *layer_args: Any
    ) -> None:
        super().__init__()
        self.layers = [layer_type(dims, *layer_args) for _ in range(num_layers)]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def _run(self, x: mx.array, *args: Any) -> mx.array:
        for layer in self.layers:
            x = (_checkpoint(layer) if self.checkpoint else layer)(x, *args)
        return self.ln(x)


class TransformerEncoder(_Stack):
    """``num_layers`` encoder layers then a LayerNorm; ``checkpoint`` recomputes each layer in the backward pass."""

    def __init__(
        self,
        num_layers: int,
        dims: int,
        num_heads: int,
        mlp_dims: int | None = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
        checkpoint: bool = False,
    ) -> None:
        super().__init__(
            TransformerEncoderLayer,
            num_layers,
            dims,
            checkpoint,
            num_heads,
            mlp_dims,
            dropout,
            activation,
            norm_first,
        )

    def __call__(self, x: mx.array, mask: _Mask) -> mx.array:
        return self._run(x, mask)


class TransformerDecoder(_Stack):
    """``num_layers`` decoder layers then a LayerNorm; ``checkpoint`` recomputes each layer in the backward pass."""

    def __init__(
        self,
        num_layers: int,
        dims: int,
        num_heads: int,
        mlp_dims: int | None = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
        checkpoint: bool = False,
    ) -> None:
        super().__init__(
            TransformerDecoderLayer,
            num_layers,
            dims,
            checkpoint,
            num_heads,
            mlp_dims,
            dropout,
            activation,
            norm_first,
        )

    def __call__(
        self,
        x: mx.array,
        memory: mx.array,
        x_mask: _Mask,
        memory_mask: _Mask,
    ) -> mx.array:
        return self._run(x, memory, x_mask, memory_mask)


class Transformer(Module):
    """An encoder-decoder Transformer ("Attention Is All You Need"); either half may be a custom module."""

    def __init__(
        self,
        dims: int = 512,
        num_heads: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        mlp_dims: int | None = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        norm_first: bool = True,
        checkpoint: bool = False,
    ) -> None:
        super().__init__()
        shared = (dims, num_heads, mlp_dims, dropout, activation, norm_first, checkpoint)
        self.encoder = (
            custom_encoder
            if custom_encoder is not None
            else TransformerEncoder(num_encoder_layers, *shared)
        )
        self.decoder = (
            custom_decoder
            if custom_decoder is not None
            else TransformerDecoder(num_decoder_layers, *shared)
        )

    def __call__(
        self,
        src: mx.array,
        tgt: mx.array,
        src_mask: _Mask,
        tgt_mask: _Mask,
        memory_mask: _Mask,
    ) -> mx.array:
        memory = self.encoder(src, src_mask)
        return self.decoder(tgt, memory, tgt_mask, memory_mask)
