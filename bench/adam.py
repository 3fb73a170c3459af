"""An Adam step over a 10M-parameter tree (an MLP stack: 9 float32 matrices of 1M entries and
their biases), in nuvec (`nuvec.optimizers.Adam`, `apply_gradients` then `eval` of the
parameters and the state) and in PyTorch (`torch.optim.Adam`, `foreach=True` and `fused=True`,
2 threads), timed in one run, interleaved, against the machine's memory bandwidth.

The update is bandwidth-bound: per parameter it must read the parameter, the gradient and the
two moments and write the parameter and the moments back, 7 float32 = 28 bytes. "GB/s" is
those 28 bytes per parameter over the median step time; "% of bw" divides it by the machine's
practical bandwidth, taken as the best of a NumPy copy of 64 MiB on two threads and nuvec's
`a + b` on 64 MiB operands (12 bytes per element) into a new buffer and in place, all timed in
the same interleaved rounds.

Then it compiles and runs bench/adam_ceiling.c (where gcc is found): the same rule as C loops,
in three passes or one, into new buffers or in place, to show what a fused kernel could reach.

    PYTHONPATH=$PWD/python python bench/adam.py [--rounds 7]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

import numpy as np

import nuvec as mx
import nuvec.optimizers as optim
from nuvec.utils import tree_flatten

BYTES_PER_PARAM = 7 * 4
LR = 1e-3


def shapes():
    layers = [{"w1": (512, 2048), "b1": (2048,), "w2": (2048, 512), "b2": (512,)}] * 4
    return {"embed": (2048, 512), "layers": layers, "out": (512, 1024)}


def numpy_tree(s, rng):
    if isinstance(s, dict):
        return {k: numpy_tree(v, rng) for k, v in s.items()}
    if isinstance(s, list):
        return [numpy_tree(v, rng) for v in s]
    return rng.standard_normal(s, dtype=np.float32)


def leaves(tree):
    return [v for _, v in tree_flatten(tree)]


def nuvec_step(params, grads):
    opt = optim.Adam(learning_rate=LR)
    state = {"p": {k: v for k, v in _to(params, mx.array).items()}}
    g = _to(grads, mx.array)

    def step():
        state["p"] = opt.apply_gradients(g, state["p"])
        mx.eval(state["p"], opt.state)

    return step


def _to(tree, fn):
    if isinstance(tree, dict):
        return {k: _to(v, fn) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_to(v, fn) for v in tree]
    return fn(tree)


def torch_step(params, grads, **flags):
    import torch

    torch.set_num_threads(2)
    ps = [torch.tensor(p, requires_grad=True) for p in leaves(params)]
    for p, g in zip(ps, leaves(grads)):
        p.grad = torch.tensor(g)
    opt = torch.optim.Adam(ps, lr=LR, **flags)
    return opt.step


def nuvec_passes(params, grads):
    """The three passes the plain Adam rule makes, each alone over every parameter: the new m
    (reads m, g; writes m), the new v (reads v, g; writes v) and the new parameter (reads p, m,
    v; writes p). Their bytes add up to 40 per parameter, for the 28 a single pass would move."""
    rng = np.random.default_rng(3)
    p, g = leaves(_to(params, mx.array)), leaves(_to(grads, mx.array))
    m = [mx.array(rng.standard_normal(x.shape, dtype=np.float32)) for x in p]
    v = [mx.abs(x) for x in m]
    mx.eval(m, v)
    lr = mx.array(LR)
    return {
        "nuvec pass m = 0.9 m + 0.1 g": (
            lambda: mx.eval([0.9 * a + 0.1 * b for a, b in zip(m, g)]),
            12,
        ),
        "nuvec pass v = 0.999 v + 0.001 g²": (
            lambda: mx.eval([0.999 * a + 0.001 * mx.square(b) for a, b in zip(v, g)]),
            12,
        ),
        "nuvec pass p = p - lr m / (√v + ε)": (
            lambda: mx.eval([w - lr * a / (mx.sqrt(b) + 1e-8) for w, a, b in zip(p, m, v)]),
            16,
        ),
    }


def numpy_copy():
    """A NumPy copy of 64 MiB on two threads, one half each (NumPy releases the GIL)."""
    src = np.random.default_rng(1).standard_normal(16 << 20, dtype=np.float32)
    dst = np.empty_like(src)
    halves = [
        (dst[: src.size // 2], src[: src.size // 2]),
        (dst[src.size // 2 :], src[src.size // 2 :]),
    ]

    def run():
        threads = [threading.Thread(target=np.copyto, args=h) for h in halves]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    return run, 8 * src.size, "8 B/elem"


def nuvec_add(in_place):
    """nuvec's a + b on 16M float32 (64 MiB) operands, 12 bytes per element: into a new buffer,
    or into a's (`a = a + b`: nothing else holds a, so eval donates its buffer)."""
    rng = np.random.default_rng(2)
    a, b = (mx.array(rng.standard_normal(16 << 20, dtype=np.float32)) for _ in range(2))
    mx.eval(a, b)
    held = {"a": a}
    del a

    def step():
        out = held["a"] + b
        if in_place:
            held["a"] = out
        mx.eval(out)

    return step, 12 * b.size, "12 B/elem"


