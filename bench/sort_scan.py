"""Sorting and scan speed against NumPy, PyTorch (2 threads) and MLX, in one run, with the
machine's bandwidth measured alongside (a NumPy copy of the same bytes).

    python bench/sort_scan.py
Medians of repeated runs, interleaved per row; no assertion, figures for bench/RESULTS.md."""

import importlib
import statistics
import time

import numpy as np

import nuvec as nv
from _common import machine_bandwidth


def optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


torch = optional("torch")
mlx = optional("mlx.core")
if torch is not None:
    torch.set_num_threads(2)


def median_times(fns, reps=11, warmup=2):
    """Median seconds of each function, runs interleaved so load drifts hit all alike."""
    for f in fns.values():
        for _ in range(warmup):
            f()
    ts = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            t = time.perf_counter()
            f()
            ts[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in ts.items()}


def frameworks(x, nv_fn, np_fn, torch_fn, mlx_fn):
    X = nv.array(x)
    nv.eval(X)
    fns = {"nuvec": lambda: nv.eval(nv_fn(X)), "numpy": lambda: np_fn(x)}
    if torch is not None:
        T = torch.from_numpy(x)
        fns["torch"] = lambda: torch_fn(T)
    if mlx is not None:
        M = mlx.array(x)
        mlx.eval(M)
        fns["mlx"] = lambda: mlx.eval(mlx_fn(M))
    return fns


def row(name, t, unit_work, unit):
    cells = "  ".join(
        f"{k} {unit_work / v / 1e9 if unit == 'GB/s' else v * 1e3:7.2f}" for k, v in t.items()
    )
    ratios = "  ".join(f"{k}/nuvec {v / t['nuvec']:5.2f}" for k, v in t.items() if k != "nuvec")
    print(f"{name:<24} [{unit}] {cells}   | {ratios}")


def main():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((4096, 4096), dtype=np.float32)
    bw = machine_bandwidth()
    print(f"machine bandwidth (NumPy copy of 64 MB on 2 threads, read+write): {bw:6.1f} GB/s")

    t = median_times(
        frameworks(
            m,
            lambda X: nv.cumsum(X, axis=1),
            lambda x: np.cumsum(x, axis=1),
            lambda T: torch.cumsum(T, dim=1),
            lambda M: mlx.cumsum(M, axis=1),
        )
    )
    row("cumsum_axis1_4096sq", t, 2 * m.nbytes, "GB/s")
    print(f"{'':<24} nuvec cumsum / bandwidth: {2 * m.nbytes / t['nuvec'] / 1e9 / bw:5.0%}")
    t = median_times(
        frameworks(
            m,
            lambda X: nv.cumsum(X, axis=0),
            lambda x: np.cumsum(x, axis=0),
            lambda T: torch.cumsum(T, dim=0),
            lambda M: mlx.cumsum(M, axis=0),
        )
    )
    row("cumsum_axis0_4096sq", t, 2 * m.nbytes, "GB/s")

    x = rng.standard_normal(2**20).astype(np.float32)
    t = median_times(
        frameworks(x, nv.sort, np.sort, lambda T: torch.sort(T), mlx.sort if mlx else None)
    )
    row("sort_f32_1M", t, 0, "ms")
    t = median_times(
        frameworks(
            x,
            nv.argsort,
            lambda v: np.argsort(v, kind="stable"),
            lambda T: torch.sort(T, stable=True),
            mlx.argsort if mlx else None,
        )
    )
    row("argsort_f32_1M (stable)", t, 0, "ms")
    t = median_times(
        frameworks(
            x, nv.argsort, np.argsort, lambda T: torch.argsort(T), mlx.argsort if mlx else None
        )
    )
    row("argsort_f32_1M (np any)", t, 0, "ms")
    r = rng.standard_normal((1024, 1024)).astype(np.float32)
    t = median_times(
        frameworks(r, nv.sort, np.sort, lambda T: torch.sort(T), mlx.sort if mlx else None)
    )
    row("sort_rows_1024sq", t, 0, "ms")
    t = median_times(
        frameworks(
            r,
            lambda X: nv.topk(X, 8),
            lambda v: np.partition(v, -8)[:, -8:],
            lambda T: torch.topk(T, 8),
            (lambda M: mlx.topk(M, 8)) if mlx else None,
        )
    )
    row("topk8_rows_1024sq", t, 0, "ms")


if __name__ == "__main__":
    main()
