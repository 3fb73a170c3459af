"""THE registry of differentiable ops: one entry per differentiable public op (and a few array
methods), each checked against float64 central finite differences.

For every entry, on float64 inputs:

* vjp: with a random cotangent v of the outputs, vjp's cotangent of input element i must equal
  <v, J e_i>, which is computed by perturbing that element by +-h (central differences);
* jvp: with random tangents t of the inputs, jvp's output tangents must equal J t, computed by
  perturbing all inputs along t;
* both transforms return the function's own outputs.

`test_every_public_op_is_covered` keeps the registry complete: every op of the op registry
(python/nuvec/_registry.py) whose row says it is differentiable must be in REGISTRY (through an
entry's `covers`), and every other row carries its reason (NOT_DIFFERENTIABLE is read from the
rows), so an op added without a differentiation rule fails the suite. An element-wise kernel op
without an entry here gets a default one (the op on inputs in (-2, 2)).

An entry nuvec gets wrong is marked `pytest.mark.xfail(not IS_MLX, strict=True)` through `marks`
(none at the moment): when the fix lands the xfail turns into a failure, prompting the mark's
removal. The same goes for an op whose rule has not landed yet (none: every scan has its rule). Where MLX itself
fails an entry (its bug or a missing rule), `mlx_skip` / `mlx_no_jvp` say why.
"""

import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import seeded_rng
from op_registry import registry

F64 = mx.float64


# ----------------------------------------------------------------------------- input domains
def uniform(lo=-2.0, hi=2.0):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def nonzero(lo=0.4, hi=2.0):
    """|x| in [lo, hi], random sign (away from the kink of abs / sign / the pole of 1/x)."""
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def distinct(lo=-2.0, hi=2.0):
    """Values pairwise at least (hi-lo)/(2n) apart (no ties for sort / max / partition ...)."""

    def sample(rng, shape):
        n = int(np.prod(shape))
        step = (hi - lo) / max(n, 1)
        v = lo + step * (rng.permutation(n) + rng.uniform(0.25, 0.75, n))
        return v.reshape(shape)

    return sample


def off_integers(lo=-3, hi=3):
    """k + f, f in (0.1, 0.4) or (0.6, 0.9): away from the jumps of floor/ceil/round."""

    def sample(rng, shape):
        k = rng.integers(lo, hi, shape)
        f = rng.uniform(0.1, 0.4, shape) + rng.choice([0.0, 0.5], shape)
        return k + f

    return sample


# ----------------------------------------------------------------------------- the registry
@dataclass
class Case:
    """fn: float64 arrays -> an array or a list/tuple of arrays; shapes: one per input; domain:
    one sampler (all inputs) or a tuple of one per input; gen: rng -> list of NumPy inputs
    (overrides shapes/domain); covers: the public names this entry differentiates (default: the
    entry's name); h/rtol/atol: finite-difference step and tolerances; marks: pytest marks."""

    fn: Callable
    shapes: tuple = ((3, 4),)
    domain: object = None
    gen: Callable | None = None
    covers: tuple | None = None
    h: float = 1e-6
    rtol: float = 1e-6
    atol: float = 1e-8
    marks: tuple = ()
    mlx_lowp: bool = False  # MLX computes it in single precision even for float64
    mlx_skip: str = ""  # why MLX cannot run the entry (its bug or missing rule)
    mlx_no_jvp: str = ""  # why MLX cannot run the jvp half of the check

    def tolerances(self):
        """(h, rtol, atol): looser where MLX computes float64 in single precision."""
        if IS_MLX and self.mlx_lowp:
            return max(self.h, 1e-3), max(self.rtol, 1e-3), max(self.atol, 1e-4)
        return self.h, self.rtol, self.atol

    def inputs(self, rng):
        if self.gen is not None:
            return [np.asarray(a, dtype=np.float64) for a in self.gen(rng)]
        doms = self.domain if isinstance(self.domain, tuple) else (self.domain,) * len(self.shapes)
        return [
            np.asarray((d or uniform())(rng, s), dtype=np.float64)
            for d, s in zip(doms, self.shapes)
        ]


def _idx(values):
    return mx.array(np.asarray(values, dtype=np.int32))


def _cond(shape, seed=0):
    return mx.array(np.random.default_rng(seed).random(shape) < 0.5)


def _setitem(x, v):
    y = x * 1.0
    y[_idx([2, 0])] = v
    return y


def _remainder_inputs(rng):
    b = nonzero(0.5, 2.0)(rng, (3, 4))
    q = off_integers(-3, 3)(rng, (3, 4))
    return [q * b, b]


