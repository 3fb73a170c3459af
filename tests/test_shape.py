"""Shape ops against NumPy: reshape, flatten, unflatten, squeeze, expand_dims, transpose, swapaxes,
moveaxis, broadcast_to, broadcast_arrays, atleast_nd, concatenate, stack, split, tile, repeat, pad,
roll, as_strided, contiguous, meshgrid, diagonal, diag and kron.

Every op runs over representative dtypes (bool, int8, uint16, int32, float16, bfloat16 through
float32, float32, complex64) and over inputs that are not row-contiguous (transposed, stepped and
reversed views), including empty arrays and negative axes. Invalid calls raise at the call: a bad
axis an IndexError (nuvec: AxisError, an OpError that is also an IndexError), other mistakes a
ValueError (nuvec: OpError naming the op).
"""

import numpy as np
import pytest

from _impl import mx
from helpers import NP, assert_array_equal_np, np_values, promote, seeded_rng, to_mx

DTYPES = ("bool", "int8", "uint16", "int32", "float16", "bfloat16", "float32", "complex64")
LAYOUTS = ("contiguous", "transposed", "stepped", "reversed")
# Each dtype once (cycling through the layouts), and float32 in every layout.
COMBOS = [(dt, LAYOUTS[i % len(LAYOUTS)]) for i, dt in enumerate(DTYPES)] + [
    ("float32", lay) for lay in LAYOUTS if lay != LAYOUTS[DTYPES.index("float32") % len(LAYOUTS)]
]
COMBO_IDS = [f"{dt}-{lay}" for dt, lay in COMBOS]


def np_data(shape, dt, seed=0):
    """Distinct-ish small values that every dtype holds exactly."""
    rng = seeded_rng(shape, dt, seed)
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt == "complex64":
        re = rng.integers(-50, 50, shape)
        im = rng.integers(-50, 50, shape)
        return (re + 1j * im).astype(np.complex64)
    lo = 0 if dt.startswith("uint") else -100
    return np.asarray(rng.integers(lo, 100, shape)).astype(NP[dt])


def layout_of(a, dt, layout):
    """A framework array equal to `a`, laid out as `layout` (a view of a bigger/other buffer)."""
    if layout == "contiguous" or a.ndim == 0:
        return to_mx(a, dt)
    if layout == "transposed":
        return mx.transpose(to_mx(a.T.copy(order="C"), dt))
    if layout == "stepped":
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        big[..., ::2] = a
        return to_mx(big, dt)[..., ::2]
    if layout == "reversed":
        return to_mx(a[::-1].copy(order="C"), dt)[::-1]
    raise AssertionError(layout)


def inputs(shapes, dt, layout):
    nps = [np_data(s, dt, seed=i) for i, s in enumerate(shapes)]
    return [layout_of(a, dt, layout) for a in nps], nps


def check(got, expected, dt, msg):
    """Compare with NumPy; the reference is rounded to the dtype (a no-op for exact values, and
    float16/bfloat16 products such as kron's round once, as the framework's multiply does)."""
    if isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{msg}: expected a list, got {type(got)!r}"
        assert len(got) == len(expected), f"{msg}: {len(got)} results, expected {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_array_equal_np(g, e, dtype=dt, err_msg=f"{msg}[{i}]")
    else:
        ref = np_values(expected, dt).reshape(np.shape(expected))
        assert_array_equal_np(got, ref, dtype=dt, err_msg=msg)


