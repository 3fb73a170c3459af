"""Differential tests of op corners (issue 11): pad's reflect / symmetric modes, roll with tuple
shifts, meshgrid, put_along_axis's index dtypes, isneginf / isposinf and integer power, complex
logaddexp, addmm and matmul with 1-D operands. Each snippet runs on nuvec and on mlx.core with the
same inputs; results (values, dtypes, shapes, container types) or exception types must agree.

Skipped when MLX is not installed, and when the suite runs against MLX.
"""

import numpy as np
import pytest

from _impl import IS_MLX

if IS_MLX:
    pytest.skip("differential tests need nuvec; NUVEC_TEST_IMPL=mlx", allow_module_level=True)

mlx = pytest.importorskip("mlx.core")
nv = pytest.importorskip("nuvec")

from test_mlx_small_names import run_both  # noqa: E402

INF = float("inf")
NAN = float("nan")


def _m(mx, *shape, dt="float32"):
    """The same values on both: a fixed ramp with signs, halves."""
    n = int(np.prod(shape))
    v = ((np.arange(n) * 7 % 11) - 5).astype(np.float32).reshape(shape) / 2
    return mx.array(v).astype(getattr(mx, dt))


def _c(mx, *shape):
    return _m(mx, *shape, dt="complex64") * (1 + 2j) + 0.5j


def _grad(f, *shapes):
    """d sum(f(x...) * w) / dx for each input, w a fixed weight of the output's shape."""

    def snippet(mx):
        xs = [_m(mx, *s) for s in shapes]

        def loss(*xs):
            y = f(mx, *xs)
            return (y * _m(mx, *y.shape)).sum()

        return mx.grad(loss, argnums=tuple(range(len(xs))))(*xs)

    return snippet


