"""Differential tests of einsum and einsum_path (issue 11): repeated labels in one operand
(diagonals, traces), size-1 label broadcasting, ellipses, integer and bool operands (the result's
dtype, and the contractions that go through matmul raising), the errors, and einsum_path's
contraction order and cost summary, on nuvec and mlx.core with the same inputs.

Skipped when MLX is not installed, and when the suite runs against MLX.
"""

import pytest

from _impl import IS_MLX

if IS_MLX:
    pytest.skip("differential tests need nuvec; NUVEC_TEST_IMPL=mlx", allow_module_level=True)

mlx = pytest.importorskip("mlx.core")
nv = pytest.importorskip("nuvec")

from test_mlx_small_names import run_both  # noqa: E402
from test_op_corners import _grad, _m  # noqa: E402

CASES = {
    # (subscripts, operand shapes)
    "diagonal": ("ii->i", [(3, 3)]),
    "trace": ("ii->", [(3, 3)]),
    "trace_implicit": ("ii", [(3, 3)]),
    "diagonal_sum": ("iij->j", [(3, 3, 2)]),
    "diagonal_kept": ("iji->ij", [(3, 2, 3)]),
    "two_diagonals": ("ijij->ij", [(3, 2, 3, 2)]),
    "triple": ("iii->i", [(2, 2, 2)]),
    "diagonal_product": ("ii,i->i", [(3, 3), (3,)]),
    "diagonal_contraction": ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    "size1_contracted": ("ij,jk->ik", [(2, 1), (3, 4)]),
    "size1_batch": ("ij,ij->ij", [(2, 1), (1, 3)]),
    "size1_sum": ("i,i->", [(1,), (4,)]),
    "size1_output": ("ij,j->ij", [(2, 1), (3,)]),
    "ellipsis": ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    "ellipsis_implicit": ("...ij,...jk", [(5, 2, 3), (3, 4)]),
    "ellipsis_middle": ("i...j->j...i", [(2, 3, 4, 5)]),
    "ellipsis_broadcast": ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    "ellipsis_summed": ("...i->i", [(2, 3)]),
    "ellipsis_empty": ("...i,i->...", [(3,), (3,)]),
    "transpose": ("ij->ji", [(2, 3)]),
    "outer": ("i,j->ij", [(2,), (3,)]),
    "scalar": (",i->i", [(), (3,)]),
    "matmul": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "implicit": ("ij,jk", [(2, 3), (3, 4)]),
    "uppercase": ("iJ->Ji", [(2, 3)]),
    "spaces": (" ij , jk -> ik ", [(2, 3), (3, 4)]),
    "three": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    "four": ("ab,bc,cd,de->ae", [(8, 2), (2, 9), (9, 3), (3, 7)]),
    "outer_three": ("i,j,k->ijk", [(2,), (3,), (4,)]),
    "batch_three": ("bij,bjk,bk->bi", [(2, 3, 4), (2, 4, 5), (2, 5)]),
    "mixed_three": ("ab,cd,bc->ad", [(3, 4), (5, 6), (4, 5)]),
    "hadamard_three": ("ij,ij,ij->ij", [(2, 3), (2, 3), (2, 3)]),
    "chain_five": ("ab,bc,cd,de,ef->af", [(2, 3), (3, 4), (4, 5), (5, 6), (6, 2)]),
    # Errors.
    "bad_label": ("i1->i", [(3, 3)]),
    "too_many_labels": ("ij->i", [(3,)]),
    "too_few_operands": ("ij,jk->ik", [(3, 3)]),
    "output_repeated": ("ij->ii", [(3, 3)]),
    "output_unknown": ("ij->k", [(3, 3)]),
    "mismatch": ("ij,jk->ik", [(2, 3), (2, 4)]),
    "diagonal_mismatch": ("ii->i", [(3, 2)]),
    "two_ellipses": ("......->", [(2, 3)]),
    "ellipsis_too_short": ("...ijk->", [(2, 3)]),
    "dot_alone": ("i.j", [(2, 3)]),
    "ellipsis_not_broadcast": ("...ij,...jk", [(2, 3, 4), (3, 4, 5)]),
}

SNIPPETS = {
    **{
        name: (lambda mx, sub=sub, shapes=shapes: mx.einsum(sub, *[_m(mx, *s) for s in shapes]))
        for name, (sub, shapes) in CASES.items()
    },
    **{
        f"path_{name}": (
            lambda mx, sub=sub, shapes=shapes: mx.einsum_path(sub, *[_m(mx, *s) for s in shapes])
        )
        for name, (sub, shapes) in CASES.items()
    },
    "no_operands": lambda mx: mx.einsum("ij->ij"),
    "path_no_operands": lambda mx: mx.einsum_path("ij->ij"),
    # Integer and bool operands: products and sums keep integers; a contraction is a matmul.
    "int_matmul": lambda mx: mx.einsum("ij,jk->ik", mx.array([[1, 2]]), mx.array([[1], [2]])),
    "int_transpose": lambda mx: mx.einsum("ij->ji", mx.array([[1, 2]])),
    "int_sum": lambda mx: mx.einsum("ij->", mx.array([[1, 2]])),
    "int_product": lambda mx: mx.einsum("i,i->i", mx.array([1, 2]), mx.array([3, 4])),
    "int_dot": lambda mx: mx.einsum("i,i->", mx.array([1, 2]), mx.array([3, 4])),
    "int8_trace": lambda mx: mx.einsum("ii", mx.array([[1, 2], [3, 4]], mx.int8)),
    "uint8_outer": lambda mx: mx.einsum("i,j", mx.array([1, 2], mx.uint8), mx.array([3], mx.uint8)),
    "bool_product": lambda mx: mx.einsum("i,i->i", mx.array([True, False]), mx.array([True, True])),
    "int_float_dot": lambda mx: mx.einsum("i,i->", mx.array([1, 2]), mx.array([1.5, 2])),
    "float16": lambda mx: mx.einsum(
        "ij,jk", _m(mx, 2, 3, dt="float16"), _m(mx, 3, 2, dt="float16")
    ),
    "complex": lambda mx: mx.einsum("ij,jk", _m(mx, 2, 3, dt="complex64") * 1j, _m(mx, 3, 2)),
    "complex_trace": lambda mx: mx.einsum("ii", _m(mx, 3, 3, dt="complex64") * (1 + 1j)),
    "grad_diagonal": _grad(lambda mx, a: mx.einsum("ii->i", a), (3, 3)),
    "grad_trace_product": _grad(lambda mx, a, b: mx.einsum("iij,j->i", a, b), (3, 3, 2), (2,)),
    "grad_size1": _grad(lambda mx, a, b: mx.einsum("ij,jk->ik", a, b), (2, 1), (3, 4)),
    "grad_three": _grad(
        lambda mx, a, b, c: mx.einsum("ij,jk,kl->il", a, b, c), (2, 3), (3, 4), (4, 2)
    ),
    "vmap_diagonal": lambda mx: mx.vmap(lambda x: mx.einsum("ii->i", x))(_m(mx, 4, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_same_as_mlx(name):
    run_both(SNIPPETS[name], tol=2e-3 if "float16" in name else 2e-5)