# ----------------------------------------------------------------------------- the op table
# (id, input shapes, framework call, NumPy reference). The calls are given the inputs as laid out
# by the test's layout.
# fmt: off
CASES = [
    ("reshape-2d", [(2, 3, 4)], lambda x: mx.reshape(x, (4, 6)), lambda a: a.reshape(4, 6)),
    ("reshape-infer", [(2, 3, 4)], lambda x: mx.reshape(x, (3, -1, 2)), lambda a: a.reshape(3, -1, 2)),
    ("reshape-flat", [(3, 5)], lambda x: mx.reshape(x, (-1,)), lambda a: a.reshape(-1)),
    ("reshape-add-ones", [(3, 4)], lambda x: mx.reshape(x, (1, 3, 1, 4, 1)), lambda a: a.reshape(1, 3, 1, 4, 1)),
    ("reshape-scalar", [()], lambda x: mx.reshape(x, (1, 1)), lambda a: a.reshape(1, 1)),
    ("reshape-to-scalar", [(1, 1)], lambda x: mx.reshape(x, ()), lambda a: a.reshape(())),
    ("reshape-empty", [(0, 3)], lambda x: mx.reshape(x, (3, 0, 5)), lambda a: a.reshape(3, 0, 5)),
    ("flatten", [(2, 3, 4)], lambda x: mx.flatten(x), lambda a: a.reshape(-1)),
    ("flatten-middle", [(2, 3, 4, 5)], lambda x: mx.flatten(x, 1, 2), lambda a: a.reshape(2, 12, 5)),
    ("flatten-negative", [(2, 3, 4)], lambda x: mx.flatten(x, -2, -1), lambda a: a.reshape(2, 12)),
    ("flatten-one-axis", [(2, 3, 4)], lambda x: mx.flatten(x, 1, 1), lambda a: a),
    ("flatten-scalar", [()], lambda x: mx.flatten(x), lambda a: a.reshape(1)),
    ("flatten-empty", [(2, 0, 3)], lambda x: mx.flatten(x, 0, 1), lambda a: a.reshape(0, 3)),
    ("unflatten", [(2, 12)], lambda x: mx.unflatten(x, 1, (3, 4)), lambda a: a.reshape(2, 3, 4)),
    ("unflatten-infer-negative-axis", [(2, 12, 2)], lambda x: mx.unflatten(x, -2, (2, -1, 3)),
     lambda a: a.reshape(2, 2, 2, 3, 2)),
    ("squeeze-all", [(1, 3, 1, 2, 1)], lambda x: mx.squeeze(x), lambda a: np.squeeze(a)),
    ("squeeze-int", [(3, 1, 2)], lambda x: mx.squeeze(x, 1), lambda a: np.squeeze(a, 1)),
    ("squeeze-negative", [(3, 2, 1)], lambda x: mx.squeeze(x, -1), lambda a: np.squeeze(a, -1)),
    ("squeeze-tuple", [(1, 3, 1, 1)], lambda x: mx.squeeze(x, (0, -1)), lambda a: np.squeeze(a, (0, -1))),
    ("squeeze-to-scalar", [(1, 1)], lambda x: mx.squeeze(x), lambda a: np.squeeze(a)),
    ("squeeze-empty", [(0, 1, 2)], lambda x: mx.squeeze(x, 1), lambda a: np.squeeze(a, 1)),
    ("expand_dims-0", [(3, 4)], lambda x: mx.expand_dims(x, 0), lambda a: np.expand_dims(a, 0)),
    ("expand_dims-end", [(3, 4)], lambda x: mx.expand_dims(x, 2), lambda a: np.expand_dims(a, 2)),
    ("expand_dims-negative", [(3, 4)], lambda x: mx.expand_dims(x, -2), lambda a: np.expand_dims(a, -2)),
    ("expand_dims-tuple", [(3, 4)], lambda x: mx.expand_dims(x, (-1, 1, -5)), lambda a: np.expand_dims(a, (-1, 1, -5))),
    ("expand_dims-scalar", [()], lambda x: mx.expand_dims(x, (0, 1)), lambda a: np.expand_dims(a, (0, 1))),
    ("transpose-default", [(2, 3, 4)], lambda x: mx.transpose(x), lambda a: a.T),
    ("transpose-perm", [(2, 3, 4)], lambda x: mx.transpose(x, (1, 2, 0)), lambda a: a.transpose(1, 2, 0)),
    ("transpose-negative", [(2, 3, 4)], lambda x: mx.transpose(x, (-1, 0, -2)), lambda a: a.transpose(2, 0, 1)),
    ("transpose-empty", [(0, 3)], lambda x: mx.transpose(x), lambda a: a.T),
    ("T-property", [(2, 5)], lambda x: x.T, lambda a: a.T),
    ("swapaxes", [(2, 3, 4)], lambda x: mx.swapaxes(x, 0, 2), lambda a: np.swapaxes(a, 0, 2)),
    ("swapaxes-negative", [(2, 3, 4)], lambda x: mx.swapaxes(x, -1, -2), lambda a: np.swapaxes(a, -1, -2)),
    ("moveaxis", [(2, 3, 4, 5)], lambda x: mx.moveaxis(x, 0, 2), lambda a: np.moveaxis(a, 0, 2)),
    ("moveaxis-negative", [(2, 3, 4)], lambda x: mx.moveaxis(x, -1, 0), lambda a: np.moveaxis(a, -1, 0)),
    ("moveaxis-back", [(2, 3, 4)], lambda x: mx.moveaxis(x, 1, -1), lambda a: np.moveaxis(a, 1, -1)),
    ("broadcast_to", [(3,)], lambda x: mx.broadcast_to(x, (2, 4, 3)), lambda a: np.broadcast_to(a, (2, 4, 3))),
    ("broadcast_to-ones", [(3, 1)], lambda x: mx.broadcast_to(x, (2, 3, 5)), lambda a: np.broadcast_to(a, (2, 3, 5))),
    ("broadcast_to-scalar", [()], lambda x: mx.broadcast_to(x, (2, 2)), lambda a: np.broadcast_to(a, (2, 2))),
    ("broadcast_to-empty", [(1, 3)], lambda x: mx.broadcast_to(x, (0, 3)), lambda a: np.broadcast_to(a, (0, 3))),
    ("broadcast_arrays", [(4,), (2, 1), ()], lambda x, y, z: mx.broadcast_arrays(x, y, z),
     lambda a, b, c: list(np.broadcast_arrays(a, b, c))),
    ("broadcast_arrays-empty", [(0, 1), (3,)], lambda x, y: mx.broadcast_arrays(x, y),
     lambda a, b: list(np.broadcast_arrays(a, b))),
    ("atleast_1d-scalar", [()], lambda x: mx.atleast_1d(x), lambda a: np.atleast_1d(a)),
    ("atleast_1d-2d", [(2, 3)], lambda x: mx.atleast_1d(x), lambda a: np.atleast_1d(a)),
    ("atleast_2d-scalar", [()], lambda x: mx.atleast_2d(x), lambda a: np.atleast_2d(a)),
    ("atleast_2d-1d", [(3,)], lambda x: mx.atleast_2d(x), lambda a: np.atleast_2d(a)),
    ("atleast_3d-scalar", [()], lambda x: mx.atleast_3d(x), lambda a: np.atleast_3d(a)),
    ("atleast_3d-1d", [(3,)], lambda x: mx.atleast_3d(x), lambda a: np.atleast_3d(a)),
    ("atleast_3d-2d", [(2, 3)], lambda x: mx.atleast_3d(x), lambda a: np.atleast_3d(a)),
    ("atleast_3d-4d", [(2, 1, 3, 2)], lambda x: mx.atleast_3d(x), lambda a: np.atleast_3d(a)),
    ("atleast_2d-many", [(), (3,), (2, 2)], lambda *xs: mx.atleast_2d(*xs), lambda *a: list(np.atleast_2d(*a))),
    ("atleast_3d-many", [(3,), (2, 2)], lambda *xs: mx.atleast_3d(*xs), lambda *a: list(np.atleast_3d(*a))),
    ("concatenate-0", [(2, 3), (4, 3), (1, 3)], lambda *xs: mx.concatenate(list(xs)),
     lambda *a: np.concatenate(a)),
    ("concatenate-1", [(2, 3), (2, 1)], lambda *xs: mx.concatenate(xs, axis=1), lambda *a: np.concatenate(a, axis=1)),
    ("concatenate-negative", [(2, 3, 2), (2, 3, 4)], lambda *xs: mx.concatenate(list(xs), axis=-1),
     lambda *a: np.concatenate(a, axis=-1)),
    ("concatenate-none", [(2, 3), (4,), ()], lambda *xs: mx.concatenate(list(xs), axis=None),
     lambda *a: np.concatenate([np.ravel(v) for v in a])),
    ("concatenate-empty", [(0, 3), (2, 3), (0, 3)], lambda *xs: mx.concatenate(list(xs)),
     lambda *a: np.concatenate(a)),
    ("concatenate-one", [(2, 3)], lambda x: mx.concatenate([x], axis=1), lambda a: a),
    ("concat-alias", [(2, 2), (2, 3)], lambda *xs: mx.concat(list(xs), axis=1), lambda *a: np.concatenate(a, axis=1)),
    ("stack-0", [(2, 3), (2, 3), (2, 3)], lambda *xs: mx.stack(list(xs)), lambda *a: np.stack(a)),
    ("stack-1", [(2, 3), (2, 3)], lambda *xs: mx.stack(list(xs), axis=1), lambda *a: np.stack(a, axis=1)),
    ("stack-negative", [(2, 3), (2, 3)], lambda *xs: mx.stack(list(xs), axis=-1), lambda *a: np.stack(a, axis=-1)),
    ("stack-scalars", [(), ()], lambda *xs: mx.stack(list(xs)), lambda *a: np.stack(a)),
    ("stack-empty", [(0, 2), (0, 2)], lambda *xs: mx.stack(list(xs), axis=1), lambda *a: np.stack(a, axis=1)),
    ("split-sections", [(6, 2)], lambda x: mx.split(x, 3), lambda a: np.split(a, 3)),
    ("split-sections-axis", [(2, 8)], lambda x: mx.split(x, 4, axis=-1), lambda a: np.split(a, 4, axis=-1)),
    ("split-indices", [(2, 7)], lambda x: mx.split(x, [2, 5], axis=1), lambda a: np.split(a, [2, 5], axis=1)),
    ("split-indices-negative", [(7, 2)], lambda x: mx.split(x, [-3]), lambda a: np.split(a, [-3])),
    ("split-indices-beyond", [(2, 4)], lambda x: mx.split(x, [1, 9], axis=1), lambda a: np.split(a, [1, 9], axis=1)),
    ("split-indices-repeated", [(5,)], lambda x: mx.split(x, [2, 2, 4]), lambda a: np.split(a, [2, 2, 4])),
    ("split-indices-unsorted", [(2, 4)], lambda x: mx.split(x, [3, 1], axis=1), lambda a: np.split(a, [3, 1], axis=1)),
    ("split-empty", [(0, 4)], lambda x: mx.split(x, 2, axis=1), lambda a: np.split(a, 2, axis=1)),
    ("tile-int", [(2, 3)], lambda x: mx.tile(x, 2), lambda a: np.tile(a, 2)),
    ("tile-tuple", [(2, 3)], lambda x: mx.tile(x, (3, 2)), lambda a: np.tile(a, (3, 2))),
    ("tile-more-reps", [(3,)], lambda x: mx.tile(x, (2, 1, 2)), lambda a: np.tile(a, (2, 1, 2))),
    ("tile-fewer-reps", [(2, 2, 3)], lambda x: mx.tile(x, (2,)), lambda a: np.tile(a, (2,))),
    ("tile-zero", [(2, 3)], lambda x: mx.tile(x, (0, 2)), lambda a: np.tile(a, (0, 2))),
    ("tile-scalar", [()], lambda x: mx.tile(x, (2, 3)), lambda a: np.tile(a, (2, 3))),
    ("repeat-flat", [(2, 3)], lambda x: mx.repeat(x, 2), lambda a: np.repeat(a, 2)),
    ("repeat-axis", [(2, 3)], lambda x: mx.repeat(x, 3, axis=1), lambda a: np.repeat(a, 3, axis=1)),
    ("repeat-negative-axis", [(2, 3, 2)], lambda x: mx.repeat(x, 2, axis=-3), lambda a: np.repeat(a, 2, axis=-3)),
    ("repeat-zero", [(2, 3)], lambda x: mx.repeat(x, 0, axis=0), lambda a: np.repeat(a, 0, axis=0)),
    ("repeat-empty", [(0, 3)], lambda x: mx.repeat(x, 2, axis=1), lambda a: np.repeat(a, 2, axis=1)),
    ("pad-int", [(2, 3)], lambda x: mx.pad(x, 1), lambda a: np.pad(a, 1)),
    ("pad-pair", [(2, 3)], lambda x: mx.pad(x, (1, 2)), lambda a: np.pad(a, (1, 2))),
    ("pad-per-axis", [(2, 3, 2)], lambda x: mx.pad(x, [(0, 1), (2, 0), (1, 1)]),
     lambda a: np.pad(a, [(0, 1), (2, 0), (1, 1)])),
    ("pad-one-pair-list", [(2, 3)], lambda x: mx.pad(x, [(2, 1)]), lambda a: np.pad(a, [(2, 1)])),
    ("pad-constant", [(3,)], lambda x: mx.pad(x, (2, 1), constant_values=1),
     lambda a: np.pad(a, (2, 1), constant_values=1)),
    ("pad-edge", [(2, 3)], lambda x: mx.pad(x, [(1, 2), (3, 1)], mode="edge"),
     lambda a: np.pad(a, [(1, 2), (3, 1)], mode="edge")),
    ("pad-zero-width", [(2, 3)], lambda x: mx.pad(x, [(0, 0), (1, 0)]), lambda a: np.pad(a, [(0, 0), (1, 0)])),
    ("pad-empty", [(0, 2)], lambda x: mx.pad(x, 1), lambda a: np.pad(a, 1)),
    ("roll-flat", [(2, 3)], lambda x: mx.roll(x, 2), lambda a: np.roll(a, 2)),
    ("roll-flat-negative", [(2, 3)], lambda x: mx.roll(x, -7), lambda a: np.roll(a, -7)),
    ("roll-axis", [(2, 5)], lambda x: mx.roll(x, 3, axis=1), lambda a: np.roll(a, 3, axis=1)),
    ("roll-negative-axis", [(2, 5)], lambda x: mx.roll(x, -1, axis=-1), lambda a: np.roll(a, -1, axis=-1)),
    ("roll-big-shift", [(3, 4)], lambda x: mx.roll(x, 9, axis=0), lambda a: np.roll(a, 9, axis=0)),
    ("roll-tuple", [(2, 3, 4)], lambda x: mx.roll(x, (1, -5), axis=(0, 2)), lambda a: np.roll(a, (1, -5), axis=(0, 2))),
    ("roll-one-shift-two-axes", [(2, 3, 4)], lambda x: mx.roll(x, 2, axis=(1, 2)),
     lambda a: np.roll(a, 2, axis=(1, 2))),
    ("roll-empty", [(0, 3)], lambda x: mx.roll(x, 1, axis=1), lambda a: np.roll(a, 1, axis=1)),
    ("contiguous", [(3, 4)], lambda x: mx.contiguous(x), lambda a: a),
    ("diagonal", [(4, 4)], lambda x: mx.diagonal(x), lambda a: np.diagonal(a)),
    ("diagonal-offset", [(3, 5)], lambda x: mx.diagonal(x, 2), lambda a: np.diagonal(a, 2)),
    ("diagonal-negative-offset", [(5, 3)], lambda x: mx.diagonal(x, -1), lambda a: np.diagonal(a, -1)),
    ("diagonal-offset-beyond", [(3, 3)], lambda x: mx.diagonal(x, 5), lambda a: np.diagonal(a, 5)),
    ("diagonal-3d", [(2, 3, 4)], lambda x: mx.diagonal(x, 1, -1, 0), lambda a: np.diagonal(a, 1, -1, 0)),
    ("diagonal-3d-last", [(2, 3, 4)], lambda x: mx.diagonal(x, 0, 1, 2), lambda a: np.diagonal(a, 0, 1, 2)),
    ("diag-of-matrix", [(3, 4)], lambda x: mx.diag(x), lambda a: np.diag(a)),
    ("diag-of-matrix-k", [(3, 4)], lambda x: mx.diag(x, -1), lambda a: np.diag(a, -1)),
    ("diag-of-vector", [(3,)], lambda x: mx.diag(x), lambda a: np.diag(a)),
    ("diag-of-vector-k", [(3,)], lambda x: mx.diag(x, 2), lambda a: np.diag(a, 2)),
    ("diag-of-vector-negative-k", [(2,)], lambda x: mx.diag(x, -2), lambda a: np.diag(a, -2)),
    ("kron-1d", [(3,), (2,)], lambda x, y: mx.kron(x, y), lambda a, b: np.kron(a, b)),
    ("kron-2d", [(2, 2), (2, 3)], lambda x, y: mx.kron(x, y), lambda a, b: np.kron(a, b)),
    ("kron-mixed-ndim", [(2, 3, 2), (3, 1)], lambda x, y: mx.kron(x, y), lambda a, b: np.kron(a, b)),
]
# fmt: on


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dt,layout", COMBOS, ids=COMBO_IDS)
def test_shape_op_matches_numpy(case, dt, layout):
    name, shapes, fn, ref = case
    xs, nps = inputs(shapes, dt, layout)
    expected = ref(*nps)
    got = fn(*xs)
    check(got, expected, dt, f"{name} {dt} {layout}")
    # The inputs are untouched.
    for i, (x, a) in enumerate(zip(xs, nps)):
        assert_array_equal_np(x, a, dtype=dt, err_msg=f"{name}: input {i} changed")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_shape_op_on_a_lazy_input(case):
    """The same ops on an unevaluated input (a graph, not a buffer)."""
    name, shapes, fn, ref = case
    nps = [np_data(s, "int32", seed=i) for i, s in enumerate(shapes)]
    xs = [mx.subtract(mx.add(to_mx(a, "int32"), 7), 7) for a in nps]
    check(fn(*xs), ref(*nps), "int32", name)