def _prod_with_zeros(rng):
    x = uniform(0.5, 1.5)(rng, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    x[0, 1] = 0.0  # one zero in row 0
    x[1, 0] = x[1, 3] = 0.0  # two zeros in row 1
    return [x]


_mm = uniform(-1, 1)
_MLX_NO_CUM_JVP = "MLX: JVP is not implemented for cumulative prod/min/max"
_MLX_NO_SCATTER_JVP = "MLX: [scatter] JVP not yet implemented"
_MLX_NO_F64_CONV = "MLX: [Convolution::eval] got unsupported data type (float64); and no jvp"

REGISTRY = {
    # --- element-wise unary
    "abs": Case(lambda x: mx.abs(x), domain=nonzero()),
    "negative": Case(lambda x: mx.negative(x)),
    "sign": Case(lambda x: mx.sign(x) * x, domain=nonzero()),
    "square": Case(lambda x: mx.square(x)),
    "sqrt": Case(lambda x: mx.sqrt(x), domain=uniform(0.3, 3)),
    "rsqrt": Case(lambda x: mx.rsqrt(x), domain=uniform(0.3, 3)),
    "reciprocal": Case(lambda x: mx.reciprocal(x), domain=nonzero(0.5, 2)),
    "exp": Case(lambda x: mx.exp(x), mlx_lowp=True),
    "expm1": Case(lambda x: mx.expm1(x)),
    "log": Case(lambda x: mx.log(x), domain=uniform(0.3, 3)),
    "log2": Case(lambda x: mx.log2(x), domain=uniform(0.3, 3)),
    "log10": Case(lambda x: mx.log10(x), domain=uniform(0.3, 3)),
    "log1p": Case(lambda x: mx.log1p(x), domain=uniform(-0.6, 3)),
    "sin": Case(lambda x: mx.sin(x), mlx_lowp=True),
    "cos": Case(lambda x: mx.cos(x), mlx_lowp=True),
    "tan": Case(lambda x: mx.tan(x), domain=uniform(-1.2, 1.2)),
    "arcsin": Case(lambda x: mx.arcsin(x), domain=uniform(-0.8, 0.8)),
    "arccos": Case(lambda x: mx.arccos(x), domain=uniform(-0.8, 0.8)),
    "arctan": Case(lambda x: mx.arctan(x)),
    "sinh": Case(lambda x: mx.sinh(x)),
    "cosh": Case(lambda x: mx.cosh(x)),
    "tanh": Case(lambda x: mx.tanh(x)),
    "arcsinh": Case(lambda x: mx.arcsinh(x)),
    "arccosh": Case(lambda x: mx.arccosh(x), domain=uniform(1.2, 3)),
    "arctanh": Case(lambda x: mx.arctanh(x), domain=uniform(-0.8, 0.8)),
    "arc_aliases": Case(
        lambda x: [mx.asin(x), mx.acos(x), mx.atan(x), mx.asinh(x), mx.atanh(x), mx.acosh(x + 2)],
        domain=uniform(-0.8, 0.8),
        covers=("asin", "acos", "atan", "asinh", "atanh", "acosh"),
    ),
    "positive": Case(lambda x: mx.positive(x) * x),
    "trunc": Case(lambda x: mx.trunc(x) * x, domain=off_integers()),
    "sigmoid": Case(lambda x: mx.sigmoid(x), mlx_lowp=True),
    "erf": Case(lambda x: mx.erf(x), mlx_lowp=True),
    "erfinv": Case(lambda x: mx.erfinv(x), mlx_lowp=True, domain=uniform(-0.8, 0.8)),
    "degrees": Case(lambda x: mx.degrees(x)),
    "radians": Case(lambda x: mx.radians(x)),
    "floor": Case(lambda x: mx.floor(x) * x, domain=off_integers()),
    "ceil": Case(lambda x: mx.ceil(x) * x, domain=off_integers()),
    "round": Case(lambda x: mx.round(x) * x + mx.round(x * 10, 1), domain=off_integers()),
    "nan_to_num": Case(
        lambda x: mx.nan_to_num(x * x), mlx_skip="MLX's nan_to_num does not support float64"
    ),
    "conj": Case(lambda x: mx.conj(x)),
    "conjugate": Case(lambda x: mx.conjugate(x)),
    "real": Case(lambda x: mx.real(x) * x),
    "imag": Case(lambda x: mx.imag(x) + x),
    "complex_parts": Case(  # through complex64: single precision, a linear function
        lambda x, y: mx.real(mx.conj(x + 1j * y) * (2 - 1j)) + mx.imag(mx.conj(x + 1j * y)),
        shapes=((3, 4), (3, 4)),
        covers=("real", "imag", "conj"),
        h=1e-2,
        rtol=1e-5,
        atol=1e-5,
    ),
    "astype": Case(
        lambda x: mx.astype(mx.astype(x, mx.float32), F64) * mx.astype(x, F64),
        h=1e-2,
        rtol=1e-5,
        atol=1e-5,
    ),
    "view": Case(lambda x: mx.view(x, F64) * 2),
    "stop_gradient_sum": Case(lambda x: mx.stop_gradient(x * 0.0) + x, covers=()),
    "ones_like": Case(
        lambda x: mx.ones_like(x) * x + mx.zeros_like(x), covers=("ones_like", "zeros_like")
    ),
    "empty_like": Case(lambda x: mx.empty_like(x) + x),
    "full_like": Case(
        lambda x, v: mx.full_like(x, v) * x,
        shapes=((3, 4), (4,)),
        mlx_skip="MLX's vjp of full with an array value is wrong",
    ),
    "asarray": Case(lambda x: mx.asarray(x) * x),
    # --- element-wise binary and ternary
    "add": Case(lambda x, y: mx.add(x, y), shapes=((3, 4), (4,))),
    "subtract": Case(lambda x, y: mx.subtract(x, y), shapes=((3, 1), (1, 4))),
    "multiply": Case(lambda x, y: mx.multiply(x, y), shapes=((2, 3, 4), (3, 1))),
    "divide": Case(
        lambda x, y: mx.divide(x, y), shapes=((3, 4), (3, 4)), domain=(uniform(), nonzero())
    ),
    "power": Case(
        lambda x, y: mx.power(x, y),
        shapes=((3, 4), (3, 4)),
        domain=(uniform(0.4, 2), uniform(-2, 2)),
    ),
    "power_scalar": Case(lambda x: x**3 + 2.0**x, covers=()),
    "pow": Case(
        lambda x, y: mx.pow(x, y), shapes=((3, 4), (4,)), domain=(uniform(0.4, 2), uniform())
    ),
    "maximum": Case(lambda x, y: mx.maximum(x, y), gen=lambda rng: distinct()(rng, (2, 3, 4))),
    "minimum": Case(lambda x, y: mx.minimum(x, y), gen=lambda rng: distinct()(rng, (2, 3, 4))),
    "arctan2": Case(
        lambda y, x: mx.arctan2(y, x), shapes=((3, 4), (3, 4)), domain=(uniform(), nonzero())
    ),
    "atan2": Case(
        lambda y, x: mx.atan2(y, x), shapes=((3, 4), (4,)), domain=(uniform(), nonzero())
    ),
    "logaddexp": Case(lambda x, y: mx.logaddexp(x, y), shapes=((3, 4), (4,)), mlx_lowp=True),
    "remainder": Case(lambda x, y: mx.remainder(x, y), gen=_remainder_inputs),
    "floor_divide": Case(lambda x, y: mx.floor_divide(x, y) * x + y, gen=_remainder_inputs),
    "divmod": Case(
        lambda x, y: mx.divmod(x, y),
        gen=_remainder_inputs,
        mlx_skip="MLX's divmod vjp returns zeros",
    ),
    "where": Case(lambda x, y: mx.where(_cond((3, 4)), x, y), shapes=((3, 4), (4,))),
    "clip": Case(lambda x: mx.clip(x, -1.0, 1.0)),
    "clip_arrays": Case(
        lambda x, lo, hi: mx.clip(x, lo, hi),
        covers=("clip",),
        gen=lambda rng: [
            rng.uniform(-2, 2, (3, 4)),
            rng.uniform(-1.5, -0.5, (4,)),
            rng.uniform(0.5, 1.5, (3, 1)),
        ],
    ),
    # --- reductions
    "sum": Case(lambda x: mx.sum(x, axis=1)),
    "sum_all": Case(lambda x: mx.sum(x, keepdims=True), covers=("sum",)),
    "mean": Case(lambda x: mx.mean(x, axis=(0, 2)), shapes=((2, 3, 4),)),
    "prod": Case(lambda x: mx.prod(x, axis=1), domain=nonzero(0.5, 1.5)),
    "prod_with_zeros": Case(lambda x: mx.prod(x, axis=1), gen=_prod_with_zeros, covers=("prod",)),
    "max": Case(lambda x: mx.max(x, axis=0), domain=distinct()),
    "min": Case(lambda x: mx.min(x, axis=-1, keepdims=True), domain=distinct()),
    "minmax": Case(lambda x: mx.minmax(x, axis=1, keepdims=True), domain=distinct()),
    "median": Case(lambda x: mx.median(x, axis=1), domain=distinct()),
    "median_odd": Case(
        lambda x: mx.median(x, axis=(0, 2), keepdims=True),
        shapes=((3, 2, 1),),
        domain=distinct(),
        covers=("median",),
    ),
    "max_all": Case(lambda x: mx.max(x), domain=distinct(), covers=("max",)),
    "var": Case(lambda x: mx.var(x, axis=1)),
    "var_ddof": Case(lambda x: mx.var(x, axis=0, ddof=1), covers=("var",)),
    "std": Case(lambda x: mx.std(x, axis=1, keepdims=True)),
    "logsumexp": Case(lambda x: mx.logsumexp(x, axis=1), mlx_lowp=True),
    "logsumexp_all": Case(lambda x: mx.logsumexp(x * 20), covers=("logsumexp",), mlx_lowp=True),
    "softmax": Case(lambda x: mx.softmax(x, axis=-1), mlx_lowp=True),
    "softmax_axis0": Case(
        lambda x: mx.softmax(x, axis=0, precise=True), covers=("softmax",), mlx_lowp=True
    ),
    # --- layout
    "reshape": Case(lambda x: mx.reshape(x, (2, 6))),
    "flatten": Case(lambda x: mx.flatten(x, 1, 2), shapes=((2, 3, 2),)),
    "unflatten": Case(lambda x: mx.unflatten(x, 1, (2, 2))),
    "squeeze": Case(lambda x: mx.squeeze(x, 1), shapes=((3, 1, 4),)),
    "expand_dims": Case(lambda x: mx.expand_dims(x, (0, 2))),
    "transpose": Case(lambda x: mx.transpose(x, (2, 0, 1)), shapes=((2, 3, 4),)),
    "swapaxes": Case(lambda x: mx.swapaxes(x, 0, 2), shapes=((2, 3, 4),)),
    "moveaxis": Case(lambda x: mx.moveaxis(x, 0, -1), shapes=((2, 3, 4),)),
    "broadcast_to": Case(lambda x: mx.broadcast_to(x, (2, 3, 4)), shapes=((3, 1),)),
    "broadcast_arrays": Case(lambda x, y: mx.broadcast_arrays(x, y), shapes=((3, 1), (4,))),
    "atleast_1d": Case(lambda x: mx.atleast_1d(x) * 2, shapes=((),)),
    "atleast_2d": Case(lambda x: mx.atleast_2d(x) * 2, shapes=((3,),)),
    "atleast_3d": Case(lambda x: mx.atleast_3d(x) * 2, shapes=((3,),)),
    "as_strided": Case(lambda x: mx.as_strided(x, (4, 3), (1, 1)), shapes=((6,),)),
    "contiguous": Case(lambda x: mx.contiguous(mx.transpose(x))),
    "concatenate": Case(lambda x, y: mx.concatenate([x, y, x], axis=1), shapes=((3, 4), (3, 2))),
    "concat": Case(lambda x, y: mx.concat([x, y], axis=0), shapes=((3, 4), (1, 4))),
    "stack": Case(lambda x, y: mx.stack([x, y, x], axis=1), shapes=((3, 4), (3, 4))),
    "split": Case(lambda x: mx.split(x, [1, 3], axis=1)),
    "split_sections": Case(lambda x: mx.split(x, 3, axis=0), covers=("split",)),
    "pad": Case(lambda x: mx.pad(x, ((1, 2), (0, 1)), constant_values=3.0)),
    "pad_edge": Case(lambda x: mx.pad(x, 2, mode="edge"), shapes=((3,),), covers=("pad",)),
    "tile": Case(lambda x: mx.tile(x, (2, 1, 3)), shapes=((2, 3),)),
    "repeat": Case(lambda x: mx.repeat(x, 3, axis=1), shapes=((2, 3),)),
    "repeat_flat": Case(lambda x: mx.repeat(x, 2), shapes=((2, 3),), covers=("repeat",)),
    "roll": Case(lambda x: mx.roll(x, 2, axis=1)),
    "roll_flat": Case(lambda x: mx.roll(x, -5), covers=("roll",)),
    "diagonal": Case(lambda x: mx.diagonal(x, 1, 0, 2), shapes=((3, 2, 4),)),
    "diag": Case(lambda x: mx.diag(x, k=1), shapes=((3,),), mlx_no_jvp=_MLX_NO_SCATTER_JVP),
    "diag_extract": Case(lambda x: mx.diag(x, k=-1), shapes=((4, 4),), covers=("diag",)),
    "tril": Case(lambda x: mx.tril(x, k=1), shapes=((4, 4),)),
    "triu": Case(lambda x: mx.triu(x, k=-1), shapes=((4, 5),)),
    "flip": Case(lambda x: mx.flip(x, (0, 2)), shapes=((2, 3, 4),)),
    "flip_all": Case(lambda x: mx.flip(x), covers=("flip",)),
    "permute_dims": Case(lambda x: mx.permute_dims(x, (1, 2, 0)), shapes=((2, 3, 4),)),
    "matrix_transpose": Case(lambda x: mx.matrix_transpose(x), shapes=((2, 3, 4),)),
    "unstack": Case(lambda x: mx.unstack(x, axis=1)),
    "trace": Case(lambda x: mx.trace(x, 1)),
    "trace_3d": Case(lambda x: mx.trace(x, -1, 2, 0), shapes=((3, 2, 4),), covers=("trace",)),
    "diff": Case(lambda x: mx.diff(x, 2, axis=0), shapes=((4, 3),)),
    "vecdot": Case(lambda a, b: mx.vecdot(a, b, axis=0), shapes=((3, 4), (3, 1))),
    "kron": Case(lambda a, b: mx.kron(a, b), shapes=((2, 3), (3, 2))),
    "meshgrid": Case(lambda x, y: mx.meshgrid(x, y), shapes=((3,), (4,))),
    "meshgrid_ij": Case(
        lambda x, y: mx.meshgrid(x, y, indexing="ij"), shapes=((3,), (4,)), covers=("meshgrid",)
    ),
    "full": Case(
        lambda x: mx.full((2, 3, 4), x),
        shapes=((3, 1),),
        mlx_skip="MLX's vjp of full with an array value is wrong",
    ),
    # --- indexing
    "take": Case(lambda x: mx.take(x, _idx([2, 0, 2, 1]), axis=1)),
    "take_flat": Case(lambda x: mx.take(x, _idx([[5, 0], [5, 11]])), covers=("take",)),
    "take_along_axis": Case(
        lambda x: mx.take_along_axis(x, _idx([[0, 0, 2], [1, 3, 1], [3, 2, 0]]), axis=1)
    ),
    "put_along_axis": Case(
        lambda x, v: mx.put_along_axis(x, _idx([[0], [3], [1]]), v, axis=1), shapes=((3, 4), (3, 1))
    ),
    "slice": Case(lambda x: mx.slice(x, _idx([1, 1]), (0, 1), (2, 2))),
    "slice_update": Case(
        lambda x, u: mx.slice_update(x, u, _idx([1, 2]), (0, 1)), shapes=((3, 4), (2, 2))
    ),
    "getitem": Case(
        lambda x: [x[_idx([2, 0, 2]), 1:], x[::-2, ::3][:, None], x[1], x[-1:, -2]], covers=()
    ),
    "getitem_mixed": Case(
        lambda x: x[1, _idx([0, 2, 2])] * x[0, ..., -1:], covers=(), shapes=((2, 3, 4),)
    ),
    "getitem_2d_index": Case(lambda x: x[_idx([[0, 2], [2, 2]]), _idx([[1], [3]])], covers=()),
    "at_add": Case(
        lambda x, v: x.at[_idx([1, 1, 0])].add(v),
        shapes=((3, 4), (3, 4)),
        covers=(),
        mlx_no_jvp=_MLX_NO_SCATTER_JVP,
    ),
    "setitem": Case(_setitem, shapes=((3, 4), (2, 4)), covers=(), mlx_no_jvp=_MLX_NO_SCATTER_JVP),
    # --- transforms used inside the function
    "checkpoint": Case(
        lambda x, y: mx.checkpoint(lambda a, b: mx.sin(a) * b + a * a)(x, y),
        shapes=((3, 4), (4,)),
        mlx_lowp=True,
    ),
    "custom_function_default": Case(
        lambda x: mx.custom_function(lambda a: mx.exp(a) * a)(x), covers=(), mlx_lowp=True
    ),
    # --- matrix products
    "matmul": Case(lambda a, b: mx.matmul(a, b), shapes=((2, 3, 4), (4, 2)), domain=_mm),
    "addmm": Case(
        lambda c, a, b: mx.addmm(c, a, b, alpha=0.5, beta=2.0),
        shapes=((3, 2), (3, 4), (4, 2)),
        domain=_mm,
        mlx_no_jvp="MLX's addmm jvp is wrong",
    ),
    "inner": Case(lambda a, b: mx.inner(a, b), shapes=((3, 4), (2, 4))),
    "outer": Case(lambda a, b: mx.outer(a, b), shapes=((3,), (4,))),
    "tensordot": Case(lambda a, b: mx.tensordot(a, b, axes=1), shapes=((3, 4), (4, 2))),
    "gather_mm": Case(
        lambda a, b: mx.gather_mm(a, b, _idx([0, 2, 2, 1]), _idx([1, 1, 0, 1])),
        shapes=((3, 2, 4), (2, 4, 3)),
        domain=_mm,
        mlx_skip="MLX's CPU gather_mm takes float32 only",
    ),
    "segmented_mm": Case(
        lambda a, b: mx.segmented_mm(a, b, _idx([[[0, 2], [2, 6]], [[1, 5], [4, 3]]])),
        shapes=((3, 6), (6, 4)),
        domain=_mm,
        mlx_skip="MLX has no gradient of segmented_mm",
    ),
    "block_masked_mm": Case(
        lambda a, b: [
            mx.block_masked_mm(a, b, 32, _cond((1, 2)), _cond((1, 2), 1), _cond((2, 2), 2)),
            mx.block_masked_mm(a, b, 32, None, mx.array([[0.5, -2.0]], dtype=F64)),
        ],
        shapes=((3, 40), (40, 34)),
        domain=_mm,
        mlx_skip="MLX's CPU block_masked_mm takes float32 only",
    ),
    "hadamard_transform": Case(
        lambda x, y: [mx.hadamard_transform(x), mx.hadamard_transform(y, scale=0.5)],
        shapes=((3, 16), (2, 20)),
        mlx_skip="MLX's CPU hadamard_transform takes no float64 (and its vjp for m = 20 is H v, not H^T v)",
    ),
    "einsum": Case(lambda a, b: mx.einsum("ij,jk->ik", a, b), shapes=((3, 4), (4, 2))),
    "einsum_batched": Case(
        lambda a, b: mx.einsum("bij,jk->bki", a, b), shapes=((2, 3, 4), (4, 2)), covers=("einsum",)
    ),
    "einsum_diagonal": Case(
        lambda a, b: mx.einsum("iij,jk->ik", a, b), shapes=((3, 3, 4), (4, 2)), covers=("einsum",)
    ),
    "einsum_three": Case(
        lambda a, b, c: mx.einsum("ij,jk,kl->il", a, b, c),
        shapes=((2, 3), (3, 4), (4, 2)),
        covers=("einsum",),
    ),
    "convolve": Case(
        lambda a, v: [mx.convolve(a, v), mx.convolve(v, a, "same"), mx.convolve(a, v, "valid")],
        shapes=((6,), (3,)),
        mlx_skip="MLX's convolve (conv1d) takes no float64 on the CPU",
    ),
    # --- convolutions (linear in each argument)
    "conv1d": Case(
        lambda x, w: mx.conv1d(x, w, stride=2, padding=1, groups=2),
        shapes=((2, 7, 4), (4, 3, 2)),
        mlx_skip=_MLX_NO_F64_CONV,
    ),
    "conv2d": Case(
        lambda x, w: mx.conv2d(x, w, padding=1, dilation=(1, 2)),
        shapes=((1, 5, 6, 2), (3, 3, 2, 2)),
        mlx_skip=_MLX_NO_F64_CONV,
    ),
    "conv3d": Case(
        lambda x, w: mx.conv3d(x, w, stride=(1, 2, 1), padding=1),
        shapes=((1, 3, 4, 3, 2), (2, 2, 2, 2, 2)),
        mlx_skip=_MLX_NO_F64_CONV,
    ),
    "conv_general": Case(
        lambda x, w: mx.conv_general(
            x, w, stride=2, padding=([1, 0], [0, 2]), input_dilation=(2, 1), flip=True
        ),
        shapes=((1, 4, 5, 2), (3, 2, 3, 2)),
        mlx_skip=_MLX_NO_F64_CONV,
    ),
    "conv_transpose1d": Case(
        lambda x, w: mx.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1),
        shapes=((2, 5, 3), (2, 3, 3)),
        mlx_skip=_MLX_NO_F64_CONV,
    ),
    "conv_transpose2d": Case(
        lambda x, w: mx.conv_transpose2d(x, w, stride=(2, 1), dilation=(1, 2), groups=2),
        shapes=((1, 3, 4, 4), (4, 2, 2, 2)),
        mlx_skip=_MLX_NO_F64_CONV,
    ),
    "conv_transpose3d": Case(
        lambda x, w: mx.conv_transpose3d(x, w, stride=2, padding=(0, 1, 0)),
        shapes=((1, 2, 3, 2, 2), (2, 2, 3, 2, 2)),
        mlx_skip=_MLX_NO_F64_CONV,
    ),
    "sort": Case(lambda x: mx.sort(x, axis=1), domain=distinct()),
    "sort_flat": Case(lambda x: mx.sort(x, axis=None), domain=distinct(), covers=("sort",)),
    "partition": Case(lambda x: mx.partition(x, 1, axis=1), domain=distinct()),
    "topk": Case(lambda x: mx.topk(x, 2, axis=1), domain=distinct()),
    "topk_axis0": Case(lambda x: mx.topk(x, 1, axis=0), domain=distinct(), covers=("topk",)),
    "cumsum": Case(lambda x: mx.cumsum(x, axis=1)),
    "cumsum_reverse": Case(
        lambda x: mx.cumsum(x, axis=0, reverse=True, inclusive=False), covers=("cumsum",)
    ),
    "cumprod": Case(
        lambda x: mx.cumprod(x, axis=1), domain=nonzero(0.5, 1.5), mlx_no_jvp=_MLX_NO_CUM_JVP
    ),
    # Exact zeros: the first zero in scan order gets the product of the others, later ones 0.
    "cumprod_with_zeros": Case(
        lambda x: mx.cumprod(x, axis=1),
        gen=_prod_with_zeros,
        covers=("cumprod",),
        mlx_no_jvp=_MLX_NO_CUM_JVP,
    ),
    "cumprod_with_zeros_reverse": Case(
        lambda x: mx.cumprod(x, axis=1, reverse=True),
        gen=_prod_with_zeros,
        covers=("cumprod",),
        mlx_no_jvp=_MLX_NO_CUM_JVP,
    ),
    "cumprod_with_zeros_exclusive": Case(
        lambda x: mx.cumprod(x, axis=1, inclusive=False),
        gen=_prod_with_zeros,
        covers=("cumprod",),
        mlx_no_jvp=_MLX_NO_CUM_JVP,
    ),
    "cumprod_with_zeros_reverse_exclusive": Case(
        lambda x: mx.cumprod(x, axis=0, reverse=True, inclusive=False),
        gen=_prod_with_zeros,
        covers=("cumprod",),
        mlx_no_jvp=_MLX_NO_CUM_JVP,
    ),
    "cummax": Case(lambda x: mx.cummax(x, axis=1), domain=distinct(), mlx_no_jvp=_MLX_NO_CUM_JVP),
    "cummin": Case(lambda x: mx.cummin(x, axis=0), domain=distinct(), mlx_no_jvp=_MLX_NO_CUM_JVP),
    "cumulative": Case(
        lambda x: [mx.cumulative_sum(x, axis=1), mx.cumulative_prod(x, axis=0)],
        domain=nonzero(0.5, 1.5),
        covers=("cumulative_sum", "cumulative_prod"),
        mlx_no_jvp=_MLX_NO_CUM_JVP,
    ),
    "logcumsumexp": Case(lambda x: mx.logcumsumexp(x, axis=1), mlx_lowp=True),
    # quantized products: float32, linear in x, the scales and the biases (the codes fixed)
    "quantized_matmul": Case(
        lambda x, y, s, b: [
            mx.quantized_matmul(_f32(x), _QW, _f32(s), _f32(b), group_size=32),
            mx.quantized_matmul(_f32(y), _QW, _f32(s), _f32(b), transpose=False, group_size=32),
        ],
        shapes=((2, 64), (2, 6), (6, 2), (6, 2)),
        h=1e-2,
        rtol=1e-4,
        atol=1e-4,
        mlx_no_jvp="MLX 0.32.4 has no jvp of quantized_matmul w.r.t. the scales and biases",
    ),
    "dequantize": Case(
        lambda s, b: mx.dequantize(_QW, _f32(s), _f32(b), group_size=32),
        shapes=((6, 2), (6, 2)),
        h=1e-2,
        rtol=1e-4,
        atol=1e-4,
    ),
    "gather_qmm": Case(
        lambda x, s, b: mx.gather_qmm(
            _f32(x),
            _QWE,
            _f32(s),
            _f32(b),
            rhs_indices=_idx([[1, 0], [1, 1], [0, 1]]),
            group_size=32,
        ),
        shapes=((3, 1, 1, 64), (2, 6, 2), (2, 6, 2)),
        h=1e-2,
        rtol=1e-4,
        atol=1e-4,
        mlx_no_jvp="MLX 0.32.4 has no jvp of gather_qmm",
    ),
}


