"""Work on several nuvec streams overlapping on the GPU (docs/cuda.md, "What runs"): each stream
queues on a CUDA stream of its own.

Eight independent one-query attentions over 256K keys (one head, head dim 128, float32), each a
single thread block looping over its keys (a sliver of the GPU), evaluated in one `eval` with
the eight spread over 1, 2, 4 or 8 streams. On one stream they run one after another; on k
streams up to k at once, so the time should fall about k-fold; the bits must not change.
Medians of 10 runs after warm-ups. Run on a machine with a CUDA device:
`python bench/cuda_streams.py`.
"""

import os
import sys

import numpy as np

import nuvec as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_matmul import median_seconds  # noqa: E402

CALLS, KEYS, DIM = 8, 256 * 1024, 128


def main():
    rng = np.random.default_rng(0)
    qs = [mx.array(rng.standard_normal((1, 1, 1, DIM), dtype=np.float32)) for _ in range(CALLS)]
    k = mx.array(rng.standard_normal((1, 1, KEYS, DIM), dtype=np.float32))
    v = mx.array(rng.standard_normal((1, 1, KEYS, DIM), dtype=np.float32))
    mx.eval(qs, k, v)
    pool = [mx.new_stream(mx.gpu) for _ in range(CALLS)]
    first = None
    for n in (1, 2, 4, 8):
        streams = pool[:n]

        def run():
            outs = [
                mx.fast.scaled_dot_product_attention(
                    q, k, v, scale=DIM**-0.5, stream=streams[i % n]
                )
                for i, q in enumerate(qs)
            ]
            mx.eval(outs)
            return outs

        outs = [np.array(o) for o in run()]
        if first is None:
            first = outs
        assert all(a.tobytes() == b.tobytes() for a, b in zip(first, outs)), (
            "bits changed with the streams"
        )
        t = median_seconds(run, lambda: None)
        print(f"{CALLS} one-block attentions over {KEYS} keys on {n} stream(s): {t * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
