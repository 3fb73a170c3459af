"""Per-example gradients of a small MLP: vmap(grad(loss)) against a Python loop over examples,
and against MLX's vmap where installed.

    python bench/vmap.py [--batch 256]
Prints the median time of each (tracing, graph building and evaluation included) and the
speed-up of vmap over the loop. No assertion."""

import argparse

import numpy as np

import nuvec as mx
from _common import median_time

SIZES = (32, 64, 10)  # inputs, hidden units, outputs


def setup(lib, batch):
    rng = np.random.default_rng(0)
    n_in, n_hid, n_out = SIZES
    arrays = {
        "w1": rng.standard_normal((n_in, n_hid)) * 0.2,
        "b1": np.zeros(n_hid),
        "w2": rng.standard_normal((n_hid, n_out)) * 0.2,
        "b2": np.zeros(n_out),
    }
    params = {k: lib.array(v.astype(np.float32)) for k, v in arrays.items()}
    x = lib.array(rng.standard_normal((batch, n_in)).astype(np.float32))
    y = lib.array(rng.standard_normal((batch, n_out)).astype(np.float32))

    def loss(p, xi, yi):
        h = lib.maximum(xi @ p["w1"] + p["b1"], 0.0)
        return lib.mean(lib.square(h @ p["w2"] + p["b2"] - yi))

    return params, x, y, loss


def run(lib, batch):
    params, x, y, loss = setup(lib, batch)
    per_example = lib.vmap(lib.grad(loss), in_axes=(None, 0, 0))
    g = lib.grad(loss)

    def batched():
        lib.eval(per_example(params, x, y))

    def looped():
        lib.eval([g(params, x[i], y[i]) for i in range(batch)])

    return median_time(batched), median_time(looped, reps=3, warmup=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()
    print(f"per-example gradients, MLP {SIZES}, float32, batch {args.batch}")
    t_vmap, t_loop = run(mx, args.batch)
    print(
        f"nuvec: vmap {t_vmap * 1e3:.2f} ms, Python loop {t_loop * 1e3:.1f} ms, "
        f"speed-up {t_loop / t_vmap:.1f}x"
    )
    try:
        import mlx.core as mlx
    except ImportError:
        return
    m_vmap, m_loop = run(mlx, args.batch)
    print(
        f"mlx:   vmap {m_vmap * 1e3:.2f} ms, Python loop {m_loop * 1e3:.1f} ms, "
        f"speed-up {m_loop / m_vmap:.1f}x; nuvec vmap / mlx vmap = {t_vmap / m_vmap:.2f}"
    )


if __name__ == "__main__":
    main()