def _f32(a):
    return mx.astype(a, mx.float32)


# 4-bit codes of a 6 x 64 weight (groups of 32) for the quantized_matmul entry.
_QWE = mx.quantize(
    mx.array(np.random.default_rng(6).standard_normal((2, 6, 64)).astype(np.float32)), 32, 4
)[0]
_QW = mx.quantize(
    mx.array(np.random.default_rng(5).standard_normal((6, 64)).astype(np.float32)), 32, 4
)[0]


def _default_case(row):
    """An element-wise kernel op of the registry with no entry above: the op on uniform inputs."""
    return Case(lambda *xs: getattr(mx, row.name)(*xs), shapes=((3, 4),) * row.arity)


for _row in registry.OPS:
    if _row.primitive and _row.public and _row.differentiable is True and _row.name not in REGISTRY:
        REGISTRY[_row.name] = _default_case(_row)

# Public ops that are not differentiable functions of floating arrays, with the registry's reason.
NOT_DIFFERENTIABLE = {
    op.name: op.differentiable for op in registry.OPS if op.public and op.differentiable is not True
}


def _public_callables(module):
    out = set()
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if inspect.isclass(obj) or isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        out.add(name)
    return out


def _covered():
    names = set()
    for key, case in REGISTRY.items():
        names.update((key,) if case.covers is None else case.covers)
    return names


