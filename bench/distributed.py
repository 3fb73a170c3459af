"""nuvec.distributed's speed (issue 19; docs/distributed.md), as a markdown table:

- all_sum of a 64 MB float32 array between 2 processes, beside mpi4py's Allreduce of a NumPy
  array of the same size, in the same run (same MPI library, interleaved repetitions);
- the training example's step (digits ConvNet, batch 64, compiled, AdamW): one process on two
  threads, against the data-parallel step on 2 ranks of one thread each (32 rows each + the
  gradients' all_sum), and the gradients' all_sum alone.

    python bench/distributed.py          # launches its own mpirun jobs; needs mpi4py for the baseline
"""

import json
import os
import subprocess
import sys

import numpy as np

from _common import median_time

MB = 2**20


def collectives():
    from mpi4py import MPI

    import nuvec as mx

    g = mx.distributed.init(strict=True)
    comm = MPI.COMM_WORLD
    a = np.random.default_rng(g.rank()).standard_normal(64 * MB // 4).astype(np.float32)
    b = np.empty_like(a)
    x = mx.array(a)
    mx.eval(x)

    def ours():
        comm.Barrier()
        mx.eval(mx.distributed.all_sum(x))

    def theirs():
        comm.Barrier()
        comm.Allreduce(a, b, MPI.SUM)

    def theirs_nonblocking():  # the call nuvec makes, polled as nuvec polls it
        comm.Barrier()
        r = comm.Iallreduce(a, b, MPI.SUM)
        while not r.Test():
            pass

    barrier = median_time(comm.Barrier, reps=15)
    runs = {"nuvec": ours, "mpi4py": theirs, "mpi4py_i": theirs_nonblocking}
    times = {k: [] for k in runs}
    for _ in range(3):  # interleaved: the machine's noise falls on all
        for k, f in runs.items():
            times[k].append(median_time(f, reps=5, warmup=1) - barrier)
    np.testing.assert_array_equal(np.array(mx.distributed.all_sum(x)), b)
    return {k: float(np.median(v)) for k, v in times.items()}


def training_step(distributed):
    import nuvec as mx
    import nuvec.nn as nn
    import nuvec.optimizers as optim
    from nuvec.examples.train import ConvNet, load_digits_data, make_step, share
    from nuvec.utils import tree_map

    group = mx.distributed.init(strict=True) if distributed else None
    (x, y), _ = load_digits_data(0)
    mx.random.seed(0)
    model = ConvNet(side=8)
    optimizer = optim.AdamW(learning_rate=1e-3, weight_decay=1e-4)
    step, state = make_step(model, optimizer, group)
    xb, yb = mx.array(x[:64, ..., None]), mx.array(y[:64])
    args = share(xb, yb, group)
    out = {"step": median_time(lambda: mx.eval(step(*args), state), reps=30, warmup=5)}
    if distributed:
        grads = tree_map(lambda p: p * 1.0, model.trainable_parameters())
        mx.eval(grads)
        out["all_sum"] = median_time(lambda: mx.eval(nn.average_gradients(grads, group)), reps=30)
    return out


def run(cmd, threads, env=None):
    env = dict(env or os.environ, NUVEC_NUM_THREADS=str(threads))
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode or not lines:
        raise SystemExit(p.stdout + p.stderr)
    return json.loads(lines[0])


def main():
    from nuvec import launch

    here = os.path.abspath(__file__)
    pair, env = launch.command(2, [here, "--part", "pair"])
    coll = run(pair[:-2] + ["--part", "collectives"], 1, env)
    single = run([sys.executable, here, "--part", "single"], 2)
    single1 = run([sys.executable, here, "--part", "single"], 1)
    dp = run(pair, 1, env)
    gbs = {k: 64 * MB / v / 1e9 for k, v in coll.items()}
    print(
        "| measure (2 processes, this 2-core machine, shared and noisy) | nuvec | baseline | ratio |"
    )
    print("|---|---|---|---|")
    print(
        f"| all_sum of 64 MB float32 vs mpi4py Allreduce (GB/s) | {gbs['nuvec']:.2f} "
        f"| {gbs['mpi4py']:.2f} | {gbs['nuvec'] / gbs['mpi4py']:.0%} |"
    )
    print(
        f"| all_sum vs mpi4py Iallreduce polled by Test (GB/s) | {gbs['nuvec']:.2f} "
        f"| {gbs['mpi4py_i']:.2f} | {gbs['nuvec'] / gbs['mpi4py_i']:.0%} |"
    )
    for threads, base in ((2, single), (1, single1)):
        print(
            f"| training step, batch 64: 2 ranks x 1 thread vs 1 process x {threads} thread(s) "
            f"(ms) | {dp['step'] * 1e3:.2f} | {base['step'] * 1e3:.2f} "
            f"| {dp['step'] / base['step']:.2f}x |"
        )
    print(f"| of which the gradients' all_sum (ms) | {dp['all_sum'] * 1e3:.2f} | | |")


if __name__ == "__main__":
    if "--part" in sys.argv:
        part = sys.argv[sys.argv.index("--part") + 1]
        import nuvec as mx

        result = {
            "collectives": collectives,
            "single": lambda: training_step(False),
            "pair": lambda: training_step(True),
        }[part]()
        if part == "single" or mx.distributed.init().rank() == 0:
            print(json.dumps(result), flush=True)
    else:
        main()
