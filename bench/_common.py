"""Timing helpers the project's benches share (run them as `python bench/<name>.py`)."""

import os
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


def median_times_alternating(fs, reps=15, warmup=3):
    """The median wall time of each of `fs` over `reps` runs taken in turn (f0, f1, ..., f0, ...),
    after `warmup` runs of each: a drift in the machine's speed (another process, the clock)
    reaches every function alike, where timing one after the other would charge it to one."""
    for f in fs:
        for _ in range(warmup):
            f()
    ts = [[] for _ in fs]
    for _ in range(reps):
        for f, t_f in zip(fs, ts):
            t = time.perf_counter()
            f()
            t_f.append(time.perf_counter() - t)
    return [statistics.median(t_f) for t_f in ts]


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


def _two_threads(fn, parts):
    threads = [threading.Thread(target=fn, args=p) for p in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _last_level_cache_bytes():
    """The largest cache's size from sysfs (0 where it does not say)."""
    sizes = [0]
    root = "/sys/devices/system/cpu/cpu0/cache"
    for entry in os.listdir(root) if os.path.isdir(root) else ():
        try:
            with open(os.path.join(root, entry, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        unit = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KMG")) * unit)
    return max(sizes)


def memory_bandwidth(reps=7):
    """The machine's memory bandwidth as STREAM measures it: arrays at least four times the
    last-level cache, so no pass is served from it (this VM shows a 480 MiB L3, and 64 MiB
    arrays run from it at twice what memory gives), two threads with one half each (NumPy
    releases the GIL). Returns (read GB/s, read + write in place GB/s) over 4 x LLC bytes
    (at least 1 GiB, at most a quarter of the physical memory)."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    nbytes = min(max(4 * _last_level_cache_bytes(), 2**30), physical // 4) // 64 * 64
    a = np.ones(nbytes // 4, dtype=np.float32)
    halves = [(a[: a.size // 2],), (a[a.size // 2 :],)]
    read = median_time(lambda: _two_threads(np.add.reduce, halves), reps, warmup=1)
    in_place = median_time(
        lambda: _two_threads(lambda h: np.add(h, 1, out=h), halves), reps, warmup=1
    )
    return nbytes / read / 1e9, 2 * nbytes / in_place / 1e9
