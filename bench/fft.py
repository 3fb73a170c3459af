"""nuvec.fft beside numpy.fft and torch.fft (torch.set_num_threads(2)) in the same run: the median
of several runs per row, as a markdown table (issue 17's two target rows first).

    PYTHONPATH=python python bench/fft.py [--runs 7]
"""

import argparse
import statistics
import time

import numpy as np

import nuvec as mx

try:
    import torch

    torch.set_num_threads(2)
except ImportError:  # torch is not a dependency
    torch = None

rng = np.random.default_rng(0)


def real(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def cplx(*shape):
    return (real(*shape) + 1j * real(*shape)).astype(np.complex64)


# (row, input, nuvec call, numpy call, torch call)
ROWS = [
    ("rfft 2^22 float32", lambda: real(1 << 22), "rfft", {}),
    ("fft 4096 x 1024 complex64", lambda: cplx(4096, 1024), "fft", {}),
    ("rfft 4096 x 4096 float32", lambda: real(4096, 4096), "rfft", {}),
    ("fft2 512 x 512 complex64", lambda: cplx(512, 512), "fft2", {}),
    ("irfft 2^20 (from 2^19 + 1 bins)", lambda: cplx((1 << 19) + 1), "irfft", {}),
    ("fft 4096 x 1009 (prime) complex64", lambda: cplx(4096, 1009), "fft", {}),
    ("fft along axis 0 of 1024 x 4096", lambda: cplx(1024, 4096), "fft", {"axis": 0}),
]


def median_time(fn, runs):
    fn()  # warm (plans, allocations)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    runs = ap.parse_args().runs
    print(f"nuvec threads: {mx.get_num_threads()}; torch threads: 2; numpy: one thread (pocketfft)")
    print()
    print("| transform | nuvec ms | numpy ms | torch ms | numpy / nuvec | torch / nuvec |")
    print("|---|---:|---:|---:|---:|---:|")
    for title, make, name, kw in ROWS:
        x = make()
        a = mx.array(x)
        mx.eval(a)
        t_nv = median_time(lambda: mx.eval(getattr(mx.fft, name)(a, **kw)), runs)
        t_np = median_time(lambda: getattr(np.fft, name)(x, **kw), runs)
        if torch is not None:
            tx = torch.from_numpy(x)
            tkw = {"dim": kw["axis"]} if "axis" in kw else {}
            t_t = median_time(lambda: getattr(torch.fft, name)(tx, **tkw), runs)
        else:
            t_t = float("nan")
        print(
            f"| {title} | {t_nv * 1e3:.1f} | {t_np * 1e3:.1f} | {t_t * 1e3:.1f} | "
            f"{t_np / t_nv:.2f} | {t_t / t_nv:.2f} |"
        )


if __name__ == "__main__":
    main()