def hand_written_loops():
    """bench/adam_ceiling.c's table (the same rule as C loops: 3 passes or 1, into new buffers
    or in place), or why it did not run."""
    if shutil.which("gcc") is None:
        return "(no gcc: bench/adam_ceiling.c not run)"
    exe = os.path.join(tempfile.gettempdir(), "nuvec_adam_ceiling")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "adam_ceiling.c")
    flags = ["-O3", "-mavx2", "-mfma", "-fno-math-errno", "-pthread"]
    subprocess.run(["gcc", *flags, src, "-o", exe, "-lm"], check=True)
    return subprocess.run([exe], capture_output=True, text=True, check=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    params, grads = numpy_tree(shapes(), rng), numpy_tree(shapes(), rng)
    n = sum(p.size for p in leaves(params))
    # row: (step, bytes it moves, per what); the first three give the bandwidth.
    rows = {
        "NumPy copy, 2 threads": numpy_copy(),
        "nuvec a + b": nuvec_add(False),
        "nuvec a = a + b (in place)": nuvec_add(True),
    }
    references = list(rows)
    rows["nuvec Adam"] = (nuvec_step(params, grads), BYTES_PER_PARAM * n, "28 B/param")
    for k, (f, per) in nuvec_passes(params, grads).items():
        rows[k] = (f, per * n, f"{per} B/param")
    try:
        for flag in ("foreach", "fused"):
            rows[f"torch Adam({flag}=True)"] = (
                torch_step(params, grads, **{flag: True}),
                BYTES_PER_PARAM * n,
                "28 B/param",
            )
    except ImportError:
        print("PyTorch is not installed: nuvec alone")
    times = {k: [] for k in rows}
    for f, _, _ in rows.values():
        f()
    for _ in range(args.rounds):  # interleaved, so a busy moment costs every row alike
        for k, (f, _, _) in rows.items():
            # A pause first: OpenMP's (and nuvec's) idle workers poll for a while after a call,
            # which would slow whichever row runs next on a 2-core machine.
            time.sleep(0.3)
            f()
            for _ in range(3):
                t = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t)
    gbs = {k: rows[k][1] / statistics.median(ts) / 1e9 for k, ts in times.items()}
    bandwidth = max(gbs[k] for k in references)
    print(
        f"{n / 1e6:.2f}M float32 parameters in {len(leaves(params))} arrays, "
        f"{args.rounds} rounds; bandwidth = the best of the first three rows\n"
    )
    print("| step | bytes moved | ms (median) | GB/s | % of bw |")
    print("|---|---|---:|---:|---:|")
    for k, ts in times.items():
        t = statistics.median(ts)
        print(
            f"| {k} | {rows[k][2]} | {t * 1e3:.1f} | {gbs[k]:.2f} | {100 * gbs[k] / bandwidth:.0f}% |"
        )
    print("\nThe same rule as hand-written C loops, right after (bench/adam_ceiling.c):\n")
    print(hand_written_loops())


if __name__ == "__main__":
    main()
