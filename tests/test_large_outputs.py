"""Results of at least 16 MiB go to memory with non-temporal stores (docs/design.md, "Element-wise
engine"): fused chains, single ops and unary ops give the bits of the same work done in pieces below
that size, with tails that are not a whole chunk, and results that are donated inputs (written in
place with plain stores) are right too."""

import numpy as np
import pytest

from _impl import IS_MLX, mx

pytestmark = [pytest.mark.nuvec_only, pytest.mark.skipif(IS_MLX, reason="nuvec's evaluation")]

N = (1 << 22) + (1 << 20) + 7  # 20 MiB of float32, and a ragged tail
PIECE = 1 << 20  # 4 MiB: stored as usual

OPS = {
    "fused chain": lambda x, y: mx.exp(mx.sin(x)) * 2 + y,
    "binary": lambda x, y: x + y,
    "scalar operand": lambda x, y: x * 3.0,
    "unary": lambda x, y: mx.exp(x),
    "broadcast": lambda x, y: x.reshape(-1, 1)[: (N // 64) * 64].reshape(-1, 64) - y[:64],
}


@pytest.mark.parametrize("name", list(OPS))
def test_streamed_results_equal_results_in_pieces(name):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    fn = OPS[name]
    whole = np.array(fn(mx.array(a), mx.array(b))).reshape(-1)
    if name == "broadcast":
        ref = (a[: (N // 64) * 64].reshape(-1, 64) - b[:64]).reshape(-1)
    else:
        ref = np.concatenate(
            [
                np.array(fn(mx.array(a[i : i + PIECE]), mx.array(b[i : i + PIECE])))
                for i in range(0, N, PIECE)
            ]
        )
    assert whole.tobytes() == ref.tobytes()


def test_a_donated_input_is_updated_in_place():
    a = np.random.default_rng(8).standard_normal(N).astype(np.float32)
    x = mx.array(a)
    for _ in range(3):
        x = mx.exp(mx.sin(x)) * 0.5 + 1
    ref = a
    for _ in range(3):
        ref = np.concatenate(
            [
                np.array(mx.exp(mx.sin(mx.array(ref[i : i + PIECE]))) * 0.5 + 1)
                for i in range(0, N, PIECE)
            ]
        )
    assert np.array(x).tobytes() == ref.tobytes()