# ----------------------------------------------------------------------------- array methods
# fmt: off
METHOD_CASES = [
    ("reshape-args", (2, 3, 4), lambda x: x.reshape(4, 6), lambda a: a.reshape(4, 6)),
    ("reshape-tuple", (2, 3, 4), lambda x: x.reshape((3, -1)), lambda a: a.reshape(3, -1)),
    ("flatten", (2, 3, 4), lambda x: x.flatten(), lambda a: a.reshape(-1)),
    ("flatten-axes", (2, 3, 4), lambda x: x.flatten(1, 2), lambda a: a.reshape(2, 12)),
    ("squeeze", (1, 3, 1), lambda x: x.squeeze(), lambda a: a.squeeze()),
    ("squeeze-axis", (1, 3, 1), lambda x: x.squeeze(-1), lambda a: a.squeeze(-1)),
    ("transpose", (2, 3, 4), lambda x: x.transpose(), lambda a: a.transpose()),
    ("transpose-args", (2, 3, 4), lambda x: x.transpose(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("transpose-tuple", (2, 3, 4), lambda x: x.transpose((1, 2, 0)), lambda a: a.transpose(1, 2, 0)),
    ("swapaxes", (2, 3, 4), lambda x: x.swapaxes(0, -1), lambda a: a.swapaxes(0, -1)),
    ("moveaxis", (2, 3, 4), lambda x: x.moveaxis(0, -1), lambda a: np.moveaxis(a, 0, -1)),
    ("split", (2, 6), lambda x: x.split(3, axis=1), lambda a: np.split(a, 3, axis=1)),
    ("split-indices", (5, 2), lambda x: x.split([1, 3]), lambda a: np.split(a, [1, 3])),
    ("diagonal", (3, 4), lambda x: x.diagonal(1), lambda a: a.diagonal(1)),
    ("diagonal-axes", (2, 3, 4), lambda x: x.diagonal(0, 2, 1), lambda a: a.diagonal(0, 2, 1)),
    ("diag", (3,), lambda x: x.diag(1), lambda a: np.diag(a, 1)),
    pytest.param("expand_dims", (2, 3), lambda x: x.expand_dims(1), lambda a: np.expand_dims(a, 1),
                 marks=pytest.mark.nuvec_only),  # not an MLX method
    pytest.param("unflatten", (2, 6), lambda x: x.unflatten(1, (2, 3)), lambda a: a.reshape(2, 2, 3),
                 marks=pytest.mark.nuvec_only),  # not an MLX method
]
# fmt: on


def _case_id(c):
    return c.values[0] if hasattr(c, "values") else c[0]


@pytest.mark.parametrize("name,shape,fn,ref", METHOD_CASES, ids=[_case_id(c) for c in METHOD_CASES])
@pytest.mark.parametrize(
    "dt,layout", [("int32", "transposed"), ("bfloat16", "stepped"), ("bool", "contiguous")]
)
def test_shape_methods(name, shape, fn, ref, dt, layout):
    a = np_data(shape, dt)
    check(fn(layout_of(a, dt, layout)), ref(a), dt, f"{name} {dt} {layout}")


# ----------------------------------------------------------------------------- meshgrid
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("sizes", [(3,), (2, 3), (2, 3, 4), (1, 0, 2)])
def test_meshgrid(indexing, sparse, sizes):
    dt = "int32" if len(sizes) != 2 else "float16"
    nps = [np_data((n,), dt, seed=i) for i, n in enumerate(sizes)]
    got = mx.meshgrid(*[to_mx(a, dt) for a in nps], sparse=sparse, indexing=indexing)
    expected = np.meshgrid(*nps, sparse=sparse, indexing=indexing)
    check(list(got), list(expected), dt, f"meshgrid {sizes} sparse={sparse} {indexing}")


def test_meshgrid_default_is_xy():
    got = mx.meshgrid(mx.array([1, 2, 3]), mx.array([4, 5]))
    assert_array_equal_np(got[0], np.array([[1, 2, 3], [1, 2, 3]], np.int32))
    assert_array_equal_np(got[1], np.array([[4, 4, 4], [5, 5, 5]], np.int32))


# ----------------------------------------------------------------------------- concatenate / stack
@pytest.mark.parametrize(
    "a_dt,b_dt",
    [
        ("int8", "uint8"),
        ("int8", "float16"),
        ("bool", "int32"),
        ("uint16", "int16"),
        ("bfloat16", "float16"),
        ("int32", "complex64"),
        ("float32", "float64"),
    ],
)
def test_concatenate_promotes(a_dt, b_dt):
    a = np_data((2, 3), a_dt)
    b = np_data((1, 3), b_dt, seed=1)
    out_dt = promote(a_dt, b_dt)
    got = mx.concatenate([to_mx(a, a_dt), to_mx(b, b_dt)])
    expected = np.concatenate([a.astype(NP[out_dt]), b.astype(NP[out_dt])])
    assert_array_equal_np(got, expected, dtype=out_dt)
    got = mx.stack([to_mx(a[:1], a_dt), to_mx(b, b_dt)], axis=1)
    expected = np.stack([a[:1].astype(NP[out_dt]), b.astype(NP[out_dt])], axis=1)
    assert_array_equal_np(got, expected, dtype=out_dt)


def test_concatenate_accepts_a_tuple_and_mixed_layouts():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    parts = (mx.array(a).T, mx.array(a[:, ::-1].copy())[:, ::-1].T, mx.array(a.T.copy()))
    got = mx.concatenate(parts, axis=1)
    assert_array_equal_np(got, np.concatenate([a.T, a.T, a.T], axis=1))


def test_split_results_are_independent_of_each_other():
    a = np.arange(20, dtype=np.int32).reshape(4, 5)
    parts = mx.split(mx.array(a), [1, 3], axis=1)
    assert [p.shape for p in parts] == [(4, 1), (4, 2), (4, 2)]
    # Using one part does not disturb the others.
    mx.eval(parts[1] * 2)
    for p, e in zip(parts, np.split(a, [1, 3], axis=1)):
        assert_array_equal_np(p, e)


# ----------------------------------------------------------------------------- as_strided
# MLX refuses a stepped (non-row-contiguous after flattening) input at evaluation.
AS_STRIDED_LAYOUTS = [
    pytest.param(lay, marks=pytest.mark.nuvec_only) if lay == "stepped" else lay for lay in LAYOUTS
]


@pytest.mark.parametrize("dt", ["int8", "float32", "complex64"])
@pytest.mark.parametrize("layout", AS_STRIDED_LAYOUTS)
@pytest.mark.parametrize(
    "shape,strides,offset",
    [
        ((4, 3), (2, 1), 0),  # overlapping sliding windows
        ((3, 3), (4, 1), 1),  # rows of a 3x4 matrix, skipping the first element
        ((2, 2, 2), (6, 1, 3), 1),  # arbitrary order
        ((5,), (0,), 4),  # one element repeated
        ((4,), (-2,), 7),  # backwards
        ((0, 3), (1, 1), 0),  # empty
    ],
)
def test_as_strided(dt, layout, shape, strides, offset):
    a = np_data((3, 4), dt)
    x = layout_of(a, dt, layout)
    flat = np.ascontiguousarray(a).ravel()
    # element [i, j, ...] is flat[offset + i * strides[0] + j * strides[1] + ...]
    positions = offset + np.tensordot(np.array(strides), np.indices(shape), axes=1)
    expected = flat[positions.astype(np.int64)]
    got = mx.as_strided(x, shape, strides, offset)
    assert_array_equal_np(got, expected, dtype=dt)


def test_as_strided_defaults_to_the_row_major_shape():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_array_equal_np(mx.as_strided(mx.array(a).T), a.T.copy().reshape(3, 2))


# ----------------------------------------------------------------------------- contiguous
@pytest.mark.parametrize("layout", LAYOUTS)
def test_contiguous_is_row_major(layout):
    a = np_data((3, 4), "int16")
    x = mx.contiguous(layout_of(a, "int16", layout))
    assert_array_equal_np(x, a)
    view = memoryview(x)
    assert view.c_contiguous
    assert view.strides == (8, 2)


# ----------------------------------------------------------------------------- take with a Python int
@pytest.mark.nuvec_only  # MLX fails on take(x, int, axis=...) (it squeezes the wrong axis)
def test_take_python_int_along_an_axis():
    a = np.arange(24).reshape(2, 3, 4).astype(np.int32)
    assert_array_equal_np(mx.take(mx.array(a), -1, axis=1), np.take(a, -1, axis=1))


@pytest.mark.nuvec_only  # MLX rejects NumPy's ((before,), (after,)) one-int-per-axis form
def test_pad_accepts_one_width_per_axis():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_array_equal_np(mx.pad(mx.array(a), ((1,), (2,))), np.pad(a, ((1,), (2,))))


# ----------------------------------------------------------------------------- errors
def _z(shape=(2, 3)):
    return mx.zeros(shape)


# (op_name, call): an axis out of range. MLX raises IndexError; nuvec raises AxisError.
# fmt: off
AXIS_ERRORS = [
    ("squeeze", lambda: mx.squeeze(mx.zeros((1, 2)), 2)),
    ("squeeze", lambda: mx.squeeze(mx.zeros((1, 2)), (0, -3))),
    ("expand_dims", lambda: mx.expand_dims(_z(), 3)),
    ("expand_dims", lambda: mx.expand_dims(_z(), -4)),
    ("transpose", lambda: mx.transpose(_z(), (0, 2))),
    ("swapaxes", lambda: mx.swapaxes(_z(), 0, 2)),
    ("moveaxis", lambda: mx.moveaxis(_z(), -3, 0)),
    ("moveaxis", lambda: mx.moveaxis(_z(), 0, 2)),
    ("unflatten", lambda: mx.unflatten(_z(), 2, (1, 3))),
    ("concatenate", lambda: mx.concatenate([_z(), _z()], axis=2)),
    ("concatenate", lambda: mx.concatenate([_z(), _z()], axis=-3)),
    ("stack", lambda: mx.stack([_z(), _z()], axis=3)),
    ("stack", lambda: mx.stack([_z(), _z()], axis=-4)),
    ("split", lambda: mx.split(_z(), 2, axis=2)),
    ("split", lambda: mx.split(_z(), [1], axis=-3)),
    ("repeat", lambda: mx.repeat(_z(), 2, axis=-3)),
    ("roll", lambda: mx.roll(_z(), 1, axis=2)),
    ("diagonal", lambda: mx.diagonal(_z(), 0, 0, 2)),
    ("take", lambda: mx.take(_z(), mx.array([0]), axis=2)),
    ("take_along_axis", lambda: mx.take_along_axis(_z(), mx.zeros((2, 3), mx.int32), axis=2)),
    ("put_along_axis", lambda: mx.put_along_axis(_z(), mx.zeros((2, 3), mx.int32), mx.array(1.0), axis=-3)),
]
# fmt: on
AXIS_IDS = [f"{n}-{i}" for i, (n, _) in enumerate(AXIS_ERRORS)]


@pytest.mark.parametrize("name,fn", AXIS_ERRORS, ids=AXIS_IDS)
def test_bad_axis_raises_index_error(name, fn):
    with pytest.raises(IndexError):
        fn()


@pytest.mark.nuvec_only
@pytest.mark.parametrize(
    "name,fn",
    AXIS_ERRORS + [("flatten", lambda: mx.flatten(_z(), 0, 2))],
    ids=AXIS_IDS + ["flatten-end-axis"],
)
def test_bad_axis_raises_axis_error_at_the_call(name, fn):
    # No evaluation: the call itself raises (MLX clamps flatten's end_axis instead).
    with pytest.raises(mx.AxisError) as info:
        fn()
    err = info.value
    assert (
        isinstance(err, mx.OpError) and isinstance(err, IndexError) and isinstance(err, ValueError)
    )
    assert err.op_name == name
    assert name in str(err)


# (op_name, call): invalid arguments other than axes. MLX raises ValueError; nuvec OpError.
# fmt: off
VALUE_ERRORS = [
    ("concatenate", lambda: mx.concatenate([_z(), _z((2, 4))], axis=0)),
    ("concatenate", lambda: mx.concatenate([_z(), _z((6,))])),
    ("concatenate", lambda: mx.concatenate([])),
    ("stack", lambda: mx.stack([_z(), _z((3, 2))])),
    ("split", lambda: mx.split(_z(), 2, axis=1)),
    ("split", lambda: mx.split(_z((5, 2)), 3)),
    ("pad", lambda: mx.pad(_z(), [(1, 1), (1, 1), (1, 1)])),
    ("pad", lambda: mx.pad(_z(), [(1, -1), (1, 1)])),
    ("pad", lambda: mx.pad(_z(), 1, mode="no-such-mode")),
    ("reshape", lambda: mx.reshape(_z(), (4, 2))),
    ("reshape", lambda: mx.reshape(_z(), (-1, -1))),
    ("unflatten", lambda: mx.unflatten(_z(), 1, (2, 2))),
    ("squeeze", lambda: mx.squeeze(_z(), 0)),
    ("broadcast_to", lambda: mx.broadcast_to(_z(), (2, 4))),
    ("broadcast_to", lambda: mx.broadcast_to(_z(), (3,))),
    ("broadcast_arrays", lambda: mx.broadcast_arrays(_z(), _z((4,)))),
    ("transpose", lambda: mx.transpose(_z(), (0,))),
    ("flatten", lambda: mx.flatten(_z((2, 3, 4)), 2, 1)),
    ("tile", lambda: mx.tile(_z(), (-1, 1))),
    ("repeat", lambda: mx.repeat(_z(), -1, axis=0)),
    ("meshgrid", lambda: mx.meshgrid(mx.zeros((2,)), indexing="yx")),
    ("diagonal", lambda: mx.diagonal(_z(), 0, 1, -1)),
    ("diag", lambda: mx.diag(_z((2, 2, 2)))),
    ("take_along_axis", lambda: mx.take_along_axis(_z(), mx.zeros((3,), mx.int32), axis=1)),
]
# fmt: on
VALUE_IDS = [f"{n}-{i}" for i, (n, _) in enumerate(VALUE_ERRORS)]


@pytest.mark.parametrize("name,fn", VALUE_ERRORS, ids=VALUE_IDS)
def test_invalid_arguments_raise(name, fn):
    with pytest.raises(ValueError):
        mx.eval(fn())
    assert mx.concatenate([mx.ones((1,)), mx.ones((1,))]).tolist() == [1.0, 1.0]


@pytest.mark.nuvec_only
@pytest.mark.parametrize("name,fn", VALUE_ERRORS, ids=VALUE_IDS)
def test_invalid_arguments_raise_op_error_naming_the_op(name, fn):
    with pytest.raises(mx.OpError) as info:
        fn()  # no evaluation: the call raises
    err = info.value
    assert err.op_name == name
    assert name in str(err)
    assert not isinstance(err, IndexError)


@pytest.mark.nuvec_only  # MLX builds the view and reads whatever lies past the buffer
@pytest.mark.parametrize(
    "shape,strides,offset",
    [
        ((3, 3), (3, 1), 0),  # 9 elements from a 6-element array
        ((2,), (1,), 5),  # offset + 1 past the end
        ((3,), (-1,), 1),  # before the start
        ((1,), (1,), -1),  # negative offset
    ],
)
def test_as_strided_outside_the_buffer_raises(shape, strides, offset):
    with pytest.raises(mx.OpError) as info:
        mx.as_strided(_z(), shape, strides, offset)
    assert info.value.op_name == "as_strided"