SNIPPETS = {
    # ------------------------------------------------------------------ pad
    **{
        f"pad_{mode}_{i}": (lambda mx, mode=mode, f=f: f(mx, mode))
        for mode in ("constant", "edge", "reflect", "symmetric")
        for i, f in enumerate(
            (
                lambda mx, m: mx.pad(mx.array([1, 2, 3, 4]), 2, mode=m),
                lambda mx, m: mx.pad(mx.array([1, 2, 3]), 5, mode=m),
                lambda mx, m: mx.pad(mx.array([1, 2]), (0, 5), mode=m),
                lambda mx, m: mx.pad(_m(mx, 2, 3), ((1, 2), (2, 1)), mode=m),
                lambda mx, m: mx.pad(_m(mx, 2, 3), ((0, 0), (3, 0)), mode=m),
                lambda mx, m: mx.pad(_m(mx, 2, 3, 2), [(1, 1)], mode=m),
                lambda mx, m: mx.pad(_m(mx, 2, 3), (1,), mode=m),
                lambda mx, m: mx.pad(mx.array([5]), 2, mode=m),
                lambda mx, m: mx.pad(mx.array(1.0), 1, mode=m),
                lambda mx, m: mx.pad(mx.array([1, 2, 3], mx.int8), (1, 2), mode=m),
                lambda mx, m: mx.pad(mx.array([True, False, True]), 1, mode=m),
                lambda mx, m: mx.pad(_c(mx, 3), 2, mode=m),
                lambda mx, m: mx.pad(mx.array([1, 2, 3]), 1, m, 7),
                lambda mx, m: mx.pad(mx.zeros((2, 0)), ((1, 1), (0, 0)), mode=m),
                lambda mx, m: mx.pad(mx.zeros((0,)), 0, mode=m),
                lambda mx, m: mx.pad(mx.zeros((3,)), -1, mode=m),
                lambda mx, m: mx.pad(mx.zeros((3, 2)), [(1, 1), (1, 1), (1, 1)], mode=m),
                lambda mx, m: mx.pad(mx.zeros((3, 2)), (1, 2, 3), mode=m),
            )
        )
    },
    # An empty axis: reflect and symmetric raise; edge pads with zeros, as MLX.
    **{
        f"pad_empty_{mode}": (lambda mx, mode=mode: mx.pad(mx.zeros((0, 3)), 2, mode=mode))
        for mode in ("constant", "edge", "reflect", "symmetric")
    },
    "pad_bad_mode": lambda mx: mx.pad(mx.zeros((3,)), 2, mode="wrap"),
    "pad_constant_value": lambda mx: mx.pad(mx.array([1, 2, 3]), 1, constant_values=2.5),
    **{
        f"pad_grad_{mode}": _grad(
            lambda mx, x, mode=mode: mx.pad(x, ((2, 3), (1, 4)), mode), (3, 2)
        )
        for mode in ("constant", "edge", "reflect", "symmetric")
    },
    **{
        f"pad_vmap_{mode}": (
            lambda mx, mode=mode: mx.vmap(lambda x: mx.pad(x, (2, 3), mode), in_axes=1)(
                _m(mx, 3, 4)
            )
        )
        for mode in ("constant", "edge", "reflect", "symmetric")
    },
    # ------------------------------------------------------------------ roll
    "roll_tuple_no_axis": lambda mx: mx.roll(_m(mx, 2, 3), (1, 2)),
    "roll_tuple_axis_none": lambda mx: mx.roll(_m(mx, 2, 3), (1, 2), None),
    "roll_tuple_axes": lambda mx: mx.roll(_m(mx, 2, 3), (1, 2), (0, 1)),
    "roll_int_axes": lambda mx: mx.roll(_m(mx, 2, 3), 1, (0, 1)),
    "roll_one_tuple": lambda mx: mx.roll(_m(mx, 2, 3), (1,)),
    "roll_tuple_int_axis": lambda mx: mx.roll(_m(mx, 2, 3), (1, 1), 1),
    "roll_more_shifts": lambda mx: mx.roll(_m(mx, 2, 3), (1, 2, 3), (0, 1)),
    "roll_fewer_shifts": lambda mx: mx.roll(_m(mx, 2, 3, 2), (1, 2), (0, 1, 2)),
    "roll_repeated_axis": lambda mx: mx.roll(_m(mx, 2, 3), (1, 1), (1, 1)),
    "roll_bad_axis": lambda mx: mx.roll(_m(mx, 2, 3), 1, 2),
    "roll_negative": lambda mx: mx.roll(_m(mx, 2, 3), -7),
    "roll_0d": lambda mx: mx.roll(mx.array(3), 1),
    "roll_empty": lambda mx: mx.roll(mx.zeros((0, 3)), 1, 0),
    "roll_empty_shift": lambda mx: mx.roll(_m(mx, 2, 3), ()),
    "roll_empty_axes": lambda mx: mx.roll(_m(mx, 2, 3), (), ()),
    "roll_keywords": lambda mx: mx.roll(_m(mx, 2, 3), shift=(1, 1), axis=(0, -1)),
    "roll_grad": _grad(lambda mx, x: mx.roll(x, (1, 3)), (2, 3)),
    # ------------------------------------------------------------------ meshgrid
    **{
        f"meshgrid_{sparse}_{indexing}_{n}": (
            lambda mx, sparse=sparse, indexing=indexing, n=n: mx.meshgrid(
                *[mx.array([1, 2, 3]), mx.array([4.5, 5.5]), mx.array([6], mx.int8)][:n],
                sparse=sparse,
                indexing=indexing,
            )
        )
        for sparse in (False, True)
        for indexing in ("xy", "ij")
        for n in (0, 1, 2, 3)
    },
    "meshgrid_2d_input": lambda mx: mx.meshgrid(mx.zeros((2, 2)), mx.array([4, 5])),
    "meshgrid_0d_input": lambda mx: mx.meshgrid(mx.array(1), mx.array([4, 5])),
    "meshgrid_bad_indexing": lambda mx: mx.meshgrid(mx.array([1]), indexing="xx"),
    # ------------------------------------------------------------------ put_along_axis
    **{
        f"put_along_axis_{d}": (
            lambda mx, d=d: mx.put_along_axis(
                _m(mx, 2, 3), mx.array([[0], [1]]).astype(getattr(mx, d)), mx.array(9.0), axis=1
            )
        )
        for d in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
    },
    "put_along_axis_none": lambda mx: mx.put_along_axis(
        _m(mx, 2, 3), mx.array([0, 4]), mx.array([7.0, 8.0]), axis=None
    ),
    "put_along_axis_negative": lambda mx: mx.put_along_axis(
        _m(mx, 2, 3), mx.array([[-1], [0]]), mx.array(9.0), axis=1
    ),
    "put_along_axis_cast": lambda mx: mx.put_along_axis(
        mx.array([1, 2, 3]), mx.array([0]), mx.array([2.7]), axis=0
    ),
    "put_along_axis_ndim": lambda mx: mx.put_along_axis(
        _m(mx, 2, 3), mx.array([0]), mx.array(1.0), axis=1
    ),
    "put_along_axis_axis": lambda mx: mx.put_along_axis(
        _m(mx, 2, 3), mx.array([[0]]), mx.array(1.0), axis=2
    ),
    "take_float_indices": lambda mx: mx.take(_m(mx, 2, 3), mx.array([0.0, 1.0]), axis=1),
    "take_bool_indices": lambda mx: mx.take(_m(mx, 2, 3), mx.array([True, False]), axis=1),
    # ------------------------------------------------------------------ isneginf / isposinf
    **{
        f"{f}_{d}": (
            lambda mx, f=f, d=d: getattr(mx, f)(mx.array([0, 1, -1, 127]).astype(getattr(mx, d)))
        )
        for f in ("isneginf", "isposinf", "isinf", "isfinite", "isnan")
        for d in ("bool_", "int8", "uint8", "int32", "uint32", "int64", "uint64")
    },
    **{
        f"{f}_complex": (
            lambda mx, f=f: getattr(mx, f)(
                mx.array(
                    [
                        complex(-INF, 0),
                        complex(INF, 0),
                        complex(-INF, 1),
                        complex(INF, -INF),
                        complex(0, -INF),
                        complex(-INF, NAN),
                        complex(NAN, 0),
                        1j,
                    ]
                )
            )
        )
        for f in ("isneginf", "isposinf", "isinf", "isfinite", "isnan")
    },
    "isneginf_scalar": lambda mx: (mx.isneginf(-INF), mx.isposinf(3)),
    # ------------------------------------------------------------------ integer power
    **{
        f"power_{d}_{i}": (lambda mx, d=d, f=f: f(mx, getattr(mx, d)))
        for d in ("int8", "uint8", "int16", "int32", "uint32", "int64", "uint64")
        for i, f in enumerate(
            (
                lambda mx, t: mx.power(
                    mx.array([2, 1, 0, 3, 1, 0]).astype(t),
                    mx.array([-1, -2, -3, 0, -1, 0]).astype(t),
                ),
                lambda mx, t: mx.power(
                    mx.array([3, 7, 2, 5]).astype(t), mx.array([40, 30, 70, 3]).astype(t)
                ),
                lambda mx, t: mx.power(mx.array([3, 2]).astype(t), 2),
                lambda mx, t: mx.power(mx.array([3, 2]).astype(t), 0.5),
                lambda mx, t: mx.power(2, mx.array([3, 0, 1]).astype(t)),
                lambda mx, t: mx.power(mx.array([3, 2]).astype(t), mx.array([2.0, -1.0])),
            )
        )
    },
    "power_signed_negative_exponent": lambda mx: mx.power(
        mx.array([1, -1, -1, 2, -2, 0]), mx.array([-5, -5, -4, -1, -3, -1])
    ),
    "power_negative_scalar_exponent": lambda mx: mx.power(mx.array([3, 1, -1]), -1),
    "power_negative_base": lambda mx: mx.power(
        mx.array([-2, -3], mx.int8), mx.array([3, 2], mx.int8)
    ),
    "power_int32_min": lambda mx: mx.power(mx.array([-2]), mx.array([31])),
    "power_bool": lambda mx: mx.power(
        mx.array([True, False, False]), mx.array([True, True, False])
    ),
    "power_uint8_negative_scalar": lambda mx: mx.power(mx.array([3], mx.uint8), -1),
    "power_mixed": lambda mx: (
        mx.power(mx.array([2, 3]), mx.array([0.5, -1.0])),
        mx.power(mx.array([2.0, 3.0]), mx.array([2, -1])),
        mx.power(2.0, mx.array([3, -1, 0])),
        mx.power(mx.array([2, 3], mx.int8), 2.5),
    ),
    "power_complex_int": lambda mx: mx.power(mx.array([1 + 1j]), mx.array([2])),
    # ------------------------------------------------------------------ logaddexp
    "logaddexp_complex": lambda mx: mx.logaddexp(
        mx.array([1 + 1j, 0j, 1 + 0j, 2 - 1j, 1 + 5j, -3 + 2j]),
        mx.array([2 - 1j, 1j, 1 + 1j, 1 + 1j, 1 - 5j, 4 - 0.5j]),
    ),
    "logaddexp_complex_real": lambda mx: mx.logaddexp(mx.array([1 + 1j, -2j]), 2.0),
    "logaddexp_complex_float_array": lambda mx: mx.logaddexp(mx.array([1 + 1j]), mx.array([0.5])),
    "logaddexp_complex_special": lambda mx: mx.logaddexp(
        mx.array([complex(-INF, 0), complex(INF, 1), complex(NAN, 0), complex(-INF, 2)]),
        mx.array([complex(-INF, 0), 1j, 1 + 0j, 3 + 1j]),
    ),
    "logaddexp_real_special": lambda mx: mx.logaddexp(
        mx.array([-INF, INF, NAN, 1.0, 2.0]), mx.array([-INF, INF, 1.0, NAN, 2.0])
    ),
    "logaddexp_int": lambda mx: mx.logaddexp(mx.array([1, 2]), mx.array([3, 4])),
    # ------------------------------------------------------------------ matmul
    "matmul_mv": lambda mx: mx.matmul(_m(mx, 2, 3), _m(mx, 3)),
    "matmul_vm": lambda mx: mx.matmul(_m(mx, 2), _m(mx, 2, 3)),
    "matmul_vv": lambda mx: mx.matmul(_m(mx, 3), _m(mx, 3)),
    "matmul_vv_empty": lambda mx: mx.matmul(_m(mx, 0), _m(mx, 0)),
    "matmul_mv_empty_k": lambda mx: mx.matmul(_m(mx, 2, 0), _m(mx, 0)),
    "matmul_mv_empty_m": lambda mx: mx.matmul(_m(mx, 0, 3), _m(mx, 3)),
    "matmul_vm_empty_n": lambda mx: mx.matmul(_m(mx, 3), _m(mx, 3, 0)),
    "matmul_batched_v": lambda mx: mx.matmul(_m(mx, 4, 2, 3), _m(mx, 3)),
    "matmul_v_batched": lambda mx: mx.matmul(_m(mx, 2), _m(mx, 4, 2, 3)),
    "matmul_complex_mv": lambda mx: mx.matmul(_c(mx, 2, 3), _c(mx, 3)),
    "matmul_complex_vm": lambda mx: mx.matmul(_c(mx, 2), _c(mx, 2, 3)),
    "matmul_complex_vv": lambda mx: mx.matmul(_c(mx, 3), _c(mx, 3)),
    "matmul_complex_real_mv": lambda mx: mx.matmul(_c(mx, 2, 3), _m(mx, 3)),
    "matmul_complex_batched_v": lambda mx: mx.matmul(_c(mx, 4, 2, 3), _c(mx, 3)),
    "matmul_float16_mv": lambda mx: mx.matmul(_m(mx, 2, 3, dt="float16"), _m(mx, 3, dt="float16")),
    "matmul_int": lambda mx: mx.matmul(mx.array([[1, 2]]), mx.array([1, 2])),
    "matmul_0d": lambda mx: mx.matmul(mx.array(1.0), mx.array([1.0])),
    "matmul_mismatch": lambda mx: mx.matmul(_m(mx, 2, 3), _m(mx, 2)),
    "matmul_batch_mismatch": lambda mx: mx.matmul(_m(mx, 2, 2, 3), _m(mx, 3, 3, 1)),
    "matmul_grad_mv": _grad(lambda mx, a, b: mx.matmul(a, b), (2, 3), (3,)),
    "matmul_grad_vm": _grad(lambda mx, a, b: mx.matmul(a, b), (2,), (2, 3)),
    "matmul_grad_vv": _grad(lambda mx, a, b: mx.matmul(a, b), (3,), (3,)),
    "matmul_grad_batched_v": _grad(lambda mx, a, b: mx.matmul(a, b), (4, 2, 3), (3,)),
    # ------------------------------------------------------------------ addmm
    "addmm_mv": lambda mx: mx.addmm(_m(mx, 2), _m(mx, 2, 3), _m(mx, 3)),
    "addmm_vm": lambda mx: mx.addmm(_m(mx, 3), _m(mx, 2), _m(mx, 2, 3)),
    "addmm_vv_c_1": lambda mx: mx.addmm(_m(mx, 1), _m(mx, 3), _m(mx, 3)),
    "addmm_vv": lambda mx: mx.addmm(mx.array(1.0), _m(mx, 3), _m(mx, 3), 2.0, 0.5),
    "addmm_mm": lambda mx: mx.addmm(_m(mx, 2, 4), _m(mx, 2, 3), _m(mx, 3, 4), 2.0, 0.5),
    "addmm_c_broadcast": lambda mx: mx.addmm(_m(mx, 4), _m(mx, 2, 3), _m(mx, 3, 4), 2.0, 0.5),
    "addmm_c_0d": lambda mx: mx.addmm(mx.array(3.0), _m(mx, 2, 3), _m(mx, 3, 4)),
    "addmm_c_too_big": lambda mx: mx.addmm(_m(mx, 5, 2, 4), _m(mx, 2, 3), _m(mx, 3, 4)),
    "addmm_batched": lambda mx: mx.addmm(_m(mx, 2, 4), _m(mx, 5, 2, 3), _m(mx, 3, 4)),
    "addmm_empty_k": lambda mx: mx.addmm(_m(mx, 2, 4), _m(mx, 2, 0), _m(mx, 0, 4), 1.0, 2.0),
    "addmm_complex_mv": lambda mx: mx.addmm(_c(mx, 2), _c(mx, 2, 3), _c(mx, 3)),
    "addmm_int": lambda mx: mx.addmm(mx.array([1]), mx.array([[1, 2]]), mx.array([[1], [2]])),
    "addmm_int_c": lambda mx: mx.addmm(mx.array([1]), _m(mx, 1, 2), _m(mx, 2, 1)),
    "addmm_float16_c": lambda mx: mx.addmm(_m(mx, 1, dt="float16"), _m(mx, 1, 2), _m(mx, 2, 1)),
    "addmm_0d": lambda mx: mx.addmm(mx.array(1.0), mx.array(1.0), _m(mx, 2, 1)),
    "addmm_beta_0": lambda mx: mx.addmm(mx.array([NAN]), _m(mx, 1, 2), _m(mx, 2, 1), 1.0, 0.0),
    "addmm_grad_mv": _grad(lambda mx, c, a, b: mx.addmm(c, a, b, 2.0, 0.5), (2,), (2, 3), (3,)),
    "addmm_grad_vm": _grad(lambda mx, c, a, b: mx.addmm(c, a, b, -1.0, 3.0), (1,), (2,), (2, 3)),
    "addmm_grad_vv": _grad(lambda mx, c, a, b: mx.addmm(c, a, b), (), (3,), (3,)),
    # ------------------------------------------------------------------ unique
    **{
        f"unique_{i}": f
        for i, f in enumerate(
            (
                lambda mx: mx.unique(mx.array([2, 1, 2, 3, 1]), 3),
                lambda mx: mx.unique(mx.array([2, 1, 2, 3, 1]), 5),
                lambda mx: mx.unique(mx.array([2, 1, 2, 3, 1]), 4, True, True, True, fill_value=0),
                lambda mx: mx.unique(mx.array([2, 1, 2, 3, 1]), 4, True, True, True),
                lambda mx: mx.unique(mx.array([2, 1, 2, 3, 1]), 2, True, True, True),
                lambda mx: mx.unique(mx.array([2, 1, 2, 3, 1]), 0, True, True, True),
                lambda mx: mx.unique(mx.array([2, 1, 2, 3, 1]), 7, True, True, True),
                lambda mx: mx.unique(mx.array([[3.5, 1], [1, -2]]), 4, return_inverse=True),
                lambda mx: mx.unique(mx.array([[3.5, 1], [1, -2]]), 2, return_counts=True),
                lambda mx: mx.unique(mx.array([3, 3, 3]), 3, return_index=True, fill_value=9.5),
                lambda mx: mx.unique(mx.array([3, 3]), 3, fill_value=mx.array([[9]])),
                lambda mx: mx.unique(mx.array([True, False, True]), 3, True, True, True),
                lambda mx: mx.unique(mx.array([NAN, 1, NAN]), 3, True, True, True),
                lambda mx: mx.unique(mx.array([-0.0, 0.0, 1]), 3, True, True, True),
                lambda mx: mx.unique(mx.array(5), 2, True, True, True),
                lambda mx: mx.unique(mx.array([1, 2], mx.int8), 2, True, True, True),
                lambda mx: mx.unique(mx.array([1 + 1j, 1 - 1j, 1 + 1j]), 3, True, True, True),
                lambda mx: mx.unique(mx.array([5, 4, 5, 4, 1, 1], mx.uint64), 2, False, True),
                lambda mx: mx.unique(mx.array([5.0, 4, 5], mx.bfloat16), 2, return_counts=True),
                lambda mx: mx.unique(mx.array([5, 4, 5, 4, 1, 1]), 5, True, True, True),
                lambda mx: mx.unique(mx.array([]), 2, True, True, True, fill_value=3),
                lambda mx: mx.unique(mx.array([]), 0, True, True, True),
                lambda mx: mx.unique(mx.array([]), 2),
                lambda mx: mx.unique(mx.array([2, 1]), -1),
                lambda mx: mx.unique(mx.array([2, 1]), 2.0),
                lambda mx: mx.unique(mx.array([2, 1])),
                lambda mx: mx.unique(mx.array([2, 1]), 2, fill_value=mx.array([1, 2])),
                lambda mx: mx.unique(mx.array([2, 1]), size=2, return_index=True),
                lambda mx: mx.unique([1, 2], 2),
            )
        )
    },
    # ------------------------------------------------------------------ convolve
    **{
        f"convolve_{mode}_{i}": (lambda mx, mode=mode, f=f: f(mx, mode))
        for mode in ("full", "same", "valid")
        for i, f in enumerate(
            (
                lambda mx, m: mx.convolve(_m(mx, 5), mx.array([1.0, 0.5, -1]), m),
                lambda mx, m: mx.convolve(mx.array([1.0, 0.5, -1]), _m(mx, 5), m),
                lambda mx, m: mx.convolve(_m(mx, 4), _m(mx, 2), m),
                lambda mx, m: mx.convolve(_m(mx, 4), _m(mx, 4) + 1, m),
                lambda mx, m: mx.convolve(_m(mx, 1), _m(mx, 3), m),
                lambda mx, m: mx.convolve(_m(mx, 7, dt="float16"), _m(mx, 3, dt="float16"), m),
                lambda mx, m: mx.convolve(_m(mx, 7, dt="bfloat16"), _m(mx, 3), m),
                lambda mx, m: mx.convolve(mx.array([1, 2, 3]), mx.array([1, 1]), m),
                lambda mx, m: mx.convolve(mx.array([1, 2, 3]), mx.array([1.0, 1]), m),
                lambda mx, m: mx.convolve(mx.array([1.0, 2, 3]), mx.array([1, 1]), m),
                lambda mx, m: mx.convolve(mx.array([1.0, 2]), mx.array([1, 1, 1]), m),
                lambda mx, m: mx.convolve(_m(mx, 2, 3), _m(mx, 2), m),
                lambda mx, m: mx.convolve(mx.array([]), _m(mx, 2), m),
                lambda mx, m: mx.convolve(mx.array(1.0), _m(mx, 2), m),
            )
        )
    },
    "convolve_bad_mode": lambda mx: mx.convolve(_m(mx, 3), _m(mx, 2), "bad"),
    "convolve_grad": _grad(lambda mx, a, v: mx.convolve(a, v), (4,), (3,)),
    "convolve_grad_same": _grad(lambda mx, a, v: mx.convolve(a, v, "same"), (3,), (5,)),
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_same_as_mlx(name):
    run_both(SNIPPETS[name], tol=2e-5)


@pytest.mark.nuvec_only
@pytest.mark.parametrize("d", ["float32", "float16", "bfloat16", "bool_"])
def test_put_along_axis_refuses_inexact_and_bool_indices(d):
    """MLX records put_along_axis / take_along_axis with float or bool indices and then leaves the
    array unchanged or fails at evaluation; nuvec raises OpError when recording (docs/indexing.md)."""
    x = _m(nv, 2, 3)
    i = nv.array([[0], [1]]).astype(getattr(nv, d))
    with pytest.raises(nv.OpError, match="indices must be integers"):
        nv.put_along_axis(x, i, nv.array(9.0), axis=1)
    with pytest.raises(nv.OpError, match="indices must be integers"):
        nv.take_along_axis(x, i, axis=1)


@pytest.mark.nuvec_only
def test_addmm_batched_vector_broadcasts_c():
    """MLX 0.32 fails to broadcast c against a batched matrix-vector product ((5, 2, 3) @ (3,));
    nuvec gives the product's shape (5, 2), with c broadcast as for every other addmm."""
    a, b, c = _m(nv, 5, 2, 3), _m(nv, 3), _m(nv, 2)
    got = nv.addmm(c, a, b, 2.0, 0.5)
    want = 2.0 * (np.array(a) @ np.array(b)) + 0.5 * np.array(c)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-6)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_pad_gradient_by_finite_differences(mode):
    """pad's vjp equals central differences of sum(pad(x) * w) (float64 on nuvec)."""
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    w = np.cos(np.arange(7 * 8)).reshape(7, 8)
    widths = ((2, 3), (1, 4))

    def f(v):
        return nv.sum(nv.pad(v, widths, mode) * nv.array(w, nv.float64))

    got = np.array(nv.grad(f)(nv.array(x, nv.float64)))
    eps, want = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        want[i] = (
            f(nv.array(x + d, nv.float64)).item() - f(nv.array(x - d, nv.float64)).item()
        ) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
