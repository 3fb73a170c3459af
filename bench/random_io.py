"""Random numbers and file loading, against the peers.

    PYTHONPATH=<nuvec build> python bench/random_io.py [--load-mb 500]

random.normal of 16M float32 (the yardstick's row) in nuvec, MLX, NumPy and PyTorch (2
threads), medians; then the load of a safetensors file of --load-mb MB: the time of `load` and
the resident memory it adds before any element is read, then after reading every element."""

import argparse
import os
import tempfile
import time

import numpy as np

import nuvec as mx
from foundation import N, median_time  # this folder's timing helper (medians after warmup)


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def bench_normal():
    rows = {}
    key = mx.random.key(0)
    rows["nuvec"] = median_time(lambda: mx.eval(mx.random.normal((N,), key=key)), reps=7)
    try:
        import mlx.core as mlx_core

        k = mlx_core.random.key(0)
        rows["mlx"] = median_time(
            lambda: mlx_core.eval(mlx_core.random.normal((N,), key=k)), reps=3, warmup=1
        )
    except ImportError:
        pass
    rng = np.random.default_rng(0)
    rows["numpy"] = median_time(lambda: rng.standard_normal(N, dtype=np.float32), reps=7)
    try:
        import torch

        torch.set_num_threads(2)
        g = torch.Generator().manual_seed(0)
        rows["torch"] = median_time(lambda: torch.randn(N, generator=g), reps=7)
    except ImportError:
        pass
    for name, t in rows.items():
        print(f"random.normal 16M f32  {name:<6} {t * 1e3:8.2f} ms  {N / t / 1e6:8.0f} M/s")


def bench_load(mb):
    with tempfile.TemporaryDirectory(dir=os.path.expanduser("~")) as d:
        path = os.path.join(d, "big.safetensors")
        n = mb * 2**20 // 4 // 8
        mx.save_safetensors(
            path, {f"w{i}": mx.random.normal((n,), key=mx.random.key(i)) for i in range(8)}
        )
        with open(path, "rb") as f:  # drop the file from the page cache: the first touch reads it
            os.fsync(f.fileno())
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        before = rss_mb()
        t = time.perf_counter()
        arrays = mx.load(path)
        t_load = time.perf_counter() - t
        after_load = rss_mb()
        t = time.perf_counter()
        total = sum(
            float(np.asarray(a, dtype=np.float32).sum(dtype=np.float64)) for a in arrays.values()
        )
        t_read = time.perf_counter() - t
        after_read = rss_mb()
        print(
            f"load {mb} MB safetensors: load {t_load * 1e3:.2f} ms, +{after_load - before:.1f} MB resident; "
            f"reading every element {t_read * 1e3:.0f} ms, +{after_read - before:.0f} MB resident (file pages)"
            f" [checksum {total:.1f}]"
        )


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--load-mb", type=int, default=500)
    args = p.parse_args()
    bench_normal()
    bench_load(args.load_mb)