def test_every_public_op_is_covered():
    covered = _covered()
    ops = {op.name: op for op in registry.OPS if op.public}
    ops.update({alias: ops[target] for alias, target in registry.ALIASES.items()})
    missing = sorted(n for n, op in ops.items() if op.differentiable is True and n not in covered)
    assert not missing, f"ops the registry calls differentiable with no REGISTRY entry: {missing}"
    both = sorted(covered & set(NOT_DIFFERENTIABLE))
    assert not both, f"REGISTRY entries for ops the registry calls not differentiable: {both}"
    stale = sorted(covered - set(ops) - set(registry.NON_OPS))
    assert not stale, f"names in REGISTRY that are not public names of the registry: {stale}"
    assert all(isinstance(r, str) and r for r in NOT_DIFFERENTIABLE.values())


@pytest.mark.nuvec_only  # MLX's namespace has other names (it is not the one being kept complete)
def test_every_public_callable_is_a_registry_name():
    public = _public_callables(mx)
    known = (
        {op.name for op in registry.OPS if op.public}
        | set(registry.ALIASES)
        | set(registry.NON_OPS)
    )
    unknown = sorted(public - known)
    assert not unknown, f"public callables the op registry lacks: {unknown}"


# ----------------------------------------------------------------------------- the check
def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _forward(case, xs):
    """The function's outputs (as float64 NumPy arrays) at NumPy inputs xs."""
    outs = _as_list(case.fn(*[mx.array(x, dtype=F64) for x in xs]))
    mx.eval(outs)
    return [np.array(o.astype(F64) if o.dtype != F64 else o) for o in outs]


