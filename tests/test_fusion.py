"""Element-wise chains over large arrays run fused (one pass, intermediates never stored): the
results are bit-identical to evaluating op by op (as arrays below the fusion size are)."""

import numpy as np
import pytest

from _impl import IS_MLX, mx

pytestmark = [pytest.mark.nuvec_only, pytest.mark.skipif(IS_MLX, reason="nuvec's evaluation")]

N = 1 << 17  # above the size under which nothing is fused


def chains(x, y):
    return {
        "unary_then_scalars": lambda: mx.exp(mx.sin(x)) * 2 + 1,
        "binary_tree": lambda: (x * y + x) / (mx.abs(y) + 1),
        "where": lambda: mx.where(x > 0, mx.sqrt(mx.abs(x)) * y, -x) - y,
        "long": lambda: mx.tanh(mx.cos(mx.sin(mx.exp(x * 0.1) + y) * 3) - 1) * x + y * y - x,
        "comparison_into_arithmetic": lambda: (x > y) * x + (x <= y) * y,
    }


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
@pytest.mark.parametrize("name", list(chains(None, None)))
def test_fused_chain_equals_op_by_op(name, dtype):
    rng = np.random.default_rng(0)
    d = getattr(mx, dtype)
    if dtype == "int32" and name in ("unary_then_scalars", "where", "long"):
        pytest.skip("float-only chain")
    x = mx.array(rng.uniform(-2, 2, N), dtype=d)
    y = mx.array(rng.uniform(0.5, 2, N), dtype=d)
    mx.eval(x, y)
    fused = chains(x, y)[name]()
    mx.eval(fused)

    # The same chain on pieces below the fusion size runs op by op: the reference.
    piece = 1 << 15
    parts = []
    for i in range(0, N, piece):
        part = chains(x[i : i + piece], y[i : i + piece])[name]()
        mx.eval(part)
        parts.append(part)
    plain = mx.concatenate(parts)
    a, b = np.asarray(fused.astype(mx.float32)), np.asarray(plain.astype(mx.float32))
    assert np.array_equal(a, b, equal_nan=True)
