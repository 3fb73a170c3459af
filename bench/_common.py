"""Timing helpers the project's benches share (run them as `python bench/<name>.py`)."""

import statistics
import threading
import time

import numpy as np


def median_time(f, reps=15, warmup=3, sync=None):
    """The median wall time of f() over `reps` runs, after `warmup` runs; `sync` (a GPU's
    synchronize) is called before each timing starts and before it stops."""
    sync = sync or (lambda: None)
    for _ in range(warmup):
        f()
    ts = []
    for _ in range(reps):
        sync()
        t = time.perf_counter()
        f()
        sync()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def machine_bandwidth(nbytes=64 * 2**20, reps=15):
    """GB/s (read + write) of NumPy copies of `nbytes` on two threads, one half each: NumPy's
    copy releases the GIL, so this is the memory bandwidth two cores reach."""
    src = np.random.default_rng(0).standard_normal(nbytes // 4, dtype=np.float32)
    dst = np.empty_like(src)
    half = src.size // 2
    halves = [(dst[:half], src[:half]), (dst[half:], src[half:])]

    def copy_on_two_threads():
        threads = [threading.Thread(target=np.copyto, args=h) for h in halves]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    return 2 * src.nbytes / median_time(copy_on_two_threads, reps) / 1e9