def _check_close(got, want, case, what):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    _, rtol, atol = case.tolerances()
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol + rtol * scale, err_msg=what)


def _params():
    for name, case in REGISTRY.items():
        yield pytest.param(name, case, id=name, marks=case.marks)


@pytest.mark.parametrize("name,case", list(_params()))
def test_vjp_and_jvp_match_finite_differences(name, case):
    if IS_MLX and case.mlx_skip:
        pytest.skip(case.mlx_skip)
    h = case.tolerances()[0]
    rng = seeded_rng("grad-registry", name)
    xs = case.inputs(rng)
    base = _forward(case, xs)
    arrays = [mx.array(x, dtype=F64) for x in xs]
    fun = lambda *a: _as_list(case.fn(*a))  # noqa: E731

    # vjp: <v, J e_i> for every input element i
    cots_np = [rng.standard_normal(b.shape) for b in base]
    outs, grads = mx.vjp(fun, arrays, [mx.array(c, dtype=F64) for c in cots_np])
    assert len(outs) == len(base) and len(grads) == len(xs)
    for k, (o, b) in enumerate(zip(outs, base)):
        _check_close(np.array(o.astype(F64)), b, case, f"{name}: vjp output {k}")
    for j, (x, g) in enumerate(zip(xs, grads)):
        assert tuple(g.shape) == x.shape, f"{name}: vjp cotangent {j} has shape {tuple(g.shape)}"
        assert g.dtype == F64, f"{name}: vjp cotangent {j} has dtype {g.dtype}"
        fd = np.zeros(x.shape)
        for i in np.ndindex(x.shape):
            hi = [a.copy() for a in xs]
            lo = [a.copy() for a in xs]
            hi[j][i] += h
            lo[j][i] -= h
            fd[i] = sum(
                np.vdot(c, (p - m) / (2 * h))
                for c, p, m in zip(cots_np, _forward(case, hi), _forward(case, lo))
            )
        _check_close(
            np.array(g), fd, case, f"{name}: vjp cotangent of input {j} vs finite differences"
        )

    # jvp: J t for random tangents t of all inputs
    if IS_MLX and case.mlx_no_jvp:
        return
    tans_np = [rng.standard_normal(x.shape) for x in xs]
    outs, tans = mx.jvp(fun, arrays, [mx.array(t, dtype=F64) for t in tans_np])
    assert len(outs) == len(base) and len(tans) == len(base)
    hi = _forward(case, [x + h * t for x, t in zip(xs, tans_np)])
    lo = _forward(case, [x - h * t for x, t in zip(xs, tans_np)])
    for k, (o, t, b, p, m) in enumerate(zip(outs, tans, base, hi, lo)):
        _check_close(np.array(o.astype(F64)), b, case, f"{name}: jvp output {k}")
        assert tuple(t.shape) == b.shape, f"{name}: jvp tangent {k} has shape {tuple(t.shape)}"
        _check_close(
            np.array(t.astype(F64)),
            (p - m) / (2 * h),
            case,
            f"{name}: jvp tangent of output {k} vs finite differences",
        )
